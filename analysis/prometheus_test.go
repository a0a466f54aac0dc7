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
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// prometheusAnswer serves body as Prometheus' /api/v1/query answers a
// successful instant query: 200, JSON.
func prometheusAnswer(t *testing.T, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/query" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A check needs one finite number: a vector of several series fails and
// says how to aggregate; NaN is no data; +Inf and -Inf fail. No series is
// ever picked, and no infinity passes a one-sided range.
func TestPrometheusQuery_StrictResults(t *testing.T) {
	tests := map[string]struct {
		body       string
		want       float64
		wantErr    string
		wantNoData bool
	}{
		"one series": {
			body: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"service":"apps-podinfo-canary-http-9898@kubernetesgateway"},"value":[1714567890.123,"99.5"]}]}}`,
			want: 99.5,
		},
		"scalar": {
			body: `{"status":"success","data":{"resultType":"scalar","result":[1714567890.123,"-3"]}}`,
			want: -3,
		},
		"two series": {
			body: `{"status":"success","data":{"resultType":"vector","result":[` +
				`{"metric":{"code":"200","pod":"podinfo-1"},"value":[1714567890.123,"10"]},` +
				`{"metric":{"code":"500","pod":"podinfo-1"},"value":[1714567890.123,"1"]}]}}`,
			wantErr: `query "up" returned 2 series ({code="200",pod="podinfo-1"}, {code="500",pod="podinfo-1"}); ` +
				`a metric check needs one number: aggregate the query to a single series, e.g. sum(...)`,
		},
		"four series, three named": {
			body: `{"status":"success","data":{"resultType":"vector","result":[` +
				`{"metric":{"pod":"a"},"value":[1714567890.123,"1"]},{"metric":{"pod":"b"},"value":[1714567890.123,"2"]},` +
				`{"metric":{"pod":"c"},"value":[1714567890.123,"3"]},{"metric":{"pod":"d"},"value":[1714567890.123,"4"]}]}}`,
			wantErr: `returned 4 series ({pod="a"}, {pod="b"}, {pod="c"}, …)`,
		},
		"empty vector": {
			body:       `{"status":"success","data":{"resultType":"vector","result":[]}}`,
			wantErr:    `no values found for query "up"`,
			wantNoData: true,
		},
		"NaN": {
			body:       `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1714567890.123,"NaN"]}]}}`,
			wantErr:    `query "up" returned NaN, no data (0/0: no requests in the interval?)`,
			wantNoData: true,
		},
		"NaN scalar": {
			body:       `{"status":"success","data":{"resultType":"scalar","result":[1714567890.123,"NaN"]}}`,
			wantErr:    `returned NaN`,
			wantNoData: true,
		},
		"+Inf": {
			body: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1714567890.123,"+Inf"]}]}}`,
			wantErr: `query "up" returned +Inf, not a finite number (a division by zero, or a histogram_quantile above ` +
				`the largest finite bucket): it passes no thresholdRange`,
		},
		"-Inf scalar": {
			body:    `{"status":"success","data":{"resultType":"scalar","result":[1714567890.123,"-Inf"]}}`,
			wantErr: `query "up" returned -Inf, not a finite number`,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			p := &Prometheus{Address: prometheusAnswer(t, tt.body).URL, Timeout: time.Second}
			v, err := p.Query(context.Background(), "up")
			if tt.wantErr == "" {
				if err != nil || v != tt.want {
					t.Fatalf("got %v, %v; want %v", v, err, tt.want)
				}
				return
			}
			if err == nil || !contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			var noData *ErrNoData
			if errors.As(err, &noData) != tt.wantNoData {
				t.Errorf("err = %T, no data %v, want %v", err, !tt.wantNoData, tt.wantNoData)
			}
		})
	}
}

// Through a check: a value that is not one finite number fails whatever
// the thresholdRange, also the side of the range that is not bounded.
func TestMetrics_CheckNeedsOneFiniteNumber(t *testing.T) {
	minOnly := &v1alpha1.ThresholdRange{Min: ptr.To(99.0)}
	maxOnly := &v1alpha1.ThresholdRange{Max: ptr.To(500.0)}
	both := &v1alpha1.ThresholdRange{Min: ptr.To(0.0), Max: ptr.To(100.0)}
	vector := func(values ...string) string {
		body := `{"status":"success","data":{"resultType":"vector","result":[`
		for i, v := range values {
			if i > 0 {
				body += ","
			}
			body += `{"metric":{"pod":"podinfo-` + string(rune('a'+i)) + `"},"value":[1714567890.123,"` + v + `"]}`
		}
		return body + `]}}`
	}
	tests := map[string]struct {
		body        string
		check       string
		rng         *v1alpha1.ThresholdRange
		wantPassed  bool
		wantMessage string
	}{
		"finite, in range": {body: vector("99.5"), check: v1alpha1.RequestSuccessRateCheck, rng: minOnly, wantPassed: true,
			wantMessage: "metric request-success-rate: 99.5"},
		"+Inf under a min-only range": {body: vector("+Inf"), check: v1alpha1.RequestSuccessRateCheck, rng: minOnly,
			wantMessage: "returned +Inf, not a finite number"},
		"-Inf under a max-only range": {body: vector("-Inf"), check: v1alpha1.RequestDurationCheck, rng: maxOnly,
			wantMessage: "returned -Inf, not a finite number"},
		"+Inf under a max-only range": {body: vector("+Inf"), check: v1alpha1.RequestDurationCheck, rng: maxOnly,
			wantMessage: "returned +Inf, not a finite number"},
		"NaN under both bounds": {body: vector("NaN"), check: v1alpha1.RequestSuccessRateCheck, rng: both,
			wantMessage: "returned NaN, no data (0/0: no requests in the interval?): is the canary receiving traffic through traefik"},
		"several series, each in range": {body: vector("99.5", "99.9"), check: v1alpha1.RequestSuccessRateCheck, rng: minOnly,
			wantMessage: `returned 2 series ({pod="podinfo-a"}, {pod="podinfo-b"}); a metric check needs one number`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			m := &Metrics{MetricsServer: prometheusAnswer(t, tt.body).URL}
			metric := v1alpha1.CanaryMetric{Name: tt.check, ThresholdRange: tt.rng}
			res := m.Check(context.Background(), builtinCanary(v1alpha1.GatewayAPIRouting), metric)
			if res.Passed != tt.wantPassed || !contains(res.Message, tt.wantMessage) {
				t.Errorf("got passed=%v %q, want passed=%v %q", res.Passed, res.Message, tt.wantPassed, tt.wantMessage)
			}
		})
	}
}

// provider.headers go with every query, as in Flagger (a tenant's
// X-Scope-OrgID), next to the Secret's credentials.
func TestPrometheusQuery_Headers(t *testing.T) {
	want := wireRequest{
		Method: http.MethodGet,
		Path:   "/prometheus/api/v1/query",
		Query:  url.Values{"query": {"sum(up)"}},
		Header: map[string]string{"X-Scope-OrgID": "team-a", "Authorization": "Bearer t0k3n"},
	}
	runProviderCase(t, v1alpha1.MetricProvider{Address: "/prometheus", Headers: map[string][]string{"X-Scope-OrgID": {"team-a"}}},
		map[string]string{"token": "t0k3n"}, "sum(up)", want, providerCase{
			answer: wireAnswer{ContentType: "application/json", Body: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1795435200,"3"]}]}}`},
			want:   3,
		})
}
