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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/workload"
)

// withBaseline is a Canary with analysis.judge.baseline, shifting weights.
func withBaseline(c *v1alpha1.Canary) {
	c.Spec.Analysis.Iterations = 0
	c.Spec.Analysis.StepWeight = 10
	c.Spec.Analysis.Judge = &v1alpha1.AnalysisJudge{Baseline: true}
}

// baselineAt observes the baseline in a state.
func baselineAt(b Baseline) func(*Observation) {
	return func(o *Observation) { o.Baseline = b }
}

// The baseline's decisions: made at the start of an analysis, routed once
// it serves (never before), waited for before a step, taken off the routes
// and removed when the analysis ends, however it ends.
func TestDecide_Baseline(t *testing.T) {
	due := t0.Add(time.Minute)
	early := t0.Add(20 * time.Second)
	late := t0.Add(11 * time.Minute)
	analysing := func(mutate ...func(*v1alpha1.Canary)) *v1alpha1.Canary {
		return canary(v1alpha1.PhaseProgressing, append([]func(*v1alpha1.Canary){withBaseline}, mutate...)...)
	}
	starting := workload.Health{Message: "0 of 2 updated replicas available"}
	readyBaseline := Baseline{Exists: true, InSync: true, Health: ready, Routed: true}
	inAnalysis := func(now time.Time, b Baseline) Observation {
		return with(observed(now, "v2", ready, "v1", ready), baselineAt(b))
	}
	tests := map[string]struct {
		canary *v1alpha1.Canary
		obs    Observation
		want   Action
	}{
		// Made and routed.
		"the analysis's first reconcile makes the baseline": {analysing(), inAnalysis(early, Baseline{}), SyncBaseline{}},
		"made while the canary comes up": {analysing(),
			with(observed(early, "v2", rolling, "v1", ready), baselineAt(Baseline{})), SyncBaseline{}},
		"a deleted baseline is made again": {analysing(atWeight(20)),
			with(inAnalysis(early, Baseline{}), routesAt(20, Routes{Programmed: true})), SyncBaseline{}},
		"an edited baseline is put back": {analysing(), inAnalysis(early, Baseline{Exists: true, Health: ready, Routed: true}), SyncBaseline{}},
		"a baseline with a ready pod is routed": {analysing(), inAnalysis(early, Baseline{Exists: true, InSync: true, Health: rolling}),
			RouteBaseline{Reason: "the baseline has a pod ready to serve"}},
		"a baseline without a ready pod is not routed, and the step waits": {analysing(),
			inAnalysis(due, Baseline{Exists: true, InSync: true, Health: starting}), WaitForBaseline{Message: starting.Message}},
		"a routed baseline that is still rolling holds the step": {analysing(),
			inAnalysis(due, Baseline{Exists: true, InSync: true, Health: rolling, Routed: true}), WaitForBaseline{Message: rolling.Message}},
		"a ready, routed baseline lets the step run":      {analysing(), inAnalysis(due, readyBaseline), Step{}},
		"nothing waits for the baseline before it is due": {analysing(), inAnalysis(early, Baseline{Exists: true, InSync: true, Health: rolling, Routed: true}), Wait{RequeueAfter: 40 * time.Second}},
		"a baseline never ready stalls past the deadline": {analysing(), inAnalysis(late, Baseline{Exists: true, InSync: true, Health: starting}),
			Stall{Reason: v1alpha1.BaselineNotReadyReason, Message: "baseline podinfo-baseline not ready within the progress deadline (10m0s): " + starting.Message +
				"; the analysis waits for it: give its pods what they need (quota, nodes), or remove analysis.judge.baseline to judge against the primary"}},
		"a canary not ready is waited for with the baseline up": {analysing(),
			with(observed(due, "v2", rolling, "v1", ready), baselineAt(readyBaseline)), WaitForCanary{Message: rolling.Message}},
		"skipAnalysis makes no baseline": {analysing(func(c *v1alpha1.Canary) { c.Spec.SkipAnalysis = true }), inAnalysis(due, Baseline{}),
			Promote{Reason: "analysis skipped (spec.skipAnalysis)"}},
		"without analysis.judge.baseline nothing is made": {canary(v1alpha1.PhaseProgressing), observed(due, "v2", ready, "v1", ready), Step{}},

		// Never routed without a ready pod.
		"a routed baseline that lost its pods is taken off the routes first": {analysing(atWeight(20)),
			with(inAnalysis(due, Baseline{Exists: true, InSync: true, Health: starting, Routed: true}), routesAt(20, Routes{Programmed: true})),
			RouteBaseline{Reason: "the baseline has no pod ready to serve: " + starting.Message}},
		"a deleted baseline still routed is taken off before it is made again": {analysing(atWeight(20)),
			with(inAnalysis(due, Baseline{Routed: true}), routesAt(20, Routes{Programmed: true})),
			RouteBaseline{Reason: "the baseline has no pod ready to serve: "}},

		// Removed when the analysis ends.
		"promotion: taken off the routes": {canary(v1alpha1.PhasePromoting, withBaseline), inAnalysis(early, readyBaseline),
			RouteBaseline{Reason: "the analysis ended"}},
		"promotion: then removed": {canary(v1alpha1.PhasePromoting, withBaseline), inAnalysis(early, Baseline{Exists: true, InSync: true, Health: ready}),
			RemoveBaseline{}},
		"promotion: off the routes, which the gateway has not applied yet: not removed yet": {canary(v1alpha1.PhasePromoting, withBaseline),
			with(with(observed(early, "v2", ready, "v2", ready), baselineAt(Baseline{Exists: true, InSync: true, Health: ready})), routesAt(0, pending)),
			Wait{RequeueAfter: 40 * time.Second}},
		"rollback: removed": {canary(v1alpha1.PhaseFailed, withBaseline), inAnalysis(early, Baseline{Exists: true, InSync: true, Health: ready}),
			RemoveBaseline{}},
		"succeeded: taken off the routes": {canary(v1alpha1.PhaseSucceeded, withBaseline), inAnalysis(early, readyBaseline),
			RouteBaseline{Reason: "the analysis ended"}},
		"halted: removed, the halt kept": {canary(v1alpha1.PhaseHalted, withBaseline), inAnalysis(early, Baseline{Exists: true, Health: ready}),
			RemoveBaseline{}},
		"a closed confirm-rollout gate has no baseline": {canary(v1alpha1.PhaseWaiting, withBaseline), inAnalysis(early, Baseline{Exists: true, Health: ready}),
			RemoveBaseline{}},
		"baseline switched off mid-analysis: off the routes": {analysing(func(c *v1alpha1.Canary) { c.Spec.Analysis.Judge.Baseline = false }),
			inAnalysis(early, readyBaseline), RouteBaseline{Reason: "the analysis ended"}},
		"restart: the baseline of the last analysis is made again for this one": {analysing(),
			with(observed(early, "v2", rolling, "v1", ready), baselineAt(Baseline{Exists: true, Health: ready, Routed: true})), SyncBaseline{}},
		"abort rolls back before the baseline is made": {analysing(), with(inAnalysis(early, Baseline{}), func(o *Observation) { o.Requests.Abort = "now" }),
			Rollback{Reason: "rollout aborted on request"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Decide(tt.canary, tt.obs)); diff != "" {
				t.Errorf("Decide() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBaselineRouted(t *testing.T) {
	serving := Baseline{Exists: true, InSync: true, Health: rolling}
	tests := map[string]struct {
		canary *v1alpha1.Canary
		b      Baseline
		want   bool
	}{
		"analysing, with a ready pod":            {canary(v1alpha1.PhaseProgressing, withBaseline), serving, true},
		"waiting for the promotion gate":         {canary(v1alpha1.PhaseWaitingPromotion, withBaseline), serving, true},
		"no pod ready":                           {canary(v1alpha1.PhaseProgressing, withBaseline), Baseline{Exists: true, InSync: true}, false},
		"deleted":                                {canary(v1alpha1.PhaseProgressing, withBaseline), Baseline{Health: ready}, false},
		"promoting":                              {canary(v1alpha1.PhasePromoting, withBaseline), serving, false},
		"failed":                                 {canary(v1alpha1.PhaseFailed, withBaseline), serving, false},
		"without analysis.judge.baseline":        {canary(v1alpha1.PhaseProgressing), serving, false},
		"out of sync, but serving: still routed": {canary(v1alpha1.PhaseProgressing, withBaseline), Baseline{Exists: true, Health: ready}, true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := BaselineRouted(tt.canary, tt.b); got != tt.want {
				t.Errorf("BaselineRouted() = %v, want %v", got, tt.want)
			}
		})
	}
}
