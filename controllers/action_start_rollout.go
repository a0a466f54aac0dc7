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

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/notifier"
	"github.com/serin-dev/serin/routing"
)

// startRollout begins the analysis of a new revision: it asks the
// confirm-rollout gate (Waiting while closed), then scales the canary up to
// the primary's replicas with no traffic yet.
func (r *CanaryReconciler) startRollout(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, a rollout.StartRollout) (ctrl.Result, error) {
	closed, asked := r.confirmRollout(obj, obs)
	if !asked {
		// Nothing recorded until the gate answered: the next reconcile starts over.
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

	replicas, err := r.canaryReplicas(ctx, obj, obs)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.scaleTarget(ctx, obj, replicas); err != nil {
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

// canaryReplicas is the size of the canary during the analysis: the
// replicas the new revision asks for (Flux applied them with it), or else
// the primary's.
func (r *CanaryReconciler) canaryReplicas(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (int32, error) {
	if isServiceTarget(obj) {
		return 0, nil
	}
	if obs.Target.Replicas > 0 && obj.Spec.AutoscalerRef == nil {
		return obs.Target.Replicas, nil
	}
	primary := &appsv1.Deployment{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}, primary); err != nil {
		return 0, err
	}
	if primary.Spec.Replicas != nil && *primary.Spec.Replicas > 0 {
		return *primary.Spec.Replicas, nil
	}
	return 1, nil
}
