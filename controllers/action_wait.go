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

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/notifier"
)

// The waits do nothing: a watch on the Deployments brings the next reconcile
// as soon as their status changes, and the requeue is the schedule of the
// next analysis step or deadline.

// waitForPrimary waits for the primary to become ready during initialization.
func (r *CanaryReconciler) waitForPrimary(_ context.Context, obj *v1alpha1.Canary, a rollout.WaitForPrimary) (ctrl.Result, error) {
	return ctrl.Result{}, &waitingError{
		Reason:       v1alpha1.WaitingForPrimaryReason,
		Err:          errors.New(a.Message),
		RequeueAfter: obj.GetAnalysisInterval(),
	}
}

// waitForCanary waits for the scaled-up canary; decide rolls back once the
// progress deadline has passed.
func (r *CanaryReconciler) waitForCanary(obj *v1alpha1.Canary, obs rollout.Observation, a rollout.WaitForCanary) (ctrl.Result, error) {
	deadline := obj.GetProgressDeadline()
	if t := obj.Status.LastTransitionTime; t != nil {
		deadline = t.Add(deadline).Sub(obs.Now)
	}
	setReconcilingMessage(obj, "waiting for the canary: %s", a.Message)
	return ctrl.Result{RequeueAfter: max(deadline, 0) + 100e6}, nil
}

// waitForPromotion waits for the promoted primary; decide halts once the
// progress deadline has passed.
func (r *CanaryReconciler) waitForPromotion(obj *v1alpha1.Canary, a rollout.WaitForPromotion) (ctrl.Result, error) {
	setReconcilingMessage(obj, "waiting for the promoted primary: %s", a.Message)
	return ctrl.Result{RequeueAfter: max(a.RequeueAfter, 0) + 100e6}, nil
}

// waitForRoutes waits for the gateway to apply the weights, Ready saying
// what it reported, parent by parent (an event and an alert when the wait
// begins). The HTTPRoute's status change brings the next reconcile; decide
// stalls once the progress deadline has passed.
func (r *CanaryReconciler) waitForRoutes(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, a rollout.WaitForRoutes) (ctrl.Result, error) {
	if conditions.GetReason(obj, meta.ReadyCondition) != v1alpha1.RouteNotProgrammedReason {
		r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.RouteNotProgrammedReason, "canary weight %d not applied by the gateway: %s", obs.CanaryWeight, a.Message)
	}
	conditions.MarkFalse(obj, meta.ReadyCondition, v1alpha1.RouteNotProgrammedReason, "waiting for the gateway to accept canary weight %d: %s", obs.CanaryWeight, a.Message)
	deadline := obj.GetProgressDeadline()
	if t := obj.Status.LastTransitionTime; t != nil {
		deadline = t.Add(deadline).Sub(obs.Now)
	}
	return ctrl.Result{RequeueAfter: max(deadline, 0) + 100e6}, nil
}
