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
	"github.com/serin-dev/serin/routing"
)

// restartAnalysis sends all traffic back to the primary when the target
// changes during an analysis, and starts the analysis of the new revision
// from its first step, one interval later.
func TestRestartAnalysis(t *testing.T) {
	restarted := func(st *v1alpha1.CanaryStatus) {
		st.LastAppliedSpec, st.LastAttemptedRevision = "v3", "main@sha1:v3"
		st.CanaryWeight, st.FailedChecks, st.Iterations = 0, 0, 0
		st.Phase, st.LastTransitionTime = v1alpha1.PhaseProgressing, at(actionNow)
	}
	cases := map[string]actionCase{
		"v3 while v2 is at weight 25: traffic back to the primary, the counters reset": {
			canary: weightedPodinfo().Phase(v1alpha1.PhaseProgressing).Applied("v2", "main@sha1:v2").Weight(25).Checks(0, 1).Obj(),
			objs:   []client.Object{podinfoTarget(2)},
			routes: weights(routing.Canary(25)),
			obs:    observed("v3", 25),
			want: actionWant{
				result:     ctrl.Result{RequeueAfter: 10*time.Second + time.Millisecond},
				status:     restarted,
				conditions: []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.ProgressingReason)},
				weights:    []routing.Weights{routing.AllPrimary},
				events:     []string{"Normal " + v1alpha1.AnalysisRestartedReason},
			},
		},
		"blue/green: the iterations reset, no route write while the primary has it all": {
			canary: podinfoCanary().Phase(v1alpha1.PhaseProgressing).Applied("v2", "main@sha1:v2").Checks(2, 0).Obj(),
			objs:   []client.Object{podinfoTarget(2)},
			routes: weights(routing.AllPrimary),
			obs:    observed("v3", 0),
			want: actionWant{
				result:     ctrl.Result{RequeueAfter: 10*time.Second + time.Millisecond},
				status:     restarted,
				conditions: []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.ProgressingReason)},
				events:     []string{"Normal " + v1alpha1.AnalysisRestartedReason},
			},
		},
		"the routes cannot be written: v2's analysis as it was, no event": {
			canary:     weightedPodinfo().Phase(v1alpha1.PhaseProgressing).Applied("v2", "main@sha1:v2").Weight(25).Obj(),
			objs:       []client.Object{podinfoTarget(2)},
			routes:     weights(routing.Canary(25)),
			routerDown: true,
			obs:        observed("v3", 25),
			want:       routesDown,
		},
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, _ rollout.Action) (ctrl.Result, error) {
		return r.restartAnalysis(ctx, obj, obs)
	})
}
