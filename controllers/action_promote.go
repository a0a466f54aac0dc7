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

// promote copies the canary's spec to the primary. Blue/green first sends
// all traffic to the (ready) canary, so that nobody is served by the primary
// while it rolls out; with weights, the canary keeps its weight meanwhile,
// unless the primary's strategy may take all its ready pods away at once
// (Recreate, or maxUnavailable covering every replica): then all traffic
// goes to the canary first, as with blue/green.
func (r *CanaryReconciler) promote(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, a rollout.Promote) (ctrl.Result, error) {
	if v := obs.Requests.Promote; v != "" {
		obj.Status.HandledRequests.Promote = v
	}
	if obj.IsBlueGreen() || r.targetKindOf(obj).primaryMayGoDark(ctx, obj) {
		if err := r.setRoutes(ctx, obj, routing.Canary(100)); err != nil {
			return ctrl.Result{}, err
		}
	}
	if err := r.targetKindOf(obj).promote(ctx, obj, obs.Target); err != nil {
		return ctrl.Result{}, err
	}
	if obj.Status.Phase != v1alpha1.PhasePromoting {
		r.emit(ctx, obj, notifier.SeverityInfo, v1alpha1.PromotingReason, "%s: copying the canary spec %s to %s", a.Reason, obj.Status.LastAppliedSpec, obj.GetPrimaryName())
	}
	transition(obj, v1alpha1.PhasePromoting, obs.Now, v1alpha1.ProgressingReason, "%s: promoting revision %s to the primary", a.Reason, obj.Status.LastAppliedSpec)
	return ctrl.Result{RequeueAfter: obj.GetProgressDeadline()}, nil
}
