package analysis

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
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

// Prometheus queries the Prometheus HTTP API (/api/v1/query).
type Prometheus struct {
	Address string
	// Username and Password (basic auth) or Token (bearer), from the
	// MetricTemplate's secretRef.
	Username, Password, Token string
	InsecureSkipVerify        bool
	Timeout                   time.Duration
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

// Query runs an instant query and returns its single value.
func (p *Prometheus) Query(ctx context.Context, query string) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	u := strings.TrimSuffix(p.Address, "/") + "/api/v1/query?" + url.Values{"query": {query}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	switch {
	case p.Token != "":
		req.Header.Set("Authorization", "Bearer "+p.Token)
	case p.Username != "":
		req.SetBasicAuth(p.Username, p.Password)
	}
	resp, err := p.httpClient().Do(req)
	if err != nil {
		return 0, fmt.Errorf("prometheus query failed: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, err
	}
	var r promResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return 0, fmt.Errorf("prometheus answered %d with no JSON: %.200s", resp.StatusCode, body)
	}
	if r.Status != "success" {
		return 0, fmt.Errorf("prometheus query %q failed: %s: %s", query, r.ErrorType, r.Error)
	}
	return singleValue(r, query)
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
		return 0, fmt.Errorf("query %q returned %q, not a number", query, s)
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
		names = append(names, "{"+strings.Join(pairs, ",")+"}")
	}
	if len(samples) > maxSeriesShown {
		names = append(names, "…")
	}
	return strings.Join(names, ", ")
}

func (p *Prometheus) httpClient() *http.Client {
	if p.Client != nil {
		return p.Client
	}
	if p.InsecureSkipVerify {
		return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	}
	return http.DefaultClient
}
