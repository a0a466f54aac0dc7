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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
)

// completeInitialization scales the target to zero now that the primary
// serves, and records the target's revision as both applied and promoted.
func (r *CanaryReconciler) completeInitialization(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	if err := r.targetKindOf(obj).scaleDown(ctx, obj); err != nil {
		return ctrl.Result{}, err
	}
	now := metav1.NewMicroTime(obs.Now)
	obj.Status.Phase = v1alpha1.PhaseInitialized
	obj.Status.LastAppliedSpec = obs.Target.SpecHash
	obj.Status.LastPromotedSpec = obs.Target.SpecHash
	obj.Status.LastAttemptedRevision = obs.Target.Revision
	obj.Status.LastPromotedRevision = obs.Target.Revision
	obj.Status.CanaryWeight = 0
	obj.Status.FailedChecks = 0
	obj.Status.Iterations = 0
	obj.Status.LastTransitionTime = &now
	return ctrl.Result{}, nil
}
