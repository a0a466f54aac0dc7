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
)

// acceptRevision records a target spec equal to the primary's (a manual
// rollback in Git) without analysing it: the primary already runs it.
func (r *CanaryReconciler) acceptRevision(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	obj.Status.LastAppliedSpec = obs.Target.SpecHash
	obj.Status.LastAttemptedRevision = obs.Target.Revision
	if err := r.targetKindOf(obj).scaleDown(ctx, obj); err != nil {
		return ctrl.Result{}, err
	}
	r.emit(ctx, obj, notifier.SeverityInfo, v1alpha1.RevisionAcceptedReason, "target spec equals the primary's: no analysis needed")
	return ctrl.Result{}, nil
}
