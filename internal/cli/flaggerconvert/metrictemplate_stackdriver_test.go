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

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/google/go-cmp/cmp"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// A Flagger stackdriver MetricTemplate converts with its Secret, its query
// reported: Flagger sent MQL, serin sends PromQL. Flagger's stackdriver
// ignores address, so it is left out, said so; without a secretRef it is
// reported; with one, a note says which keys serin reads, since Flagger
// did without serviceAccountKey on Workload Identity.
func TestConvertStackdriverMetricTemplate(t *testing.T) {
	// Flagger's documented example, on one line.
	const query = "fetch k8s_container | metric 'istio.io/service/server/response_latencies' " +
		"| filter (metric.destination_service_name == '{{ service }}-canary' && metric.destination_service_namespace == '{{ namespace }}') " +
		"| align delta(1m) | every 1m | group_by [], [value_response_latencies_percentile: percentile(value.response_latencies, 99)]"
	secret := &meta.LocalObjectReference{Name: "gcloud-sa"}
	tests := map[string]struct {
		provider    string
		wantDropped []string
		wantNotes   []string
		wantSpec    v1alpha1.MetricTemplateSpec
	}{
		"Flagger's example": {
			provider:    "{type: stackdriver, secretRef: {name: gcloud-sa}}",
			wantDropped: []string{"spec.query"},
			wantNotes:   []string{"spec.provider.secretRef"},
			wantSpec: v1alpha1.MetricTemplateSpec{Provider: v1alpha1.MetricProvider{Type: v1alpha1.StackdriverProvider,
				SecretRef: secret}, Query: query},
		},
		"an address Flagger ignored": {
			provider:    "{type: stackdriver, address: 'http://prometheus:9090', secretRef: {name: gcloud-sa}}",
			wantDropped: []string{"spec.query", "spec.provider.address"},
			wantNotes:   []string{"spec.provider.secretRef"},
			wantSpec: v1alpha1.MetricTemplateSpec{Provider: v1alpha1.MetricProvider{Type: v1alpha1.StackdriverProvider,
				SecretRef: secret}, Query: query},
		},
		"no Secret": {
			provider:    "{type: stackdriver}",
			wantDropped: []string{"spec.query", "spec.provider.secretRef"},
			wantSpec:    v1alpha1.MetricTemplateSpec{Provider: v1alpha1.MetricProvider{Type: v1alpha1.StackdriverProvider}, Query: query},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			result := checkConvertedMetricTemplate(t, tc.provider, query, tc.wantDropped, tc.wantSpec)
			var notes []string
			for _, n := range result.Notes {
				notes = append(notes, n.Field)
			}
			if diff := cmp.Diff(tc.wantNotes, notes); diff != "" {
				t.Errorf("notes differ (-want +got):\n%s", diff)
			}
		})
	}
	result, _ := Convert([]byte(metricTemplateYAML("{type: stackdriver, secretRef: {name: gcloud-sa}}", query)))
	for reason, want := range map[string]string{
		result.Dropped[0].Reason: "rewrite the query in PromQL",
		result.Notes[0].Reason:   "serin reads project and serviceAccountKey",
	} {
		if !strings.Contains(reason, want) {
			t.Errorf("the report says %q, not %q", reason, want)
		}
	}
}
