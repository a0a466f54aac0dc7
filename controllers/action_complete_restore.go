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
	"github.com/serin-dev/serin/routing"
)

// completeRestore ends a halted promotion once the restored primary is
// ready: all traffic back to it, the canary scaled down. After a Git revert
// the target equals the primary again (Succeeded, Reverted); under
// failurePolicy RestorePrimary the bad revision stays recorded (Failed,
// PromotionFailed) so that only a new revision starts a new analysis.
func (r *CanaryReconciler) completeRestore(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, a rollout.CompleteRestore) (ctrl.Result, error) {
	if err := r.setRoutes(ctx, obj, routing.AllPrimary); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.targetKindOf(obj).scaleDown(ctx, obj); err != nil {
		return ctrl.Result{}, err
	}
	st := &obj.Status
	if a.Reason == v1alpha1.RevertedReason {
		st.LastAppliedSpec = obs.Target.SpecHash
		st.LastAttemptedRevision = obs.Target.Revision
		transition(obj, a.Phase, obs.Now, a.Reason, "the target was reverted to revision %s: primary restored and serving, canary scaled down", st.LastPromotedSpec)
	} else {
		transition(obj, a.Phase, obs.Now, a.Reason, "promotion of revision %s failed; primary restored to revision %s and serving, canary scaled down", st.LastAppliedSpec, st.LastPromotedSpec)
	}
	st.FailedChecks = 0
	r.postRollout(ctx, obj)
	return ctrl.Result{}, nil
}
