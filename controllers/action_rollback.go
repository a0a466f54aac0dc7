package controllers

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/notifier"
	"github.com/serin-dev/serin/routing"
)

// rollback sends all traffic to the primary, which still runs the last
// promoted revision, and scales the canary down. Decide never picks it
// during Promoting, Finalising or Halted: then the primary is the copy that
// may be broken.
func (r *CanaryReconciler) rollback(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, a rollout.Rollback) (ctrl.Result, error) {
	switch obj.Status.Phase {
	case v1alpha1.PhasePromoting, v1alpha1.PhaseFinalising, v1alpha1.PhaseHalted:
		return r.halt(ctx, obj, obs, rollout.Halt{Reason: a.Reason + " (no rollback during promotion)"})
	}
	if v := obs.Requests.Abort; v != "" {
		obj.Status.HandledRequests.Abort = v
	}
	if err := r.setRoutes(ctx, obj, routing.AllPrimary); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.scaleTarget(ctx, obj, 0); err != nil {
		return ctrl.Result{}, err
	}
	transition(obj, v1alpha1.PhaseFailed, obs.Now, v1alpha1.FailedReason, "rolled back revision %s: %s", obj.Status.LastAppliedSpec, a.Reason)
	r.emit(ctx, obj, notifier.SeverityError, "RolledBack", "canary %s rolled back: %s", obj.Name, a.Reason)
	r.metrics.endRollout(obj, obs.Now, false)
	r.postRollout(ctx, obj)
	return ctrl.Result{}, nil
}
