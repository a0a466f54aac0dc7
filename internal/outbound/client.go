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

// Package outbound is serin's one policy for the HTTP calls it makes on a
// tenant's behalf (MetricTemplate providers, webhooks, notification
// Providers): a client that follows no redirect and bounds every phase of a
// call, addresses joined with net/url rather than concatenated, answers
// read up to a bound and reflected only as a short sanitized excerpt, and
// URLs redacted (userinfo and query values) wherever they are printed.
// docs/security.md#outbound-calls describes it for users.
package outbound

import (
	"cmp"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// The transport's bounds, whatever the caller's deadline: a call that
// hangs is still ended by the caller's context or Options.Timeout.
const (
	// DialTimeout bounds a TCP connect.
	DialTimeout = 10 * time.Second
	// TLSHandshakeTimeout bounds a TLS handshake.
	TLSHandshakeTimeout = 10 * time.Second
	// MaxResponseHeaderBytes bounds the headers of an answer.
	MaxResponseHeaderBytes = 64 << 10
	// IdleConnTimeout closes connections unused for that long.
	IdleConnTimeout = 90 * time.Second
)

// Options configure a Client; the zero value is a client with no timeout
// of its own (callers bound each call with a context deadline), the
// environment's proxy and the system's roots.
type Options struct {
	// Timeout bounds each call, answer included; 0 leaves it to the
	// caller's context.
	Timeout time.Duration
	// InsecureSkipVerify skips the verification of the server's
	// certificate (a MetricTemplate's provider.insecureSkipVerify).
	InsecureSkipVerify bool
	// Proxy, when set, replaces the environment's proxy settings.
	Proxy *url.URL
	// TLS is the client TLS configuration (CA, client certificate); it is
	// cloned, and InsecureSkipVerify applies on top.
	TLS *tls.Config
	// AnswerTimeout, when set, bounds the wait for the answer's headers
	// alone (Timeout otherwise): a host that accepts and answers nothing
	// is given up on sooner than a slow answer.
	AnswerTimeout time.Duration
	// RefuseLocal refuses connections to loopback, unspecified,
	// link-local and cloud metadata addresses (checked on the resolved
	// address, when connecting), loopback excepted with AllowLoopback:
	// for addresses a tenant chooses.
	RefuseLocal, AllowLoopback bool
}

// NewClient returns an HTTP client under serin's policy: it follows no
// redirect (a *RedirectError names where the server pointed, redacted) and
// its transport bounds dialing, TLS handshakes and answer headers.
func NewClient(opts Options) *http.Client {
	transport := &http.Transport{
		Proxy:                  http.ProxyFromEnvironment,
		DialContext:            dialer(opts).DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           100,
		IdleConnTimeout:        IdleConnTimeout,
		TLSHandshakeTimeout:    TLSHandshakeTimeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: MaxResponseHeaderBytes,
		ResponseHeaderTimeout:  cmp.Or(opts.AnswerTimeout, opts.Timeout),
	}
	if opts.Proxy != nil {
		transport.Proxy = http.ProxyURL(opts.Proxy)
	}
	if opts.TLS != nil || opts.InsecureSkipVerify {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if opts.TLS != nil {
			cfg = opts.TLS.Clone()
		}
		if opts.InsecureSkipVerify {
			cfg.InsecureSkipVerify = true //nolint:gosec // the user's explicit choice (insecureSkipVerify)
		}
		transport.TLSClientConfig = cfg
	}
	return &http.Client{Transport: transport, Timeout: opts.Timeout, CheckRedirect: refuseRedirect}
}

// RedirectError is a call refused because the server answered with a
// redirect: serin follows none, so that a receiver cannot point a call
// (and its body, and its credentials) at another address.
type RedirectError struct {
	// Location is the redirect's target, redacted.
	Location string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("the server answered with a redirect to %s, and serin follows none", e.Location)
}

func refuseRedirect(req *http.Request, _ []*http.Request) error {
	return &RedirectError{Location: Redact(req.URL.String())}
}

// IsRedirect reports whether err is, or wraps, a *RedirectError: a call
// that retrying will not fix.
func IsRedirect(err error) bool {
	var r *RedirectError
	return errors.As(err, &r)
}

// TooLargeError is an answer longer than the caller reads.
type TooLargeError struct {
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the answer is longer than %d bytes", e.Limit)
}

// ReadAtMost reads r up to limit bytes. A longer answer returns its first
// limit bytes and a *TooLargeError.
func ReadAtMost(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return b, err
	}
	if int64(len(b)) > limit {
		return b[:limit], &TooLargeError{Limit: limit}
	}
	return b, nil
}

// JoinURL parses base, an http or https address, and appends elem to its
// path: "http://thanos/prom" and "api/v1/query" give
// http://thanos/prom/api/v1/query. The elements are path segments in
// their escaped form; base's query is kept, its fragment dropped. The
// error names base redacted.
func JoinURL(base string, elem ...string) (*url.URL, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("invalid address %s: %w", Redact(base), WithoutURL(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("invalid address %s: the scheme must be http or https", Redact(base))
	}
	if u.Host == "" {
		return nil, fmt.Errorf("invalid address %s: no host", Redact(base))
	}
	u.Fragment, u.RawFragment = "", ""
	return u.JoinPath(elem...), nil
}

// RequestError is the error of a call to rawURL that got no answer, fit to
// print: a refused redirect names the URL called (net/http names only the
// redirect's target), redacted; any other error is redacted (RedactText).
// It wraps err.
func RequestError(rawURL string, err error) error {
	var redirect *RedirectError
	if errors.As(err, &redirect) {
		return fmt.Errorf("%s: %w", Redact(rawURL), redirect)
	}
	return RedactError(err)
}
