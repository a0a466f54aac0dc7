/*
Copyright 2026 The serin authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package controllers

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

const rejection = "gateway gateways/public: Accepted=False (NotAllowedByListeners): no listener allows routes from namespace apps"

// A wait for the routes keeps the rollout Reconciling, with the gateway's
// message in Ready and one event when it begins; past the deadline it is
// Stalled; once the gateway accepts, Ready says what the rollout does again
// and the step clock restarts.
func TestRoutesWaitConditions(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	recorder := record.NewFakeRecorder(10)
	r := &CanaryReconciler{EventRecorder: recorder}
	c := testobj.MakeCanary("podinfo", "apps").Phase(v1alpha1.PhaseProgressing).Obj()
	c.Status.LastAppliedSpec = "v2"
	transition(c, v1alpha1.PhaseProgressing, t0, v1alpha1.ProgressingReason, "%s", analysingMessage(c))
	obs := rollout.Observation{Now: t0.Add(time.Minute), CanaryWeight: 20}

	for range 2 {
		res, err := r.waitForRoutes(context.Background(), c, obs, rollout.WaitForRoutes{Message: rejection})
		if _, err = setConditions(c, res, err); err != nil {
			t.Fatal(err)
		}
		if res.RequeueAfter < 9*time.Minute {
			t.Errorf("requeue after %s, want at the progress deadline", res.RequeueAfter)
		}
	}
	want := "waiting for the gateway to accept canary weight 20: " + rejection
	if got := conditions.GetMessage(c, meta.ReadyCondition); got != want || conditions.IsReady(c) {
		t.Errorf("Ready = %v %q, want False %q", conditions.IsReady(c), got, want)
	}
	if !conditions.IsReconciling(c) || conditions.IsStalled(c) {
		t.Errorf("Reconciling %v, Stalled %v: want reconciling, not stalled", conditions.IsReconciling(c), conditions.IsStalled(c))
	}
	if got := conditions.GetReason(c, meta.ReadyCondition); got != v1alpha1.RouteNotProgrammedReason {
		t.Errorf("Ready reason %q", got)
	}
	if n := len(recorder.Events); n != 1 {
		t.Errorf("%d events, want one when the wait begins", n)
	} else if ev := <-recorder.Events; !strings.Contains(ev, "Warning RouteNotProgrammed canary weight 20 not applied by the gateway: "+rejection) {
		t.Errorf("event %q", ev)
	}

	// Past the progress deadline, decide stalls.
	stall := rollout.Stall{Reason: v1alpha1.RouteNotProgrammedReason, Message: "not applied within the progress deadline"}
	res, err := setConditions(c, ctrl.Result{}, &stallingError{Reason: stall.Reason, Err: errors.New(stall.Message)})
	if !errors.Is(err, reconcile.TerminalError(nil)) || res.RequeueAfter != 0 {
		t.Fatalf("stall: %v, %v; want a terminal error", res, err)
	}
	if !conditions.IsStalled(c) || conditions.IsReconciling(c) || conditions.GetReason(c, meta.ReadyCondition) != v1alpha1.RouteNotProgrammedReason {
		t.Errorf("stalled %v, reconciling %v, reason %q", conditions.IsStalled(c), conditions.IsReconciling(c), conditions.GetReason(c, meta.ReadyCondition))
	}

	// The gateway accepts the weights.
	accepted := t0.Add(15 * time.Minute)
	res, err = r.routesProgrammed(context.Background(), c, rollout.Observation{Now: accepted, CanaryWeight: 20})
	if _, err = setConditions(c, res, err); err != nil {
		t.Fatal(err)
	}
	if got := conditions.GetMessage(c, meta.ReadyCondition); got != analysingMessage(c) || conditions.GetReason(c, meta.ReadyCondition) != v1alpha1.ProgressingReason {
		t.Errorf("Ready message %q, want %q", got, analysingMessage(c))
	}
	if !conditions.IsReconciling(c) || conditions.IsStalled(c) {
		t.Errorf("Reconciling %v, Stalled %v after the gateway accepted", conditions.IsReconciling(c), conditions.IsStalled(c))
	}
	if got := c.Status.LastTransitionTime; got == nil || !got.Equal(&metav1.MicroTime{Time: accepted}) {
		t.Errorf("transition time %v, want %v: the step clock restarts", got, accepted)
	}
	if c.Status.Phase != v1alpha1.PhaseProgressing {
		t.Errorf("phase %s", c.Status.Phase)
	}
}
