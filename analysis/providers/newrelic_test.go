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

// TestNewRelic checks the wire format of New Relic's Insights query API
// (GET /v1/accounts/ID/query, nrql with SINCE the 1m interval appended,
// X-Query-Key), since New Relic cannot run here, and reads answers of the
// shape its documentation gives ({"results":[{"count":…}],"metadata":…}).
func TestNewRelic(t *testing.T) {
	query := "SELECT filter(sum(nginx_ingress_controller_requests), WHERE status >= '500') /\n" +
		"  sum(nginx_ingress_controller_requests) * 100 FROM Metric WHERE namespace = 'apps'\n"
	nrql := "SELECT filter(sum(nginx_ingress_controller_requests), WHERE status >= '500') /\n" +
		"  sum(nginx_ingress_controller_requests) * 100 FROM Metric WHERE namespace = 'apps' SINCE 60 seconds ago"
	want := wireRequest{
		Method: http.MethodGet,
		Path:   "/v1/accounts/1234567/query",
		Query:  url.Values{"nrql": {nrql}},
		Header: map[string]string{"X-Query-Key": "NRIQ-key", "Accept": "application/json"},
	}
	metadata := `"metadata":{"eventTypes":["Metric"],"eventType":"Metric","openEnded":true,` +
		`"beginTime":"2026-11-23T11:59:00Z","endTime":"2026-11-23T12:00:00Z","beginTimeMillis":1795435140000,` +
		`"endTimeMillis":1795435200000,"rawSince":"60 SECONDS AGO","rawUntil":"NOW","rawCompareWith":"","messages":[],` +
		`"contents":[{"function":"alias","alias":"result","contents":{"function":"binop"}}]}`
	ok := func(results string) wireAnswer {
		return wireAnswer{ContentType: "application/json", Body: `{"results":` + results + `,` + metadata + `}`}
	}
	tests := map[string]providerCase{
		"an expression": {answer: ok(`[{"result":2.5}]`), want: 2.5},
		"a count":       {answer: ok(`[{"count":80275388}]`), want: 80275388},
		"null: no data": {answer: ok(`[{"average":null}]`), wantErr: "no values found for query", wantNoData: true},
		"no result":     {answer: ok(`[]`), wantErr: "no values found for query", wantNoData: true},
		"two functions": {
			answer:  ok(`[{"count":3},{"average":1.5}]`),
			wantErr: "returned 2 results; a metric check needs one number: select one aggregate function",
		},
		"a percentile, not a number": {
			answer:  ok(`[{"percentile":{"95":0.3}}]`),
			wantErr: `returned percentile: {"95":0.3}, not a number`,
		},
		"a FACET query": {
			answer:  wireAnswer{ContentType: "application/json", Body: `{"facets":[{"name":"a","results":[{"count":1}]}],` + metadata + `}`},
			wantErr: "returned facets or a time series; a metric check needs one number: drop FACET and TIMESERIES",
		},
		"a syntax error": {
			answer:  wireAnswer{Status: http.StatusBadRequest, ContentType: "application/json", Body: `{"error":"NRQL Syntax Error: Error at line 1 position 8"}`},
			wantErr: "answered 400: NRQL Syntax Error: Error at line 1 position 8",
		},
	}
	runProviderCases(t, v1alpha1.MetricProvider{Type: v1alpha1.NewRelicProvider},
		map[string]string{"newrelic_account_id": "1234567", "newrelic_query_key": "NRIQ-key"}, query, want, tests)
}

// The account ID goes into the path: it must be a number.
func TestNewRelic_AccountID(t *testing.T) {
	_, err := New(Config{Spec: v1alpha1.MetricProvider{Type: v1alpha1.NewRelicProvider}, SecretName: "apps/nr",
		Secret: map[string][]byte{"newrelic_account_id": []byte("12/../admin"), "newrelic_query_key": []byte("k")}})
	if want := "secret apps/nr: newrelic_account_id is not a New Relic account ID (a number)"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}
