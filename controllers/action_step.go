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
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/analysis"
	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/notifier"
	"github.com/serin-dev/serin/routing"
)

// step runs one analysis step: the rollback hooks, then the pre-rollout
// hooks before the first traffic, or else the rollout hooks and the metric
// checks of the traffic the canary served, all at once in the analysis
// runner (see analysis_runs.go), never in the reconcile. A failure counts
// one failed check; a pass increases the weight, counts an iteration, or,
// at the end, promotes, each behind its gate (confirm-traffic-increase,
// confirm-promotion), asked in the same work once the checks passed.
func (r *CanaryReconciler) step(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	st := &obj.Status
	key := analysisKey("step", obj, obs.CanaryWeight, st.LastAppliedSpec)
	work := stepWork(obj, obs)
	out, state := r.Analysis.Result(client.ObjectKeyFromObject(obj), key, work)
	if (state == analysis.Queued || work.Empty()) && !firstStep(obj, obs) {
		// When the step began; the first step waits for the canary to be
		// ready, not for the clock.
		r.metrics.observeStep(obj, obs)
	}
	if state != analysis.Done {
		return r.analysisPending(ctx, key)
	}
	failed := ""
	switch {
	case out.RollbackBy != "":
		reason := "rollback requested by webhook " + out.RollbackBy
		r.recordStep(obj, obs.CanaryWeight, out, v1alpha1.VerdictRollback, reason)
		return r.rollback(ctx, obj, obs, rollout.Rollback{Reason: reason})
	case out.HookErr != nil && firstStep(obj, obs):
		failed = "pre-rollout check failed: " + out.HookErr.Error()
	case out.HookErr != nil:
		failed = "rollout check failed: " + out.HookErr.Error()
	case out.MetricFailure != "":
		failed = "halting advancement: " + out.MetricFailure
	}
	if failed != "" {
		r.recordStep(obj, obs.CanaryWeight, out, v1alpha1.VerdictFailed, failed)
		return r.failCheck(ctx, obj, obs, out.At, failed)
	}
	if out.GateClosed != "" {
		r.recordStep(obj, obs.CanaryWeight, out, v1alpha1.VerdictWaiting, "gate closed: "+out.GateClosed)
	} else {
		r.recordStep(obj, obs.CanaryWeight, out, v1alpha1.VerdictPassed, "")
	}
	return r.advance(ctx, obj, obs, out)
}

// advance moves the rollout one step forward after the checks passed, when
// the step's gate is open. The transition is dated when the step began
// (out.At), so that the analysis keeps its interval whatever its calls took.
func (r *CanaryReconciler) advance(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, out analysis.Outcome) (ctrl.Result, error) {
	st := &obj.Status
	checks := "checks passed"
	if len(out.Passed) > 0 {
		checks = fmt.Sprintf("checks passed (%s)", joinMessages(out.Passed))
	}
	closed := out.GateClosed
	plan := rollout.PlanStep(obj, obs.CanaryWeight, st.Iterations)
	switch plan.Kind {
	case rollout.IncreaseWeight:
		if closed != "" {
			transition(obj, v1alpha1.PhaseProgressing, out.At, v1alpha1.ProgressingReason, "waiting for approval to increase traffic: %s", closed)
			return ctrl.Result{RequeueAfter: requeueAtNextStep(obj, obs.Now)}, nil
		}
		w, what := routing.Canary(plan.Weight), "canary weight"
		if obj.IsABTest() {
			w, what = routing.ABTest(plan.Weight), "A/B test: the matched requests' canary weight"
		}
		if err := r.setRoutes(ctx, obj, w); err != nil {
			return ctrl.Result{}, err
		}
		r.emitStep(ctx, obj, v1alpha1.WeightIncreasedReason, "advance %s %s %d: %s", obj.Name, what, plan.Weight, checks)
		transition(obj, v1alpha1.PhaseProgressing, out.At, v1alpha1.ProgressingReason, "%s", analysingMessage(obj))
	case rollout.Iterate:
		if obj.IsMirrored() {
			// From the first iteration on, the canary gets a copy of
			// every request the primary serves.
			if err := r.setRoutes(ctx, obj, routing.Mirrored); err != nil {
				return ctrl.Result{}, err
			}
		}
		st.Iterations++
		r.emitStep(ctx, obj, v1alpha1.IterationReason, "advance %s canary iteration %d/%d: %s", obj.Name, st.Iterations, obj.GetIterations(), checks)
		transition(obj, v1alpha1.PhaseProgressing, out.At, v1alpha1.ProgressingReason, "%s", analysingMessage(obj))
	case rollout.ReadyToPromote:
		if obj.IsBlueGreen() || obj.IsABTest() {
			st.Iterations = obj.GetIterations()
		}
		if closed != "" {
			if st.Phase != v1alpha1.PhaseWaitingPromotion {
				r.emit(ctx, obj, notifier.SeverityInfo, v1alpha1.WaitingPromotionReason, "analysis passed; waiting for approval to promote: %s", closed)
			}
			transition(obj, v1alpha1.PhaseWaitingPromotion, out.At, string(v1alpha1.PhaseWaitingPromotion), "analysis passed; waiting for approval to promote: %s", closed)
			return ctrl.Result{RequeueAfter: requeueAtNextStep(obj, obs.Now)}, nil
		}
		return r.promote(ctx, obj, obs, rollout.Promote{Reason: "analysis passed"})
	}
	return ctrl.Result{RequeueAfter: requeueAtNextStep(obj, obs.Now)}, nil
}

// failCheck counts a failed check, dated when the step began; decide rolls
// back at the threshold.
func (r *CanaryReconciler) failCheck(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, at time.Time, msg string) (ctrl.Result, error) {
	st := &obj.Status
	st.FailedChecks++
	r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.CheckFailedReason, "%s (failed checks %d/%d)", msg, st.FailedChecks, obj.GetThreshold())
	transition(obj, st.Phase, at, v1alpha1.ProgressingReason, "%s (failed checks %d/%d)", msg, st.FailedChecks, obj.GetThreshold())
	if st.FailedChecks >= obj.GetThreshold() {
		return ctrl.Result{RequeueAfter: 10e6}, nil
	}
	return ctrl.Result{RequeueAfter: requeueAtNextStep(obj, obs.Now)}, nil
}

func joinMessages(msgs []string) string {
	out := ""
	for i, m := range msgs {
		if i > 0 {
			out += ", "
		}
		out += m
	}
	return out
}

// analysingMessage is the Ready message while an analysis advances. It
// stays the same from step to step (the weight and iterations are status
// fields, each step is in status.analyses), so that a step writes the status once
// rather than the status and its conditions: at thousands of canaries the
// writes per step are what the API server feels.
func analysingMessage(obj *v1alpha1.Canary) string {
	return "analysing revision " + obj.Status.LastAppliedSpec
}
