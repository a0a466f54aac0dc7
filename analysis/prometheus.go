package analysis

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ErrNoData means the query returned no sample: a failed check.
type ErrNoData struct{ Query string }

func (e *ErrNoData) Error() string {
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

// singleValue reads the value of a scalar, or of the first sample of a vector.
func singleValue(r promResponse, query string) (float64, error) {
	var pair [2]any
	switch r.Data.ResultType {
	case "scalar":
		if err := json.Unmarshal(r.Data.Result, &pair); err != nil {
			return 0, err
		}
	case "vector":
		var samples []struct {
			Value [2]any `json:"value"`
		}
		if err := json.Unmarshal(r.Data.Result, &samples); err != nil {
			return 0, err
		}
		if len(samples) == 0 {
			return 0, &ErrNoData{Query: query}
		}
		pair = samples[0].Value
	default:
		return 0, fmt.Errorf("query %q returned a %s; a metric check needs a single number", query, r.Data.ResultType)
	}
	s, _ := pair[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("query %q returned %q, not a number", query, s)
	}
	if math.IsNaN(v) {
		return 0, &ErrNoData{Query: query}
	}
	return v, nil
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
