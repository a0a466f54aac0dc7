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
	"strconv"
	"testing"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// TestDatadog checks the wire format of Datadog's "query timeseries
// points" API (GET /api/v1/query, DD-API-KEY and DD-APPLICATION-KEY, from
// and to in seconds over ten 1m intervals), since Datadog cannot run
// here, and reads answers of the shape its API reference documents.
func TestDatadog(t *testing.T) {
	query := "sum:istio.mesh.request.count{destination_workload:podinfo,!response_code:404}.as_count()"
	want := wireRequest{
		Method: http.MethodGet,
		Path:   "/api/v1/query",
		Query: url.Values{
			"query": {query},
			"from":  {strconv.FormatInt(testNow.Unix()-600, 10)},
			"to":    {strconv.FormatInt(testNow.Unix(), 10)},
		},
		Header: map[string]string{"DD-API-KEY": "api-key", "DD-APPLICATION-KEY": "app-key", "Accept": "application/json"},
	}
	series := func(points string) string {
		return `{"aggr":"sum","display_name":"istio.mesh.request.count","end":1795435200000,` +
			`"expression":"sum:istio.mesh.request.count{destination_workload:podinfo}.as_count()","interval":20,"length":3,` +
			`"metric":"istio.mesh.request.count","pointlist":` + points + `,"query_index":0,` +
			`"scope":"destination_workload:podinfo","start":1795434600000,"tag_set":[],"unit":null}`
	}
	answer := func(series ...string) wireAnswer {
		body := `{"status":"ok","res_type":"time_series","resp_version":1,"query":"` + "sum:…" + `","message":"",` +
			`"from_date":1795434600000,"to_date":1795435200000,"group_by":[],"series":[`
		for i, s := range series {
			if i > 0 {
				body += ","
			}
			body += s
		}
		return wireAnswer{ContentType: "application/json", Body: body + `]}`}
	}
	tests := map[string]providerCase{
		"the first point of the series": {
			answer: answer(series(`[[1795434600000,97.5],[1795434620000,99.0],[1795435180000,12.0]]`)),
			want:   97.5,
		},
		"leading nulls are skipped": {
			answer: answer(series(`[[1795434600000,null],[1795434620000,98.25]]`)),
			want:   98.25,
		},
		"only nulls: no data": {
			answer:     answer(series(`[[1795434600000,null]]`)),
			wantErr:    "no values found for query",
			wantNoData: true,
		},
		"no series: no data": {
			answer:     answer(),
			wantErr:    "no values found for query",
			wantNoData: true,
		},
		"several series": {
			answer: answer(series(`[[1795434600000,1]]`), series(`[[1795434600000,2]]`)),
			wantErr: "returned 2 series ({destination_workload:podinfo}, {destination_workload:podinfo}); " +
				"a metric check needs one number: aggregate the query to a single series, without by {…}",
		},
		"an error in a 200": {
			answer:  wireAnswer{ContentType: "application/json", Body: `{"status":"error","res_type":"time_series","series":[],"error":"Rule 'scope_expr' didn't match"}`},
			wantErr: `datadog query "` + query + `" failed: Rule 'scope_expr' didn't match`,
		},
		"forbidden": {
			answer:  wireAnswer{Status: http.StatusForbidden, ContentType: "application/json", Body: `{"errors":["Forbidden"]}`},
			wantErr: "answered 403: Forbidden",
		},
		"rate limited, not JSON": {
			answer:  wireAnswer{Status: http.StatusTooManyRequests, ContentType: "text/html", Body: "<html>Too Many Requests</html>"},
			wantErr: "answered 429: <html>Too Many Requests</html>",
		},
	}
	runProviderCases(t, v1alpha1.MetricProvider{Type: v1alpha1.DatadogProvider},
		map[string]string{"datadog_api_key": "api-key", "datadog_application_key": "app-key"}, query, want, tests)
}

// Without an address, Datadog's US API.
func TestDatadog_DefaultAddress(t *testing.T) {
	p, err := New(Config{Spec: v1alpha1.MetricProvider{Type: v1alpha1.DatadogProvider},
		Secret: map[string][]byte{"datadog_api_key": []byte("a"), "datadog_application_key": []byte("b")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.(*datadog).address; got != "https://api.datadoghq.com" {
		t.Errorf("address %q, want https://api.datadoghq.com", got)
	}
}
