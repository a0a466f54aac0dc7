package controllers

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/notifier"
	"github.com/serin-dev/serin/routing"
)

// step runs one analysis step: the rollback hooks, then the pre-rollout
// hooks before the first traffic, or else the rollout hooks and the metric
// checks of the traffic the canary served. A failure
// counts one failed check; a pass increases the weight, counts an
// iteration, or, at the end, asks the confirm-promotion gate and promotes.
func (r *CanaryReconciler) step(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	st := &obj.Status
	if obs.CanaryWeight > 0 || st.Iterations > 0 {
		// The first step waits for the canary to be ready, not for the clock.
		r.metrics.observeStep(obj, obs)
	}
	if requested, hook := r.Webhooks.RollbackRequested(ctx, obj); requested {
		return r.rollback(ctx, obj, obs, rollout.Rollback{Reason: "rollback requested by webhook " + hook})
	}
	if obs.CanaryWeight == 0 && st.Iterations == 0 {
		// No request has reached the canary yet: there is nothing to judge
		// (as Flagger, the rollout hooks and metric checks start with the
		// first step that routed traffic to it).
		if err := r.Webhooks.Run(ctx, obj, v1alpha1.PreRolloutHook); err != nil {
			return r.failCheck(ctx, obj, obs, "pre-rollout check failed: "+err.Error())
		}
		return r.advance(ctx, obj, obs, nil)
	}
	if err := r.Webhooks.Run(ctx, obj, v1alpha1.RolloutHook); err != nil {
		return r.failCheck(ctx, obj, obs, "rollout check failed: "+err.Error())
	}
	var passed []string
	if obj.Spec.Analysis != nil {
		for _, m := range obj.Spec.Analysis.Metrics {
			res := r.Checks.Check(ctx, obj, m)
			if !res.Passed {
				return r.failCheck(ctx, obj, obs, "halting advancement: "+res.Message)
			}
			passed = append(passed, res.Message)
		}
	}
	return r.advance(ctx, obj, obs, passed)
}

// advance moves the rollout one step forward after the checks passed.
func (r *CanaryReconciler) advance(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, passed []string) (ctrl.Result, error) {
	st := &obj.Status
	checks := "checks passed"
	if len(passed) > 0 {
		checks = fmt.Sprintf("checks passed (%s)", joinMessages(passed))
	}
	plan := rollout.PlanStep(obj, obs.CanaryWeight, st.Iterations)
	switch plan.Kind {
	case rollout.IncreaseWeight:
		if open, closed := r.Webhooks.Gate(ctx, obj, v1alpha1.ConfirmTrafficIncreaseHook); !open {
			transition(obj, v1alpha1.PhaseProgressing, obs.Now, v1alpha1.ProgressingReason, "waiting for approval to increase traffic: %s", closed)
			return ctrl.Result{RequeueAfter: requeueAtNextStep(obj, obs.Now)}, nil
		}
		if err := r.setRoutes(ctx, obj, routing.Canary(plan.Weight)); err != nil {
			return ctrl.Result{}, err
		}
		r.emit(ctx, obj, notifier.SeverityInfo, "WeightIncreased", "advance %s canary weight %d: %s", obj.Name, plan.Weight, checks)
		transition(obj, v1alpha1.PhaseProgressing, obs.Now, v1alpha1.ProgressingReason, "%s", analysingMessage(obj))
	case rollout.Iterate:
		st.Iterations++
		r.emit(ctx, obj, notifier.SeverityInfo, "Iteration", "advance %s canary iteration %d/%d: %s", obj.Name, st.Iterations, obj.GetIterations(), checks)
		transition(obj, v1alpha1.PhaseProgressing, obs.Now, v1alpha1.ProgressingReason, "%s", analysingMessage(obj))
	case rollout.ReadyToPromote:
		if obj.GetRoutingProvider() == v1alpha1.KubernetesRouting {
			st.Iterations = obj.GetIterations()
		}
		if open, closed := r.Webhooks.Gate(ctx, obj, v1alpha1.ConfirmPromotionHook); !open {
			if st.Phase != v1alpha1.PhaseWaitingPromotion {
				r.emit(ctx, obj, notifier.SeverityInfo, "WaitingPromotion", "analysis passed; waiting for approval to promote: %s", closed)
			}
			transition(obj, v1alpha1.PhaseWaitingPromotion, obs.Now, string(v1alpha1.PhaseWaitingPromotion), "analysis passed; waiting for approval to promote: %s", closed)
			return ctrl.Result{RequeueAfter: requeueAtNextStep(obj, obs.Now)}, nil
		}
		return r.promote(ctx, obj, obs, rollout.Promote{Reason: "analysis passed"})
	}
	return ctrl.Result{RequeueAfter: requeueAtNextStep(obj, obs.Now)}, nil
}

// failCheck counts a failed check; decide rolls back at the threshold.
func (r *CanaryReconciler) failCheck(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, msg string) (ctrl.Result, error) {
	st := &obj.Status
	st.FailedChecks++
	r.emit(ctx, obj, notifier.SeverityWarn, "CheckFailed", "%s (failed checks %d/%d)", msg, st.FailedChecks, obj.GetThreshold())
	transition(obj, st.Phase, obs.Now, v1alpha1.ProgressingReason, "%s (failed checks %d/%d)", msg, st.FailedChecks, obj.GetThreshold())
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
// fields, each step is an event), so that a step writes the status once
// rather than the status and its conditions: at thousands of canaries the
// writes per step are what the API server feels.
func analysingMessage(obj *v1alpha1.Canary) string {
	return "analysing revision " + obj.Status.LastAppliedSpec
}
