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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/routing"
)

// rollback sends all traffic to the primary and ends the rollout as
// Failed, the canary kept running: Decide scales it down (ScaleDownCanary)
// once the data plane applied the routes. During a promotion, where the
// primary is the copy that may be broken, it halts instead.
func TestRollback(t *testing.T) {
	analysing := func(phase v1alpha1.CanaryPhase) *testobj.CanaryWrapper {
		return weightedPodinfo().Phase(phase).Applied("v2", "main@sha1:v2").Promoted("v1", "main@sha1:v1").Weight(25)
	}
	rolledBack := func(st *v1alpha1.CanaryStatus) {
		st.Phase, st.CanaryWeight, st.LastTransitionTime = v1alpha1.PhaseFailed, 0, at(actionNow)
	}
	failed := []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.FailedReason)}
	thresholdReached := rollout.Rollback{Reason: "failed checks threshold reached 2"}
	cases := map[string]actionCase{
		"the analysis failed at weight 25: traffic to the primary, the canary kept until the data plane applied it": {
			canary: analysing(v1alpha1.PhaseProgressing).Obj(),
			objs:   []client.Object{podinfoTarget(2)},
			routes: weights(routing.Canary(25)),
			obs:    observed("v2", 25),
			action: thresholdReached,
			want: actionWant{
				records:    []string{"v2 Failed (rolled back revision v2: failed checks threshold reached 2)"},
				status:     rolledBack,
				conditions: failed,
				weights:    []routing.Weights{routing.AllPrimary},
				events:     []string{"Warning " + v1alpha1.RolledBackReason},
				ended:      "failed",
				result:     ctrl.Result{RequeueAfter: 100 * time.Millisecond},
			},
			check: func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
				if got := f.replicas("podinfo"); got != 2 {
					t.Errorf("target replicas %d, want 2 (scaled down by ScaleDownCanary, later)", got)
				}
			},
		},
		"an abort request: handled": {
			canary: analysing(v1alpha1.PhaseWaitingPromotion).Annotation(v1alpha1.AbortRequestAnnotation, "now").Obj(),
			objs:   []client.Object{podinfoTarget(2)},
			routes: weights(routing.Canary(25)),
			obs:    func() rollout.Observation { o := observed("v2", 25); o.Requests.Abort = "now"; return o }(),
			action: rollout.Rollback{Reason: "abort requested"},
			want: actionWant{
				records: []string{"v2 Failed (rolled back revision v2: abort requested)"},
				status: func(st *v1alpha1.CanaryStatus) {
					rolledBack(st)
					st.HandledRequests.Abort = "now"
				},
				conditions: failed,
				weights:    []routing.Weights{routing.AllPrimary},
				events:     []string{"Warning " + v1alpha1.RolledBackReason},
				ended:      "failed",
				result:     ctrl.Result{RequeueAfter: 100 * time.Millisecond},
			},
		},
		"the routes cannot be written: the canary keeps its pods and its weight": {
			canary:     analysing(v1alpha1.PhaseProgressing).Obj(),
			objs:       []client.Object{podinfoTarget(2)},
			routes:     weights(routing.Canary(25)),
			routerDown: true,
			obs:        observed("v2", 25),
			action:     thresholdReached,
			want:       routesDown,
		},
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, a rollout.Action) (ctrl.Result, error) {
		return r.rollback(ctx, obj, obs, a.(rollout.Rollback))
	})
}
