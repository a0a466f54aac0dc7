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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/serin-dev/serin/internal/outbound"
)

// maxProviderAnswer bounds the answer to one query, whatever the provider.
const maxProviderAnswer = 1 << 20

// providerCall is one HTTP request of a metric provider: what every
// provider shares between building its request and reading its answer.
type providerCall struct {
	// Provider names the provider in messages: "datadog".
	Provider string
	// Address is the provider's address as the MetricTemplate gives it;
	// errors name it redacted.
	Address string
	Method  string
	URL     *url.URL
	Header  http.Header
	// Body is sent as it is; nil sends none.
	Body []byte
}

// providerAnswer is a provider's answer, its body read up to
// maxProviderAnswer.
type providerAnswer struct {
	Status int
	Body   []byte
}

// OK reports whether the answer is a 2xx.
func (a *providerAnswer) OK() bool { return a.Status >= 200 && a.Status < 300 }

// send makes the call with client within timeout (none when 0) and reads
// the answer up to maxProviderAnswer. The errors name the URL and the
// address redacted, and a refused redirect as such.
func (c *providerCall) send(ctx context.Context, client *http.Client, timeout time.Duration) (*providerAnswer, error) {
	var answer *providerAnswer
	err := c.do(ctx, client, timeout, func(status int, body io.Reader) error {
		b, err := outbound.ReadAtMost(body, maxProviderAnswer)
		if err != nil {
			return c.answerError(status, outbound.RedactError(err))
		}
		answer = &providerAnswer{Status: status, Body: b}
		return nil
	})
	return answer, err
}

// do makes the call with client within timeout (none when 0), and hands
// the answer's status and body to read, which must read at most
// maxProviderAnswer of it and may stop before its end.
func (c *providerCall) do(ctx context.Context, client *http.Client, timeout time.Duration, read func(status int, body io.Reader) error) error {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var body io.Reader
	if c.Body != nil {
		body = bytes.NewReader(c.Body)
	}
	req, err := http.NewRequestWithContext(ctx, c.Method, c.URL.String(), body)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Provider, outbound.RedactError(err))
	}
	for name, values := range c.Header {
		req.Header[name] = values
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s query failed: %w", c.Provider, outbound.RequestError(c.URL.String(), err))
	}
	defer resp.Body.Close()
	return read(resp.StatusCode, resp.Body)
}

// answerError is an error about the answer of the provider:
// "datadog at https://api.datadoghq.com answered 403: <err>".
func (c *providerCall) answerError(status int, err error) error {
	return fmt.Errorf("%s at %s answered %d: %w", c.Provider, outbound.Redact(c.Address), status, err)
}

// refused is the error of an answer that is not a 2xx: the provider's
// own message when it gave one, else an excerpt of the answer.
func (c *providerCall) refused(a *providerAnswer, message string) error {
	if message == "" {
		message = string(a.Body)
	}
	if message == "" {
		message = http.StatusText(a.Status)
	}
	return fmt.Errorf("%s at %s answered %d: %s", c.Provider, outbound.Redact(c.Address), a.Status, outbound.Excerpt([]byte(message)))
}

// decodeJSON decodes the answer into v; an answer that is not JSON fails
// with an excerpt of it.
func (c *providerCall) decodeJSON(a *providerAnswer, v any) error {
	if err := json.Unmarshal(a.Body, v); err != nil {
		return fmt.Errorf("%s at %s answered %d with no JSON: %q", c.Provider, outbound.Redact(c.Address), a.Status, outbound.Excerpt(a.Body))
	}
	return nil
}

// The clients of the providers that set none: shared, so that connections
// are reused; one verifies certificates, the other does not.
var (
	providerClient         = sync.OnceValue(func() *http.Client { return outbound.NewClient(outbound.Options{}) })
	insecureProviderClient = sync.OnceValue(func() *http.Client {
		return outbound.NewClient(outbound.Options{InsecureSkipVerify: true})
	})
)

// clientOf returns override when set (tests), else the shared client that
// verifies certificates or, with insecureSkipVerify, the one that does not.
func clientOf(override *http.Client, insecureSkipVerify bool) *http.Client {
	switch {
	case override != nil:
		return override
	case insecureSkipVerify:
		return insecureProviderClient()
	}
	return providerClient()
}

// httpProvider is what the providers other than Prometheus keep: the
// MetricTemplate's address and TLS setting, the timeout of one query, the
// check's interval (the window of the providers that query a range), and
// a clock that tests replace.
type httpProvider struct {
	name               string
	address            string
	insecureSkipVerify bool
	timeout            time.Duration
	interval           time.Duration
	now                func() time.Time
}

// newHTTPProvider is the httpProvider of a MetricTemplate's provider.
func newHTTPProvider(cfg Config) httpProvider {
	return httpProvider{
		name:               string(cfg.Spec.Type),
		address:            cfg.Spec.GetAddress(),
		insecureSkipVerify: cfg.Spec.InsecureSkipVerify,
		timeout:            cfg.Timeout,
		interval:           cfg.Interval,
		now:                time.Now,
	}
}

// call returns the provider's call to path (joined to its address), with
// the query parameters params (added to the address's own) and header.
func (p *httpProvider) call(method string, params url.Values, header http.Header, path ...string) (*providerCall, error) {
	u, err := outbound.JoinURL(p.address, path...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.name, err)
	}
	if len(params) > 0 {
		q := u.Query()
		for k, values := range params {
			q[k] = values
		}
		u.RawQuery = q.Encode()
	}
	return &providerCall{Provider: p.name, Address: p.address, Method: method, URL: u, Header: header}, nil
}

// fetch makes the provider's call to path with params, header and body
// (nil for none), and returns the call, for the errors about its answer,
// and the answer.
func (p *httpProvider) fetch(ctx context.Context, method string, params url.Values, header http.Header, body []byte, path ...string) (*providerCall, *providerAnswer, error) {
	call, err := p.call(method, params, header, path...)
	if err != nil {
		return nil, nil, err
	}
	call.Body = body
	answer, err := p.send(ctx, call)
	return call, answer, err
}

// send makes c with the provider's client and timeout.
func (p *httpProvider) send(ctx context.Context, c *providerCall) (*providerAnswer, error) {
	return c.send(ctx, clientOf(nil, p.insecureSkipVerify), p.timeout)
}

// stream makes c with the provider's client and timeout, and hands its
// answer to read.
func (p *httpProvider) stream(ctx context.Context, c *providerCall, read func(status int, body io.Reader) error) error {
	return c.do(ctx, clientOf(nil, p.insecureSkipVerify), p.timeout, read)
}

// flaggerWindow is how many check intervals back Flagger queries Datadog,
// Dynatrace, Splunk and CloudWatch: serin queries the same range.
const flaggerWindow = 10

// window returns the range a query covers: flaggerWindow check
// intervals, up to now.
func (p *httpProvider) window() (from, to time.Time) {
	to = p.now()
	return to.Add(-flaggerWindow * p.interval), to
}

// requireSecretKeys returns the values of keys in the Secret of cfg, or an
// error naming the first one missing (or empty) and the Secret.
func requireSecretKeys(cfg Config, keys ...string) ([]string, error) {
	if cfg.Secret == nil {
		return nil, fmt.Errorf("the %s provider needs a secretRef with %s", cfg.Spec.Type, joinKeys(keys))
	}
	values := make([]string, len(keys))
	for i, k := range keys {
		values[i] = string(cfg.Secret[k])
		if values[i] == "" {
			return nil, fmt.Errorf("secret %s has no %s (the %s provider needs %s)", cfg.SecretName, k, cfg.Spec.Type, joinKeys(keys))
		}
	}
	return values, nil
}

// optionalSecretKeys is requireSecretKeys for a provider whose Secret is
// optional: empty values without one.
func optionalSecretKeys(cfg Config, keys ...string) ([]string, error) {
	if cfg.Secret == nil {
		return make([]string, len(keys)), nil
	}
	return requireSecretKeys(cfg, keys...)
}

// joinKeys writes keys as a list: "a", "a and b", "a, b and c".
func joinKeys(keys []string) string {
	switch len(keys) {
	case 0:
		return ""
	case 1:
		return keys[0]
	}
	s := keys[0]
	for _, k := range keys[1 : len(keys)-1] {
		s += ", " + k
	}
	return s + " and " + keys[len(keys)-1]
}

// severalSeries is the error of a query that returned more than one
// series, names naming them (the first maxSeriesShown are quoted, as
// excerpts); aggregate says how to aggregate them to one.
func severalSeries(query string, names []string, aggregate string) error {
	var shown []string
	for _, name := range names[:min(len(names), maxSeriesShown)] {
		shown = append(shown, outbound.Excerpt([]byte(name)))
	}
	if len(names) > maxSeriesShown {
		shown = append(shown, "…")
	}
	return fmt.Errorf("query %q returned %d series (%s); a metric check needs one number: %s",
		query, len(names), strings.Join(shown, ", "), aggregate)
}
