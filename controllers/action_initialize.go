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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/workload"
)

// initialize creates or updates the generated Services first, then the
// primary Deployment from the target's pod template. The target keeps its
// replicas until the primary is ready (completeInitialization).
func (r *CanaryReconciler) initialize(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	if isServiceTarget(obj) {
		if err := r.syncServiceTarget(ctx, obj); err != nil {
			return ctrl.Result{}, err
		}
		transition(obj, v1alpha1.PhaseInitializing, r.now(), v1alpha1.InitializingReason, "created %s, %s and the route", obj.GetPrimaryServiceName(), obj.GetCanaryServiceName())
		return ctrl.Result{}, nil
	}
	target, err := r.getTarget(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.syncServices(ctx, obj, target); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.applyPrimary(ctx, obj, target, obs.Target); err != nil {
		return ctrl.Result{}, err
	}
	transition(obj, v1alpha1.PhaseInitializing, r.now(), v1alpha1.InitializingReason, "created the services and primary deployment %s", obj.GetPrimaryName())
	return ctrl.Result{}, nil
}

// syncServices creates or updates the generated Services, then the routing
// objects (with all traffic on the primary when they are new).
func (r *CanaryReconciler) syncServices(ctx context.Context, obj *v1alpha1.Canary, target *appsv1.Deployment) error {
	for _, want := range desiredServices(obj, target) {
		if err := r.applyService(ctx, obj, want); err != nil {
			return err
		}
	}
	if err := r.applyPrimaryAutoscaler(ctx, obj); err != nil {
		return err
	}
	router, err := r.router(obj)
	if err != nil {
		return err
	}
	return router.Reconcile(ctx, obj, routingTarget(obj, target))
}

// applyService creates or updates one generated Service.
func (r *CanaryReconciler) applyService(ctx context.Context, obj *v1alpha1.Canary, want desiredService) error {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: obj.Namespace, Name: want.name}}
	op, err := r.createOrUpdate(ctx, obj, svc, func() {
		selector := want.selector
		if selector == nil {
			selector = svc.Spec.Selector
		}
		if len(selector) == 0 {
			selector = want.initial
		}
		workload.MutateService(obj, svc, selector, want.ports, want.custom)
	})
	if err != nil {
		return fmt.Errorf("failed to apply service %s: %w", want.name, err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("service applied", "service", want.name, "operation", op)
	return nil
}

// applyPrimary promotes the target's revision to the primary Deployment,
// creating it if needed: the primary's copies of the tracked configs first,
// then the pod template.
func (r *CanaryReconciler) applyPrimary(ctx context.Context, obj *v1alpha1.Canary, target *appsv1.Deployment, revision rollout.Target) error {
	if err := r.copyPrimaryConfigs(ctx, obj, revision.TrackedConfigs); err != nil {
		return err
	}
	primary := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}}
	if _, err := r.getOptional(ctx, obj.Namespace, primary.Name, primary); err != nil {
		return err
	}
	// Refused before the revision is recorded for it.
	if err := workload.MayManage(obj, primary, r.Client.Scheme()); err != nil {
		return err
	}
	want := primary.DeepCopy()
	workload.MutatePrimary(obj, target, want, true, revision.TrackedConfigs)
	if err := r.recordPromoted(ctx, obj, revision.SpecHash, want, revision.TrackedConfigs); err != nil {
		return err
	}
	op, err := r.createOrUpdate(ctx, obj, primary, func() {
		workload.MutatePrimary(obj, target, primary, true, revision.TrackedConfigs)
		primary.Annotations[specHashAnnotation] = revision.SpecHash
	})
	if err != nil {
		return fmt.Errorf("failed to apply primary deployment %s: %w", primary.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("primary applied", "deployment", primary.Name, "operation", op)
	return nil
}

// createOrUpdate creates or updates a generated object, read from the
// cache, with mutate. An existing object the Canary may not take over
// (workload.MayManage: one it did not create, or another controller's) is
// left as it is and the reconcile stalls (AdoptionRefused, see
// stallOnForeign); the Canary becomes the controller of any other.
func (r *CanaryReconciler) createOrUpdate(ctx context.Context, obj *v1alpha1.Canary, o client.Object, mutate func()) (controllerutil.OperationResult, error) {
	return controllerutil.CreateOrUpdate(ctx, r.Client, o, func() error {
		if err := workload.Claim(obj, o, r.Client.Scheme()); err != nil {
			return err
		}
		mutate()
		return nil
	})
}
