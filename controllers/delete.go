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
	"maps"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/workload"
	"github.com/serin-dev/serin/notifier"
	"github.com/serin-dev/serin/routing"
)

// reconcileDelete makes sure that deleting a Canary never takes traffic
// down. With revertOnDeletion, the target is scaled back up, the apex
// Service selects it once it is ready, and the generated objects go with the
// Canary. Without it, the generated objects are orphaned and keep serving
// (the primary and its Services), for the user to remove when they want.
func (r *CanaryReconciler) reconcileDelete(ctx context.Context, obj *v1alpha1.Canary) (ctrl.Result, error) {
	if obj.Status.Phase != "" {
		var err error
		var done bool
		switch {
		case obj.Spec.RevertOnDeletion && isServiceTarget(obj):
			done, err = true, r.releaseRoutes(ctx, obj)
		case obj.Spec.RevertOnDeletion && !r.targetServes(ctx, obj):
			// The target runs a revision that was never promoted (rolled
			// back, or under analysis): scaling it up would serve it to
			// everyone. The primary keeps serving instead.
			r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.RevertOnDeletionSkippedReason,
				"revertOnDeletion: %s runs a revision that was not promoted (last promoted %s): %s keeps serving; fix the target in Git, then delete %s",
				obj.Spec.TargetRef.Name, obj.Status.LastPromotedSpec, obj.GetPrimaryName(), obj.GetPrimaryName())
			done, err = true, r.orphanGenerated(ctx, obj)
		case obj.Spec.RevertOnDeletion:
			done, err = r.revertTarget(ctx, obj)
		default:
			done, err = true, r.orphanGenerated(ctx, obj)
		}
		if err != nil {
			return ctrl.Result{}, err
		}
		if !done {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
	}
	controllerutil.RemoveFinalizer(obj, v1alpha1.CanaryFinalizer)
	r.Metrics.RecordSuspend(ctx, obj, false)
	r.metrics.forget(obj)
	return ctrl.Result{}, nil
}

// targetServes reports whether the target's revision may serve all traffic
// once the Canary is gone: the last promoted one, or, after a halted
// promotion, the canary that serves while the primary cannot.
func (r *CanaryReconciler) targetServes(ctx context.Context, obj *v1alpha1.Canary) bool {
	if isServiceTarget(obj) {
		return true
	}
	target, err := r.getTarget(ctx, obj)
	if err != nil {
		return apierrors.IsNotFound(err)
	}
	tracked, err := r.trackedConfigs(ctx, obj.Namespace, workload.ConfigRefs(&target.Spec.Template))
	if err != nil {
		return false
	}
	hash := workload.SpecHash(&target.Spec.Template, tracked)
	st := obj.Status
	return hash == st.LastPromotedSpec || (st.Phase == v1alpha1.PhaseHalted && hash == st.LastAppliedSpec)
}

// revertTarget scales the target back to the primary's replicas and, once
// it is ready, points the apex Service (and HTTPRoute) at it and keeps them.
func (r *CanaryReconciler) revertTarget(ctx context.Context, obj *v1alpha1.Canary) (bool, error) {
	target, err := r.getTarget(ctx, obj)
	if apierrors.IsNotFound(err) {
		return true, nil
	} else if err != nil {
		return false, err
	}
	primary := &appsv1.Deployment{}
	replicas := workload.TargetReplicas(target)
	if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}, primary); err == nil && primary.Spec.Replicas != nil && *primary.Spec.Replicas > 0 {
		replicas = *primary.Spec.Replicas
	}
	if target.Spec.Replicas == nil || *target.Spec.Replicas == 0 {
		return false, r.scaleTarget(ctx, obj, replicas)
	}
	// The target takes the primary's place as the canary's copy did during
	// an analysis: ready at spec.analysis.canaryReadyThreshold, as Flagger's
	// finalizer judges it.
	if h := workload.DeploymentHealth(target, obj.GetCanaryReadyThreshold()); !h.Ready {
		ctrl.LoggerFrom(ctx).Info("canary deleted: waiting for the target before removing the primary", "message", h.Message)
		return false, nil
	}
	apex := &corev1.Service{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.GetServiceName()}, apex); err == nil && metav1.IsControlledBy(apex, obj) {
		patch := client.MergeFrom(apex.DeepCopy())
		apex.Spec.Selector = maps.Clone(target.Spec.Selector.MatchLabels)
		workload.Release(obj, apex)
		if err := r.Patch(ctx, apex, patch); err != nil {
			return false, fmt.Errorf("failed to point the apex service at the target: %w", err)
		}
	}
	if err := r.releaseRoutes(ctx, obj); err != nil {
		return false, err
	}
	r.emit(ctx, obj, notifier.SeverityInfo, v1alpha1.RevertedReason, "canary deleted: %s serves again through %s; generated objects removed", target.Name, obj.GetServiceName())
	return true, nil
}

// releaseRoutes hands the routing objects back (Router.Finalize): all
// traffic through the apex Service, and no longer owned by the Canary.
func (r *CanaryReconciler) releaseRoutes(ctx context.Context, obj *v1alpha1.Canary) error {
	router, err := r.router(obj)
	if err != nil {
		return err
	}
	return router.Finalize(ctx, obj, routing.Target{ApexService: obj.GetServiceName()})
}

// orphanGenerated removes the Canary's ownership of the objects it
// generated, so that garbage collection does not delete what serves traffic.
func (r *CanaryReconciler) orphanGenerated(ctx context.Context, obj *v1alpha1.Canary) error {
	names := []struct {
		obj  client.Object
		name string
	}{
		{&appsv1.Deployment{}, obj.GetPrimaryName()},
		{&corev1.Service{}, obj.GetServiceName()},
		{&corev1.Service{}, obj.GetPrimaryServiceName()},
		{&corev1.Service{}, obj.GetCanaryServiceName()},
		{&gatewayv1.HTTPRoute{}, obj.GetServiceName()},
	}
	for _, n := range names {
		if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: n.name}, n.obj); err != nil {
			if err = client.IgnoreNotFound(ignoreNoMatch(err)); err != nil {
				return err
			}
			continue
		}
		if !metav1.IsControlledBy(n.obj, obj) {
			continue
		}
		patch := client.MergeFrom(n.obj.DeepCopyObject().(client.Object))
		workload.Release(obj, n.obj)
		if err := r.Patch(ctx, n.obj, patch); err != nil {
			return fmt.Errorf("failed to orphan %s: %w", n.name, err)
		}
	}
	for key := range obj.Status.TrackedConfigs {
		if ref, ok := workload.ParseConfigRef(key); ok {
			if err := r.orphanConfigCopy(ctx, obj, ref); err != nil {
				return err
			}
		}
	}
	r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.OrphanedReason,
		"canary deleted without revertOnDeletion: %s and its Services keep serving; delete them when the target serves again", obj.GetPrimaryName())
	return nil
}

// orphanConfigCopy removes the Canary's ownership of the primary's copy of
// a config. It reads the copy live, as the cache holds no Secret's data,
// and updates it whole: serin writes Secrets with create and update only.
func (r *CanaryReconciler) orphanConfigCopy(ctx context.Context, obj *v1alpha1.Canary, ref workload.ConfigRef) error {
	var o client.Object = &corev1.ConfigMap{}
	if ref.Kind == "Secret" {
		o = &corev1.Secret{}
	}
	key := types.NamespacedName{Namespace: obj.Namespace, Name: workload.PrimaryConfigName(ref.Name)}
	if err := r.APIReader.Get(ctx, key, o); err != nil || !metav1.IsControlledBy(o, obj) {
		return client.IgnoreNotFound(err)
	}
	workload.Release(obj, o)
	if err := r.Update(ctx, o, client.FieldOwner(r.ControllerName)); err != nil {
		return fmt.Errorf("failed to orphan %s: %w", key.Name, err)
	}
	return nil
}
