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
	"net/http"
	"net/url"
	"testing"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// TestGraphite checks the wire format of Graphite's render API
// (GET /render with the query's parameters and format=json, basic auth
// from the Secret), since no Graphite runs here, and reads answers of the
// shape its documentation gives ([{"target":…,"datapoints":[[v,ts],…]}]).
func TestGraphite(t *testing.T) {
	query := "target=summarize(\n  asPercent(\n    sumSeries(stats.app.podinfo.errors), sumSeries(stats.app.podinfo.requests)\n  ),\n  '1m', 'avg')\n&from=-1min"
	want := wireRequest{
		Method: http.MethodGet,
		Path:   "/graphite/render",
		Query: url.Values{
			"target": {"summarize( asPercent( sumSeries(stats.app.podinfo.errors), sumSeries(stats.app.podinfo.requests) ), '1m', 'avg') "},
			"from":   {"-1min"},
			"format": {"json"},
		},
		Header: map[string]string{"Authorization": "Basic c2VyaW46czNjcjN0", "Accept": "application/json"},
	}
	target := func(name, points string) string {
		return `{"target":"` + name + `","tags":{"name":"` + name + `"},"datapoints":` + points + `}`
	}
	answer := func(targets ...string) wireAnswer {
		body := "["
		for i, t := range targets {
			if i > 0 {
				body += ","
			}
			body += t
		}
		return wireAnswer{ContentType: "application/json", Body: body + "]"}
	}
	tests := map[string]providerCase{
		"the newest value": {
			answer: answer(target("summarize(asPercent(…),'1m','avg')", `[[1.5,1795435080],[0.5,1795435140]]`)),
			want:   0.5,
		},
		"a trailing null is skipped": {
			answer: answer(target("x", `[[1.5,1795435080],[null,1795435140]]`)),
			want:   1.5,
		},
		"only nulls: no data": {
			answer:     answer(target("x", `[[null,1795435080],[null,1795435140]]`)),
			wantErr:    "no values found for query",
			wantNoData: true,
		},
		"no series: no data": {answer: answer(), wantErr: "no values found for query", wantNoData: true},
		"several series": {
			answer:  answer(target("stats.a", `[[1,1795435140]]`), target("stats.b", `[[2,1795435140]]`)),
			wantErr: "returned 2 series (stats.a, stats.b); a metric check needs one number: aggregate the target to a single series, e.g. sumSeries(...)",
		},
		"a bad target": {
			answer:  wireAnswer{Status: http.StatusBadRequest, ContentType: "text/plain", Body: "Invalid function \"asPercen\""},
			wantErr: `answered 400: Invalid function "asPercen"`,
		},
	}
	runProviderCases(t, v1alpha1.MetricProvider{Type: v1alpha1.GraphiteProvider, Address: "/graphite"},
		map[string]string{"username": "serin", "password": "s3cr3t"}, query, want, tests)
}

// A query that is not render parameters fails before any call.
func TestGraphite_BadQuery(t *testing.T) {
	tests := map[string]string{
		"no target":  "from=-1min",
		"bad escape": "target=%zz",
	}
	for name, query := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := New(Config{Spec: v1alpha1.MetricProvider{Type: v1alpha1.GraphiteProvider, Address: "http://127.0.0.1:1"}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Query(t.Context(), query); err == nil {
				t.Fatal("no error")
			}
		})
	}
}
