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
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testutil"
)

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
			p := &Prometheus{Address: testutil.PrometheusAnswer(t, tt.body).URL, Timeout: time.Second}
			v, err := p.Query(context.Background(), "up")
			if tt.wantErr == "" {
				if err != nil || v != tt.want {
					t.Fatalf("got %v, %v; want %v", v, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			var noData *ErrNoData
			if errors.As(err, &noData) != tt.wantNoData {
				t.Errorf("err = %T, no data %v, want %v", err, !tt.wantNoData, tt.wantNoData)
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
