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
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// Annotations of the primary Deployment under routing.provider replicas:
// the split the router wrote, read back as a route's weights are.
const (
	// ReplicasAnnotation is the target's replicas, the total the primary
	// and the canary share while the canary has a weight.
	ReplicasAnnotation = "serin.dev/replicas"
	// CanaryWeightAnnotation is the canary's weight: its share of them,
	// in percent.
	CanaryWeightAnnotation = "serin.dev/canary-weight"
)

// ReplicasRouter rolls out a worker, which serves no requests: the
// canary's weight is its share of the target's replicas. At weight w the
// canary (the target Deployment) runs CanaryReplicas(w, total) pods and
// the primary the rest; the primary gives up a pod only once a canary pod
// is ready in its place, so the two never run fewer ready pods together
// than the total, and the canary never more than its share. There is no
// Service and no route; the weights are in force (Programmed) once the
// canary's pods are ready and the primary runs the rest.
type ReplicasRouter struct {
	Client     client.Client
	FieldOwner string
}

var _ Router = (*ReplicasRouter)(nil)

// CanaryReplicas is the canary's pods at weight w of total: w percent,
// rounded up, at least one for any weight above zero.
func CanaryReplicas(w int, total int32) int32 {
	if w <= 0 {
		return 0
	}
	c := (int64(w)*int64(total) + 99) / 100
	return int32(min(max(c, 1), int64(total)))
}

// split is what the router reads of the two Deployments.
type split struct {
	primary, canary *appsv1.Deployment
	// total is the target's replicas: the annotation while split, else
	// the primary's.
	total int32
	// weight is the canary's weight last written.
	weight int
}

func (r *ReplicasRouter) read(ctx context.Context, canary *v1alpha1.Canary) (*split, error) {
	s := &split{primary: &appsv1.Deployment{}, canary: &appsv1.Deployment{}}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: canary.Namespace, Name: canary.GetPrimaryName()}, s.primary); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("failed to get the primary: %w", err)
	}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: canary.Namespace, Name: canary.Spec.TargetRef.Name}, s.canary); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("failed to get the target: %w", err)
		}
		s.canary = nil
	}
	s.total = TotalReplicas(s.primary)
	if v, err := strconv.Atoi(s.primary.Annotations[CanaryWeightAnnotation]); err == nil && v > 0 && v <= 100 {
		s.weight = v
	}
	return s, nil
}

// want is the split at weight w: the canary's replicas, and the
// primary's, which keeps a pod for each of the canary's not ready yet.
func (s *split) want(w int) (canary, primary int32) {
	canary = CanaryReplicas(w, s.total)
	ready := int32(0)
	if s.canary != nil {
		ready = min(s.canary.Status.ReadyReplicas, canary)
	}
	return canary, s.total - ready
}

// Reconcile writes the split of the weight last written again, should a
// person or an autoscaler have changed a side's replicas.
func (r *ReplicasRouter) Reconcile(ctx context.Context, canary *v1alpha1.Canary, _ Target) error {
	s, err := r.read(ctx, canary)
	if err != nil || s == nil {
		return err
	}
	return r.apply(ctx, s, s.weight)
}

// SetRoutes gives the canary w percent of the replicas.
func (r *ReplicasRouter) SetRoutes(ctx context.Context, canary *v1alpha1.Canary, _ Target, w Weights) error {
	s, err := r.read(ctx, canary)
	if err != nil {
		return err
	}
	if s == nil {
		return fmt.Errorf("primary deployment %s/%s not found", canary.Namespace, canary.GetPrimaryName())
	}
	return r.apply(ctx, s, w.Canary)
}

// apply writes the split of weight w: the canary's replicas first, then
// the primary's with the annotations that record the split. At weight 0
// the primary runs all the replicas again; the canary is left to the
// engine, which scales it down once the rollout ends.
func (r *ReplicasRouter) apply(ctx context.Context, s *split, w int) error {
	if w > 0 && s.canary != nil {
		c, _ := s.want(w)
		if ptr.Deref(s.canary.Spec.Replicas, 1) != c {
			patch := client.MergeFrom(s.canary.DeepCopy())
			s.canary.Spec.Replicas = ptr.To(c)
			if err := r.Client.Patch(ctx, s.canary, patch, client.FieldOwner(r.FieldOwner)); err != nil {
				return fmt.Errorf("failed to scale the canary %s to %d: %w", s.canary.Name, c, err)
			}
		}
	}
	primary := s.total
	if w > 0 {
		_, primary = s.want(w)
	}
	annotations := map[string]string{CanaryWeightAnnotation: strconv.Itoa(w), ReplicasAnnotation: strconv.Itoa(int(s.total))}
	if w == 0 {
		// Whole again: the primary's replicas are the total from here on.
		delete(annotations, ReplicasAnnotation)
	}
	p := s.primary
	if ptr.Deref(p.Spec.Replicas, 1) == primary && p.Annotations[CanaryWeightAnnotation] == annotations[CanaryWeightAnnotation] &&
		p.Annotations[ReplicasAnnotation] == annotations[ReplicasAnnotation] {
		return nil
	}
	patch := client.MergeFrom(p.DeepCopy())
	p.Spec.Replicas = ptr.To(primary)
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[CanaryWeightAnnotation] = annotations[CanaryWeightAnnotation]
	if v, ok := annotations[ReplicasAnnotation]; ok {
		p.Annotations[ReplicasAnnotation] = v
	} else {
		delete(p.Annotations, ReplicasAnnotation)
	}
	if err := r.Client.Patch(ctx, p, patch, client.FieldOwner(r.FieldOwner)); err != nil {
		return fmt.Errorf("failed to scale the primary %s to %d: %w", p.Name, primary, err)
	}
	return nil
}

// GetRoutes reads the split back: the weight last written, drifted when a
// side runs other replicas than the weight asks, and programmed once the
// canary's pods are ready and the primary runs the rest.
func (r *ReplicasRouter) GetRoutes(ctx context.Context, canary *v1alpha1.Canary, _ Target) (Routes, error) {
	s, err := r.read(ctx, canary)
	if err != nil || s == nil {
		return Routes{}, err
	}
	routes := Routes{Found: true, Weights: Canary(s.weight), Status: Programmed}
	got, primaryReady := ptr.Deref(s.primary.Spec.Replicas, 1), s.primary.Status.ReadyReplicas
	if s.weight == 0 {
		routes.Drifted = got != s.total
		if primaryReady < s.total {
			// The canary's pods go only once the primary's are back.
			routes.Status = RouteStatus{Message: fmt.Sprintf("%d of the primary's %d pods ready", primaryReady, s.total)}
		}
		return routes, nil
	}
	c, p := s.want(s.weight)
	routes.Drifted = got != p || s.canary == nil || ptr.Deref(s.canary.Spec.Replicas, 1) != c
	ready := int32(0)
	if s.canary != nil {
		ready = s.canary.Status.ReadyReplicas
	}
	if ready < c || got != s.total-c || primaryReady < s.total-c {
		routes.Status = RouteStatus{Message: fmt.Sprintf("%d of the canary's %d pods ready, %d of the primary's %d; the primary gives up a pod only once a canary pod is ready",
			ready, c, primaryReady, s.total-c)}
	}
	return routes, nil
}

// Finalize has nothing to hand back: the primary and the target keep
// their replicas, and the engine gives the target its own.
func (r *ReplicasRouter) Finalize(context.Context, *v1alpha1.Canary, Target) error { return nil }

// TotalReplicas is the target's replicas as the primary has them: while
// split, the total the router recorded; else its own.
func TotalReplicas(primary *appsv1.Deployment) int32 {
	if v, err := strconv.Atoi(primary.Annotations[ReplicasAnnotation]); err == nil && v > 0 {
		return int32(v)
	}
	return ptr.Deref(primary.Spec.Replicas, 1)
}
