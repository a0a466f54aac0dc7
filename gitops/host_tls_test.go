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

// The platform's token travels only over TLS to the hosts it lists
// (docs/security.md#credentials-per-host): scheme and host both match an
// entry of --git-provider-hosts, the tenant's ca.crt is not trusted for
// it, and no call follows a redirect to another host or scheme.

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fluxcd/pkg/git"
)

// credentialRecorder is a listener on 127.0.0.1 that records every
// credential a request carries (the Authorization header whole, the
// password of basic auth, GitLab's PRIVATE-TOKEN, a token query value)
// and answers an empty JSON list, or redirects to redirect when set.
type credentialRecorder struct {
	mu       sync.Mutex
	seen     []string
	requests int
	srv      *httptest.Server
	redirect string
}

func newCredentialRecorder(t *testing.T, tlsServer bool) *credentialRecorder {
	rec := &credentialRecorder{}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.requests++
		rec.seen = append(rec.seen, r.Header.Get("Authorization"), r.Header.Get("PRIVATE-TOKEN"),
			r.URL.Query().Get("access_token"), r.URL.Query().Get("token"))
		if _, password, ok := r.BasicAuth(); ok {
			rec.seen = append(rec.seen, password)
		}
		target := rec.redirect
		rec.mu.Unlock()
		if target != "" {
			http.Redirect(w, r, target+r.URL.RequestURI(), http.StatusTemporaryRedirect)
			return
		}
		writeJSON(w, http.StatusOK, []any{})
	})
	if tlsServer {
		rec.srv = httptest.NewTLSServer(handler)
	} else {
		rec.srv = httptest.NewServer(handler)
	}
	t.Cleanup(rec.srv.Close)
	return rec
}

// got reports how many requests came, and whether any credential held
// token.
func (rec *credentialRecorder) got(token string) (requests int, sent bool) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.requests, slices.ContainsFunc(rec.seen, func(s string) bool { return s != "" && strings.Contains(s, token) })
}

// callHost makes every call a job makes of its Git host API: a pull
// request looked for, commit statuses read, and through go-git-providers
// the repository read and a pull request opened. It returns the errors.
func callHost(t *testing.T, j *gitJob) []error {
	t.Helper()
	api, err := j.hostAPI()
	if err != nil {
		return []error{err}
	}
	ctx := context.Background()
	_, findErr := findPullRequest(ctx, api, "serin/revert/apps/podinfo/abc")
	var statusErr error
	if reader, err := NewHTTPStatusReader(ctx, api); err != nil {
		statusErr = err
	} else {
		_, statusErr = reader.Statuses(ctx, strings.Repeat("ab", 20))
	}
	hostErr := func() error {
		h, err := NewGitProviderHost(ctx, api)
		if err != nil {
			return err
		}
		_, err = h.Open(ctx, "serin/revert/apps/podinfo/abc", "main", "t", "b")
		return err
	}()
	return []error{findErr, statusErr, hostErr}
}

// A tenant's GitRepository http://HOST/... of a host the platform lists
// as HOST (https only) never carries the platform's token: the
// GitRepository's own secret goes there. Listed as http://HOST, the
// platform's token does.
func TestPlatformToken_NeverOverPlainHTTPUnlessListedSo(t *testing.T) {
	tokenFile := platformToken(t)
	const token = "platform-token"
	for _, provider := range []string{ProviderGitHub, ProviderGitLab, ProviderGitea} {
		t.Run(provider, func(t *testing.T) {
			for name, tc := range map[string]struct {
				listed   func(addr string) string
				wantSent bool
			}{
				"listed as host: https only":      {func(addr string) string { return addr }, false},
				"listed as https://host":          {func(addr string) string { return "https://" + addr }, false},
				"listed as http://host, explicit": {func(addr string) string { return "http://" + addr }, true},
			} {
				t.Run(name, func(t *testing.T) {
					rec := newCredentialRecorder(t, false)
					addr := rec.srv.Listener.Addr().String()
					j := jobFor(t, "http://"+addr+"/fleet/podinfo.git", "tenant-token", nil, tokenFile, tc.listed(addr))
					j.provider = provider
					callHost(t, j)
					requests, sent := rec.got(token)
					if requests == 0 {
						t.Fatal("no call reached the host")
					}
					if sent != tc.wantSent {
						t.Errorf("the platform's token sent over plain HTTP: %v, want %v", sent, tc.wantSent)
					}
					if _, tenant := rec.got("tenant-token"); tenant == tc.wantSent {
						t.Errorf("the GitRepository's own token sent: %v, want %v", tenant, !tc.wantSent)
					}
				})
			}
		})
	}
}

// Over TLS, the platform's token trusts the system's roots, not the
// ca.crt of the GitRepository's secret (a tenant who writes it could
// stand in for the listed host), unless the platform says so
// (--git-provider-trust-repository-ca). The tenant's own token still
// trusts its ca.crt.
func TestPlatformToken_TrustsNotTheRepositoryCA(t *testing.T) {
	tokenFile := platformToken(t)
	for _, provider := range []string{ProviderGitHub, ProviderGitLab, ProviderGitea} {
		t.Run(provider, func(t *testing.T) {
			for name, tc := range map[string]struct {
				listed, trust bool
				wantErr       bool
				wantToken     string
			}{
				"the platform's token, the repository's CA not trusted": {listed: true, wantErr: true},
				"the platform's token, the repository's CA trusted":     {listed: true, trust: true, wantToken: "platform-token"},
				"the tenant's own token: its CA trusted":                {wantToken: "tenant-token"},
			} {
				t.Run(name, func(t *testing.T) {
					rec := newCredentialRecorder(t, true)
					addr := rec.srv.Listener.Addr().String()
					var hosts []string
					if tc.listed {
						hosts = []string{addr}
					}
					j := jobFor(t, rec.srv.URL+"/fleet/podinfo.git", "tenant-token", &git.AuthOptions{CAFile: pemOf(rec.srv.Certificate())}, tokenFile, hosts...)
					j.provider, j.trustRepositoryCA = provider, tc.trust
					errs := callHost(t, j)
					requests, platformSent := rec.got("platform-token")
					if tc.wantErr {
						if requests != 0 || platformSent {
							t.Errorf("%d calls reached a host whose certificate only the tenant's CA vouches for (token sent: %v)", requests, platformSent)
						}
						for _, err := range errs {
							if err == nil || !strings.Contains(err.Error(), "certificate") {
								t.Errorf("error %v, want a certificate error", err)
							}
						}
						return
					}
					if _, sent := rec.got(tc.wantToken); !sent {
						t.Errorf("%q was not sent (%d calls): %v", tc.wantToken, requests, errors.Join(errs...))
					}
				})
			}
		})
	}
}

// A Git host that redirects the API elsewhere (another port, so another
// origin) gets the calls refused: neither serin's own client nor the
// SDKs of go-git-providers, which follow redirects and set the token on
// each request, reach the other address.
func TestHostAPI_RedirectElsewhereIsRefused(t *testing.T) {
	for _, provider := range []string{ProviderGitHub, ProviderGitLab, ProviderGitea} {
		t.Run(provider, func(t *testing.T) {
			elsewhere := newCredentialRecorder(t, true)
			host := newCredentialRecorder(t, true)
			host.redirect = elsewhere.srv.URL
			client, err := hostHTTPClient(&git.AuthOptions{CAFile: pemOf(host.srv.Certificate())}, DefaultConnectTimeout)
			if err != nil {
				t.Fatal(err)
			}
			api := hostAPIOf(t, host.srv.URL, provider, client)
			api.Token = "platform-token"
			ctx := context.Background()
			_, findErr := findPullRequest(ctx, api, "serin/x")
			_, sdkErr := NewGitProviderHost(ctx, api)
			if requests, _ := host.got(""); requests == 0 {
				t.Fatal("no call reached the host")
			}
			if requests, sent := elsewhere.got("platform-token"); requests != 0 || sent {
				t.Errorf("the redirect was followed: %d calls elsewhere (token sent: %v)", requests, sent)
			}
			var origin *OriginError
			if !errors.As(sdkErr, &origin) || origin.Origin != originOf("https", elsewhere.srv.Listener.Addr().String()) {
				t.Errorf("go-git-providers: %v, want an *OriginError naming %s", sdkErr, elsewhere.srv.URL)
			}
			if findErr == nil || !strings.Contains(findErr.Error(), "redirect") {
				t.Errorf("pull request search: %v, want the redirect refused", findErr)
			}
		})
	}
}

func TestAPIOrigins(t *testing.T) {
	for raw, tc := range map[string]struct {
		provider string
		allowed  []string
		refused  []string
	}{
		"https://github.com/o/r.git": {ProviderGitHub,
			[]string{"https://github.com/x", "https://api.github.com/repos", "https://GitHub.com:443/x"},
			[]string{"http://github.com/x", "http://api.github.com/x", "https://evil.example/x", "https://github.com:8443/x"}},
		"http://gitea.example:3000/o/r.git": {ProviderGitea,
			[]string{"http://gitea.example:3000/api/v1", "https://gitea.example:3000/api/v1"},
			[]string{"http://gitea.example/api/v1", "http://gitea.example:3001/api", "https://api.github.com/x"}},
		"https://gitlab.example/group/sub/r.git": {ProviderGitLab,
			[]string{"https://gitlab.example/api/v4"},
			[]string{"http://gitlab.example/api/v4", "https://gitlab.example.evil/api/v4"}},
	} {
		repo, err := ParseRepositoryURL(raw)
		if err != nil {
			t.Fatal(err)
		}
		origins := apiOrigins(repo, tc.provider)
		check := func(rawURL string, want bool) {
			u, err := url.Parse(rawURL)
			if err != nil {
				t.Fatal(err)
			}
			if got := checkOrigin(u, origins) == nil; got != want {
				t.Errorf("%s: %s allowed: %v, want %v (origins %v)", raw, rawURL, got, want, origins)
			}
		}
		for _, a := range tc.allowed {
			check(a, true)
		}
		for _, r := range tc.refused {
			check(r, false)
		}
	}
}
