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
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/notifier"
)

// routesProgrammed ends a wait for the routes that Ready showed: the
// weights are in force from now, so the transition time (the step clock)
// restarts and the analysis judges only traffic the gateway applied. Ready
// says again what the rollout does, and decide runs again at once for what
// the wait held back.
func (r *CanaryReconciler) routesProgrammed(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	r.emit(ctx, obj, notifier.SeverityInfo, v1alpha1.RouteProgrammedReason, "the gateway accepted canary weight %d", obs.CanaryWeight)
	reason, msg := v1alpha1.ProgressingReason, fmt.Sprintf("the gateway accepted canary weight %d", obs.CanaryWeight)
	switch obj.Status.Phase {
	case v1alpha1.PhaseProgressing:
		msg = analysingMessage(obj)
	case v1alpha1.PhaseWaitingPromotion:
		reason, msg = string(v1alpha1.PhaseWaitingPromotion), "analysis passed; waiting for approval to promote"
	case v1alpha1.PhaseHalted:
		reason = v1alpha1.HaltedReason
	}
	transition(obj, obj.Status.Phase, obs.Now, reason, "%s", msg)
	return ctrl.Result{RequeueAfter: 10 * time.Millisecond}, nil
}
