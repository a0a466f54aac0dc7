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
// primary from the target. A target that runs pods keeps them until the
// primary is ready (completeInitialization).
func (r *CanaryReconciler) initialize(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	created, err := r.targetKindOf(obj).initialize(ctx, obj, obs)
	if err != nil {
		return ctrl.Result{}, err
	}
	transition(obj, v1alpha1.PhaseInitializing, r.now(), v1alpha1.InitializingReason, "%s", created)
	return ctrl.Result{}, nil
}

// syncPodServices creates or updates the generated Services of a target
// that runs pods, then what the kind adds (the primary's autoscaler), then
// the routing objects (with all traffic on the primary when they are new).
func (r *CanaryReconciler) syncPodServices(ctx context.Context, obj *v1alpha1.Canary, pods podTarget, also func(context.Context, *v1alpha1.Canary) error) error {
	for _, want := range desiredServices(obj, pods) {
		if err := r.applyService(ctx, obj, want); err != nil {
			return err
		}
	}
	if also != nil {
		if err := also(ctx, obj); err != nil {
			return err
		}
	}
	router, err := r.router(obj)
	if err != nil {
		return err
	}
	return router.Reconcile(ctx, obj, routingTarget(obj, pods))
}

// applyService creates or updates one generated Service.
func (r *CanaryReconciler) applyService(ctx context.Context, obj *v1alpha1.Canary, want desiredService) error {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: obj.Namespace, Name: want.name}}
	op, err := r.createOrUpdate(ctx, obj, svc, func() {
		selector := want.selector
		if selector == nil && routedSelector(svc.Spec.Selector, want.routed) {
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
