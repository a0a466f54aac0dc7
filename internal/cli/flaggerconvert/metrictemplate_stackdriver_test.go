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

// A Flagger externalmetrics MetricTemplate converts as it is, its query
// given the namespace Flagger read it in (default) when it names none, its
// address kept, a note when no Secret gives that metrics server a token.
func TestConvertExternalMetricsMetricTemplate(t *testing.T) {
	tests := map[string]struct {
		provider, query string
		wantQuery       string
		wantNotes       []string
	}{
		"through the API server, the namespace named": {
			provider: "{type: externalmetrics}", query: "webapp/job-success-rate?labelSelector=env%3Dproduction",
			wantQuery: "webapp/job-success-rate?labelSelector=env%3Dproduction",
		},
		"no namespace: default, as Flagger read it": {
			provider: "{type: externalmetrics}", query: "job-success-rate?labelSelector=env%3Dproduction",
			wantQuery: "default/job-success-rate?labelSelector=env%3Dproduction", wantNotes: []string{"spec.query"},
		},
		"a metrics server with a token": {
			provider: "{type: externalmetrics, address: 'https://metrics.default.svc:8443', secretRef: {name: token}}",
			query:    "default/job-success-rate", wantQuery: "default/job-success-rate",
		},
		"a metrics server without a token": {
			provider: "{type: externalmetrics, address: 'https://metrics.default.svc:8443'}",
			query:    "default/job-success-rate", wantQuery: "default/job-success-rate", wantNotes: []string{"spec.provider.address"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			result, err := Convert([]byte(metricTemplateYAML(tc.provider, tc.query)))
			if err != nil {
				t.Fatal(err)
			}
			if len(result.Dropped) != 0 || len(result.Manifests) != 1 {
				t.Fatalf("dropped %v, manifests %v", result.Dropped, result.Manifests)
			}
			spec := result.Manifests[0].Object.(metricTemplateManifest).Spec
			if spec.Provider.Type != v1alpha1.ExternalMetricsProvider || spec.Query != tc.wantQuery {
				t.Errorf("converted to %s %q, want externalmetrics %q", spec.Provider.Type, spec.Query, tc.wantQuery)
			}
			var notes []string
			for _, n := range result.Notes {
				notes = append(notes, n.Field)
			}
			if diff := cmp.Diff(tc.wantNotes, notes); diff != "" {
				t.Errorf("notes differ (-want +got):\n%s", diff)
			}
		})
	}
}
