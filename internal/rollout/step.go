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
