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
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/notifier"
	"github.com/serin-dev/serin/routing"
)

// rollback sends all traffic to the primary, which still runs the last
// promoted revision. The canary is scaled down afterwards (Decide's
// ScaleDownCanary, once Failed), when the data plane applied the routes
// and had --data-plane-settle-time to: its pods never terminate while
// requests still reach them. Decide and DecideStep
// never pick it during Promoting, Finalising or Halted: then the primary is
// the copy that may be broken (TestDecide_NoRollbackDuringPromotion,
// TestDecideStep).
func (r *CanaryReconciler) rollback(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, a rollout.Rollback) (ctrl.Result, error) {
	if v := obs.Requests.Abort; v != "" {
		obj.Status.HandledRequests.Abort = v
	}
	groupFailed(obj, a)
	if err := r.setRoutes(ctx, obj, routing.AllPrimary); err != nil {
		return ctrl.Result{}, err
	}
	transition(obj, v1alpha1.PhaseFailed, obs.Now, v1alpha1.FailedReason, "rolled back revision %s: %s", obj.Status.LastAppliedSpec, a.Reason)
	r.emit(ctx, obj, notifier.SeverityError, v1alpha1.RolledBackReason, "canary %s rolled back: %s", obj.Name, a.Reason)
	r.metrics.endRollout(obj, obs.Now, false)
	r.postRollout(ctx, obj)
	// The canary's scale-down is the next reconcile's, once the data plane
	// had the time to apply the weights: nothing else may bring one (the
	// kubernetes router's Service has no status to watch).
	return ctrl.Result{RequeueAfter: r.DataPlaneSettle + 100*time.Millisecond}, nil
}
