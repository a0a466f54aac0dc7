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
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/workload"
	"github.com/serin-dev/serin/notifier"
)

// repairPrimary re-creates a primary Deployment that someone deleted after
// initialization, with the last promoted revision as recorded when it was
// promoted (template and replicas), or else from the target when the
// target runs it. The phase does not change; the rollout goes on from there.
func (r *CanaryReconciler) repairPrimary(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	good := obj.Status.LastPromotedSpec
	target, err := r.getTarget(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	rev, ok, err := r.promotedTemplate(ctx, obj, good)
	switch {
	case err != nil:
		return ctrl.Result{}, err
	case !ok && obs.Target.SpecHash == good:
		if err := r.applyPrimary(ctx, obj, target, obs.Target); err != nil {
			return ctrl.Result{}, err
		}
	case !ok:
		return ctrl.Result{}, &stallingError{Reason: v1alpha1.InvalidTargetReason, Err: fmt.Errorf(
			"%s was deleted and the last promoted revision %s is not recorded: revert the target in Git to the last promoted spec, or delete the Canary and create it again", obj.GetPrimaryName(), good)}
	default:
		primary := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}}
		workload.MutatePrimary(obj, target, primary, false, nil)
		primary.Spec.Template = rev.Template
		if rev.Replicas != nil {
			primary.Spec.Replicas = rev.Replicas
		}
		primary.Annotations[specHashAnnotation] = good
		if err := workload.Claim(obj, primary, r.Client.Scheme()); err != nil {
			return ctrl.Result{}, err
		}
		err := r.Create(ctx, primary, client.FieldOwner(r.ControllerName))
		if apierrors.IsAlreadyExists(err) {
			// Re-created by the reconcile before this one, whose write the
			// cache has not shown yet: nothing to repair, nothing to retry.
			return ctrl.Result{}, primaryRepairing(obj)
		}
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("failed to re-create primary %s: %w", primary.Name, err)
		}
	}
	r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.PrimaryRepairedReason,
		"%s was deleted: re-created with the last promoted revision %s", obj.GetPrimaryName(), good)
	return ctrl.Result{}, primaryRepairing(obj)
}

// primaryRepairing is the wait after a primary was re-created: Ready is
// False (PrimaryUnavailable) from the repair on, until the primary's pods
// serve, whose Deployment's status changes reconcile again.
func primaryRepairing(obj *v1alpha1.Canary) error {
	return &waitingError{Reason: v1alpha1.PrimaryUnavailableReason, RequeueAfter: time.Second,
		Err: fmt.Errorf("%s was re-created: waiting for its pods to serve", obj.GetPrimaryName())}
}

// primaryUnavailable keeps Ready False, outside a rollout, while the
// primary has no pod ready to serve; its Deployment's status changes
// reconcile again.
func (r *CanaryReconciler) primaryUnavailable(a rollout.PrimaryUnavailable) (ctrl.Result, error) {
	return ctrl.Result{}, &waitingError{Reason: v1alpha1.PrimaryUnavailableReason, RequeueAfter: time.Minute,
		Err: fmt.Errorf("the primary has no pod ready to serve: %s", a.Message)}
}

// recordWeights records the weights the routing objects carry, which a
// lost status write did not, and restarts the step clock from now.
func (r *CanaryReconciler) recordWeights(obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	obj.Status.CanaryWeight = obs.CanaryWeight
	transition(obj, obj.Status.Phase, obs.Now, v1alpha1.ProgressingReason, "%s", analysingMessage(obj))
	return ctrl.Result{RequeueAfter: requeueAtNextStep(obj, obs.Now)}, nil
}
