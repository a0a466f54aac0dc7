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

package routing

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// analysis.pin adds a rule sending the pinned requests to the canary alone
// while the weights are between the two sides, from fromWeight; the
// weights are still read from the first rule.
func TestRouteSpec_Pin(t *testing.T) {
	canary := podinfoCanary()
	canary.Spec.Analysis = &v1alpha1.CanaryAnalysis{StepWeight: 20, MaxWeight: 60, Pin: &v1alpha1.CanaryPin{
		Match:      []v1alpha1.AnalysisMatch{{Headers: []v1alpha1.HTTPHeaderMatch{{Name: "x-tester", Value: "yes"}}}},
		FromWeight: ptr.To(int32(40)),
	}}
	target := Target{ApexService: "podinfo", PrimaryService: "podinfo-primary", CanaryService: "podinfo-canary", Port: 9898}
	tests := map[string]struct {
		w         Weights
		wantRules int
	}{
		"between rollouts":          {w: AllPrimary, wantRules: 1},
		"a step before fromWeight":  {w: Canary(20), wantRules: 1},
		"fromWeight":                {w: Canary(40), wantRules: 2},
		"a later step":              {w: Canary(60), wantRules: 2},
		"the promotion: all canary": {w: Canary(100), wantRules: 1},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			spec := routeSpec(canary, target, tt.w)
			if len(spec.Rules) != tt.wantRules {
				t.Fatalf("%d rules, want %d: %+v", len(spec.Rules), tt.wantRules, spec.Rules)
			}
			route := &gatewayv1.HTTPRoute{Spec: spec}
			if got, ok := weightsOf(route, target, false); !ok || got != tt.w {
				t.Fatalf("weightsOf = %+v, %v; want %+v", got, ok, tt.w)
			}
			if tt.wantRules == 1 {
				return
			}
			pin := spec.Rules[1]
			if d := cmp.Diff([]string{"podinfo-canary=100"}, backendsOf(pin)); d != "" {
				t.Fatalf("the pinned rule's backends (-want +got):\n%s", d)
			}
			want := []gatewayv1.HTTPHeaderMatch{{Type: ptr.To(gatewayv1.HeaderMatchExact), Name: "x-tester", Value: "yes"}}
			if len(pin.Matches) != 1 || !cmp.Equal(want, pin.Matches[0].Headers) || *pin.Matches[0].Path.Value != "/" {
				t.Fatalf("the pinned rule's matches: %+v", pin.Matches)
			}
		})
	}
}
