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

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
	conflict, err := r.observeClaims(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	// A Canary that yields its target to another (TargetClaimed, or a
	// target another Canary generates) has nothing to hand back: what it
	// would scale or route is the other Canary's.
	if obj.Status.Phase != "" && conflict.Reason == "" {
		// The baseline lives only during an analysis: gone first, off the
		// routes before, whatever the routes become.
		if done, err := r.dropBaseline(ctx, obj); err != nil || !done {
			return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, err
		}
		var err error
		var done bool
		// A StatefulSet gets its own rolling update back either way: serin
		// generated nothing to orphan, and its partition would hold every
		// new template.
		if obj.Spec.RevertOnDeletion || obj.Spec.TargetRef.Kind == v1alpha1.StatefulSetKind {
			done, err = r.targetKindOf(obj).handBack(ctx, obj)
		} else {
			done, err = true, r.orphanGenerated(ctx, obj)
		}
		if err != nil {
			return ctrl.Result{}, err
		}
		if !done {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
	}
	removeFinalizers(obj)
	r.Metrics.RecordSuspend(ctx, obj, false)
	r.metrics.forget(obj)
	return ctrl.Result{}, nil
}

// targetServes reports whether a target revision may serve all traffic
// once the Canary is gone: the last promoted one, or, after a halted
// promotion, the canary that serves while the primary cannot.
func targetServes(obj *v1alpha1.Canary, hash string) bool {
	st := obj.Status
	return hash == st.LastPromotedSpec || (st.Phase == v1alpha1.PhaseHalted && hash == st.LastAppliedSpec)
}

// keepPrimaryServing is revertOnDeletion's way out when the target runs a
// revision that was never promoted (rolled back, or under analysis):
// scaling it up would serve it to everyone, so the primary keeps serving.
// A rolled-back target still running (deleted before the data plane
// settled and its scale-down came) is scaled down: nothing routes to it.
func (r *CanaryReconciler) keepPrimaryServing(ctx context.Context, obj *v1alpha1.Canary) error {
	if obj.Status.Phase == v1alpha1.PhaseFailed {
		if err := r.targetKindOf(obj).scaleDown(ctx, obj); err != nil {
			return err
		}
	}
	r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.RevertOnDeletionSkippedReason,
		"revertOnDeletion: %s runs a revision that was not promoted (last promoted %s): %s keeps serving; fix the target in Git, then delete %s",
		obj.Spec.TargetRef.Name, obj.Status.LastPromotedSpec, obj.GetPrimaryName(), obj.GetPrimaryName())
	return r.orphanGenerated(ctx, obj)
}

// routeToTarget points the apex Service (and HTTPRoute) at the target's
// pods, which are ready, and keeps them: the generated objects go with the
// Canary.
func (r *CanaryReconciler) routeToTarget(ctx context.Context, obj *v1alpha1.Canary, selector map[string]string) error {
	apex := &corev1.Service{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.GetServiceName()}, apex); err == nil && metav1.IsControlledBy(apex, obj) {
		patch := client.MergeFrom(apex.DeepCopy())
		apex.Spec.Selector = maps.Clone(selector)
		workload.Release(obj, apex)
		if err := client.IgnoreNotFound(r.Patch(ctx, apex, patch)); err != nil {
			return fmt.Errorf("failed to point the apex service at the target: %w", err)
		}
	}
	if err := r.releaseRoutes(ctx, obj); err != nil {
		return err
	}
	r.emit(ctx, obj, notifier.SeverityInfo, v1alpha1.RevertedReason, "canary deleted: %s serves again through %s; generated objects removed", obj.Spec.TargetRef.Name, obj.GetServiceName())
	return nil
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
	type generated struct {
		obj  client.Object
		name string
	}
	names := []generated{
		{&corev1.Service{}, obj.GetServiceName()},
		{&corev1.Service{}, obj.GetPrimaryServiceName()},
		{&corev1.Service{}, obj.GetCanaryServiceName()},
		{&gatewayv1.HTTPRoute{}, obj.GetServiceName()},
	}
	if primary := r.targetKindOf(obj).primaryObject(); primary != nil {
		names = append([]generated{{primary, obj.GetPrimaryName()}}, names...)
	}
	// The primary's autoscaler keeps scaling the primary.
	switch ref := obj.Spec.AutoscalerRef; {
	case ref.IsScaledObject():
		names = append(names, generated{workload.NewScaledObject(obj.Namespace, workload.PrimaryAutoscalerName(obj)), workload.PrimaryAutoscalerName(obj)})
	case ref != nil:
		names = append(names, generated{&autoscalingv2.HorizontalPodAutoscaler{}, workload.PrimaryAutoscalerName(obj)})
	}
	for _, n := range names {
		if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: n.name}, n.obj); err != nil {
			if err = client.IgnoreNotFound(ignoreNoMatch(err)); err != nil {
				return err
			}
			continue
		}
		// An object already being deleted (its namespace is, say) has
		// nothing left to keep serving.
		if !metav1.IsControlledBy(n.obj, obj) || !n.obj.GetDeletionTimestamp().IsZero() {
			continue
		}
		patch := client.MergeFrom(n.obj.DeepCopyObject().(client.Object))
		workload.Release(obj, n.obj)
		// Gone since the cache saw it: nothing to orphan. Failing here
		// would hold the Canary's deletion in the retry backoff.
		if err := client.IgnoreNotFound(r.Patch(ctx, n.obj, patch)); err != nil {
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
	if len(obj.Spec.Routing.RouteRefs) > 0 {
		// The user's routes send to the apex Service again, which keeps
		// selecting the primary, as the user wrote them.
		if err := r.releaseRoutes(ctx, obj); err != nil {
			return err
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
	if err := r.APIReader.Get(ctx, key, o); err != nil || !metav1.IsControlledBy(o, obj) || !o.GetDeletionTimestamp().IsZero() {
		return client.IgnoreNotFound(err)
	}
	workload.Release(obj, o)
	if err := client.IgnoreNotFound(r.Update(ctx, o, client.FieldOwner(r.ControllerName))); err != nil {
		return fmt.Errorf("failed to orphan %s: %w", key.Name, err)
	}
	return nil
}
