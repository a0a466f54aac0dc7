package controllers

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// syncGeneratedServices re-creates generated Services or routing objects
// that drifted or were deleted; the weights in force are kept.
func (r *CanaryReconciler) syncGeneratedServices(ctx context.Context, obj *v1alpha1.Canary) (ctrl.Result, error) {
	if isServiceTarget(obj) {
		return ctrl.Result{}, r.syncServiceTarget(ctx, obj)
	}
	target, err := r.getTarget(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	ctrl.LoggerFrom(ctx).Info("generated services or routes drifted; syncing them")
	return ctrl.Result{}, r.syncServices(ctx, obj, target)
}
