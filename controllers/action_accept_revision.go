package controllers

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/notifier"
)

// acceptRevision records a target spec equal to the primary's (a manual
// rollback in Git) without analysing it: the primary already runs it.
func (r *CanaryReconciler) acceptRevision(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	obj.Status.LastAppliedSpec = obs.Target.SpecHash
	obj.Status.LastAttemptedRevision = obs.Target.Revision
	r.emit(ctx, obj, notifier.SeverityInfo, "RevisionAccepted", "target spec equals the primary's: no analysis needed")
	return ctrl.Result{}, r.scaleTarget(ctx, obj, 0)
}
