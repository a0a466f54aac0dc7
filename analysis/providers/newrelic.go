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
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/serin-dev/serin/internal/outbound"
)

// Flagger's Secret keys of a New Relic provider.
const (
	newRelicAccountIDSecretKey = "newrelic_account_id"
	newRelicQueryKeySecretKey  = "newrelic_query_key"
)

// newRelic sends NRQL to New Relic's Insights query API
// (GET /v1/accounts/ID/query).
type newRelic struct {
	httpProvider
	accountID, queryKey string
}

func newNewRelicProvider(cfg Config) (Provider, error) {
	keys, err := requireSecretKeys(cfg, newRelicAccountIDSecretKey, newRelicQueryKeySecretKey)
	if err != nil {
		return nil, err
	}
	if strings.Trim(keys[0], "0123456789") != "" {
		return nil, fmt.Errorf("secret %s: %s is not a New Relic account ID (a number)", cfg.SecretName, newRelicAccountIDSecretKey)
	}
	return &newRelic{httpProvider: newHTTPProvider(cfg), accountID: keys[0], queryKey: keys[1]}, nil
}

// newRelicResponse is the part of the answer serin reads. A query that
// aggregates to one value answers one result with one field named after
// its function ({"count": 12}, {"result": 0.5} for an expression); FACET
// and TIMESERIES queries answer facets and timeSeries instead.
type newRelicResponse struct {
	Results    []map[string]json.RawMessage `json:"results"`
	Facets     json.RawMessage              `json:"facets"`
	TimeSeries json.RawMessage              `json:"timeSeries"`
	Error      string                       `json:"error"`
}

// Query runs query SINCE the check's interval (in seconds, as Flagger
// appends it) and returns its one value.
func (p *newRelic) Query(ctx context.Context, query string) (float64, error) {
	nrql := fmt.Sprintf("%s SINCE %d seconds ago", strings.TrimSpace(query), int64(p.interval.Seconds()))
	header := http.Header{"Accept": {"application/json"}, "X-Query-Key": {p.queryKey}}
	call, answer, err := p.fetch(ctx, http.MethodGet, url.Values{"nrql": {nrql}}, header, nil, "v1", "accounts", p.accountID, "query")
	if err != nil {
		return 0, err
	}
	var r newRelicResponse
	if !answer.OK() {
		_ = call.decodeJSON(answer, &r)
		return 0, call.refused(answer, r.Error)
	}
	if err := call.decodeJSON(answer, &r); err != nil {
		return 0, err
	}
	switch {
	case r.Error != "":
		return 0, fmt.Errorf("newrelic query %q failed: %s", nrql, outbound.Excerpt([]byte(r.Error)))
	case len(r.Facets) > 0 && string(r.Facets) != "null", len(r.TimeSeries) > 0 && string(r.TimeSeries) != "null":
		return 0, fmt.Errorf("query %q returned facets or a time series; a metric check needs one number: drop FACET and TIMESERIES", nrql)
	case len(r.Results) == 0:
		return 0, &ErrNoData{Query: nrql}
	case len(r.Results) > 1:
		return 0, fmt.Errorf("query %q returned %d results; a metric check needs one number: select one aggregate function", nrql, len(r.Results))
	}
	return newRelicValue(r.Results[0], nrql)
}

// newRelicValue reads the one field of a result: a number, or null (no
// data, as average() of no event).
func newRelicValue(result map[string]json.RawMessage, nrql string) (float64, error) {
	if len(result) != 1 {
		return 0, fmt.Errorf("query %q returned a result with %d fields; a metric check needs one number: select one aggregate function", nrql, len(result))
	}
	var name string
	var raw json.RawMessage
	for k, v := range result {
		name, raw = k, v
	}
	if string(raw) == "null" {
		return 0, &ErrNoData{Query: nrql}
	}
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, fmt.Errorf("query %q returned %s: %s, not a number", nrql, outbound.Excerpt([]byte(name)), outbound.Excerpt(raw))
	}
	return v, nil
}
