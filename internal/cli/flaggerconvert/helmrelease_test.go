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

package flaggerconvert

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A HelmRelease passes through the conversion: it gains the drift-detection
// rule its converted Canaries' targets need, and a chart asked to render a
// Flagger Canary of its own is reported.
func TestConvertHelmRelease(t *testing.T) {
	helmRelease := func(extra string) string {
		return `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: podinfo, namespace: apps}
spec:
  interval: 10m
  chart: {spec: {chart: podinfo, version: "6.5.0", sourceRef: {kind: HelmRepository, name: podinfo}}}
` + extra
	}
	replicasRule := func(name string) any {
		return map[string]any{"paths": []any{"/spec/replicas"}, "target": map[string]any{"kind": "Deployment", "name": name}}
	}
	annotationsRule := map[string]any{"paths": []any{"/metadata/annotations"}}
	tests := map[string]struct {
		helmRelease string
		wantIgnore  []any
		wantNotes   []string
		wantDropped []string
	}{
		"drift detection on: the target's replicas ignored, other rules kept": {
			helmRelease: helmRelease("  driftDetection:\n    mode: enabled\n    ignore:\n      - paths: [/metadata/annotations]\n"),
			wantIgnore:  []any{annotationsRule, replicasRule("podinfo")},
			wantNotes:   []string{"HelmRelease apps/podinfo: spec.driftDetection.ignore: added /spec/replicas of Deployment podinfo, the target of a converted Canary"},
		},
		"drift detection warns: the rule too": {
			helmRelease: helmRelease("  driftDetection: {mode: warn}\n"),
			wantIgnore:  []any{replicasRule("podinfo")},
			wantNotes:   []string{"(mode warn)"},
		},
		"a rule for every Deployment's replicas covers it": {
			helmRelease: helmRelease("  driftDetection:\n    mode: enabled\n    ignore:\n      - paths: [/spec/replicas]\n        target: {kind: Deployment}\n"),
			wantIgnore:  []any{map[string]any{"paths": []any{"/spec/replicas"}, "target": map[string]any{"kind": "Deployment"}}},
		},
		"drift detection off: unchanged": {
			helmRelease: helmRelease("  driftDetection: {mode: disabled}\n"),
		},
		"another namespace: unchanged": {
			helmRelease: strings.Replace(helmRelease("  driftDetection: {mode: enabled}\n"), "namespace: apps", "namespace: other", 1),
		},
		"installed into the Canary's namespace (targetNamespace)": {
			helmRelease: strings.Replace(helmRelease("  targetNamespace: apps\n  driftDetection: {mode: enabled}\n"), "namespace: apps", "namespace: flux-system", 1),
			wantIgnore:  []any{replicasRule("podinfo")},
			wantNotes:   []string{"HelmRelease flux-system/podinfo: spec.driftDetection.ignore: added"},
		},
		"the chart renders a Flagger Canary itself": {
			helmRelease: helmRelease("  values:\n    canary:\n      enabled: true\n"),
			wantDropped: []string{"HelmRelease apps/podinfo: spec.values.canary.enabled: the chart may render a Flagger Canary of its own, which is not in the input and was not converted"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			result, err := Convert([]byte(tt.helmRelease + "---\n" + canaryYAML("provider: kubernetes", "analysis: {iterations: 5}")))
			if err != nil {
				t.Fatal(err)
			}
			var hr map[string]any
			for _, m := range result.Manifests {
				if m.Kind == "HelmRelease" {
					hr = m.Object.(map[string]any)
				}
			}
			if hr == nil {
				t.Fatalf("the HelmRelease did not pass through: %+v", result.Manifests)
			}
			ignore, _ := mapAt(hr, "spec", "driftDetection")["ignore"].([]any)
			if diff := cmp.Diff(tt.wantIgnore, ignore); diff != "" {
				t.Errorf("spec.driftDetection.ignore (-want +got):\n%s", diff)
			}
			check := func(what string, got []Dropped, want []string) {
				t.Helper()
				if len(got) != len(want) {
					t.Errorf("%s: %v, want %d", what, got, len(want))
					return
				}
				for i, w := range want {
					if !strings.Contains(got[i].String(), w) {
						t.Errorf("%s[%d] = %q, want it to contain %q", what, i, got[i], w)
					}
				}
			}
			check("notes", result.Notes, tt.wantNotes)
			check("dropped", result.Dropped, tt.wantDropped)
		})
	}
}
