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
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/notifier"
)

// completePromotion scales the canary down now that the primary serves all
// traffic, records the revision as promoted and calls the post-rollout hooks.
func (r *CanaryReconciler) completePromotion(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	if err := r.targetKindOf(obj).scaleDown(ctx, obj); err != nil {
		return ctrl.Result{}, err
	}
	st := &obj.Status
	st.LastPromotedSpec = st.LastAppliedSpec
	st.LastPromotedRevision = st.LastAttemptedRevision
	st.CanaryWeight, st.FailedChecks = 0, 0
	transition(obj, v1alpha1.PhaseSucceeded, obs.Now, v1alpha1.SucceededReason, "revision %s promoted", st.LastAppliedSpec)
	r.emit(ctx, obj, notifier.SeverityInfo, v1alpha1.PromotedReason, "promotion of revision %s completed: canary scaled to zero", st.LastAppliedSpec)
	r.metrics.endRollout(obj, obs.Now, true)
	r.postRollout(ctx, obj)
	// Decide again at once (the wave's soak begins now): the canary's
	// scale-down brings a reconcile, but a StatefulSet promoted in place
	// has none to scale down, and its Canary would wait for the resync.
	return ctrl.Result{RequeueAfter: 10 * time.Millisecond}, nil
}
