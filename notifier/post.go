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

package notifier

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/serin-dev/serin/internal/outbound"
)

// RetryPolicy bounds the retries of one delivery. Waits grow exponentially
// from WaitMin to WaitMax (or follow a Retry-After header); the delivery's
// context deadline (a Provider's spec.timeout) ends them earlier.
type RetryPolicy struct {
	// Max is the number of retries after the first attempt.
	Max int
	// WaitMin and WaitMax bound the wait between attempts.
	WaitMin, WaitMax time.Duration
}

// DefaultRetryPolicy is notification-controller's: 4 retries, 2 s to 30 s apart.
var DefaultRetryPolicy = RetryPolicy{Max: 4, WaitMin: 2 * time.Second, WaitMax: 30 * time.Second}

// request is one HTTP POST to a receiver.
type request struct {
	url    string
	body   []byte
	header http.Header
	// validate checks the final response; nil accepts any 2xx.
	validate func(*http.Response) error
}

// endpoint holds how to reach a receiver.
type endpoint struct {
	// proxy, when set, replaces the environment's proxy settings.
	proxy *url.URL
	// tls, when set, is the client TLS configuration (CA, client certificate).
	tls *tls.Config
	// attemptTimeout bounds each attempt; 0 leaves only the context deadline.
	attemptTimeout time.Duration
	// checkRetry decides whether to retry; nil is retryablehttp's default
	// (connection errors, 429 and 5xx).
	checkRetry retryablehttp.CheckRetry
}

// maxAnswer is how much of a refused delivery's answer is read, for its
// excerpt.
const maxAnswer = 1 << 10

// post sends req with retries and backoff until it succeeds, fails for
// good, or ctx ends. The client is outbound's: it follows no redirect, and
// a redirect is not retried. Errors name only the receiver's origin
// (scheme and host: a webhook's path is often its credential) and quote
// at most an excerpt of its answer.
func post(ctx context.Context, policy RetryPolicy, ep endpoint, req request) error {
	httpClient := outbound.NewClient(outbound.Options{Timeout: ep.attemptTimeout, Proxy: ep.proxy, TLS: ep.tls})
	defer httpClient.CloseIdleConnections()

	c := retryablehttp.NewClient()
	c.HTTPClient = httpClient
	c.RetryMax = policy.Max
	c.RetryWaitMin = policy.WaitMin
	c.RetryWaitMax = policy.WaitMax
	c.Logger = nil
	checkRetry := retryablehttp.DefaultRetryPolicy
	if ep.checkRetry != nil {
		checkRetry = ep.checkRetry
	}
	c.CheckRetry = func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		if outbound.IsRedirect(err) {
			return false, err
		}
		return checkRetry(ctx, resp, err)
	}
	// Hand back the last response, not a generic "giving up" error, so
	// that validate can say what the receiver answered.
	c.ErrorHandler = retryablehttp.PassthroughErrorHandler

	r, err := retryablehttp.NewRequestWithContext(ctx, http.MethodPost, req.url, req.body)
	if err != nil {
		return fmt.Errorf("failed to create the request to %s: %w", outbound.Origin(req.url), outbound.RedactError(outbound.WithoutURL(err)))
	}
	for k, v := range req.header {
		r.Header[k] = v
	}
	if r.Header.Get("Content-Type") == "" {
		r.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(r)
	if err != nil {
		return fmt.Errorf("failed to post to %s: %w", outbound.Origin(req.url), outbound.RedactError(outbound.WithoutURL(err)))
	}
	defer resp.Body.Close()
	validate := req.validate
	if validate == nil {
		validate = expect2xx
	}
	return validate(resp)
}

// expect2xx accepts any 2xx response and names the status and an excerpt
// of the body of others.
func expect2xx(resp *http.Response) error {
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	b, _ := outbound.ReadAtMost(resp.Body, maxAnswer)
	if excerpt := outbound.Excerpt(b); excerpt != "" {
		return fmt.Errorf("request failed with status code %d: %q", resp.StatusCode, excerpt)
	}
	return fmt.Errorf("request failed with status code %d", resp.StatusCode)
}

// redact removes secrets (webhook addresses, tokens) from an error before
// it is logged: a Slack or Teams webhook URL is itself a credential. The
// URLs left are redacted too (outbound.RedactText).
func redact(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "*****")
		}
	}
	return errors.New(outbound.RedactText(msg))
}
