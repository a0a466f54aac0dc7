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

// startRollout begins the analysis of a new revision: it asks the
// confirm-rollout gate (Waiting while closed), then scales the canary up
// with no traffic yet.
func (r *CanaryReconciler) startRollout(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, a rollout.StartRollout) (ctrl.Result, error) {
	// The release is recorded with the phase it starts, never before: the
	// other members read a member's release and phase together.
	left := obj.Status.Group.DeepCopy()
	if pending := joinRelease(obj, obs); len(pending) > 0 {
		// A member of a group whose dependencies are not promoted yet:
		// nothing runs, no gate is asked, until they are.
		st := &obj.Status
		announce := st.LastAppliedSpec != obs.Target.SpecHash || a.Retry
		if a.Retry {
			st.HandledRequests.Retry = obs.Requests.Retry
		}
		st.LastAppliedSpec, st.LastAttemptedRevision = obs.Target.SpecHash, obs.Target.Revision
		return r.waitForDependencies(ctx, obj, obs, pending, announce)
	}
	closed, asked := r.confirmRollout(obj, obs)
	if !asked {
		// Nothing recorded until the gate answered: the next reconcile starts over.
		obj.Status.Group = left
		return r.analysisPending(ctx, "confirm-rollout")
	}
	st := &obj.Status
	if a.Retry {
		st.HandledRequests.Retry = obs.Requests.Retry
	}
	// Announced once the status that records it is written: a failed write
	// below drops it (keepProgressOf), and the retry announces it then.
	announce := st.LastAppliedSpec != obs.Target.SpecHash || a.Retry
	st.LastAppliedSpec = obs.Target.SpecHash
	st.LastAttemptedRevision = obs.Target.Revision

	if closed != "" {
		r.announceRevision(ctx, obj, obs, announce)
		transition(obj, v1alpha1.PhaseWaiting, obs.Now, string(v1alpha1.PhaseWaiting), "waiting for approval: %s", closed)
		return ctrl.Result{RequeueAfter: obj.GetAnalysisInterval()}, nil
	}

	if err := r.targetKindOf(obj).scaleUp(ctx, obj, obs); err != nil {
		return ctrl.Result{}, err
	}
	if obs.CanaryWeight > 0 {
		// After a halted promotion the canary may still carry traffic; decide
		// starts a rollout only from a ready primary, so it can take it back.
		if err := r.setRoutes(ctx, obj, routing.AllPrimary); err != nil {
			return ctrl.Result{}, err
		}
	}
	r.announceRevision(ctx, obj, obs, announce)
	st.CanaryWeight, st.FailedChecks, st.Iterations = 0, 0, 0
	r.metrics.startRollout(obj, obs.Now)
	transition(obj, v1alpha1.PhaseProgressing, obs.Now, v1alpha1.ProgressingReason,
		"analysing revision %s", obs.Target.SpecHash)
	return ctrl.Result{RequeueAfter: time.Second}, nil
}

// announceRevision emits NewRevision for a revision (or a retry) whose
// rollout starts.
func (r *CanaryReconciler) announceRevision(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, announce bool) {
	if announce {
		r.emit(ctx, obj, notifier.SeverityInfo, v1alpha1.NewRevisionReason, "new revision %s of %s detected, starting the analysis", obs.Target.SpecHash, obj.Spec.TargetRef.Name)
	}
}
