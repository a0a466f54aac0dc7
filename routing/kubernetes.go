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

package routing

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// KubernetesRouter does blue/green with plain Kubernetes: the apex Service
// selects either the primary's or the canary's pods, all traffic at once.
type KubernetesRouter struct {
	Client     client.Client
	FieldOwner string
}

// Reconcile leaves the apex Service to the controller's service sync; it has
// nothing of its own to create.
func (r *KubernetesRouter) Reconcile(context.Context, *v1alpha1.Canary, Target) error { return nil }

// Finalize has nothing to hand back: the apex Service is the controller's,
// which points it at the target before releasing it.
func (r *KubernetesRouter) Finalize(context.Context, *v1alpha1.Canary, Target) error { return nil }

// SetRoutes points the apex Service at the canary when it gets any traffic,
// at the primary otherwise.
func (r *KubernetesRouter) SetRoutes(ctx context.Context, canary *v1alpha1.Canary, t Target, w Weights) error {
	svc := &corev1.Service{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: canary.Namespace, Name: t.ApexService}, svc); err != nil {
		return fmt.Errorf("failed to get apex service %s: %w", t.ApexService, err)
	}
	if !metav1.IsControlledBy(svc, canary) {
		return notManaged("Service", svc)
	}
	want := t.PrimarySelector
	if w.Canary > 0 {
		want = t.CanarySelector
	}
	if maps.Equal(svc.Spec.Selector, want) {
		return nil
	}
	patch := client.MergeFrom(svc.DeepCopy())
	svc.Spec.Selector = maps.Clone(want)
	if err := r.Client.Patch(ctx, svc, patch, client.FieldOwner(r.FieldOwner)); err != nil {
		return fmt.Errorf("failed to route service %s: %w", t.ApexService, err)
	}
	return nil
}

// GetRoutes reads the apex Service's selector. kube-proxy applies it
// without reporting back, so it is always programmed.
func (r *KubernetesRouter) GetRoutes(ctx context.Context, canary *v1alpha1.Canary, t Target) (Routes, error) {
	svc := &corev1.Service{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: canary.Namespace, Name: t.ApexService}, svc); err != nil {
		if apierrors.IsNotFound(err) {
			return Routes{}, nil
		}
		return Routes{}, err
	}
	if !metav1.IsControlledBy(svc, canary) {
		return Routes{}, nil
	}
	routes := Routes{Found: true, Weights: AllPrimary, Status: Programmed}
	if maps.Equal(svc.Spec.Selector, t.CanarySelector) {
		routes.Weights = Canary(100)
	}
	return routes, nil
}
