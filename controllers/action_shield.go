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

// shield sends every request to the side that can serve it, off the one
// that has no pod ready. The phase and its clock stay as they are: the
// promotion (or the halt) goes on, and Finalise or CompleteRestore routes
// back once the primary is ready.
func (r *CanaryReconciler) shield(ctx context.Context, obj *v1alpha1.Canary, a rollout.Shield) (ctrl.Result, error) {
	w, to := routing.Canary(100), "the canary"
	if a.Side == rollout.CanarySide {
		w, to = routing.AllPrimary, "the primary"
	}
	if err := r.setRoutes(ctx, obj, w); err != nil {
		return ctrl.Result{}, err
	}
	r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.ShieldedReason, "all traffic to %s: %s", to, a.Reason)
	// Decide again at once, with the weights in force.
	return ctrl.Result{RequeueAfter: 10 * time.Millisecond}, nil
}
