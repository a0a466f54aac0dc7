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
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serin-dev/serin/analysis/providers"
	"github.com/serin-dev/serin/api/v1alpha1"
)

func canary() *v1alpha1.Canary {
	c := &v1alpha1.Canary{ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: "apps"}}
	c.Spec.TargetRef = v1alpha1.TargetReference{Kind: "Deployment", Name: "podinfo"}
	c.Spec.Analysis = &v1alpha1.CanaryAnalysis{Interval: &metav1.Duration{Duration: 30 * time.Second}}
	c.Status.LastAppliedSpec = "abc123"
	c.Status.Phase = v1alpha1.PhaseProgressing
	return c
}

func TestRenderQuery(t *testing.T) {
	tests := map[string]struct {
		query   string
		metric  v1alpha1.CanaryMetric
		want    string
		wantErr bool
	}{
		"flagger variables": {
			query: `sum(rate(http{ns="{{ namespace }}",app="{{ target }}",svc="{{ service }}",c="{{ name }}"}[{{ interval }}]))`,
			want:  `sum(rate(http{ns="apps",app="podinfo",svc="podinfo",c="podinfo"}[30s]))`,
		},
		"metric interval and variables": {
			query:  `x{code=~"{{ variables.codes }}"}[{{ interval }}]`,
			metric: v1alpha1.CanaryMetric{Interval: &metav1.Duration{Duration: 2 * time.Minute}, TemplateVariables: map[string]string{"codes": "5.."}},
			want:   `x{code=~"5.."}[2m]`,
		},
		"the canary's pods": {
			query: `sum(rate(jobs_total{pod=~"{{ pods }}"}[{{ interval }}]))`,
			want:  `sum(rate(jobs_total{pod=~"podinfo-[a-z0-9]+-[a-z0-9]+"}[30s]))`,
		},
		"sub-second interval":  {query: `[{{ interval }}]`, metric: v1alpha1.CanaryMetric{Interval: &metav1.Duration{Duration: 1500 * time.Millisecond}}, want: `[1500ms]`},
		"unknown variable":     {query: `{{ variables.missing }}`, wantErr: true},
		"not a valid template": {query: `{{ target `, wantErr: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			tt.metric.Name = "m"
			got, err := RenderQuery(tt.query, v1alpha1.PrometheusProvider, canary(), tt.metric)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// The Prometheus HTTP API's answers (as documented for /api/v1/query) and
// how each is read. The real Prometheus is exercised by the e2e tests.
func TestPrometheusQuery(t *testing.T) {
	tests := map[string]struct {
		body    string
		status  int
		want    float64
		wantErr string
		noData  bool
	}{
		"vector":       {body: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000.1,"0.25"]}]}}`, want: 0.25},
		"scalar":       {body: `{"status":"success","data":{"resultType":"scalar","result":[1700000000.1,"42"]}}`, want: 42},
		"empty vector": {body: `{"status":"success","data":{"resultType":"vector","result":[]}}`, noData: true},
		"NaN":          {body: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"NaN"]}]}}`, noData: true},
		"bad query":    {status: 400, body: `{"status":"error","errorType":"bad_data","error":"parse error"}`, wantErr: "bad_data: parse error"},
		"matrix":       {body: `{"status":"success","data":{"resultType":"matrix","result":[]}}`, wantErr: "needs a single number"},
		"not json":     {status: 502, body: `bad gateway`, wantErr: "no JSON"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var gotAuth, gotQuery string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				gotAuth, gotQuery = r.Header.Get("Authorization"), r.URL.Query().Get("query")
				if tt.status != 0 {
					w.WriteHeader(tt.status)
				}
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			p := &providers.Prometheus{Address: srv.URL, Token: "t0ken", Timeout: time.Second}
			v, err := p.Query(context.Background(), "up")
			var nd *providers.ErrNoData
			switch {
			case tt.noData:
				if !errors.As(err, &nd) {
					t.Fatalf("err = %v, want no data", err)
				}
			case tt.wantErr != "":
				if err == nil || !contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
			default:
				if err != nil || v != tt.want {
					t.Fatalf("got %v, %v; want %v", v, err, tt.want)
				}
			}
			if gotAuth != "Bearer t0ken" || gotQuery != "up" {
				t.Errorf("request: auth %q query %q", gotAuth, gotQuery)
			}
		})
	}
}

func TestWebhooks(t *testing.T) {
	var calls atomic.Int32
	var payload Payload
	failFirst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&payload)
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer failFirst.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
	}))
	defer slow.Close()

	c := canary()
	c.Spec.Analysis.Webhooks = []v1alpha1.CanaryWebhook{
		{Name: "retry", Type: v1alpha1.PreRolloutHook, URL: failFirst.URL, Retries: 1, Metadata: map[string]string{"k": "v"}},
		{Name: "slow", Type: v1alpha1.ConfirmPromotionHook, URL: slow.URL, Timeout: &metav1.Duration{Duration: 50 * time.Millisecond}},
		{Name: "default-type", URL: failFirst.URL},
	}
	w := &Webhooks{}
	if err := w.Call(context.Background(), c, c.Spec.Analysis.Webhooks[0], c.Status.Phase); err != nil {
		t.Fatalf("a retried webhook failed: %v", err)
	}
	want := Payload{Name: "podinfo", Namespace: "apps", Phase: "Progressing", Checksum: "abc123", Type: "pre-rollout", Metadata: map[string]string{"k": "v"}}
	if diff := cmp.Diff(want, payload); diff != "" {
		t.Errorf("payload (-want +got):\n%s", diff)
	}
	err := w.Call(context.Background(), c, c.Spec.Analysis.Webhooks[1], c.Status.Phase)
	if !errors.Is(err, context.DeadlineExceeded) || !contains(err.Error(), "webhook slow: no answer within 50ms: call deadline exceeded") {
		t.Errorf("a webhook past its timeout fails naming it and its deadline: %v", err)
	}
	if got := len(Hooks(c, v1alpha1.RolloutHook)); got != 1 {
		t.Errorf("a webhook without type is a rollout hook: got %d", got)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
