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
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
)

// completeInitialization scales the target to zero now that the primary
// serves, and records the target's revision as both applied and promoted.
func (r *CanaryReconciler) completeInitialization(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	if err := r.scaleTarget(ctx, obj, 0); err != nil {
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

// scaleTarget sets the target Deployment's replicas.
func (r *CanaryReconciler) scaleTarget(ctx context.Context, obj *v1alpha1.Canary, replicas int32) error {
	if isServiceTarget(obj) {
		return nil // serin never touches the workloads behind a Service target
	}
	target := &appsv1.Deployment{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.TargetRef.Name}, target); err != nil {
		return fmt.Errorf("failed to get target: %w", err)
	}
	if target.Spec.Replicas != nil && *target.Spec.Replicas == replicas {
		return nil
	}
	patch := client.MergeFrom(target.DeepCopy())
	target.Spec.Replicas = ptr.To(replicas)
	if err := r.Patch(ctx, target, patch, client.FieldOwner(r.ControllerName)); err != nil {
		return fmt.Errorf("failed to scale target %s to %d: %w", target.Name, replicas, err)
	}
	ctrl.LoggerFrom(ctx).Info("target scaled", "deployment", target.Name, "replicas", replicas)
	return nil
}
