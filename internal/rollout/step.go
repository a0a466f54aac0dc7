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

package rollout

import "github.com/serin-dev/serin/api/v1alpha1"

// StepKind is what a passed analysis step leads to.
type StepKind string

const (
	// IncreaseWeight gives the canary more traffic (gatewayapi).
	IncreaseWeight StepKind = "IncreaseWeight"
	// Iterate counts one more blue/green iteration (kubernetes).
	Iterate StepKind = "Iterate"
	// ReadyToPromote means the analysis is complete.
	ReadyToPromote StepKind = "ReadyToPromote"
)

// StepPlan is the outcome of a passed analysis step.
type StepPlan struct {
	Kind StepKind
	// Weight is the canary's new weight for IncreaseWeight.
	Weight int
}

// PlanStep returns what follows a passed step, given the canary's weight in
// force and the iterations done.
func PlanStep(c *v1alpha1.Canary, weight, iterations int) StepPlan {
	if c.IsABTest() {
		// The first step (pre-rollout hooks) sends the matched requests
		// to the canary; then analysis.iterations steps judge it on them.
		if weight < 100 {
			return StepPlan{Kind: IncreaseWeight, Weight: 100}
		}
		if iterations+1 >= c.GetIterations() {
			return StepPlan{Kind: ReadyToPromote}
		}
		return StepPlan{Kind: Iterate}
	}
	if c.IsBlueGreen() {
		if iterations+1 >= c.GetIterations() {
			return StepPlan{Kind: ReadyToPromote}
		}
		return StepPlan{Kind: Iterate}
	}
	for _, w := range c.GetStepWeights() {
		if w > weight {
			return StepPlan{Kind: IncreaseWeight, Weight: w}
		}
	}
	return StepPlan{Kind: ReadyToPromote}
}

// PromotionWeight returns the canary's weight after one finalising step:
// stepWeightPromotion less, or zero when it is not set.
func PromotionWeight(c *v1alpha1.Canary, weight int) int {
	step := 0
	if c.Spec.Analysis != nil {
		step = c.Spec.Analysis.StepWeightPromotion
	}
	if step <= 0 || weight-step < 0 {
		return 0
	}
	return weight - step
}

// StepVerdict is what an analysis step's calls said, as the runner has it
// once the step ran.
type StepVerdict struct {
	// RollbackBy names the rollback webhook that asked for a rollback.
	RollbackBy string
	// Failed says why a hook or a metric check failed.
	Failed string
	// GateClosed says why the step's gate (confirm-traffic-increase, or
	// confirm-promotion at the end) is closed.
	GateClosed string
}

// DecideStep decides what follows an analysis step from its verdict: a
// rollback a webhook asked for (a halt, never a rollback, once the
// promotion began), a failed check, or, once the checks passed, the next
// weight, one more iteration or the promotion, each behind its gate.
func DecideStep(c *v1alpha1.Canary, o Observation, v StepVerdict) Action {
	switch {
	case v.RollbackBy != "":
		reason := "rollback requested by webhook " + v.RollbackBy
		switch c.Status.Phase {
		case v1alpha1.PhasePromoting, v1alpha1.PhaseFinalising, v1alpha1.PhaseHalted:
			return Halt{Reason: reason + " (no rollback during promotion)"}
		}
		return Rollback{Reason: reason}
	case v.Failed != "":
		return FailCheck{Message: v.Failed}
	}
	plan := PlanStep(c, o.CanaryWeight, c.Status.Iterations)
	switch plan.Kind {
	case IncreaseWeight:
		if v.GateClosed != "" {
			return WaitForGate{Message: v.GateClosed}
		}
		return AdvanceWeight{Weight: plan.Weight}
	case Iterate:
		return CountIteration{}
	}
	if v.GateClosed != "" {
		return WaitForGate{Promotion: true, Message: v.GateClosed}
	}
	return Promote{Reason: "analysis passed"}
}
