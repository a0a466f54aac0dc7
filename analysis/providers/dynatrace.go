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
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// dynatraceTokenSecretKey is Flagger's Secret key of a Dynatrace API token.
const dynatraceTokenSecretKey = "dynatrace_token"

// dynatrace queries Dynatrace's metrics v2 API
// (GET /api/v2/metrics/query) with a metric selector.
type dynatrace struct {
	httpProvider
	token string
}

func newDynatraceProvider(cfg Config) (Provider, error) {
	keys, err := requireSecretKeys(cfg, dynatraceTokenSecretKey)
	if err != nil {
		return nil, err
	}
	return &dynatrace{httpProvider: newHTTPProvider(cfg), token: keys[0]}, nil
}

// dynatraceResponse is the part of the answer serin reads: a result per
// metric of the selector, a data item per dimension tuple.
type dynatraceResponse struct {
	Result []struct {
		MetricID string `json:"metricId"`
		Data     []struct {
			DimensionMap map[string]string `json:"dimensionMap"`
			Values       []*float64        `json:"values"`
		} `json:"data"`
	} `json:"result"`
	Error struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Query runs the metric selector over the last ten check intervals at
// resolution Inf (one value for the range), as Flagger does, and returns
// the value of its one metric and one series: its newest non-null value.
// No series, or only nulls, is no data; several fail the check.
func (p *dynatrace) Query(ctx context.Context, query string) (float64, error) {
	selector := strings.TrimSpace(query)
	from, to := p.window()
	params := url.Values{
		"metricSelector": {selector},
		"resolution":     {"Inf"},
		"from":           {strconv.FormatInt(from.UnixMilli(), 10)},
		"to":             {strconv.FormatInt(to.UnixMilli(), 10)},
	}
	header := http.Header{"Accept": {"application/json"}, "Authorization": {"Api-Token " + p.token}}
	call, answer, err := p.fetch(ctx, http.MethodGet, params, header, nil, "api", "v2", "metrics", "query")
	if err != nil {
		return 0, err
	}
	var r dynatraceResponse
	if !answer.OK() {
		_ = call.decodeJSON(answer, &r)
		return 0, call.refused(answer, r.Error.Message)
	}
	if err := call.decodeJSON(answer, &r); err != nil {
		return 0, err
	}
	switch len(r.Result) {
	case 0:
		return 0, &ErrNoData{Query: selector}
	case 1:
	default:
		return 0, fmt.Errorf("query %q selected %d metrics; a metric check needs one number: select one metric", selector, len(r.Result))
	}
	data := r.Result[0].Data
	switch len(data) {
	case 0:
		return 0, &ErrNoData{Query: selector}
	case 1:
	default:
		var names []string
		for _, d := range data {
			var pairs []string
			for _, k := range slices.Sorted(maps.Keys(d.DimensionMap)) {
				pairs = append(pairs, k+"="+d.DimensionMap[k])
			}
			names = append(names, "{"+strings.Join(pairs, ",")+"}")
		}
		return 0, severalSeries(selector, names, "aggregate the selector to a single series, e.g. :splitBy()")
	}
	values := data[0].Values
	for i := len(values) - 1; i >= 0; i-- {
		if values[i] != nil {
			return *values[i], nil
		}
	}
	return 0, &ErrNoData{Query: selector}
}
