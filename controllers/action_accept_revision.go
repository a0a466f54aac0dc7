package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
)

// acceptRevision records a target spec equal to the primary's (a manual
// rollback in Git) without analysing it: the primary already runs it.
func (r *CanaryReconciler) acceptRevision(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	obj.Status.LastAppliedSpec = obs.Target.SpecHash
	obj.Status.LastAttemptedRevision = obs.Target.Revision
	r.Event(obj, corev1.EventTypeNormal, "RevisionAccepted", "target spec equals the primary's: no analysis needed")
	return ctrl.Result{}, r.scaleTarget(ctx, obj, 0)
}
