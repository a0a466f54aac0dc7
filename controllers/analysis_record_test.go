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
	"testing"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// A recorded step carries its iteration's number (status.analyses[].steps[].iteration)
// in blue/green and, once the matched requests reach the canary, in an A/B
// test; none when the analysis moves weights.
func TestIterationOf(t *testing.T) {
	gateway := v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: []v1alpha1.GatewayReference{{Name: "public"}}}
	abTest := v1alpha1.CanaryAnalysis{Iterations: 3, Match: []v1alpha1.AnalysisMatch{{Headers: []v1alpha1.HTTPHeaderMatch{{Name: "x-canary", Value: "insider"}}}}}
	tests := map[string]struct {
		canary *v1alpha1.Canary
		weight int
		want   int
	}{
		"blue/green, first step":           {testobj.MakeCanary("p", "apps").Analysis(v1alpha1.CanaryAnalysis{Iterations: 3}).Obj(), 0, 1},
		"blue/green on the route, third":   {withIterations(testobj.MakeCanary("p", "apps").Routing(gateway).Analysis(v1alpha1.CanaryAnalysis{Iterations: 3}).Obj(), 2), 0, 3},
		"A/B, the step that routes":        {testobj.MakeCanary("p", "apps").Routing(gateway).Analysis(abTest).Obj(), 0, 0},
		"A/B, first step on matched users": {testobj.MakeCanary("p", "apps").Routing(gateway).Analysis(abTest).Obj(), 100, 1},
		"weights":                          {testobj.MakeCanary("p", "apps").Routing(gateway).Analysis(v1alpha1.CanaryAnalysis{StepWeight: 10}).Obj(), 20, 0},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := iterationOf(tt.canary, tt.weight); got != tt.want {
				t.Errorf("iterationOf() = %d, want %d", got, tt.want)
			}
		})
	}
}

func withIterations(c *v1alpha1.Canary, done int) *v1alpha1.Canary {
	c.Status.Iterations = done
	return c
}
