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

	"github.com/google/go-cmp/cmp"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// The judge's range query is Prometheus' query_range, sent as an instant
// query is (the address's path prefix, the provider's headers, the
// Secret's credentials), with start and end in Unix seconds and the step
// in seconds; the answer is the values of its one series, oldest first,
// NaN points left out.
func TestPrometheusRangeQuery_WireFormat(t *testing.T) {
	end := time.Unix(1795435200, 0)
	want := wireRequest{
		Method: http.MethodGet,
		Path:   "/prometheus/api/v1/query_range",
		Query: url.Values{
			"query": {`sum(rate(requests{pod=~"podinfo-primary-.*"}[30s]))`},
			"start": {"1795434900"},
			"end":   {"1795435200"},
			"step":  {"30"},
		},
		Header: map[string]string{"X-Scope-OrgID": "team-a", "Authorization": "Bearer t0k3n"},
	}
	srv := wireServer(t, want, wireAnswer{ContentType: "application/json", Body: `{"status":"success","data":{"resultType":"matrix","result":[` +
		`{"metric":{},"values":[[1795434900,"1.5"],[1795434930,"NaN"],[1795434960,"2"],[1795434990,"0"]]}]}}`})
	p, err := New(Config{
		Spec:    v1alpha1.MetricProvider{Address: srv.URL + "/prometheus", Headers: map[string][]string{"X-Scope-OrgID": {"team-a"}}},
		Secret:  map[string][]byte{"token": []byte("t0k3n")},
		Timeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.(RangeQuerier).RangePoints(context.Background(), want.Query.Get("query"),
		Range{Start: end.Add(-5 * time.Minute), End: end, Step: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	wantPoints := []Point{{time.Unix(1795434900, 0), 1.5}, {time.Unix(1795434960, 0), 2}, {time.Unix(1795434990, 0), 0}}
	if diff := cmp.Diff(wantPoints, got); diff != "" {
		t.Errorf("points (-want +got):\n%s", diff)
	}
}

// A judged side is one series of finite numbers: several series fail and
// say how to aggregate, none (or only NaN) is no data, an infinity fails.
func TestPrometheusRangeQuery_StrictResults(t *testing.T) {
	matrix := func(series ...string) string {
		return `{"status":"success","data":{"resultType":"matrix","result":[` + strings.Join(series, ",") + `]}}`
	}
	tests := map[string]struct {
		body       string
		want       []float64
		wantErr    string
		wantNoData bool
	}{
		"one series": {
			body: matrix(`{"metric":{"service":"podinfo-canary"},"values":[[1,"1"],[2,"3"]]}`),
			want: []float64{1, 3},
		},
		"two series": {
			body:    matrix(`{"metric":{"pod":"a"},"values":[[1,"1"]]}`, `{"metric":{"pod":"b"},"values":[[1,"2"]]}`),
			wantErr: `range query "up" returned 2 series ({pod="a"}, {pod="b"}); the judge needs one series a side: aggregate the query to a single series, e.g. sum(...)`,
		},
		"no series": {
			body:       matrix(),
			wantErr:    `no values found for query "up"`,
			wantNoData: true,
		},
		"only NaN": {
			body:       matrix(`{"metric":{},"values":[[1,"NaN"],[2,"NaN"]]}`),
			wantErr:    `query "up" returned NaN, no data`,
			wantNoData: true,
		},
		"+Inf": {
			body:    matrix(`{"metric":{},"values":[[1,"1"],[2,"+Inf"]]}`),
			wantErr: `range query "up" returned +Inf, not a finite number`,
		},
		"a vector": {
			body:    `{"status":"success","data":{"resultType":"vector","result":[]}}`,
			wantErr: `range query "up" returned a vector; the judge needs a matrix of one series`,
		},
		"an error": {
			body:    `{"status":"error","errorType":"bad_data","error":"exceeded maximum resolution of 11,000 points per timeseries"}`,
			wantErr: `prometheus query "up" failed: bad_data: exceeded maximum resolution`,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			srv := wireServer(t, wireRequest{Method: http.MethodGet, Path: "/api/v1/query_range",
				Query: url.Values{"query": {"up"}, "start": {"60.5"}, "end": {"120"}, "step": {"7.5"}}, Header: map[string]string{}},
				wireAnswer{ContentType: "application/json", Body: tt.body})
			p := &Prometheus{Address: srv.URL, Timeout: time.Second}
			got, err := p.RangeQuery(context.Background(), "up", Range{Start: time.Unix(60, 5e8), End: time.Unix(120, 0), Step: 7500 * time.Millisecond})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("values (-want +got):\n%s", diff)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if errors.As(err, new(*ErrNoData)) != tt.wantNoData {
				t.Errorf("err = %T, want no data: %v", err, tt.wantNoData)
			}
		})
	}
}
