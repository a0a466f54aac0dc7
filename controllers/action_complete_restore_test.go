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
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/routing"
)

// completeRestore ends a halted promotion once the restored primary is
// ready: all traffic back to it, then the canary scaled down. After a Git
// revert the target's revision is recorded (Succeeded, Reverted); under
// failurePolicy RestorePrimary the bad one stays recorded (Failed,
// PromotionFailed), so that only a new revision starts an analysis.
func TestCompleteRestore(t *testing.T) {
	halted := func() *v1alpha1.Canary {
		return weightedPodinfo().Phase(v1alpha1.PhaseHalted).Applied("v2", "main@sha1:v2").Promoted("v1", "main@sha1:v1").Weight(100).Checks(0, 1).Obj()
	}
	reverted := rollout.CompleteRestore{Phase: v1alpha1.PhaseSucceeded, Reason: v1alpha1.RevertedReason}
	restored := rollout.CompleteRestore{Phase: v1alpha1.PhaseFailed, Reason: v1alpha1.PromotionFailedReason}
	cases := map[string]actionCase{
		"Git reverted to v1: Succeeded, the reverted revision recorded": {
			canary: halted(),
			objs:   []client.Object{podinfoTarget(2)},
			routes: weights(routing.Canary(100)),
			obs:    observed("v1", 100),
			action: reverted,
			want: actionWant{
				records: []string{"v1 Succeeded (the target was reverted to revision v1: primary restored and serving, canary scaled down)"},
				status: func(st *v1alpha1.CanaryStatus) {
					st.LastAppliedSpec, st.LastAttemptedRevision = "v1", "main@sha1:v1"
					st.CanaryWeight, st.FailedChecks = 0, 0
					st.Phase, st.LastTransitionTime = v1alpha1.PhaseSucceeded, at(actionNow)
				},
				conditions: []metav1.Condition{ready(metav1.ConditionTrue, v1alpha1.RevertedReason)},
				weights:    []routing.Weights{routing.AllPrimary},
				writes:     []string{"patch Deployment/podinfo"},
			},
		},
		"the primary restored by failurePolicy: Failed, v2 stays recorded": {
			canary: halted(),
			objs:   []client.Object{podinfoTarget(2)},
			routes: weights(routing.Canary(100)),
			obs:    observed("v2", 100),
			action: restored,
			want: actionWant{
				records: []string{"v2 Failed (promotion of revision v2 failed; primary restored to revision v1 and serving, canary scaled down)"},
				status: func(st *v1alpha1.CanaryStatus) {
					st.CanaryWeight, st.FailedChecks = 0, 0
					st.Phase, st.LastTransitionTime = v1alpha1.PhaseFailed, at(actionNow)
				},
				conditions: []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.PromotionFailedReason)},
				weights:    []routing.Weights{routing.AllPrimary},
				writes:     []string{"patch Deployment/podinfo"},
			},
		},
		"the routes cannot be written: the canary keeps its pods": {
			canary:     halted(),
			objs:       []client.Object{podinfoTarget(2)},
			routes:     weights(routing.Canary(100)),
			routerDown: true,
			obs:        observed("v2", 100),
			action:     restored,
			want:       routesDown,
		},
		"the scale write fails: the traffic is back on the primary, the phase as it was": {
			canary: halted(),
			objs:   []client.Object{podinfoTarget(2)},
			routes: weights(routing.Canary(100)),
			fail:   []string{"patch Deployment/podinfo"},
			obs:    observed("v2", 100),
			action: restored,
			want:   routedThenScaleFailed,
		},
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, a rollout.Action) (ctrl.Result, error) {
		return r.completeRestore(ctx, obj, obs, a.(rollout.CompleteRestore))
	})
}
