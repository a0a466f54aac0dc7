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
)

// halt freezes a promotion whose primary failed. Routing stays exactly as
// it is and the canary keeps running: it is the only healthy copy of the
// new revision. A person, a new Git revision, or the primary's recovery
// moves the Canary on.
func (r *CanaryReconciler) halt(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, a rollout.Halt) (ctrl.Result, error) {
	transition(obj, v1alpha1.PhaseHalted, obs.Now, v1alpha1.HaltedReason, "promotion of revision %s halted, canary kept serving: %s", obj.Status.LastAppliedSpec, a.Reason)
	r.emit(ctx, obj, notifier.SeverityError, v1alpha1.HaltedReason, "promotion halted, routing frozen and canary kept serving: %s", a.Reason)
	r.metrics.endRollout(obj, obs.Now, false)
	// Decide again at once: the Halted phase has its own ways out (the
	// failure policy, the GitOps revert), which must not wait for an event.
	return ctrl.Result{RequeueAfter: 10 * time.Millisecond}, nil
}
