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
// runner (see analysis_runs.go), never in the reconcile. Once the runner
// has the outcome, the step is recorded and rollout.DecideStep decides
// what follows from its verdict; step carries out that one action. The
// transitions are dated when the step began (out.At), so that the
// analysis keeps its interval whatever its calls took.
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
	v := stepVerdict(obj, obs, out)
	action := rollout.DecideStep(obj, obs, v)
	switch {
	case v.RollbackBy != "":
		r.recordStep(obj, obs.CanaryWeight, out, v1alpha1.VerdictRollback, "rollback requested by webhook "+v.RollbackBy)
	case v.Failed != "":
		r.recordStep(obj, obs.CanaryWeight, out, v1alpha1.VerdictFailed, v.Failed)
	case v.GateClosed != "":
		r.recordStep(obj, obs.CanaryWeight, out, v1alpha1.VerdictWaiting, "gate closed: "+v.GateClosed)
	default:
		r.recordStep(obj, obs.CanaryWeight, out, v1alpha1.VerdictPassed, "")
	}
	if holdForGroup(obj, obs, action, out.At) {
		// Passed, and held until the other members of the release passed
		// as many steps: their status changes reconcile this one.
		return ctrl.Result{RequeueAfter: obj.GetAnalysisInterval()}, nil
	}
	switch a := action.(type) {
	case rollout.Rollback:
		return r.rollback(ctx, obj, obs, a)
	case rollout.Halt:
		return r.halt(ctx, obj, obs, a)
	case rollout.FailCheck:
		return r.failCheck(ctx, obj, obs, out.At, a.Message)
	case rollout.AdvanceWeight:
		return r.advanceWeight(ctx, obj, obs, out, a)
	case rollout.CountIteration:
		return r.countIteration(ctx, obj, obs, out)
	case rollout.WaitForGate:
		return r.waitForGate(ctx, obj, obs, out, a)
	case rollout.Promote:
		if obj.IsBlueGreen() || obj.IsABTest() {
			st.Iterations = obj.GetIterations()
		}
		return r.promote(ctx, obj, obs, a)
	}
	return ctrl.Result{}, fmt.Errorf("no handler for action %s after a step", action)
}

// stepVerdict is what the step's outcome says, in the words of its events.
func stepVerdict(obj *v1alpha1.Canary, obs rollout.Observation, out analysis.Outcome) rollout.StepVerdict {
	v := rollout.StepVerdict{RollbackBy: out.RollbackBy, GateClosed: out.GateClosed}
	switch {
	case out.HookErr != nil && firstStep(obj, obs):
		v.Failed = "pre-rollout check failed: " + out.HookErr.Error()
	case out.HookErr != nil:
		v.Failed = "rollout check failed: " + out.HookErr.Error()
	case out.MetricFailure != "":
		v.Failed = "halting advancement: " + out.MetricFailure
	}
	return v
}

// passedChecks says which checks passed, for the step's event.
func passedChecks(out analysis.Outcome) string {
	if len(out.Passed) > 0 {
		return fmt.Sprintf("checks passed (%s)", joinMessages(out.Passed))
	}
	return "checks passed"
}

// advanceWeight gives the canary its next weight once the checks passed.
func (r *CanaryReconciler) advanceWeight(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, out analysis.Outcome, a rollout.AdvanceWeight) (ctrl.Result, error) {
	w, what := routing.Canary(a.Weight), "canary weight"
	if obj.IsABTest() {
		w, what = routing.ABTest(a.Weight), "A/B test: the matched requests' canary weight"
	}
	if err := r.setRoutes(ctx, obj, w); err != nil {
		return ctrl.Result{}, err
	}
	r.emitStep(ctx, obj, v1alpha1.WeightIncreasedReason, "advance %s %s %d: %s", obj.Name, what, a.Weight, passedChecks(out))
	transition(obj, v1alpha1.PhaseProgressing, out.At, v1alpha1.ProgressingReason, "%s", analysingMessage(obj))
	return ctrl.Result{RequeueAfter: requeueAtNextStep(obj, obs.Now)}, nil
}

// countIteration counts one more iteration once the checks passed; from
// the first one on, a mirrored analysis copies every request the primary
// serves to the canary.
func (r *CanaryReconciler) countIteration(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, out analysis.Outcome) (ctrl.Result, error) {
	st := &obj.Status
	if obj.IsMirrored() {
		if err := r.setRoutes(ctx, obj, routing.Mirrored); err != nil {
			return ctrl.Result{}, err
		}
	}
	st.Iterations++
	r.emitStep(ctx, obj, v1alpha1.IterationReason, "advance %s canary iteration %d/%d: %s", obj.Name, st.Iterations, obj.GetIterations(), passedChecks(out))
	transition(obj, v1alpha1.PhaseProgressing, out.At, v1alpha1.ProgressingReason, "%s", analysingMessage(obj))
	return ctrl.Result{RequeueAfter: requeueAtNextStep(obj, obs.Now)}, nil
}

// waitForGate keeps the weight, or the promotion, until the gate opens;
// asked again at the next step.
func (r *CanaryReconciler) waitForGate(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, out analysis.Outcome, a rollout.WaitForGate) (ctrl.Result, error) {
	st := &obj.Status
	if !a.Promotion {
		transition(obj, v1alpha1.PhaseProgressing, out.At, v1alpha1.ProgressingReason, "waiting for approval to increase traffic: %s", a.Message)
		return ctrl.Result{RequeueAfter: requeueAtNextStep(obj, obs.Now)}, nil
	}
	if obj.IsBlueGreen() || obj.IsABTest() {
		st.Iterations = obj.GetIterations()
	}
	if st.Phase != v1alpha1.PhaseWaitingPromotion {
		r.emit(ctx, obj, notifier.SeverityInfo, v1alpha1.WaitingPromotionReason, "analysis passed; waiting for approval to promote: %s", a.Message)
	}
	transition(obj, v1alpha1.PhaseWaitingPromotion, out.At, string(v1alpha1.PhaseWaitingPromotion), "analysis passed; waiting for approval to promote: %s", a.Message)
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
