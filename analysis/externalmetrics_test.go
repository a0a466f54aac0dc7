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

package analysis

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// TestExternalMetrics checks the request serin sends to the API server for
// a metric of the external metrics API (GET
// /apis/external.metrics.k8s.io/v1beta1/namespaces/NS/METRIC with the
// selector as labelSelector, the agent's bearer token), and reads answers of
// the shape the API defines (ExternalMetricValueList, values as Kubernetes
// quantities, a Status on errors). The e2e test TestMetrics_ExternalMetrics
// asks the testbed's real API server.
func TestExternalMetrics(t *testing.T) {
	const query = "queue_messages_ready{queue=orders, env in (prod)}"
	want := wireRequest{
		Method: http.MethodGet,
		Path:   "/apis/external.metrics.k8s.io/v1beta1/namespaces/apps/queue_messages_ready",
		Query:  url.Values{"labelSelector": {"env in (prod),queue=orders"}},
		Header: map[string]string{"Authorization": "Bearer agent-token", "Accept": "application/json"},
	}
	list := func(values ...string) wireAnswer {
		var items []string
		for _, v := range values {
			items = append(items, `{"metricName":"queue_messages_ready","metricLabels":{"queue":"orders"},"timestamp":"2026-11-24T12:00:00Z","value":"`+v+`"}`)
		}
		return wireAnswer{ContentType: "application/json", Body: `{"kind":"ExternalMetricValueList","apiVersion":"external.metrics.k8s.io/v1beta1","metadata":{},"items":[` +
			strings.Join(items, ",") + `]}`}
	}
	status := func(code int, message string) wireAnswer {
		return wireAnswer{Status: code, ContentType: "application/json",
			Body: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"` + message + `"}`}
	}
	tests := map[string]providerCase{
		"one item":                          {answer: list("42"), want: 42},
		"items are summed, quantities read": {answer: list("250m", "1500m", "2"), want: 3.75},
		"no item: no data":                  {answer: list(), wantErr: "no values found for query", wantNoData: true},
		"no adapter": {answer: status(http.StatusNotFound, "the server could not find the requested resource"),
			wantErr: "the API server serves no external metric queue_messages_ready in namespace apps (404): is an adapter"},
		"forbidden": {answer: status(http.StatusForbidden, "cannot get resource"),
			wantErr: "reading metric queue_messages_ready in namespace apps is forbidden (403): grant get on external.metrics.k8s.io"},
		"not a list": {answer: wireAnswer{ContentType: "application/json", Body: `{"items":"x"}`},
			wantErr: "the answer is not an ExternalMetricValueList"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			srv := wireServer(t, want, tc.answer)
			p, err := NewProvider(ProviderConfig{Spec: v1alpha1.MetricProvider{Type: v1alpha1.ExternalMetricsProvider},
				RESTConfig: &rest.Config{Host: srv.URL, BearerToken: "agent-token"}, Namespace: "apps", Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			v, err := p.Query(context.Background(), query)
			checkQueryResult(t, v, err, tc)
		})
	}
}

// A query that is not a metric name with a selector, or whose selector does
// not parse, fails before any call.
func TestExternalMetrics_BadQuery(t *testing.T) {
	p, err := NewProvider(ProviderConfig{Spec: v1alpha1.MetricProvider{Type: v1alpha1.ExternalMetricsProvider},
		RESTConfig: &rest.Config{Host: "http://127.0.0.1:1"}, Namespace: "apps", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for query, wantErr := range map[string]string{
		"sum(rate(x[1m]))": "is not a metric name with an optional label selector in braces",
		"queue{queue=}}":   "the label selector of query",
		"queue{=x}":        "the label selector of query",
	} {
		if _, err := p.Query(context.Background(), query); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%s: err = %v, want %q", query, err, wantErr)
		}
	}
	if _, err := NewProvider(ProviderConfig{Spec: v1alpha1.MetricProvider{Type: v1alpha1.ExternalMetricsProvider}, Namespace: "apps"}); err == nil {
		t.Error("built without an API server")
	}
}
