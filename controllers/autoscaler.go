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

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/workload"
)

// autoscalerInSync reads the target's autoscaler (an invalid target when it
// is missing) and reports whether the primary's copy exists and matches it.
func (r *CanaryReconciler) autoscalerInSync(ctx context.Context, obj *v1alpha1.Canary, obs *rollout.Observation) (bool, error) {
	target := &autoscalingv2.HorizontalPodAutoscaler{}
	found, err := r.getOptional(ctx, obj.Namespace, obj.Spec.AutoscalerRef.Name, target)
	if err != nil {
		return false, err
	}
	if !found {
		obs.Target.Invalid = fmt.Sprintf("HorizontalPodAutoscaler %s/%s named by spec.autoscalerRef not found: create it or remove spec.autoscalerRef",
			obj.Namespace, obj.Spec.AutoscalerRef.Name)
		return false, nil
	}
	primary := &autoscalingv2.HorizontalPodAutoscaler{}
	found, err = r.getOptional(ctx, obj.Namespace, workload.PrimaryAutoscalerName(obj), primary)
	if err != nil || !found {
		return false, err
	}
	return workload.PrimaryAutoscalerInSync(obj, target, primary), nil
}

// applyPrimaryAutoscaler creates or updates the primary's copy of the
// target's autoscaler.
func (r *CanaryReconciler) applyPrimaryAutoscaler(ctx context.Context, obj *v1alpha1.Canary) error {
	if obj.Spec.AutoscalerRef == nil {
		return nil
	}
	target := &autoscalingv2.HorizontalPodAutoscaler{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.AutoscalerRef.Name}, target); err != nil {
		if apierrors.IsNotFound(err) {
			return &stallingError{Reason: v1alpha1.InvalidTargetReason, Err: fmt.Errorf(
				"HorizontalPodAutoscaler %s/%s named by spec.autoscalerRef not found: create it or remove spec.autoscalerRef", obj.Namespace, obj.Spec.AutoscalerRef.Name)}
		}
		return fmt.Errorf("failed to get autoscaler: %w", err)
	}
	hpa := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: obj.Namespace, Name: workload.PrimaryAutoscalerName(obj)}}
	op, err := r.createOrUpdate(ctx, obj, hpa, func() {
		workload.MutatePrimaryAutoscaler(obj, target, hpa)
	})
	if err != nil {
		return fmt.Errorf("failed to apply autoscaler %s: %w", hpa.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("primary autoscaler applied", "hpa", hpa.Name, "operation", op)
	return nil
}
