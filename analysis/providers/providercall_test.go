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
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// testNow is the clock of the provider tests: the windows they check are
// computed from it.
var testNow = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// wireRequest is the request a provider must send, exactly: the SaaS
// services cannot run here, so each provider's test checks the wire
// format their API documentation gives, and answers as they do.
type wireRequest struct {
	Method string
	Path   string
	// Query is the whole query string, decoded.
	Query url.Values
	// Header holds the headers that must be there, with these values.
	Header map[string]string
	// Body is the body, compared as JSON when JSONBody.
	Body     string
	JSONBody bool
}

// wireAnswer is what the fake service answers.
type wireAnswer struct {
	Status      int
	ContentType string
	Body        string
}

// wireServer is a fake provider service: every request that differs from
// want fails the test (and gets a 400), every other gets answer.
func wireServer(t *testing.T, want wireRequest, answer wireAnswer) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if diff := diffRequest(want, r); diff != "" {
			t.Errorf("the request differs from the wire format (-want +got):\n%s", diff)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		answer.write(w)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// write answers a request with a.
func (a wireAnswer) write(w http.ResponseWriter) {
	if a.ContentType != "" {
		w.Header().Set("Content-Type", a.ContentType)
	}
	if a.Status != 0 {
		w.WriteHeader(a.Status)
	}
	_, _ = io.WriteString(w, a.Body)
}

func diffRequest(want wireRequest, r *http.Request) string {
	body, _ := io.ReadAll(r.Body)
	got := wireRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: map[string]string{}, JSONBody: want.JSONBody}
	for name := range want.Header {
		got.Header[name] = strings.Join(r.Header.Values(name), ", ")
	}
	if want.Query == nil {
		want.Query = url.Values{}
	}
	got.Body = string(body)
	if want.JSONBody {
		var w, g any
		if err := json.Unmarshal([]byte(want.Body), &w); err != nil {
			return "the test's JSON body: " + err.Error()
		}
		if err := json.Unmarshal(body, &g); err != nil {
			return "the body is not JSON: " + string(body)
		}
		wantJSON, _ := json.Marshal(w)
		gotJSON, _ := json.Marshal(g)
		want.Body, got.Body = string(wantJSON), string(gotJSON)
	}
	return cmp.Diff(want, got)
}

// providerCase is one row of a provider's table test.
type providerCase struct {
	answer     wireAnswer
	want       float64
	wantErr    string
	wantNoData bool
}

// runProviderCase builds the provider of spec and secret, pointed at a
// fake service that checks want and answers tc.answer, with the test
// clock and a 1m interval, runs query and checks the outcome.
func runProviderCase(t *testing.T, spec v1alpha1.MetricProvider, secret map[string]string, query string, want wireRequest, tc providerCase) {
	t.Helper()
	srv := wireServer(t, want, tc.answer)
	if spec.Address == "" {
		spec.Address = srv.URL
	} else {
		spec.Address = srv.URL + spec.Address
	}
	cfg := Config{Spec: spec, Timeout: 5 * time.Second, Interval: time.Minute, SecretName: "apps/creds"}
	if secret != nil {
		cfg.Secret = map[string][]byte{}
		for k, v := range secret {
			cfg.Secret[k] = []byte(v)
		}
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	setTestClock(p)
	v, err := p.Query(context.Background(), query)
	checkQueryResult(t, v, err, tc)
}

// runProviderCases runs each case of a provider's table test.
func runProviderCases(t *testing.T, spec v1alpha1.MetricProvider, secret map[string]string, query string, want wireRequest, tests map[string]providerCase) {
	t.Helper()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) { runProviderCase(t, spec, secret, query, want, tc) })
	}
}

// setTestClock sets the test clock on the providers that have one.
func setTestClock(p Provider) {
	if hp, ok := p.(interface{ base() *httpProvider }); ok {
		hp.base().now = func() time.Time { return testNow }
	}
}

func checkQueryResult(t *testing.T, v float64, err error, tc providerCase) {
	t.Helper()
	if tc.wantErr == "" {
		if err != nil || v != tc.want {
			t.Fatalf("got %v, %v; want %v", v, err, tc.want)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
		t.Fatalf("err = %v, want %q", err, tc.wantErr)
	}
	var noData *ErrNoData
	if errors.As(err, &noData) != tc.wantNoData {
		t.Errorf("err = %T (%v), want no data: %v", err, err, tc.wantNoData)
	}
}

// Every provider fails with a message naming its Secret and the keys it
// lacks.
func TestNew_SecretKeys(t *testing.T) {
	tests := map[string]struct {
		spec    v1alpha1.MetricProvider
		secret  map[string][]byte
		wantErr string
	}{
		"datadog without a Secret": {
			spec:    v1alpha1.MetricProvider{Type: v1alpha1.DatadogProvider},
			wantErr: "the datadog provider needs a secretRef with datadog_api_key and datadog_application_key",
		},
		"datadog without its application key": {
			spec:    v1alpha1.MetricProvider{Type: v1alpha1.DatadogProvider},
			secret:  map[string][]byte{"datadog_api_key": []byte("k")},
			wantErr: "secret apps/creds has no datadog_application_key (the datadog provider needs datadog_api_key and datadog_application_key)",
		},
		"graphite with a username only": {
			spec:    v1alpha1.MetricProvider{Type: v1alpha1.GraphiteProvider, Address: "http://graphite"},
			secret:  map[string][]byte{"username": []byte("u")},
			wantErr: "secret apps/creds has no password (the graphite provider needs username and password)",
		},
		"influxdb without its org": {
			spec:    v1alpha1.MetricProvider{Type: v1alpha1.InfluxDBProvider, Address: "http://influxdb"},
			secret:  map[string][]byte{"token": []byte("t")},
			wantErr: "secret apps/creds has no org (the influxdb provider needs token and org)",
		},
		"splunk with an empty token": {
			spec:    v1alpha1.MetricProvider{Type: v1alpha1.SplunkProvider, Address: "https://api.us1.signalfx.com"},
			secret:  map[string][]byte{"sf_token_key": {}},
			wantErr: "secret apps/creds has no sf_token_key (the splunk provider needs sf_token_key)",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := New(Config{Spec: tt.spec, Secret: tt.secret, SecretName: "apps/creds"})
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// base gives the tests the httpProvider of a provider, to set its clock.
func (p *httpProvider) base() *httpProvider { return p }

// jsonString is s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Every provider goes through outbound's policy: a redirect is refused,
// not followed with the API keys, and no key is in the error, whose
// address is redacted.
func TestProviders_OutboundPolicy(t *testing.T) {
	var followed atomic.Bool
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { followed.Store(true) }))
	defer target.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/steal", http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	address := strings.Replace(redirector.URL, "http://", "http://user:pa55@", 1) + "/?tenant=t3n4nt"
	secrets := map[v1alpha1.MetricProviderType]map[string][]byte{
		v1alpha1.DatadogProvider:   {"datadog_api_key": []byte("k3y-dd"), "datadog_application_key": []byte("k3y-app")},
		v1alpha1.NewRelicProvider:  {"newrelic_account_id": []byte("42"), "newrelic_query_key": []byte("k3y-nr")},
		v1alpha1.GraphiteProvider:  {"username": []byte("u"), "password": []byte("k3y-graphite")},
		v1alpha1.InfluxDBProvider:  {"token": []byte("k3y-influx"), "org": []byte("o")},
		v1alpha1.DynatraceProvider: {"dynatrace_token": []byte("k3y-dt")},
		v1alpha1.SplunkProvider:    {"sf_token_key": []byte("k3y-sf")},
		v1alpha1.CloudWatchProvider: {"aws_access_key_id": []byte("k3y-aws"), "aws_secret_access_key": []byte("k3y-aws-secret"),
			"aws_session_token": []byte("k3y-aws-token")},
		v1alpha1.StackdriverProvider: {"project": []byte("p"),
			"serviceAccountKey": []byte(googleKeyJSON(t, googleTestKey(), redirector.URL+"/token?tenant=t3n4nt"))},
	}
	for providerType, secret := range secrets {
		t.Run(string(providerType), func(t *testing.T) {
			spec, query := v1alpha1.MetricProvider{Type: providerType, Address: address}, "target=x"
			if providerType == v1alpha1.CloudWatchProvider {
				spec.Region, query = "us-east-1", `[{"Id": "m1", "Expression": "1"}]`
			}
			p, err := New(Config{Spec: spec,
				Secret: secret, SecretName: "apps/creds", Timeout: 5 * time.Second, Interval: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Query(context.Background(), query)
			if err == nil || !strings.Contains(err.Error(), "serin follows none") {
				t.Fatalf("err = %v, want a refused redirect", err)
			}
			for _, leak := range []string{"k3y", "pa55", "t3n4nt"} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("the error shows %q: %v", leak, err)
				}
			}
			if followed.Load() {
				t.Error("the redirect was followed")
			}
		})
	}
}
