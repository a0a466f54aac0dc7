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

// finalise routes traffic back to the promoted primary, stepWeightPromotion
// at a time (the next step one interval later) or all at once (decided
// again at once), with one event when it begins.
func TestFinalise(t *testing.T) {
	// finalising is the row of a Canary in phase at weight, moving
	// stepWeightPromotion back to the primary at a time.
	finalising := func(phase v1alpha1.CanaryPhase, weight, stepWeightPromotion int, want actionWant) actionCase {
		c := weightedPodinfo().Phase(phase).Applied("v2", "main@sha1:v2").Promoted("v1", "main@sha1:v1").Weight(weight).Obj()
		c.Spec.Analysis.StepWeightPromotion = stepWeightPromotion
		return actionCase{canary: c, objs: []client.Object{podinfoTarget(0)}, routes: weights(routing.Canary(weight)), obs: observed("v2", weight), want: want}
	}
	// steppedTo is what a step to weight leaves, with the events.
	steppedTo := func(weight int, events ...string) actionWant {
		result := ctrl.Result{RequeueAfter: 10*time.Second + time.Millisecond} // the next step
		if weight == 0 {
			result = ctrl.Result{RequeueAfter: 10 * time.Millisecond} // decided again at once
		}
		return actionWant{
			result: result,
			status: func(st *v1alpha1.CanaryStatus) {
				st.Phase, st.CanaryWeight, st.LastTransitionTime = v1alpha1.PhaseFinalising, weight, at(actionNow)
			},
			conditions: []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.ProgressingReason)},
			weights:    []routing.Weights{routing.Canary(weight)},
			events:     events,
		}
	}
	began := "Normal " + v1alpha1.FinalisingReason
	down := finalising(v1alpha1.PhasePromoting, 50, 20, routesDown)
	down.routerDown = true
	cases := map[string]actionCase{
		"stepWeightPromotion: the first step back to the primary": finalising(v1alpha1.PhasePromoting, 50, 20, steppedTo(30, began)),
		"stepWeightPromotion: a later step, no second event":      finalising(v1alpha1.PhaseFinalising, 30, 20, steppedTo(10)),
		"the last step: all traffic to the primary":               finalising(v1alpha1.PhaseFinalising, 10, 20, steppedTo(0)),
		"without stepWeightPromotion: all at once":                finalising(v1alpha1.PhasePromoting, 50, 0, steppedTo(0, began)),
		"the routes cannot be written: still Promoting, no event": down,
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, _ rollout.Action) (ctrl.Result, error) {
		return r.finalise(ctx, obj, obs)
	})
}
