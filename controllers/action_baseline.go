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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/workload"
	"github.com/serin-dev/serin/routing"
)

// syncBaseline creates the baseline Deployment and its Service for the
// analysis under way, or puts back what drifted: a deleted baseline, an
// edited template or replica count, one made for an earlier analysis (a
// restart rolls new pods, as young as the new canary's). The baseline's
// status changes reconcile the Canary (it owns it).
func (r *CanaryReconciler) syncBaseline(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	target, primary := &appsv1.Deployment{}, &appsv1.Deployment{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.TargetRef.Name}, target); err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to get target: %w", err)
	}
	if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}, primary); err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to get primary: %w", err)
	}
	want, svc := desiredBaseline(obj, target, primary, baselineReplicas(obs.Target, primary), obj.Status.LastAppliedSpec)
	baseline := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: obj.Namespace, Name: want.Name}}
	found, err := r.getOptional(ctx, obj.Namespace, baseline.Name, baseline)
	if err != nil {
		return ctrl.Result{}, err
	}
	if found && metav1.IsControlledBy(baseline, obj) && baseline.Spec.Selector != nil && !maps.Equal(baseline.Spec.Selector.MatchLabels, want.Spec.Selector.MatchLabels) {
		// A selector is immutable, and the agent deletes no Deployment.
		return ctrl.Result{}, fmt.Errorf("baseline deployment %s selects %v, not %v: delete it, and serin creates it again",
			baseline.Name, baseline.Spec.Selector.MatchLabels, want.Spec.Selector.MatchLabels)
	}
	if err := r.applyService(ctx, obj, svc); err != nil {
		return ctrl.Result{}, err
	}
	op, err := r.createOrUpdate(ctx, obj, baseline, func() { workload.MutateBaseline(obj, baseline, want) })
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to apply baseline deployment %s: %w", baseline.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("baseline applied", "deployment", baseline.Name, "operation", op,
		"replicas", ptr.Deref(want.Spec.Replicas, 0), "revision", primary.Annotations[specHashAnnotation])
	setReconcilingMessage(obj, "baseline %s %s with the primary's revision %s", baseline.Name, op, primary.Annotations[specHashAnnotation])
	return ctrl.Result{RequeueAfter: time.Second}, nil
}

// routeBaseline writes the routes again with the weights they carry, the
// baseline in them or not as rollout.BaselineRouted says (the router's
// Target.RouteBaseline): on once it has a ready pod during an analysis,
// off when it has none or the analysis ended. The status' weight is left
// as it is: nothing moved between primary and canary.
func (r *CanaryReconciler) routeBaseline(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, a rollout.RouteBaseline) (ctrl.Result, error) {
	router, rt, err := r.routing(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	w := routing.Weights{Primary: 100 - obs.CanaryWeight, Canary: obs.CanaryWeight, ABTest: obs.ABTest}
	if err := router.SetRoutes(ctx, obj, rt, w); err != nil {
		return ctrl.Result{}, err
	}
	ctrl.LoggerFrom(ctx).Info("baseline routes written", "baseline", obj.GetBaselineServiceName(), "routed", rt.RouteBaseline, "canaryWeight", obs.CanaryWeight, "reason", a.Reason)
	// Decide again at once, with the routes as written.
	return ctrl.Result{RequeueAfter: 10 * time.Millisecond}, nil
}

// waitForBaseline waits for the baseline before an analysis step; decide
// stalls once the progress deadline has passed.
func (r *CanaryReconciler) waitForBaseline(obj *v1alpha1.Canary, obs rollout.Observation, a rollout.WaitForBaseline) (ctrl.Result, error) {
	deadline := obj.GetProgressDeadline()
	if t := obj.Status.LastTransitionTime; t != nil {
		deadline = t.Add(deadline).Sub(obs.Now)
	}
	setReconcilingMessage(obj, "waiting for the baseline %s: %s", obj.GetBaselineName(), a.Message)
	return ctrl.Result{RequeueAfter: max(deadline, 0) + 100e6}, nil
}

// removeBaseline scales the baseline to zero, which the routes no longer
// name (decide took it off them). The Deployment and its Service stay,
// for the next analysis; the garbage collector deletes them with the
// Canary.
func (r *CanaryReconciler) removeBaseline(ctx context.Context, obj *v1alpha1.Canary) (ctrl.Result, error) {
	if err := r.retireBaseline(ctx, obj); err != nil {
		return ctrl.Result{}, err
	}
	ctrl.LoggerFrom(ctx).Info("baseline scaled to zero: its analysis ended", "deployment", obj.GetBaselineName())
	return ctrl.Result{RequeueAfter: 10 * time.Millisecond}, nil
}

// retireBaseline scales the baseline the Canary controls to zero; one of
// another controller is left alone.
func (r *CanaryReconciler) retireBaseline(ctx context.Context, obj *v1alpha1.Canary) error {
	baseline, _, err := r.readBaseline(ctx, obj)
	if err != nil || baseline == nil || !metav1.IsControlledBy(baseline, obj) || ptr.Deref(baseline.Spec.Replicas, 1) == 0 {
		return err
	}
	patch := client.MergeFrom(baseline.DeepCopy())
	baseline.Spec.Replicas = ptr.To(int32(0))
	if err := client.IgnoreNotFound(r.Patch(ctx, baseline, patch, client.FieldOwner(r.ControllerName))); err != nil {
		return fmt.Errorf("failed to scale baseline %s to zero: %w", baseline.Name, err)
	}
	return nil
}

// dropBaseline takes the baseline off routes that name it and, once the
// data plane applies them (a gateway still on the last routes would send
// requests to pods that are going away), removes it, when the Canary is
// deleted: the routes the Canary leaves behind (handed back or orphaned)
// never name a Service that is going away. done is false while it waits
// for the data plane.
func (r *CanaryReconciler) dropBaseline(ctx context.Context, obj *v1alpha1.Canary) (done bool, err error) {
	if !obj.WantsBaseline() {
		return true, nil
	}
	router, err := r.router(obj)
	if err != nil {
		return false, err
	}
	// The names alone: the target and the primary may be gone already.
	rt := routing.Target{
		ApexService:     obj.GetServiceName(),
		PrimaryService:  obj.GetPrimaryServiceName(),
		CanaryService:   obj.GetCanaryServiceName(),
		BaselineService: obj.GetBaselineServiceName(),
		Port:            obj.Spec.Service.Port,
	}
	routes, err := router.GetRoutes(ctx, obj, rt)
	if err != nil {
		return false, fmt.Errorf("failed to read routes: %w", err)
	}
	switch {
	case routes.Found && routes.Baseline:
		return false, router.SetRoutes(ctx, obj, rt, routes.Weights)
	case routes.Found && !routes.Status.Programmed:
		return false, nil
	}
	return true, r.retireBaseline(ctx, obj)
}
