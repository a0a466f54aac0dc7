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
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/routing"
)

// startRollout asks the confirm-rollout gate (off the reconcile: nothing is
// recorded until it answered), records the new revision with an event,
// and either waits at the closed gate or scales the canary up with no
// traffic and starts the analysis.
func TestStartRollout(t *testing.T) {
	// promotedV1 is a Canary whose primary runs v1, in phase.
	promotedV1 := func(c *testobj.CanaryWrapper, phase v1alpha1.CanaryPhase) *testobj.CanaryWrapper {
		return c.Phase(phase).Applied("v1", "main@sha1:v1").Promoted("v1", "main@sha1:v1")
	}
	// v2 is the target Flux applied at v2 with replicas, and the primary
	// at v1 with three.
	v2 := func(c *v1alpha1.Canary, replicas int32) []client.Object {
		return []client.Object{
			testobj.MakeDeployment("podinfo", "apps").Replicas(replicas).Image(newImage).Obj(),
			primaryOf(c, podinfoTarget(3), "v1"),
		}
	}
	newRevision := func(replicas int32) rollout.Observation {
		o := observed("v2", 0)
		o.Target.Replicas = replicas
		return o
	}
	started := func(st *v1alpha1.CanaryStatus) {
		st.LastAppliedSpec, st.LastAttemptedRevision = "v2", "main@sha1:v2"
		st.CanaryWeight, st.FailedChecks, st.Iterations = 0, 0, 0
		st.Phase, st.LastTransitionTime = v1alpha1.PhaseProgressing, at(actionNow)
	}
	progressing := []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.ProgressingReason)}
	detected := []string{"Normal " + v1alpha1.NewRevisionReason}
	aSecond := ctrl.Result{RequeueAfter: time.Second}
	canaryRuns := func(want int32) func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
		return func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
			if got := f.replicas("podinfo"); got != want {
				t.Errorf("canary replicas %d, want %d", got, want)
			}
		}
	}
	gate := func(status int) v1alpha1.CanaryWebhook {
		url, _ := hookServer(t, status, nil)
		return v1alpha1.CanaryWebhook{Name: "approval", Type: v1alpha1.ConfirmRolloutHook, URL: url}
	}

	fluxReplicas := promotedV1(weightedPodinfo(), v1alpha1.PhaseSucceeded).Obj()
	scaledDown := promotedV1(weightedPodinfo(), v1alpha1.PhaseSucceeded).Obj()
	closed := promotedV1(weightedPodinfo().Webhook(gate(http.StatusForbidden)), v1alpha1.PhaseSucceeded).Obj()
	open := promotedV1(weightedPodinfo().Webhook(gate(http.StatusOK)), v1alpha1.PhaseSucceeded).Obj()
	afterWaiting := weightedPodinfo().Phase(v1alpha1.PhaseWaiting).Applied("v2", "main@sha1:v2").Promoted("v1", "main@sha1:v1").Obj()
	retried := weightedPodinfo().Phase(v1alpha1.PhaseFailed).Applied("v2", "main@sha1:v2").Promoted("v1", "main@sha1:v1").
		Annotation(v1alpha1.RetryRequestAnnotation, "r1").Obj()
	retry := newRevision(2)
	retry.Requests.Retry = "r1"
	afterHalt := weightedPodinfo().Phase(v1alpha1.PhaseFailed).Applied("v2", "main@sha1:v2").Promoted("v2", "main@sha1:v2").Weight(100).Obj()
	halted := observed("v3", 100)
	noPrimary := promotedV1(weightedPodinfo(), v1alpha1.PhaseSucceeded).Obj()
	// scaleFails is the start of v2 whose scale write fails. The reconcile
	// drops the revision recorded by a failed action (keepProgressOf), so
	// the retry announces it: the failed start must not.
	scaleFails := promotedV1(weightedPodinfo(), v1alpha1.PhaseSucceeded).Obj()
	cases := map[string]actionCase{
		"a new revision with the replicas Flux applied: the canary runs them, no traffic yet": {
			canary: fluxReplicas,
			objs:   v2(fluxReplicas, 2),
			routes: weights(routing.AllPrimary),
			obs:    newRevision(2),
			action: rollout.StartRollout{},
			want:   actionWant{result: aSecond, status: started, conditions: progressing, events: detected},
			check:  canaryRuns(2),
		},
		"the target at zero: the canary scaled to the primary's replicas": {
			canary: scaledDown,
			objs:   v2(scaledDown, 0),
			routes: weights(routing.AllPrimary),
			obs:    newRevision(0),
			action: rollout.StartRollout{},
			want:   actionWant{result: aSecond, status: started, conditions: progressing, writes: []string{"patch Deployment/podinfo"}, events: detected},
			check:  canaryRuns(3),
		},
		"the confirm-rollout gate is closed: Waiting, the canary not scaled": {
			canary:   closed,
			objs:     v2(closed, 0),
			routes:   weights(routing.AllPrimary),
			obs:      newRevision(0),
			action:   rollout.StartRollout{},
			analysed: true,
			want: actionWant{
				result: ctrl.Result{RequeueAfter: 10 * time.Second},
				status: func(st *v1alpha1.CanaryStatus) {
					st.LastAppliedSpec, st.LastAttemptedRevision = "v2", "main@sha1:v2"
					st.Phase, st.LastTransitionTime = v1alpha1.PhaseWaiting, at(actionNow)
				},
				conditions: []metav1.Condition{ready(metav1.ConditionFalse, string(v1alpha1.PhaseWaiting))},
				events:     detected,
			},
			check: canaryRuns(0),
		},
		"the confirm-rollout gate is open: started": {
			canary:   open,
			objs:     v2(open, 0),
			routes:   weights(routing.AllPrimary),
			obs:      newRevision(0),
			action:   rollout.StartRollout{},
			analysed: true,
			want:     actionWant{result: aSecond, status: started, conditions: progressing, writes: []string{"patch Deployment/podinfo"}, events: detected},
		},
		"the gate opens for a revision that waited: no second event": {
			canary: afterWaiting,
			objs:   v2(afterWaiting, 2),
			routes: weights(routing.AllPrimary),
			obs:    newRevision(2),
			action: rollout.StartRollout{},
			want:   actionWant{result: aSecond, status: started, conditions: progressing},
		},
		"a retry of the failed revision: handled, announced again": {
			canary: retried,
			objs:   v2(retried, 2),
			routes: weights(routing.AllPrimary),
			obs:    retry,
			action: rollout.StartRollout{Retry: true},
			want: actionWant{
				result:     aSecond,
				status:     func(st *v1alpha1.CanaryStatus) { started(st); st.HandledRequests.Retry = "r1" },
				conditions: progressing,
				events:     detected,
			},
		},
		"the canary still carries traffic after a halted promotion: taken back first": {
			canary: afterHalt,
			objs:   []client.Object{testobj.MakeDeployment("podinfo", "apps").Replicas(2).Obj(), primaryOf(afterHalt, podinfoTarget(2), "v2")},
			routes: weights(routing.Canary(100)),
			obs:    halted,
			action: rollout.StartRollout{},
			want: actionWant{
				result: aSecond,
				status: func(st *v1alpha1.CanaryStatus) {
					started(st)
					st.LastAppliedSpec, st.LastAttemptedRevision = "v3", "main@sha1:v3"
				},
				conditions: progressing,
				weights:    []routing.Weights{routing.AllPrimary},
				events:     detected,
			},
		},
		"the scale write fails: not Progressing, nothing announced": {
			canary: scaleFails,
			objs:   v2(scaleFails, 0),
			routes: weights(routing.AllPrimary),
			fail:   []string{"patch Deployment/podinfo"},
			obs:    newRevision(0),
			action: rollout.StartRollout{},
			want: actionWant{
				err:    injected,
				status: func(st *v1alpha1.CanaryStatus) { st.LastAppliedSpec, st.LastAttemptedRevision = "v2", "main@sha1:v2" },
				writes: []string{"patch Deployment/podinfo"},
			},
		},
		"the primary is gone and the target at zero: no size for the canary": {
			canary: noPrimary,
			objs:   []client.Object{testobj.MakeDeployment("podinfo", "apps").Replicas(0).Image(newImage).Obj()},
			routes: weights(routing.AllPrimary),
			obs:    newRevision(0),
			action: rollout.StartRollout{},
			want: actionWant{
				err:    notFound,
				status: func(st *v1alpha1.CanaryStatus) { st.LastAppliedSpec, st.LastAttemptedRevision = "v2", "main@sha1:v2" },
			},
		},
		"a Service target: nothing to scale": {
			canary: promotedV1(weightedPodinfo().Target("v1", "Service", "podinfo"), v1alpha1.PhaseSucceeded).Obj(),
			objs:   []client.Object{testobj.MakeService("podinfo", "apps").Obj()},
			routes: weights(routing.AllPrimary),
			obs:    newRevision(0),
			action: rollout.StartRollout{},
			want:   actionWant{result: aSecond, status: started, conditions: progressing, events: detected},
		},
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, a rollout.Action) (ctrl.Result, error) {
		return r.startRollout(ctx, obj, obs, a.(rollout.StartRollout))
	})
}
