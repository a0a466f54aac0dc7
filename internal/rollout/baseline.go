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

import (
	"fmt"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// The baseline (analysis.judge.baseline) lives as long as an analysis:
// made when it starts, routed the canary's weight once it has a ready pod
// (never before, as the canary), judged against at each step once ready,
// taken off the routes and scaled to zero when the analysis ends, however
// it ends.

// BaselineRouted reports whether the routes give the baseline the
// canary's weight (taken from the primary's share): during an analysis of
// a Canary with analysis.judge.baseline, while the baseline has a pod
// ready to serve. Never otherwise: a request routed to a baseline without
// ready pods would fail, and outside an analysis it is being removed.
func BaselineRouted(c *v1alpha1.Canary, b Baseline) bool {
	return c.WantsBaseline() && inAnalysis(c) && b.Exists && b.Health.Serving > 0
}

// inAnalysis reports whether the Canary's phase is an analysis under way.
func inAnalysis(c *v1alpha1.Canary) bool {
	switch c.Status.Phase {
	case v1alpha1.PhaseProgressing, v1alpha1.PhaseWaitingPromotion:
		return true
	}
	return false
}

// decideBaseline returns, whatever the phase, what comes first for the
// baseline: off the routes when it must not be routed (no ready pod, or
// its analysis ended), and, once the data plane applies routes without it,
// removed when its analysis ended. false when the baseline needs nothing
// here.
func decideBaseline(c *v1alpha1.Canary, o Observation) (Action, bool) {
	b := o.Baseline
	switch {
	case b.Routed && !BaselineRouted(c, b) && inAnalysis(c) && c.WantsBaseline():
		return RouteBaseline{Reason: "the baseline has no pod ready to serve: " + b.Health.Message}, true
	case b.Routed && !BaselineRouted(c, b):
		return RouteBaseline{Reason: "the analysis ended"}, true
	case b.Exists && !b.Routed && (!inAnalysis(c) || !c.WantsBaseline()) && o.Routes.Programmed:
		// Not before: a gateway still on the last routes would send
		// requests to pods that are going away.
		return RemoveBaseline{}, true
	}
	return nil, false
}

// prepareBaseline makes the baseline of the analysis under way and routes
// it once it can serve: before the canary is waited for, so that both
// come up together. false when it has nothing to do, or the analysis
// judges nothing (skipAnalysis).
func prepareBaseline(c *v1alpha1.Canary, o Observation) (Action, bool) {
	b := o.Baseline
	switch {
	case !c.WantsBaseline() || c.Spec.SkipAnalysis:
		return nil, false
	case !b.Exists || !b.InSync:
		return SyncBaseline{}, true
	case !b.Routed && BaselineRouted(c, b):
		return RouteBaseline{Reason: "the baseline has a pod ready to serve"}, true
	}
	return nil, false
}

// waitForBaseline keeps an analysis step from running until the baseline
// is ready: the judge compares the canary with it, never silently with the
// primary instead. Past the progress deadline the rollout stalls, the
// baseline never routed meanwhile; a change to the baseline (it becomes
// ready) reconciles the Canary again.
func waitForBaseline(c *v1alpha1.Canary, o Observation) (Action, bool) {
	b := o.Baseline
	switch {
	case !c.WantsBaseline() || b.Health.Ready:
		return nil, false
	case o.Now.Sub(transitionTime(c)) > c.GetProgressDeadline() && !holding(c):
		return Stall{
			Reason: v1alpha1.BaselineNotReadyReason,
			Message: fmt.Sprintf("baseline %s not ready within the progress deadline (%s): %s; the analysis waits for it: "+
				"give its pods what they need (quota, nodes), or remove analysis.judge.baseline to judge against the primary",
				c.GetBaselineName(), c.GetProgressDeadline(), b.Health.Message),
		}, true
	}
	return WaitForBaseline{Message: b.Health.Message}, true
}
