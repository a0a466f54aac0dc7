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

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
)

// routesProgrammed ends a wait for the gateway: the step clock restarts
// from now, Ready says again what the phase does, and decide runs again at
// once. It writes nothing.
func TestRoutesProgrammed(t *testing.T) {
	// programmed is the row of a Canary in phase whose Ready showed the
	// wait for the gateway to accept weight; Ready then has reason and
	// message.
	programmed := func(phase v1alpha1.CanaryPhase, weight int, reason, message string) actionCase {
		c := weightedPodinfo().Phase(phase).Applied("v2", "main@sha1:v2").Weight(weight).TransitionedAt(actionNow.Add(-time.Minute)).Obj()
		conditions.MarkFalse(c, meta.ReadyCondition, v1alpha1.RouteNotProgrammedReason, "waiting for the gateway to accept canary weight %d", weight)
		if phase == v1alpha1.PhaseHalted {
			// The halt ended the analysis record; being Halted again
			// leaves it as it is.
			c.Status.Analyses = []v1alpha1.AnalysisRecord{{Spec: "v2", Result: phase, FinishedAt: at(actionNow.Add(-time.Minute)), Message: "promotion of revision v2 halted"}}
		}
		return actionCase{
			canary: c,
			obs:    observed("v2", weight),
			want: actionWant{
				result:     ctrl.Result{RequeueAfter: 10 * time.Millisecond},
				status:     func(st *v1alpha1.CanaryStatus) { st.LastTransitionTime = at(actionNow) },
				conditions: []metav1.Condition{ready(metav1.ConditionFalse, reason)},
				events:     []string{"Normal " + v1alpha1.RouteProgrammedReason},
			},
			check: readySays(message),
		}
	}
	cases := map[string]actionCase{
		"while analysing: Ready says which revision": programmed(v1alpha1.PhaseProgressing, 25,
			v1alpha1.ProgressingReason, "analysing revision v2"),
		"waiting for the promotion's approval": programmed(v1alpha1.PhaseWaitingPromotion, 50,
			string(v1alpha1.PhaseWaitingPromotion), "analysis passed; waiting for approval to promote"),
		"halted: still Halted": programmed(v1alpha1.PhaseHalted, 100,
			v1alpha1.HaltedReason, "the gateway accepted canary weight 100"),
		"finalising: the accepted weight": programmed(v1alpha1.PhaseFinalising, 10,
			v1alpha1.ProgressingReason, "the gateway accepted canary weight 10"),
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, _ rollout.Action) (ctrl.Result, error) {
		return r.routesProgrammed(ctx, obj, obs)
	})
}
