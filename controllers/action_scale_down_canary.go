package controllers

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// scaleDownCanary scales the target back to zero outside a rollout, e.g.
// after kustomize-controller re-applied a manifest with replicas.
func (r *CanaryReconciler) scaleDownCanary(ctx context.Context, obj *v1alpha1.Canary) (ctrl.Result, error) {
	return ctrl.Result{}, r.scaleTarget(ctx, obj, 0)
}
