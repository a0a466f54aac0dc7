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
	"fmt"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
)

// The waits write nothing and change no phase: they say in Ready what the
// rollout waits for, and requeue at the deadline that decide acts on (a
// watch brings the reconcile sooner when what they wait for changes).
func TestWaits(t *testing.T) {
	// The progress deadline is 60s; the phase began 20s ago.
	since := func(phase v1alpha1.CanaryPhase) *v1alpha1.Canary {
		return weightedPodinfo().Phase(phase).Applied("v2", "main@sha1:v2").Weight(25).
			ProgressDeadlineSeconds(60).TransitionedAt(actionNow.Add(-20 * time.Second)).Obj()
	}
	progressing := []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.ProgressingReason)}
	routeNotProgrammed := func(c *v1alpha1.Canary) *v1alpha1.Canary {
		conditions.MarkFalse(c, meta.ReadyCondition, v1alpha1.RouteNotProgrammedReason, "waiting for the gateway")
		return c
	}
	notAccepted := "gateway gateways/public: Accepted=False (NotAllowedByListeners)"
	cases := map[string]actionCase{
		"the primary during initialization: a wait of one interval": {
			canary: weightedPodinfo().Phase(v1alpha1.PhaseInitializing).Obj(),
			action: rollout.WaitForPrimary{Message: "podinfo-primary has 0 of 2 replicas ready"},
			want:   actionWant{err: waits(v1alpha1.WaitingForPrimaryReason, 10*time.Second)},
		},
		"the canary: until the progress deadline": {
			canary: since(v1alpha1.PhaseProgressing),
			action: rollout.WaitForCanary{Message: "podinfo has 1 of 2 replicas ready"},
			want:   actionWant{result: ctrl.Result{RequeueAfter: 40*time.Second + 100*time.Millisecond}, conditions: progressing},
			check:  readySays("waiting for the canary: podinfo has 1 of 2 replicas ready"),
		},
		"the canary past the progress deadline: decided again shortly": {
			canary: weightedPodinfo().Phase(v1alpha1.PhaseProgressing).ProgressDeadlineSeconds(60).TransitionedAt(actionNow.Add(-2 * time.Minute)).Obj(),
			action: rollout.WaitForCanary{Message: "podinfo has 0 of 2 replicas ready"},
			want:   actionWant{result: ctrl.Result{RequeueAfter: 100 * time.Millisecond}, conditions: progressing},
		},
		"the canary keeps the reason Ready had": {
			canary: routeNotProgrammed(since(v1alpha1.PhaseProgressing)),
			action: rollout.WaitForCanary{Message: "podinfo has 1 of 2 replicas ready"},
			want: actionWant{
				result:     ctrl.Result{RequeueAfter: 40*time.Second + 100*time.Millisecond},
				conditions: []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.RouteNotProgrammedReason)},
			},
		},
		"the promoted primary: until decide's deadline": {
			canary: since(v1alpha1.PhasePromoting),
			action: rollout.WaitForPromotion{Message: "podinfo-primary has 1 of 2 updated replicas", RequeueAfter: 30 * time.Second},
			want:   actionWant{result: ctrl.Result{RequeueAfter: 30*time.Second + 100*time.Millisecond}, conditions: progressing},
			check:  readySays("waiting for the promoted primary: podinfo-primary has 1 of 2 updated replicas"),
		},
		"the promoted primary past the deadline": {
			canary: since(v1alpha1.PhasePromoting),
			action: rollout.WaitForPromotion{Message: "podinfo-primary has 0 ready", RequeueAfter: -time.Second},
			want:   actionWant{result: ctrl.Result{RequeueAfter: 100 * time.Millisecond}, conditions: progressing},
		},
		"the gateway, when the wait begins: an event": {
			canary: since(v1alpha1.PhaseProgressing),
			obs:    observed("v2", 25),
			action: rollout.WaitForRoutes{Message: notAccepted},
			want: actionWant{
				result:     ctrl.Result{RequeueAfter: 40*time.Second + 100*time.Millisecond},
				conditions: []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.RouteNotProgrammedReason)},
				events:     []string{"Warning " + v1alpha1.RouteNotProgrammedReason},
			},
			check: readySays("waiting for the gateway to accept canary weight 25: " + notAccepted),
		},
		"the gateway, while the wait goes on: no second event": {
			canary: routeNotProgrammed(since(v1alpha1.PhaseProgressing)),
			obs:    observed("v2", 25),
			action: rollout.WaitForRoutes{Message: notAccepted},
			want: actionWant{
				result:     ctrl.Result{RequeueAfter: 40*time.Second + 100*time.Millisecond},
				conditions: []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.RouteNotProgrammedReason)},
			},
		},
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, a rollout.Action) (ctrl.Result, error) {
		switch a := a.(type) {
		case rollout.WaitForPrimary:
			return r.waitForPrimary(ctx, obj, a)
		case rollout.WaitForCanary:
			return r.waitForCanary(obj, obs, a)
		case rollout.WaitForPromotion:
			return r.waitForPromotion(obj, a)
		case rollout.WaitForRoutes:
			return r.waitForRoutes(ctx, obj, obs, a)
		}
		return ctrl.Result{}, fmt.Errorf("not a wait: %s", a)
	})
}
