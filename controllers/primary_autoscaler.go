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
	"errors"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/workload"
)

// autoscalerInSync reads the target's autoscaler (an invalid target when it
// is missing) and reports whether the primary's copy exists and matches it.
func (r *CanaryReconciler) autoscalerInSync(ctx context.Context, obj *v1alpha1.Canary, obs *rollout.Observation) (bool, error) {
	if obj.Spec.AutoscalerRef.IsScaledObject() {
		return r.scaledObjectInSync(ctx, obj, obs)
	}
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
	if obj.Spec.AutoscalerRef.IsScaledObject() {
		return r.applyPrimaryScaledObject(ctx, obj)
	}
	target := &autoscalingv2.HorizontalPodAutoscaler{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.AutoscalerRef.Name}, target); err != nil {
		if apierrors.IsNotFound(err) {
			return &stallingError{Reason: v1alpha1.InvalidTargetReason, Err: fmt.Errorf(
				"HorizontalPodAutoscaler %s/%s named by spec.autoscalerRef not found: create it or remove spec.autoscalerRef", obj.Namespace, obj.Spec.AutoscalerRef.Name),
				RetryAfter: r.missingObjectRetry(v1alpha1.InvalidTargetReason)}
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

// scaledObjectMissing explains a target ScaledObject that cannot be read:
// not there, or KEDA's CRD not installed.
func scaledObjectMissing(obj *v1alpha1.Canary, err error) string {
	name := obj.Namespace + "/" + obj.Spec.AutoscalerRef.Name
	if meta.IsNoMatchError(err) {
		return fmt.Sprintf("ScaledObject %s named by spec.autoscalerRef: KEDA's ScaledObject API (keda.sh/v1alpha1) is not installed: "+
			"install KEDA or remove spec.autoscalerRef", name)
	}
	return fmt.Sprintf("ScaledObject %s named by spec.autoscalerRef not found: create it or remove spec.autoscalerRef", name)
}

// getScaledObject reads a ScaledObject: found, or not (missing, or its CRD
// not installed: errMissing says which).
func (r *CanaryReconciler) getScaledObject(ctx context.Context, namespace, name string) (so *unstructured.Unstructured, errMissing error, err error) {
	so = workload.NewScaledObject(namespace, name)
	err = r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, so)
	switch {
	case err == nil:
		return so, nil, nil
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return nil, err, nil
	}
	return nil, nil, fmt.Errorf("failed to get ScaledObject %s: %w", name, err)
}

// scaledObjectInSync is autoscalerInSync for a KEDA ScaledObject.
func (r *CanaryReconciler) scaledObjectInSync(ctx context.Context, obj *v1alpha1.Canary, obs *rollout.Observation) (bool, error) {
	target, missing, err := r.getScaledObject(ctx, obj.Namespace, obj.Spec.AutoscalerRef.Name)
	if err != nil {
		return false, err
	}
	if target == nil {
		obs.Target.Invalid = scaledObjectMissing(obj, missing)
		return false, nil
	}
	primary, _, err := r.getScaledObject(ctx, obj.Namespace, workload.PrimaryAutoscalerName(obj))
	if err != nil || primary == nil {
		return false, err
	}
	return workload.PrimaryScaledObjectInSync(obj, target, primary), nil
}

// applyPrimaryScaledObject creates or updates the primary's copy of the
// target's ScaledObject, and pauses the target's while the canary is
// scaled to zero.
func (r *CanaryReconciler) applyPrimaryScaledObject(ctx context.Context, obj *v1alpha1.Canary) error {
	target, missing, err := r.getScaledObject(ctx, obj.Namespace, obj.Spec.AutoscalerRef.Name)
	if err != nil {
		return err
	}
	if target == nil {
		return &stallingError{Reason: v1alpha1.InvalidTargetReason, Err: errors.New(scaledObjectMissing(obj, missing)),
			RetryAfter: r.missingObjectRetry(v1alpha1.InvalidTargetReason)}
	}
	primary := workload.NewScaledObject(obj.Namespace, workload.PrimaryAutoscalerName(obj))
	op, err := r.createOrUpdate(ctx, obj, primary, func() {
		workload.MutatePrimaryScaledObject(obj, target, primary)
	})
	if err != nil {
		return fmt.Errorf("failed to apply ScaledObject %s: %w", primary.GetName(), err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("primary ScaledObject applied", "scaledObject", primary.GetName(), "operation", op)
	if op != controllerutil.OperationResultCreated || !canaryIdle(obj) {
		// The canary's scaling pauses and resumes it
		// (deploymentTarget.scale): only those transitions know that the
		// canary is idle, not a replica count that KEDA itself may take
		// to zero during an analysis (minReplicaCount 0).
		return nil
	}
	// An autoscalerRef added to a Canary between rollouts: the canary is
	// idle, and no scaling comes before the next rollout.
	return r.pauseTargetScaledObject(ctx, obj, true)
}

// canaryIdle tells whether the Canary is between rollouts, its canary at
// zero replicas.
func canaryIdle(obj *v1alpha1.Canary) bool {
	switch obj.Status.Phase {
	case v1alpha1.PhaseInitialized, v1alpha1.PhaseSucceeded, v1alpha1.PhaseFailed:
		return true
	}
	return false
}

// pauseTargetScaledObject pauses the target's ScaledObject at zero replicas
// (autoscaling.keda.sh/paused-replicas: "0") while the canary is idle, so
// that KEDA, which scales from zero on activity, does not wake it; and
// resumes it while the canary runs, so that KEDA scales it during an
// analysis. Nothing for other autoscalers, or a missing ScaledObject.
func (r *CanaryReconciler) pauseTargetScaledObject(ctx context.Context, obj *v1alpha1.Canary, pause bool) error {
	if !obj.Spec.AutoscalerRef.IsScaledObject() {
		return nil
	}
	target, _, err := r.getScaledObject(ctx, obj.Namespace, obj.Spec.AutoscalerRef.Name)
	if err != nil || target == nil || workload.ScaledObjectPaused(target) == pause {
		return err
	}
	patch := client.MergeFrom(target.DeepCopy())
	annotations := target.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	if pause {
		annotations[workload.KEDAPausedReplicasAnnotation] = "0"
	} else {
		delete(annotations, workload.KEDAPausedReplicasAnnotation)
	}
	target.SetAnnotations(annotations)
	if err := r.Patch(ctx, target, patch, client.FieldOwner(r.ControllerName)); err != nil {
		return fmt.Errorf("failed to %s ScaledObject %s: %w", map[bool]string{true: "pause", false: "resume"}[pause], target.GetName(), err)
	}
	ctrl.LoggerFrom(ctx).Info("target ScaledObject "+map[bool]string{true: "paused", false: "resumed"}[pause], "scaledObject", target.GetName())
	return nil
}
