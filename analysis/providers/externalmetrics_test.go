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

package providers

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

// TestExternalMetrics checks the request serin sends for a metric of the
// external metrics API (GET
// /apis/external.metrics.k8s.io/v1beta1/namespaces/NS/METRIC with the
// selector as labelSelector): to the API server with the agent's
// credentials, or to the metrics server of provider.address with the
// Secret's token only (as Flagger); and it reads answers of the shape the
// API defines (ExternalMetricValueList, values as Kubernetes quantities, a
// Status on errors). The e2e test TestMetrics_ExternalMetrics reads
// through the testbed's real API server and aggregation layer.
func TestExternalMetrics(t *testing.T) {
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
	answers := map[string]providerCase{
		"one item":                          {answer: list("42"), want: 42},
		"items are summed, quantities read": {answer: list("250m", "1500m", "2"), want: 3.75},
		"no item: no data":                  {answer: list(), wantErr: "no values found for query", wantNoData: true},
		"no adapter": {answer: status(http.StatusNotFound, "the server could not find the requested resource"),
			wantErr: "serves no external metric queue_messages_ready in namespace apps (404): is an adapter"},
		"forbidden": {answer: status(http.StatusForbidden, "cannot get resource"),
			wantErr: "reading metric queue_messages_ready in namespace apps is refused (403): grant get on external.metrics.k8s.io"},
		"not a list": {answer: wireAnswer{ContentType: "application/json", Body: `{"items":"x"}`},
			wantErr: "the answer is not an ExternalMetricValueList"},
	}
	path := "/apis/external.metrics.k8s.io/v1beta1/namespaces/apps/queue_messages_ready"
	selector := url.Values{"labelSelector": {"env in (prod),queue=orders"}}
	modes := map[string]struct {
		query  string
		header string
		config func(srv string) Config
	}{
		"through the API server, serin's query": {
			query:  "queue_messages_ready{queue=orders, env in (prod)}",
			header: "Bearer agent-token",
			config: func(srv string) Config {
				return Config{RESTConfig: &rest.Config{Host: srv, BearerToken: "agent-token"}}
			},
		},
		"from the metrics server of the address, Flagger's query": {
			query:  "apps/queue_messages_ready?labelSelector=queue%3Dorders%2Cenv+in+%28prod%29",
			header: "Bearer metrics-token",
			config: func(srv string) Config {
				return Config{Spec: v1alpha1.MetricProvider{Address: srv}, Secret: map[string][]byte{"token": []byte("metrics-token")},
					SecretName: "apps/metrics", RESTConfig: &rest.Config{Host: "http://api-server.invalid", BearerToken: "agent-token"}}
			},
		},
	}
	for mode, m := range modes {
		for name, tc := range answers {
			t.Run(mode+"/"+name, func(t *testing.T) {
				want := wireRequest{Method: http.MethodGet, Path: path, Query: selector,
					Header: map[string]string{"Authorization": m.header, "Accept": "application/json"}}
				srv := wireServer(t, want, tc.answer)
				cfg := m.config(srv.URL)
				cfg.Spec.Type, cfg.Namespace, cfg.Timeout = v1alpha1.ExternalMetricsProvider, "apps", 5*time.Second
				p, err := New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				v, err := p.Query(context.Background(), m.query)
				checkQueryResult(t, v, err, tc)
			})
		}
	}
}

// A query that is neither form, whose selector does not parse, or that
// reads another namespace when cross-namespace references are disabled,
// fails before any call; without a namespace, Flagger's form reads the
// Canary's.
func TestExternalMetrics_Queries(t *testing.T) {
	p := &externalMetrics{namespace: "apps"}
	for query, wantErr := range map[string]string{
		"sum(rate(x[1m]))":       "names no metric",
		"queue{queue=}}":         "the label selector of query",
		"queue{=x}":              "the label selector of query",
		"a/b/c":                  "is neither NAME{SELECTOR} nor NAMESPACE/NAME?labelSelector=…",
		"other/queue":            "reads namespace other, not the Canary's (apps), and cross-namespace references are disabled",
		"queue?labelSelector==x": "the label selector of query",
	} {
		if _, _, _, err := p.parse(query); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%s: err = %v, want %q", query, err, wantErr)
		}
	}
	for query, want := range map[string]string{
		"queue":                                  "apps/queue/",
		"queue?labelSelector=q%3Dorders":         "apps/queue/q=orders",
		"queue{q=orders}":                        "apps/queue/q=orders",
		"datadogmetric@apps:requests":            "apps/datadogmetric@apps:requests/",
		"apps/datadogmetric@apps:requests?x=y":   "apps/datadogmetric@apps:requests/",
		" queue_messages_ready { q in (a, b) } ": "apps/queue_messages_ready/q in (a,b)",
	} {
		ns, name, selector, err := p.parse(query)
		if got := ns + "/" + name + "/" + selector.String(); err != nil || got != want {
			t.Errorf("%q: %s, %v; want %s", query, got, err, want)
		}
	}
	p.crossNamespace = true
	if ns, _, _, err := p.parse("other/queue"); err != nil || ns != "other" {
		t.Errorf("cross-namespace allowed: %s, %v", ns, err)
	}
	if _, err := New(Config{Spec: v1alpha1.MetricProvider{Type: v1alpha1.ExternalMetricsProvider}, Namespace: "apps"}); err == nil {
		t.Error("built without an API server or an address")
	}
}
