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
	"strings"
	"testing"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// analysis.judge.baseline is accepted only where serin can run and route
// a baseline: a Deployment target on an HTTPRoute, weights of at most 50,
// no session affinity, a judged metric, and a name that leaves room for
// -baseline; each refusal says what to fix.
func TestValidation_JudgeBaselineCEL(t *testing.T) {
	ns := newNamespace(t)
	judged := func() []v1alpha1.CanaryMetric {
		return []v1alpha1.CanaryMetric{{Name: v1alpha1.RequestDurationCheck, Judge: &v1alpha1.MetricJudge{}}}
	}
	baseline := &v1alpha1.AnalysisJudge{Baseline: true}
	weighted := func(name string, edit ...func(*v1alpha1.Canary)) *v1alpha1.Canary {
		c := testobj.MakeCanary(name, ns).Gateway("gateways", "public").
			Analysis(v1alpha1.CanaryAnalysis{StepWeight: 10, MaxWeight: 50, Metrics: judged(), Judge: baseline}).Obj()
		for _, e := range edit {
			e(c)
		}
		return c
	}
	const (
		whereMsg   = "analysis.judge.baseline runs a <target>-baseline Deployment that the HTTPRoute routes to: it needs a Deployment targetRef and routing.provider gatewayapi"
		weightsMsg = "analysis.judge.baseline gives the baseline the canary's weight, taken from the primary's share: it needs weights (stepWeight or stepWeights, not iterations) of at most 50"
	)
	tests := map[string]struct {
		canary  *v1alpha1.Canary
		wantErr string
	}{
		"gatewayapi, a Deployment, weights to 50": {canary: weighted("b-ok")},
		"stepWeights to 50, maxWeight defaulted (50)": {canary: weighted("b-steps", func(c *v1alpha1.Canary) {
			c.Spec.Analysis.StepWeight, c.Spec.Analysis.MaxWeight, c.Spec.Analysis.StepWeights = 0, 0, []int{5, 25, 50}
		})},
		"baseline false anywhere": {canary: weighted("b-off", func(c *v1alpha1.Canary) {
			c.Spec.TargetRef = v1alpha1.TargetReference{APIVersion: "v1", Kind: "Service", Name: "b-off"}
			c.Spec.Analysis.Judge = &v1alpha1.AnalysisJudge{Baseline: false}
		})},
		"a judged metric in a blue/green analysis": {
			canary:  testobj.MakeCanary("bg", ns).Analysis(v1alpha1.CanaryAnalysis{Iterations: 5, Metrics: judged()}).Obj(),
			wantErr: "metrics[].judge compares the canary with the primary (or its baseline) on the same traffic at the same time: a blue/green analysis (analysis.iterations without match or mirror) sends every request to the canary and none to the primary",
		},
		"a judged metric in an A/B test": {canary: testobj.MakeCanary("ab", ns).Gateway("gateways", "public").
			Analysis(v1alpha1.CanaryAnalysis{Iterations: 5, Metrics: judged(),
				Match: []v1alpha1.AnalysisMatch{{Headers: []v1alpha1.HTTPHeaderMatch{{Name: "x-canary", Value: "1"}}}}}).Obj()},
		"routing.provider kubernetes": {
			canary:  testobj.MakeCanary("b1", ns).Analysis(v1alpha1.CanaryAnalysis{Iterations: 5, Metrics: judged(), Judge: baseline}).Obj(),
			wantErr: whereMsg,
		},
		"a Service target": {
			canary: weighted("b2", func(c *v1alpha1.Canary) {
				c.Spec.TargetRef = v1alpha1.TargetReference{APIVersion: "v1", Kind: "Service", Name: "b2"}
			}),
			wantErr: whereMsg,
		},
		"no judged metric": {
			canary:  weighted("b3", func(c *v1alpha1.Canary) { c.Spec.Analysis.Metrics[0].Judge = nil }),
			wantErr: "analysis.judge scores the metrics that have a judge block, and none has one: add metrics[].judge, or remove analysis.judge",
		},
		"maxWeight above 50": {
			canary:  weighted("b4", func(c *v1alpha1.Canary) { c.Spec.Analysis.MaxWeight = 60 }),
			wantErr: weightsMsg,
		},
		"a stepWeight above 50": {
			canary: weighted("b5", func(c *v1alpha1.Canary) {
				c.Spec.Analysis.StepWeight, c.Spec.Analysis.MaxWeight, c.Spec.Analysis.StepWeights = 0, 0, []int{10, 80}
			}),
			wantErr: weightsMsg,
		},
		"sessionAffinity": {
			canary: weighted("b6", func(c *v1alpha1.Canary) {
				c.Spec.Analysis.SessionAffinity = &v1alpha1.SessionAffinity{CookieName: "canary"}
			}),
			wantErr: weightsMsg,
		},
		"a name that leaves no room for -baseline": {
			canary:  weighted(strings.Repeat("b", 55)),
			wantErr: "analysis.judge.baseline names a Service <service>-baseline, at most 63 characters: shorten service.name (or targetRef.name) to 54 characters",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) { expectAdmission(t, tt.canary, tt.wantErr) })
	}
}
