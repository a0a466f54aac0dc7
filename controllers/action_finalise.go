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

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/notifier"
	"github.com/serin-dev/serin/routing"
)

// finalise routes traffic back to the promoted, ready primary:
// stepWeightPromotion at a time, or all at once.
func (r *CanaryReconciler) finalise(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	weight := rollout.PromotionWeight(obj, obs.CanaryWeight)
	if err := r.setRoutes(ctx, obj, routing.Canary(weight)); err != nil {
		return ctrl.Result{}, err
	}
	if obj.Status.Phase != v1alpha1.PhaseFinalising {
		r.emit(ctx, obj, notifier.SeverityInfo, v1alpha1.FinalisingReason, "primary %s runs revision %s and is ready: routing traffic to it", obj.GetPrimaryName(), obj.Status.LastAppliedSpec)
	}
	transition(obj, v1alpha1.PhaseFinalising, obs.Now, v1alpha1.ProgressingReason, "routing traffic to the promoted primary (canary weight %d)", weight)
	if weight > 0 {
		return ctrl.Result{RequeueAfter: requeueAtNextStep(obj, obs.Now)}, nil
	}
	return ctrl.Result{RequeueAfter: 10e6}, nil
}
