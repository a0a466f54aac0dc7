package notifier

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
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

// post sends req with retries and backoff until it succeeds, fails for
// good, or ctx ends.
func post(ctx context.Context, policy RetryPolicy, ep endpoint, req request) error {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if ep.proxy != nil {
		transport.Proxy = http.ProxyURL(ep.proxy)
	}
	if ep.tls != nil {
		transport.TLSClientConfig = ep.tls
	}
	defer transport.CloseIdleConnections()

	c := retryablehttp.NewClient()
	c.HTTPClient = &http.Client{Transport: transport, Timeout: ep.attemptTimeout}
	c.RetryMax = policy.Max
	c.RetryWaitMin = policy.WaitMin
	c.RetryWaitMax = policy.WaitMax
	c.Logger = nil
	if ep.checkRetry != nil {
		c.CheckRetry = ep.checkRetry
	}
	// Hand back the last response, not a generic "giving up" error, so
	// that validate can say what the receiver answered.
	c.ErrorHandler = retryablehttp.PassthroughErrorHandler

	r, err := retryablehttp.NewRequestWithContext(ctx, http.MethodPost, req.url, req.body)
	if err != nil {
		return fmt.Errorf("failed to create the request: %w", err)
	}
	for k, v := range req.header {
		r.Header[k] = v
	}
	if r.Header.Get("Content-Type") == "" {
		r.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(r)
	if err != nil {
		return fmt.Errorf("failed to post: %w", err)
	}
	defer resp.Body.Close()
	validate := req.validate
	if validate == nil {
		validate = expect2xx
	}
	return validate(resp)
}

// expect2xx accepts any 2xx response and names the status and body of others.
func expect2xx(resp *http.Response) error {
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	return fmt.Errorf("request failed with status code %d: %s", resp.StatusCode, bytes.TrimSpace(b))
}

// redact removes secrets (webhook addresses, tokens) from an error before
// it is logged: a Slack or Teams webhook URL is itself a credential.
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
	return errors.New(msg)
}
