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
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/serin-dev/serin/internal/outbound"
)

// Flagger's Secret keys of a Datadog provider.
const (
	datadogAPIKeySecretKey         = "datadog_api_key"
	datadogApplicationKeySecretKey = "datadog_application_key"
)

// datadog queries Datadog's timeseries points API (GET /api/v1/query).
type datadog struct {
	httpProvider
	apiKey, applicationKey string
}

func newDatadogProvider(cfg Config) (Provider, error) {
	keys, err := requireSecretKeys(cfg, datadogAPIKeySecretKey, datadogApplicationKeySecretKey)
	if err != nil {
		return nil, err
	}
	return &datadog{httpProvider: newHTTPProvider(cfg), apiKey: keys[0], applicationKey: keys[1]}, nil
}

// datadogResponse is the part of the answer serin reads: the status, the
// error when there is one, and the series with their points.
type datadogResponse struct {
	Status string   `json:"status"`
	Error  string   `json:"error"`
	Errors []string `json:"errors"`
	Series []struct {
		Scope      string `json:"scope"`
		Expression string `json:"expression"`
		// Pointlist is [[timestamp ms, value or null], …], oldest first.
		Pointlist [][]*float64 `json:"pointlist"`
	} `json:"series"`
}

// Query runs query over the last ten check intervals and returns the
// value of its one series: its first point that has a value, as Flagger
// reads it (the newest bucket is almost always incomplete). No series, or
// no point with a value, is no data; several series fail the check.
func (p *datadog) Query(ctx context.Context, query string) (float64, error) {
	from, to := p.window()
	params := url.Values{
		"query": {query},
		"from":  {strconv.FormatInt(from.Unix(), 10)},
		"to":    {strconv.FormatInt(to.Unix(), 10)},
	}
	header := http.Header{
		"Accept":             {"application/json"},
		"DD-API-KEY":         {p.apiKey},
		"DD-APPLICATION-KEY": {p.applicationKey},
	}
	call, answer, err := p.fetch(ctx, http.MethodGet, params, header, nil, "api", "v1", "query")
	if err != nil {
		return 0, err
	}
	var r datadogResponse
	if !answer.OK() {
		_ = call.decodeJSON(answer, &r)
		return 0, call.refused(answer, strings.Join(r.Errors, "; "))
	}
	if err := call.decodeJSON(answer, &r); err != nil {
		return 0, err
	}
	if r.Status == "error" || r.Error != "" {
		return 0, fmt.Errorf("datadog query %q failed: %s", query, outbound.Excerpt([]byte(r.Error)))
	}
	switch len(r.Series) {
	case 0:
		return 0, &ErrNoData{Query: query}
	case 1:
	default:
		var scopes []string
		for _, s := range r.Series {
			scopes = append(scopes, "{"+s.Scope+"}")
		}
		return 0, severalSeries(query, scopes, "aggregate the query to a single series, without by {…}")
	}
	for _, point := range r.Series[0].Pointlist {
		if len(point) == 2 && point[1] != nil {
			return *point[1], nil
		}
	}
	return 0, &ErrNoData{Query: query}
}
