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
	"errors"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// ownedConditions are the conditions serin writes; on a patch conflict its
// own values win.
var ownedConditions = []string{
	meta.ReadyCondition,
	meta.ReconcilingCondition,
	meta.StalledCondition,
	v1alpha1.PromotedCondition,
}

// setConditions derives the kstatus conditions from the phase and the
// reconcile error, and turns typed errors into their handling, as Flux's
// controllers do: a stalling error becomes a reconcile.TerminalError (not
// retried), a waiting error a requeue after its delay with no error, any
// other error is returned for a retry with backoff, Reconciling's reason
// ProgressingWithRetry.
func setConditions(obj *v1alpha1.Canary, result ctrl.Result, err error) (ctrl.Result, error) {
	err = stallOnRouteRef(stallOnInvalid(stallOnForeign(err)))
	var stalling *stallingError
	var waiting *waitingError
	switch {
	case errors.As(err, &stalling):
		conditions.MarkStalled(obj, stalling.Reason, "%s", stalling.Error())
		conditions.MarkFalse(obj, meta.ReadyCondition, stalling.Reason, "%s", stalling.Error())
		conditions.Delete(obj, meta.ReconcilingCondition)
		if stalling.RetryAfter > 0 {
			return ctrl.Result{RequeueAfter: stalling.RetryAfter}, nil
		}
		// Terminal: controller-runtime logs and counts it, and does not
		// retry; a change to the Canary or what it watches reconciles it.
		return ctrl.Result{}, reconcile.TerminalError(stalling)
	case errors.As(err, &waiting):
		conditions.MarkReconciling(obj, waiting.Reason, "%s", waiting.Error())
		conditions.MarkFalse(obj, meta.ReadyCondition, waiting.Reason, "%s", waiting.Error())
		conditions.Delete(obj, meta.StalledCondition)
		return ctrl.Result{RequeueAfter: waiting.RequeueAfter}, nil
	case err != nil:
		conditions.MarkFalse(obj, meta.ReadyCondition, v1alpha1.ReconciliationFailedReason, "%s", err.Error())
		conditions.MarkReconciling(obj, meta.ProgressingWithRetryReason, "%s", err.Error())
		conditions.Delete(obj, meta.StalledCondition)
		return result, err
	}
	setPhaseConditions(obj)
	return result, nil
}

// keepKstatusInvariants makes the conditions a kstatus reader can
// interpret, whatever path set them: Ready and Stalled are never both
// True (a stall wins: a person must act), and Reconciling and Stalled are
// never both True.
func keepKstatusInvariants(obj *v1alpha1.Canary) {
	if !conditions.IsStalled(obj) {
		return
	}
	if conditions.IsReady(obj) {
		conditions.MarkFalse(obj, meta.ReadyCondition, conditions.GetReason(obj, meta.StalledCondition), "%s", conditions.GetMessage(obj, meta.StalledCondition))
	}
	conditions.Delete(obj, meta.ReconcilingCondition)
}

// setPhaseConditions derives Reconciling, Stalled and Promoted from the
// phase and the Ready condition's reason and message, which the last
// transition (or wait) set.
func setPhaseConditions(obj *v1alpha1.Canary) {
	phase := obj.Status.Phase
	reason := conditions.GetReason(obj, meta.ReadyCondition)
	msg := conditions.GetMessage(obj, meta.ReadyCondition)
	switch phase {
	case v1alpha1.PhaseInitialized, v1alpha1.PhaseSucceeded:
		if !conditions.IsTrue(obj, meta.ReadyCondition) || reason == "" {
			reason, msg = v1alpha1.InitializedReason, "canary initialized: the primary serves the target's spec"
			if phase == v1alpha1.PhaseSucceeded {
				reason, msg = v1alpha1.SucceededReason, "canary analysis succeeded: the primary serves the new revision"
			}
		}
		conditions.MarkTrue(obj, meta.ReadyCondition, reason, "%s", msg)
		conditions.MarkTrue(obj, v1alpha1.PromotedCondition, reason, "%s", msg)
		conditions.Delete(obj, meta.ReconcilingCondition)
		conditions.Delete(obj, meta.StalledCondition)
	case v1alpha1.PhaseFailed, v1alpha1.PhaseHalted:
		if reason == "" || conditions.IsTrue(obj, meta.ReadyCondition) {
			reason, msg = string(phase), "canary "+string(phase)
		}
		conditions.MarkStalled(obj, reason, "%s", msg)
		conditions.MarkFalse(obj, meta.ReadyCondition, reason, "%s", msg)
		conditions.MarkFalse(obj, v1alpha1.PromotedCondition, reason, "%s", msg)
		conditions.Delete(obj, meta.ReconcilingCondition)
	default:
		if phase == "" {
			phase = v1alpha1.PhaseInitializing
		}
		if reason == "" || conditions.IsTrue(obj, meta.ReadyCondition) {
			reason, msg = string(phase), "canary "+string(phase)
		}
		conditions.MarkReconciling(obj, reason, "%s", msg)
		conditions.MarkFalse(obj, meta.ReadyCondition, reason, "%s", msg)
		conditions.Delete(obj, meta.StalledCondition)
		if phase != v1alpha1.PhaseInitializing && phase != "" {
			conditions.MarkFalse(obj, v1alpha1.PromotedCondition, v1alpha1.ProgressingReason, "%s", msg)
		}
	}
}

// setReconcilingMessage says what a rollout in progress waits for.
func setReconcilingMessage(obj *v1alpha1.Canary, format string, args ...any) {
	reason := conditions.GetReason(obj, meta.ReadyCondition)
	if reason == "" || conditions.IsTrue(obj, meta.ReadyCondition) {
		reason = v1alpha1.ProgressingReason
	}
	conditions.MarkFalse(obj, meta.ReadyCondition, reason, format, args...)
}

// settled reports whether a reconcile ended in a state Flux records as the
// outcome of the Canary's current generation (status.observedGeneration):
// Ready (initialized or promoted, nothing in progress), Stalled (a person
// or a new revision must act), or suspended, where standing still is what
// the spec asks for. A rollout in progress, a wait or a failure to retry
// leaves observedGeneration at the last settled generation, so that
// kstatus, and `flux`-style waits on it, see the Canary as in progress.
func settled(obj *v1alpha1.Canary, reconcileErr error) bool {
	switch {
	case conditions.IsStalled(obj):
		return true
	case reconcileErr != nil:
		return false
	}
	return conditions.IsReady(obj) || obj.Spec.Suspend
}
