package controllers

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
)

// syncGeneratedServices re-creates generated Services, routing objects,
// the primary's autoscaler and, on the promoted spec, the primary's config
// copies, when they drifted or were deleted; the weights in force are kept.
func (r *CanaryReconciler) syncGeneratedServices(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	if isServiceTarget(obj) {
		return ctrl.Result{}, r.syncServiceTarget(ctx, obj)
	}
	target, err := r.getTarget(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	ctrl.LoggerFrom(ctx).Info("generated objects drifted; syncing them")
	if obs.Target.SpecHash == obj.Status.LastPromotedSpec {
		if err := r.copyPrimaryConfigs(ctx, obj, obs.Target.TrackedConfigs); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, r.syncServices(ctx, obj, target)
}
