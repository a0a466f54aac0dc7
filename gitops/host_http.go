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

package gitops

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fluxcd/go-git-providers/gitprovider"
	"github.com/fluxcd/pkg/git"

	"github.com/serin-dev/serin/internal/outbound"
)

// This file is how serin talks to a Git host's REST API itself (pull
// requests found by branch, commit statuses): one client per call built
// from the GitRepository's TLS settings, every page of a listing,
// GitHub's conditional requests, and rate limits told as transient.

// hostCallTimeout bounds one call to a Git host API.
const hostCallTimeout = 30 * time.Second

// maxHostAnswer bounds one answer of a Git host API (a hostile or broken
// host must not fill the agent's memory).
const maxHostAnswer = 4 << 20

// maxPages bounds a listing serin reads to the end: past it the listing
// is an error, never cut short silently.
const maxPages = 200

// hostHTTPClient returns the client of a repository's Git host API: it
// trusts the system's roots and the ca.crt of auth, the GitRepository's
// secret (as the clone does; hostAPI leaves it out for the platform's
// token, platformTLS), presents the secret's client certificate, goes
// through the environment's proxy, follows no redirect (a redirect must
// not carry the token elsewhere) and bounds each call, and the wait for
// an answer to answer (the job's connect timeout, when set: a host that
// answers nothing is given up on as a clone gives it up).
func hostHTTPClient(auth *git.AuthOptions, answer time.Duration) (*http.Client, error) {
	var cfg *tls.Config
	if auth != nil && (len(auth.CAFile) > 0 || len(auth.ClientCert) > 0) {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
		if len(auth.CAFile) > 0 {
			pool, err := x509.SystemCertPool()
			if err != nil || pool == nil {
				pool = x509.NewCertPool()
			}
			if !pool.AppendCertsFromPEM(auth.CAFile) {
				return nil, errors.New("the ca.crt of the GitRepository's secret holds no PEM certificate")
			}
			cfg.RootCAs = pool
		}
		if len(auth.ClientCert) > 0 && len(auth.ClientKey) > 0 {
			cert, err := tls.X509KeyPair(auth.ClientCert, auth.ClientKey)
			if err != nil {
				return nil, fmt.Errorf("invalid client certificate in the GitRepository's secret: %w", err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
	}
	return outbound.NewClient(outbound.Options{Timeout: hostCallTimeout, AnswerTimeout: answer, TLS: cfg}), nil
}

// apiOrigins are the origins (scheme://host[:port], the scheme's default
// port left out) the API calls of repo may go to: the repository's own,
// the same host over https (go-git-providers reaches GitHub Enterprise
// there), and https://api.github.com for github.com.
func apiOrigins(repo RepositoryURL, provider string) []string {
	out := []string{originOf(repo.Scheme, repo.Host), originOf("https", repo.Host)}
	if provider == ProviderGitHub && strings.EqualFold(repo.Host, "github.com") {
		out = append(out, "https://api.github.com")
	}
	return out
}

// originOf is the origin of scheme and host[:port], as apiOrigins writes
// it.
func originOf(scheme, hostport string) string {
	scheme = strings.ToLower(scheme)
	name, port := splitHostPort(strings.ToLower(hostport), scheme)
	if strings.Contains(name, ":") {
		name = "[" + name + "]"
	}
	if port != "" {
		name += ":" + port
	}
	return scheme + "://" + name
}

// OriginError is a Git host API call to an origin other than the
// repository's API (a redirect elsewhere, an address the host named):
// refused before anything, the token least of all, is sent.
type OriginError struct {
	// Origin is the refused scheme://host.
	Origin string
	// Allowed are the API's origins.
	Allowed []string
}

func (e *OriginError) Error() string {
	return fmt.Sprintf("refused to call %s: serin sends a Git host API's token to its own address only (%s), and follows no redirect to another host or scheme",
		e.Origin, strings.Join(e.Allowed, ", "))
}

// originGuard is the transport of every Git host API call: a request to
// an origin other than allowed fails before it is sent. The SDKs of
// go-git-providers follow redirects and set the token on each request
// they send (GitHub's oauth2 transport does, whatever the host): the
// guard is what keeps the token on the repository's host and scheme.
type originGuard struct {
	allowed []string
	next    http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (g originGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := checkOrigin(req.URL, g.allowed); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	next := g.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(req)
}

// checkOrigin refuses u unless its origin is allowed.
func checkOrigin(u *url.URL, allowed []string) error {
	origin := originOf(u.Scheme, u.Host)
	for _, a := range allowed {
		if a == origin {
			return nil
		}
	}
	return &OriginError{Origin: origin, Allowed: allowed}
}

// ErrRateLimited means a Git host refused a call for its rate limit; a
// retry after the limit resets may succeed (IsTransient).
var ErrRateLimited = errors.New("rate limited")

// rateLimitError is a call refused for the host's rate limit.
type rateLimitError struct {
	host string
	// until is when the host says to try again, zero if it did not say.
	until time.Time
}

func (e *rateLimitError) Error() string {
	if e.until.IsZero() {
		return e.host + " is rate limiting serin's API calls"
	}
	return fmt.Sprintf("%s is rate limiting serin's API calls until %s", e.host, e.until.UTC().Format(time.RFC3339))
}

func (e *rateLimitError) Is(target error) bool { return target == ErrRateLimited }

// rateLimited reads a refusal for a rate limit: 429, or GitHub's 403
// with X-RateLimit-Remaining: 0 or a Retry-After (its secondary limit);
// Retry-After, else X-RateLimit-Reset, says until when.
func rateLimited(resp *http.Response, now time.Time) *rateLimitError {
	h := resp.Header
	if resp.StatusCode != http.StatusTooManyRequests &&
		(resp.StatusCode != http.StatusForbidden || (h.Get("X-RateLimit-Remaining") != "0" && h.Get("Retry-After") == "")) {
		return nil
	}
	e := &rateLimitError{host: resp.Request.URL.Host}
	if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil {
		e.until = now.Add(time.Duration(s) * time.Second)
	} else if t, err := http.ParseTime(h.Get("Retry-After")); err == nil {
		e.until = t
	} else if reset, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
		e.until = time.Unix(reset, 0)
	}
	return e
}

// hostAnswer is one answer of a Git host API.
type hostAnswer struct {
	body []byte
	// next: the host says there is a next page (Link rel="next",
	// GitLab's X-Next-Page); paged: it says whether there is one.
	next, paged bool
}

// get GETs rawURL with the API's authentication. An answer other than
// 2xx is a *gitprovider.HTTPError (what IsTransient reads), a rate limit
// an ErrRateLimited. On GitHub, an answer read before is asked for again
// with If-None-Match: a 304, which costs no rate limit, gives it back.
func (a HostAPI) get(ctx context.Context, rawURL string) (*hostAnswer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "serin/gitops")
	switch a.Provider {
	case ProviderGitHub:
		req.Header.Set("Authorization", "Bearer "+a.Token)
		req.Header.Set("Accept", "application/vnd.github+json")
		req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	case ProviderGitea:
		req.Header.Set("Authorization", "token "+a.Token)
	case ProviderGitLab:
		req.Header.Set("PRIVATE-TOKEN", a.Token)
	}
	key := ""
	var cached *conditionalEntry
	if a.conditional != nil && a.Provider == ProviderGitHub {
		key = conditionalKey(a.Token, rawURL)
		if cached = a.conditional.get(key); cached != nil {
			req.Header.Set("If-None-Match", cached.etag)
		}
	}
	if err := checkOrigin(req.URL, apiOrigins(a.Repo, a.Provider)); err != nil {
		return nil, err
	}
	client := a.HTTP
	if client == nil {
		if client, err = hostHTTPClient(nil, DefaultConnectTimeout); err != nil {
			return nil, err
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, outbound.RequestError(rawURL, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode == http.StatusNotModified && cached != nil {
		return &hostAnswer{body: cached.body, next: cached.next, paged: cached.paged}, nil
	}
	if limited := rateLimited(resp, time.Now()); limited != nil {
		return nil, limited
	}
	if resp.StatusCode/100 != 2 {
		return nil, &gitprovider.HTTPError{Response: resp, ErrorMessage: resp.Status}
	}
	body, err := outbound.ReadAtMost(resp.Body, maxHostAnswer)
	if err != nil {
		return nil, fmt.Errorf("failed to read the answer of %s: %w", outbound.Redact(rawURL), err)
	}
	out := &hostAnswer{body: body}
	out.next = hasNextLink(resp.Header.Get("Link")) || resp.Header.Get("X-Next-Page") != ""
	out.paged = resp.Header.Get("Link") != "" || resp.Header.Get("X-Next-Page") != "" || resp.Header.Get("X-Total-Count") != "" || resp.Header.Get("X-Total") != ""
	if etag := resp.Header.Get("ETag"); key != "" && etag != "" {
		a.conditional.put(key, conditionalEntry{etag: etag, body: body, next: out.next, paged: out.paged})
	}
	return out, nil
}

// hasNextLink reports whether a Link header has a rel="next" link.
func hasNextLink(link string) bool {
	for _, part := range strings.Split(link, ",") {
		for _, param := range strings.Split(part, ";")[1:] {
			if v, ok := strings.CutPrefix(strings.TrimSpace(param), "rel="); ok && strings.Contains(strings.Trim(v, `"`), "next") {
				return true
			}
		}
	}
	return false
}

// listPages reads a listing to its end, page after page from page 1 (the
// page query parameter set on base, never a URL the host names), until
// the host says there is no next page, or, from a host that says
// nothing, a page shorter than pageSize. visit reads a page's body and
// returns its items' count, and stop to end early. A listing longer
// than maxPages is an error.
func (a HostAPI) listPages(ctx context.Context, base *url.URL, pageSize int, visit func(body []byte) (n int, stop bool, err error)) error {
	for page := 1; page <= maxPages; page++ {
		u := *base
		q := u.Query()
		q.Set("page", strconv.Itoa(page))
		u.RawQuery = q.Encode()
		ans, err := a.get(ctx, u.String())
		if err != nil {
			return err
		}
		n, stop, err := visit(ans.body)
		if err != nil || stop || n == 0 {
			return err
		}
		if !ans.next && (ans.paged || n < pageSize) {
			return nil
		}
	}
	return fmt.Errorf("%s lists more than %d pages", outbound.Redact(base.String()), maxPages)
}

// isNotFound reports whether err is a host's 404.
func isNotFound(err error) bool {
	var hostErr *gitprovider.HTTPError
	return errors.As(err, &hostErr) && hostErr.Response != nil && hostErr.Response.StatusCode == http.StatusNotFound
}

// githubAPI is the REST API root of a GitHub repository's host.
func githubAPI(repo RepositoryURL) string {
	if strings.EqualFold(repo.Host, "github.com") {
		return "https://api.github.com"
	}
	return repo.BaseURL() + "/api/v3"
}

// conditionalCache remembers GitHub answers by token and URL, for
// conditional requests: a bounded number, each bounded in size.
type conditionalCache struct {
	mu      sync.Mutex
	entries map[string]conditionalEntry
	// order is the keys, oldest first; the oldest goes when full.
	order []string
}

type conditionalEntry struct {
	etag        string
	body        []byte
	next, paged bool
}

// Bounds of a conditionalCache.
const (
	conditionalEntries = 256
	conditionalBody    = 256 << 10
)

func newConditionalCache() *conditionalCache {
	return &conditionalCache{entries: map[string]conditionalEntry{}}
}

// conditionalKey keys an answer by the token that read it (another token
// may see another answer) and its URL; the token is hashed.
func conditionalKey(token, rawURL string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:8]) + " " + rawURL
}

func (c *conditionalCache) get(key string) *conditionalEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		return &e
	}
	return nil
}

func (c *conditionalCache) put(key string, e conditionalEntry) {
	if len(e.body) > conditionalBody {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok {
		if len(c.order) >= conditionalEntries {
			delete(c.entries, c.order[0])
			c.order = c.order[1:]
		}
		c.order = append(c.order, key)
	}
	c.entries[key] = e
}
