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
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/workload"
	"github.com/serin-dev/serin/notifier"
)

// repairPrimary re-creates a primary that someone deleted after
// initialization, with the last promoted revision as recorded when it was
// promoted, or else from the target when the target runs it (see each
// targetKind). The phase does not change; the rollout goes on from there.
func (r *CanaryReconciler) repairPrimary(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	return r.targetKindOf(obj).repairPrimary(ctx, obj, obs)
}

// scalePrimary scales a primary Deployment that someone scaled to zero
// back to the replicas of its last promoted revision, or else its
// autoscaler's minimum, or one. Ready is False (PrimaryUnavailable) from
// then on until its pods serve.
func (r *CanaryReconciler) scalePrimary(ctx context.Context, obj *v1alpha1.Canary) (ctrl.Result, error) {
	primary := &appsv1.Deployment{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}, primary); err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to get primary: %w", err)
	}
	if err := workload.MayManage(obj, primary, r.Client.Scheme()); err != nil {
		return ctrl.Result{}, err
	}
	replicas, err := r.primaryReplicas(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	patch := client.MergeFrom(primary.DeepCopy())
	primary.Spec.Replicas = ptr.To(replicas)
	if err := r.Patch(ctx, primary, patch, client.FieldOwner(r.ControllerName)); err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to scale primary %s back to %d: %w", primary.Name, replicas, err)
	}
	msg := fmt.Sprintf("Deployment %s was scaled to 0 outside serin: restoring %d replicas", primary.Name, replicas)
	r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.PrimaryUnavailableReason, "%s", msg)
	return ctrl.Result{}, &waitingError{Reason: v1alpha1.PrimaryUnavailableReason, RequeueAfter: time.Second, Err: errors.New(msg)}
}

// primaryReplicas is what a primary scaled to zero gets back: the replicas
// of the last promoted revision, the minimum of the primary's
// HorizontalPodAutoscaler, or one.
func (r *CanaryReconciler) primaryReplicas(ctx context.Context, obj *v1alpha1.Canary) (int32, error) {
	if obj.Spec.AutoscalerRef != nil {
		hpa := &autoscalingv2.HorizontalPodAutoscaler{}
		err := r.Get(ctx, client.ObjectKey{Namespace: obj.Namespace, Name: workload.PrimaryAutoscalerName(obj)}, hpa)
		if err == nil && hpa.Spec.MinReplicas != nil && *hpa.Spec.MinReplicas > 0 {
			return *hpa.Spec.MinReplicas, nil
		}
		if client.IgnoreNotFound(err) != nil {
			return 0, fmt.Errorf("failed to get the primary's autoscaler: %w", err)
		}
	}
	rev, ok, err := r.promotedTemplate(ctx, obj, obj.Status.LastPromotedSpec)
	if err != nil {
		return 0, err
	}
	if ok && rev.Replicas != nil && *rev.Replicas > 0 {
		return *rev.Replicas, nil
	}
	return 1, nil
}

// primaryNotRecorded is the stall of a repair that has nothing to re-create
// the primary from.
func primaryNotRecorded(obj *v1alpha1.Canary) error {
	return &stallingError{Reason: v1alpha1.InvalidTargetReason, Err: fmt.Errorf(
		"%s was deleted and the last promoted revision %s is not recorded: revert the target in Git to the last promoted spec, or delete the Canary and create it again", obj.GetPrimaryName(), obj.Status.LastPromotedSpec)}
}

// recreatePrimary creates the primary a repair built.
func (r *CanaryReconciler) recreatePrimary(ctx context.Context, obj *v1alpha1.Canary, primary client.Object) error {
	if err := workload.Claim(obj, primary, r.Client.Scheme()); err != nil {
		return err
	}
	err := r.Create(ctx, primary, client.FieldOwner(r.ControllerName))
	if apierrors.IsAlreadyExists(err) {
		// Re-created by the reconcile before this one, whose write the
		// cache has not shown yet: nothing to repair, nothing to retry.
		return primaryRepairing(obj)
	}
	if err != nil {
		return fmt.Errorf("failed to re-create primary %s: %w", primary.GetName(), err)
	}
	return nil
}

// primaryRepaired announces a repair and waits for the primary to serve.
func (r *CanaryReconciler) primaryRepaired(ctx context.Context, obj *v1alpha1.Canary) (ctrl.Result, error) {
	r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.PrimaryRepairedReason,
		"%s was deleted: re-created with the last promoted revision %s", obj.GetPrimaryName(), obj.Status.LastPromotedSpec)
	return ctrl.Result{}, primaryRepairing(obj)
}

// primaryRepairing is the wait after a primary was re-created: Ready is
// False (PrimaryUnavailable) from the repair on, until the primary's pods
// serve, whose Deployment's status changes reconcile again.
func primaryRepairing(obj *v1alpha1.Canary) error {
	return &waitingError{Reason: v1alpha1.PrimaryUnavailableReason, RequeueAfter: time.Second,
		Err: fmt.Errorf("%s was re-created: waiting for its pods to serve", obj.GetPrimaryName())}
}
