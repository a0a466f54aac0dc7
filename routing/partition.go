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

// PartitionRouter rolls a StatefulSet out in place (routing.provider
// replicas with a StatefulSet target): the canary's weight is its share
// of the replicas, the pods of the highest ordinals, which the
// StatefulSet controller updates to the new revision once the partition
// is lowered below them. At weight w the partition is
// replicas - CanaryReplicas(w, replicas); at weight 0 it is the replicas,
// so that a new template updates no pod until serin lowers it. Its
// Service keeps selecting every pod: traffic follows the pods. The weight
// is recorded on the StatefulSet (CanaryWeightAnnotation).
type PartitionRouter struct {
	Client     client.Client
	FieldOwner string
}

var _ Router = (*PartitionRouter)(nil)

// Partition is the partition of a StatefulSet of replicas at weight w.
func Partition(w int, replicas int32) int32 {
	return replicas - CanaryReplicas(w, replicas)
}

func (r *PartitionRouter) get(ctx context.Context, canary *v1alpha1.Canary) (*appsv1.StatefulSet, int, error) {
	sts := &appsv1.StatefulSet{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: canary.Namespace, Name: canary.Spec.TargetRef.Name}, sts); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, 0, nil
		}
		return nil, 0, fmt.Errorf("failed to get the target: %w", err)
	}
	w, err := strconv.Atoi(sts.Annotations[CanaryWeightAnnotation])
	if err != nil || w < 0 || w > 100 {
		w = 0
	}
	return sts, w, nil
}

// Reconcile writes the partition of the weight last written again, should
// a person or Flux have changed it.
func (r *PartitionRouter) Reconcile(ctx context.Context, canary *v1alpha1.Canary, _ Target) error {
	sts, w, err := r.get(ctx, canary)
	if err != nil || sts == nil {
		return err
	}
	return r.apply(ctx, sts, w)
}

// SetRoutes moves the partition to weight w.Canary.
func (r *PartitionRouter) SetRoutes(ctx context.Context, canary *v1alpha1.Canary, _ Target, w Weights) error {
	sts, _, err := r.get(ctx, canary)
	if err != nil {
		return err
	}
	if sts == nil {
		return fmt.Errorf("statefulset %s/%s not found", canary.Namespace, canary.Spec.TargetRef.Name)
	}
	return r.apply(ctx, sts, w.Canary)
}

func (r *PartitionRouter) apply(ctx context.Context, sts *appsv1.StatefulSet, w int) error {
	want := Partition(w, ptr.Deref(sts.Spec.Replicas, 1))
	if currentPartition(sts) == want && sts.Annotations[CanaryWeightAnnotation] == strconv.Itoa(w) {
		return nil
	}
	patch := client.MergeFrom(sts.DeepCopy())
	if sts.Spec.UpdateStrategy.RollingUpdate == nil {
		sts.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
	}
	sts.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To(want)
	if sts.Annotations == nil {
		sts.Annotations = map[string]string{}
	}
	sts.Annotations[CanaryWeightAnnotation] = strconv.Itoa(w)
	if err := r.Client.Patch(ctx, sts, patch, client.FieldOwner(r.FieldOwner)); err != nil {
		return fmt.Errorf("failed to set the partition of %s to %d: %w", sts.Name, want, err)
	}
	return nil
}

// currentPartition is the StatefulSet's partition (0 when unset).
func currentPartition(sts *appsv1.StatefulSet) int32 {
	if ru := sts.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		return ptr.Deref(ru.Partition, 0)
	}
	return 0
}

// GetRoutes reads the partition back: drifted when it is not the one of
// the weight recorded, programmed once the StatefulSet controller has
// updated the share's pods and every pod is ready.
func (r *PartitionRouter) GetRoutes(ctx context.Context, canary *v1alpha1.Canary, _ Target) (Routes, error) {
	sts, w, err := r.get(ctx, canary)
	if err != nil || sts == nil {
		return Routes{}, err
	}
	replicas := ptr.Deref(sts.Spec.Replicas, 1)
	routes := Routes{Found: true, Weights: Canary(w), Status: Programmed,
		Drifted: currentPartition(sts) != Partition(w, replicas) || sts.Annotations[CanaryWeightAnnotation] == ""}
	if w == 0 {
		return routes, nil
	}
	share := CanaryReplicas(w, replicas)
	st := sts.Status
	if st.ObservedGeneration < sts.Generation || st.UpdatedReplicas < share || st.ReadyReplicas < replicas {
		routes.Status = RouteStatus{Message: fmt.Sprintf("%d of the %d pods of the share updated, %d of %d pods ready",
			min(st.UpdatedReplicas, share), share, st.ReadyReplicas, replicas)}
	}
	return routes, nil
}

// Finalize gives the StatefulSet its own rolling update back when the
// Canary is deleted: partition 0, the weight's annotation removed.
func (r *PartitionRouter) Finalize(ctx context.Context, canary *v1alpha1.Canary, _ Target) error {
	sts, _, err := r.get(ctx, canary)
	if err != nil || sts == nil {
		return err
	}
	if currentPartition(sts) == 0 && sts.Annotations[CanaryWeightAnnotation] == "" {
		return nil
	}
	patch := client.MergeFrom(sts.DeepCopy())
	if sts.Spec.UpdateStrategy.RollingUpdate != nil {
		sts.Spec.UpdateStrategy.RollingUpdate.Partition = nil
	}
	delete(sts.Annotations, CanaryWeightAnnotation)
	return client.IgnoreNotFound(r.Client.Patch(ctx, sts, patch, client.FieldOwner(r.FieldOwner)))
}
