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
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/serin-dev/serin/internal/outbound"
)

// ErrNoData means the query returned no sample, or NaN: a failed check.
type ErrNoData struct {
	Query string
	// NaN is true when the query returned NaN rather than nothing: a ratio
	// of no requests (0/0), a quantile of no observations.
	NaN bool
}

func (e *ErrNoData) Error() string {
	if e.NaN {
		return fmt.Sprintf("query %q returned NaN, no data (0/0: no requests in the interval?)", e.Query)
	}
	return fmt.Sprintf("no values found for query %q", e.Query)
}

// Prometheus queries the Prometheus HTTP API (/api/v1/query, and
// /api/v1/query_range for the judge).
type Prometheus struct {
	Address string
	// Username and Password (basic auth) or Token (bearer), from the
	// MetricTemplate's secretRef.
	Username, Password, Token string
	// Headers are added to every query (provider.headers: a tenant's
	// X-Scope-OrgID); the Secret's credentials take precedence.
	Headers            http.Header
	InsecureSkipVerify bool
	Timeout            time.Duration
	// Client overrides the HTTP client (tests).
	Client *http.Client
}

// promResponse is the part of the query API's answer serin reads.
type promResponse struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
}

// Query runs an instant query and returns its single value. The query URL
// is the provider's address (a path prefix included, as a Thanos or a
// Mimir one has) joined with /api/v1/query; errors name it redacted and
// quote at most an excerpt of the answer.
func (p *Prometheus) Query(ctx context.Context, query string) (float64, error) {
	r, err := p.get(ctx, "api/v1/query", url.Values{"query": {query}})
	if err != nil {
		return 0, err
	}
	return singleValue(r, query)
}

// Range is the time range of a range query and the time between two of
// its values.
type Range struct {
	Start, End time.Time
	Step       time.Duration
}

// RangeQuerier is a Provider that also answers a query with the points of
// one series over a time range: the judge's samples, with their
// timestamps so that two sides' can be compared at the same times.
type RangeQuerier interface {
	RangePoints(ctx context.Context, query string, r Range) ([]Point, error)
}

// Point is a value of a series at a time.
type Point struct {
	Time  time.Time
	Value float64
}

// RangeQuery is RangePoints' values, without their times.
func (p *Prometheus) RangeQuery(ctx context.Context, query string, rng Range) ([]float64, error) {
	points, err := p.RangePoints(ctx, query, rng)
	if err != nil {
		return nil, err
	}
	values := make([]float64, len(points))
	for i, pt := range points {
		values[i] = pt.Value
	}
	return values, nil
}

// RangePoints runs a range query (/api/v1/query_range, start and end in
// Unix seconds, step in seconds) and returns the points of its single
// series, oldest first. The points that are NaN (a ratio of no requests)
// are left out; no series, or only NaN, is *ErrNoData; several series, or
// an infinite value, fail as in Query. Address, authentication, headers,
// timeout and the outbound policy are Query's.
func (p *Prometheus) RangePoints(ctx context.Context, query string, rng Range) ([]Point, error) {
	r, err := p.get(ctx, "api/v1/query_range", url.Values{
		"query": {query},
		"start": {formatUnix(rng.Start)},
		"end":   {formatUnix(rng.End)},
		"step":  {strconv.FormatFloat(rng.Step.Seconds(), 'f', -1, 64)},
	})
	if err != nil {
		return nil, err
	}
	return seriesValues(r, query)
}

// formatUnix writes a time as Prometheus reads it: Unix seconds, with a
// fraction when there is one.
func formatUnix(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixNano())/1e9, 'f', -1, 64)
}

// get sends a query API request to path, joined to the provider's address
// (a path prefix included, as a Thanos or a Mimir one has), with params,
// and returns its successful answer; errors name the address redacted and
// quote at most an excerpt of the answer.
func (p *Prometheus) get(ctx context.Context, path string, params url.Values) (promResponse, error) {
	var r promResponse
	u, err := outbound.JoinURL(p.Address, path)
	if err != nil {
		return r, fmt.Errorf("prometheus: %w", err)
	}
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	u.RawQuery = q.Encode()
	header := p.Headers.Clone()
	if header == nil {
		header = http.Header{}
	}
	call := &providerCall{Provider: "prometheus", Address: p.Address, Method: http.MethodGet, URL: u, Header: header}
	switch {
	case p.Token != "":
		header.Set("Authorization", "Bearer "+p.Token)
	case p.Username != "":
		header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(p.Username+":"+p.Password)))
	}
	answer, err := call.send(ctx, clientOf(p.Client, p.InsecureSkipVerify), p.Timeout)
	if err != nil {
		return r, err
	}
	if err := call.decodeJSON(answer, &r); err != nil {
		return r, err
	}
	if r.Status != "success" {
		return r, fmt.Errorf("prometheus query %q failed: %s: %s", params.Get("query"), outbound.Excerpt([]byte(r.ErrorType)), outbound.Excerpt([]byte(r.Error)))
	}
	return r, nil
}

// promSeries is one series of a matrix answer.
type promSeries struct {
	Metric map[string]string `json:"metric"`
	Values [][2]any          `json:"values"`
}

// seriesValues reads the points of the one series of a matrix answer,
// NaN points left out.
func seriesValues(r promResponse, query string) ([]Point, error) {
	if r.Data.ResultType != "matrix" {
		return nil, fmt.Errorf("range query %q returned a %s; the judge needs a matrix of one series", query, r.Data.ResultType)
	}
	var series []promSeries
	if err := json.Unmarshal(r.Data.Result, &series); err != nil {
		return nil, err
	}
	switch len(series) {
	case 0:
		return nil, &ErrNoData{Query: query}
	case 1:
	default:
		samples := make([]promSample, len(series))
		for i, s := range series {
			samples[i].Metric = s.Metric
		}
		return nil, fmt.Errorf("range query %q returned %d series (%s); the judge needs one series a side: "+
			"aggregate the query to a single series, e.g. sum(...)", query, len(series), seriesLabels(samples))
	}
	values := make([]Point, 0, len(series[0].Values))
	for _, pair := range series[0].Values {
		at, ok := pair[0].(float64)
		if !ok {
			return nil, fmt.Errorf("range query %q returned a point at %v, not a Unix time", query, pair[0])
		}
		s, _ := pair[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		switch {
		case err != nil:
			return nil, fmt.Errorf("range query %q returned %q, not a number", query, outbound.Excerpt([]byte(s)))
		case math.IsNaN(v):
			continue
		case math.IsInf(v, 0):
			return nil, fmt.Errorf("range query %q returned %s, not a finite number (a division by zero, or a "+
				"histogram_quantile above the largest finite bucket)", query, s)
		}
		values = append(values, Point{Time: time.UnixMilli(int64(math.Round(at * 1000))), Value: v})
	}
	if len(values) == 0 {
		return nil, &ErrNoData{Query: query, NaN: true}
	}
	return values, nil
}

// promSample is one series of a vector answer.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// singleValue reads the one number of an answer: a scalar, or a vector of
// exactly one series. A check never picks one of several series, and a
// value that is not a finite number passes no thresholdRange: NaN is no
// data, +Inf and -Inf are failures.
func singleValue(r promResponse, query string) (float64, error) {
	var pair [2]any
	switch r.Data.ResultType {
	case "scalar":
		if err := json.Unmarshal(r.Data.Result, &pair); err != nil {
			return 0, err
		}
	case "vector":
		var samples []promSample
		if err := json.Unmarshal(r.Data.Result, &samples); err != nil {
			return 0, err
		}
		switch len(samples) {
		case 0:
			return 0, &ErrNoData{Query: query}
		case 1:
			pair = samples[0].Value
		default:
			return 0, fmt.Errorf("query %q returned %d series (%s); a metric check needs one number: "+
				"aggregate the query to a single series, e.g. sum(...)", query, len(samples), seriesLabels(samples))
		}
	default:
		return 0, fmt.Errorf("query %q returned a %s; a metric check needs a single number", query, r.Data.ResultType)
	}
	s, _ := pair[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil:
		return 0, fmt.Errorf("query %q returned %q, not a number", query, outbound.Excerpt([]byte(s)))
	case math.IsNaN(v):
		return 0, &ErrNoData{Query: query, NaN: true}
	case math.IsInf(v, 0):
		return 0, fmt.Errorf("query %q returned %s, not a finite number (a division by zero, or a "+
			"histogram_quantile above the largest finite bucket): it passes no thresholdRange", query, s)
	}
	return v, nil
}

// maxSeriesShown is how many series' labels an error names.
const maxSeriesShown = 3

// seriesLabels names the first series of an answer by their labels, as
// Prometheus prints them: {code="200",pod="a"}, {code="500",pod="a"}, ….
func seriesLabels(samples []promSample) string {
	var names []string
	for _, sample := range samples[:min(len(samples), maxSeriesShown)] {
		var pairs []string
		for _, k := range slices.Sorted(maps.Keys(sample.Metric)) {
			pairs = append(pairs, fmt.Sprintf("%s=%q", k, sample.Metric[k]))
		}
		names = append(names, outbound.Excerpt([]byte("{"+strings.Join(pairs, ",")+"}")))
	}
	if len(samples) > maxSeriesShown {
		names = append(names, "…")
	}
	return strings.Join(names, ", ")
}
