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
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/serin-dev/serin/internal/outbound"
)

// graphite queries Graphite's render API (GET /render?format=json).
type graphite struct {
	httpProvider
	username, password string
}

func newGraphiteProvider(cfg Config) (Provider, error) {
	keys, err := optionalSecretKeys(cfg, "username", "password")
	if err != nil {
		return nil, err
	}
	return &graphite{httpProvider: newHTTPProvider(cfg), username: keys[0], password: keys[1]}, nil
}

// graphiteSeries is one target of a render answer; a datapoint is
// [value or null, timestamp in seconds], oldest first.
type graphiteSeries struct {
	Target     string       `json:"target"`
	Datapoints [][]*float64 `json:"datapoints"`
}

// whitespace is a run of whitespace in a query, which Flagger collapses to
// one space.
var whitespace = regexp.MustCompile(`\s+`)

// Query sends query, the parameters of a render URL (target=…&from=…, as
// in Flagger: whitespace collapsed, format=json added), and returns the
// newest value of its one series. No series, or no datapoint with a
// value, is no data; several series fail the check.
func (p *graphite) Query(ctx context.Context, query string) (float64, error) {
	params, err := url.ParseQuery(whitespace.ReplaceAllString(strings.TrimSpace(query), " "))
	if err != nil {
		return 0, fmt.Errorf("graphite: the query is not URL parameters (target=…&from=…): %w", err)
	}
	if params.Get("target") == "" {
		return 0, fmt.Errorf("graphite: the query %q has no target=", outbound.Excerpt([]byte(query)))
	}
	params.Set("format", "json")
	header := http.Header{"Accept": {"application/json"}}
	if p.username != "" {
		header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(p.username+":"+p.password)))
	}
	call, answer, err := p.fetch(ctx, http.MethodGet, params, header, nil, "render")
	if err != nil {
		return 0, err
	}
	if !answer.OK() {
		return 0, call.refused(answer, "")
	}
	var series []graphiteSeries
	if err := call.decodeJSON(answer, &series); err != nil {
		return 0, err
	}
	switch len(series) {
	case 0:
		return 0, &ErrNoData{Query: query}
	case 1:
	default:
		var targets []string
		for _, s := range series {
			targets = append(targets, s.Target)
		}
		return 0, severalSeries(query, targets, "aggregate the target to a single series, e.g. sumSeries(...)")
	}
	points := series[0].Datapoints
	for i := len(points) - 1; i >= 0; i-- {
		if len(points[i]) == 2 && points[i][0] != nil {
			return *points[i][0], nil
		}
	}
	return 0, &ErrNoData{Query: query}
}
