package controllers

import (
	"context"
	"errors"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
)

// waitForPrimary waits for the primary Deployment to become ready. The watch
// on the primary brings the next reconcile as soon as its status changes;
// the requeue is only a safety net.
func (r *CanaryReconciler) waitForPrimary(_ context.Context, obj *v1alpha1.Canary, a rollout.WaitForPrimary) (ctrl.Result, error) {
	return ctrl.Result{}, &waitingError{
		Reason:       v1alpha1.WaitingForPrimaryReason,
		Err:          errors.New(a.Message),
		RequeueAfter: obj.GetAnalysisInterval(),
	}
}
