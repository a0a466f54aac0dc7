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

// Git trust (docs/security.md#what-serin-may-do-in-your-git-repositories),
// proven against httptest servers that speak the wire format of GitHub,
// GitLab and Gitea: whose token goes to which host, pull requests found
// however busy the repository and whatever their state, every page of
// commit statuses, the GitRepository's CA, GitHub's conditional requests
// and rate limits.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/git"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// recordingHost is a Git host API that records the credentials it is
// sent and answers every listing with an empty page.
type recordingHost struct {
	mu    sync.Mutex
	auths []string
	srv   *httptest.Server
}

func newRecordingHost(t *testing.T, tlsServer bool) *recordingHost {
	h := &recordingHost{}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.auths = append(h.auths, r.Header.Get("Authorization")+r.Header.Get("PRIVATE-TOKEN"))
		h.mu.Unlock()
		writeJSON(w, http.StatusOK, []any{})
	})
	if tlsServer {
		h.srv = httptest.NewTLSServer(handler)
	} else {
		h.srv = httptest.NewServer(handler)
	}
	t.Cleanup(h.srv.Close)
	return h
}

func (h *recordingHost) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.auths)
}

// jobFor is a job on a GitRepository at url whose secret holds
// secretToken, in an agent with the token file and hosts given.
func jobFor(t *testing.T, rawURL, secretToken string, auth *git.AuthOptions, tokenFile string, hosts ...string) *gitJob {
	t.Helper()
	list, err := ParseHostList(strings.Join(hosts, ","))
	if err != nil {
		t.Fatal(err)
	}
	core := &gitCore{provider: ProviderGitea, tokenFile: tokenFile, tokenHosts: list, conditional: newConditionalCache()}
	return &gitJob{gitCore: core, src: &Source{URL: rawURL, HostToken: secretToken, Auth: auth,
		GitRepository: types.NamespacedName{Namespace: "apps", Name: "podinfo"}}}
}

func platformToken(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("platform-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// The agent's token file goes only to a listed host, for the pull
// request API and the status reads alike; elsewhere the GitRepository's
// own secret is sent, and without one the job stops with what to do.
func TestHostToken_OnlyListedHosts(t *testing.T) {
	tokenFile := platformToken(t)
	for name, tc := range map[string]struct {
		hosts       func(h *recordingHost) []string
		secretToken string
		want        string // the Authorization header; "" for a refusal
	}{
		"not listed: the secret's token":                 {func(*recordingHost) []string { return nil }, "tenant-token", "token tenant-token"},
		"another host listed: the secret's":              {func(*recordingHost) []string { return []string{"git.example.com"} }, "tenant-token", "token tenant-token"},
		"listed with http://: the platform's token":      {func(h *recordingHost) []string { return []string{"http://" + h.srv.Listener.Addr().String()} }, "tenant-token", "token platform-token"},
		"listed with http://, no secret: the platform's": {func(h *recordingHost) []string { return []string{"http://" + h.srv.Listener.Addr().String()} }, "", "token platform-token"},
		"listed for https, the URL http: the secret's":   {func(h *recordingHost) []string { return []string{h.srv.Listener.Addr().String()} }, "tenant-token", "token tenant-token"},
		"listed with https://, the URL http: the secret": {func(h *recordingHost) []string { return []string{"https://" + h.srv.Listener.Addr().String()} }, "tenant-token", "token tenant-token"},
		"listed for https, the URL http, no secret":      {func(h *recordingHost) []string { return []string{h.srv.Listener.Addr().String()} }, "", ""},
		"not listed, no secret: refused":                 {func(*recordingHost) []string { return []string{"git.example.com"} }, "", ""},
		"listed by name only, on another port":           {func(*recordingHost) []string { return []string{"http://127.0.0.1"} }, "tenant-token", "token tenant-token"},
	} {
		t.Run(name, func(t *testing.T) {
			h := newRecordingHost(t, false)
			j := jobFor(t, h.srv.URL+"/fleet/podinfo.git", tc.secretToken, nil, tokenFile, tc.hosts(h)...)
			api, err := j.hostAPI()
			if tc.want == "" {
				if err == nil || !strings.Contains(err.Error(), h.srv.Listener.Addr().String()) || !strings.Contains(err.Error(), "--git-provider-hosts") || IsTransient(err) {
					t.Fatalf("hostAPI() = %v, want a permanent error naming the host and --git-provider-hosts", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := findPullRequest(context.Background(), api, "serin/revert/apps/podinfo/abc"); err != nil {
				t.Fatal(err)
			}
			reader, err := NewHTTPStatusReader(context.Background(), api)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := reader.Statuses(context.Background(), strings.Repeat("ab", 20)); err != nil {
				t.Fatal(err)
			}
			for _, got := range h.seen() {
				if got != tc.want {
					t.Errorf("the host was sent %q, want %q", got, tc.want)
				}
			}
		})
	}
}

// The rule holds for reverts as for promotions: a revert against an
// unlisted host sends the GitRepository's token, never the agent's.
func TestGitReverter_TokenFileOnlyForListedHosts(t *testing.T) {
	f := newGitFixture(t)
	tokenFile := platformToken(t)
	u, err := ParseRepositoryURL(f.url)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		hosts []string
		want  string
	}{
		{nil, gitPassword},
		{[]string{"github.com"}, gitPassword},
		{[]string{u.Host}, gitPassword}, // https only: the fixture's host is http
		{[]string{"http://" + u.Host}, "platform-token"},
	} {
		f.host.tokens = nil
		g := f.reverter(WithProviderTokenFile(tokenFile), WithProviderHosts(tc.hosts...))
		if _, err := g.Revert(context.Background(), f.request(v1alpha1.PullRequestRevert)); err != nil {
			t.Fatal(err)
		}
		if len(f.host.tokens) == 0 || slices.ContainsFunc(f.host.tokens, func(s string) bool { return s != tc.want }) {
			t.Errorf("hosts %v: tokens sent %v, want only %q", tc.hosts, f.host.tokens, tc.want)
		}
	}
}

func TestParseHostList(t *testing.T) {
	l, err := ParseHostList(" GitHub.com, git.example:8443 ,,HTTP://Plain.Example:3000, https://tls.example/, http://port80.example:80")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := l.String(), "github.com,git.example:8443,http://plain.example:3000,tls.example,http://port80.example"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got, want := strings.Join(l.PlainHTTP(), ","), "http://plain.example:3000,http://port80.example"; got != want {
		t.Errorf("PlainHTTP() = %q, want %q", got, want)
	}
	for raw, want := range map[string]bool{
		"https://github.com/a/b.git":          true,
		"https://github.com:443/a/b.git":      true,
		"git@github.com:a/b.git":              true,
		"ssh://git@github.com/a/b.git":        true,
		"https://github.com.evil.example/a/b": false,
		"https://git.example:8443/a/b.git":    true,
		"https://git.example/a/b.git":         false,
		"http://github.com:8080/a/b.git":      false,
		"http://github.com/a/b.git":           false, // listed for https only
		"http://git.example:8443/a/b.git":     false,
		"http://plain.example:3000/a/b.git":   true,
		"https://plain.example:3000/a/b.git":  false, // the entry says http
		"https://tls.example/a/b.git":         true,
		"http://tls.example/a/b.git":          false,
		"http://port80.example/a/b.git":       true,
	} {
		u, err := ParseRepositoryURL(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.lists(u); got != want {
			t.Errorf("lists(%s) = %v, want %v", raw, got, want)
		}
	}
	for _, bad := range []string{"ftp://github.com", "github.com/org", "https://github.com/org", "user@github.com", "http://user@github.com", "http://", "https://:443"} {
		if _, err := ParseHostList(bad); err == nil {
			t.Errorf("ParseHostList(%q) accepted", bad)
		}
	}
}

// fakeGitea impersonates Gitea's pull request listing (state, limit,
// page; no head filter) and its commit statuses, 50 a page by default.
type fakeGitea struct {
	fakeAPI
	prs []map[string]any
	srv *httptest.Server
}

func giteaPR(base string, number int, head, state string, merged bool) map[string]any {
	return map[string]any{
		"number":   number,
		"state":    state,
		"merged":   merged,
		"html_url": fmt.Sprintf("%s/fleet/podinfo/pulls/%d", base, number),
		"head":     map[string]any{"ref": head, "repo": map[string]any{"full_name": "fleet/podinfo"}},
		"base":     map[string]any{"ref": "main"},
	}
}

func newFakeGitea(t *testing.T) *fakeGitea {
	f := &fakeGitea{fakeAPI: fakeAPI{t: t}}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		call := f.record(r)
		if r.Header.Get("Authorization") != "token "+fakeAPIToken {
			t.Errorf("%s: Authorization = %q", call, r.Header.Get("Authorization"))
		}
		if r.URL.EscapedPath() != "/api/v1/repos/fleet/podinfo/pulls" {
			t.Errorf("unexpected Gitea API request: %s", call)
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		for k := range q {
			if k != "state" && k != "limit" && k != "page" {
				t.Errorf("%s: unexpected query parameter %q", call, k)
			}
		}
		var out []map[string]any
		for _, pr := range slices.Backward(f.prs) {
			if s := q.Get("state"); s == "all" || pr["state"] == s || (s == "" && pr["state"] == "open") {
				out = append(out, pr)
			}
		}
		f.page(w, r, out, "limit", 50)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// hostAPIOf is the API of fleet/podinfo on a test server.
func hostAPIOf(t *testing.T, base, provider string, client *http.Client) HostAPI {
	t.Helper()
	u, err := ParseRepositoryURL(base + "/fleet/podinfo.git")
	if err != nil {
		t.Fatal(err)
	}
	return HostAPI{Repo: u, Provider: provider, Token: fakeAPIToken, HTTP: client, conditional: newConditionalCache()}
}

// In a busy repository serin's pull request is found whatever the
// number of others (35 and more, past any host's first page), and a
// closed one is told from a merged one and from none.
func TestFindPullRequest_BusyRepository(t *testing.T) {
	const branch = "serin/promote/production/apps/podinfo/abcdef12"
	type found struct {
		number int
		state  PullRequestState
	}
	cases := map[string]struct {
		mine []any // head, state, merged of serin's pull requests, oldest first
		want *found
	}{
		"open":              {[]any{"open", false}, &found{1, PullRequestOpen}},
		"closed, no merge":  {[]any{"closed", false}, &found{1, PullRequestClosed}},
		"merged":            {[]any{"closed", true}, &found{1, PullRequestMerged}},
		"none":              {nil, nil},
		"closed, then open": {[]any{"closed", false, "open", false}, &found{60, PullRequestOpen}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var mine [][2]any
			for i := 0; i+1 < len(tc.mine); i += 2 {
				mine = append(mine, [2]any{tc.mine[i], tc.mine[i+1]})
			}
			check := func(t *testing.T, api HostAPI) {
				t.Helper()
				pr, err := findPullRequest(context.Background(), api, branch)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case tc.want == nil && pr != nil:
					t.Errorf("found %+v, want none", pr)
				case tc.want != nil && (pr == nil || pr.Number != tc.want.number || pr.State != tc.want.state):
					t.Errorf("found %+v, want #%d %s", pr, tc.want.number, tc.want.state)
				}
			}
			// serin's pull request is #1 (the oldest) and, when reopened, #60;
			// 58 others are open in between.
			others := func(add func(n int, head, state string, merged bool)) {
				if len(mine) > 0 {
					add(1, branch, mine[0][0].(string), mine[0][1].(bool))
				}
				for n := 2; n < 60; n++ {
					add(n, fmt.Sprintf("feature/%d", n), "open", false)
				}
				if len(mine) > 1 {
					add(60, branch, mine[1][0].(string), mine[1][1].(bool))
				}
			}
			t.Run("github", func(t *testing.T) {
				f := newFakeGitHub(t, "fleet", "podinfo")
				others(func(n int, head, state string, merged bool) {
					f.prs = append(f.prs, githubPR(f.srv.URL, n, "fleet", "podinfo", head, "main", state, merged))
				})
				check(t, hostAPIOf(t, f.srv.URL, ProviderGitHub, f.client()))
				for _, c := range f.calls {
					if !strings.Contains(c, "head=fleet%3A"+url.QueryEscape(branch)) || !strings.Contains(c, "state=all") {
						t.Errorf("GitHub asked %s, want head=fleet:%s and state=all", c, branch)
					}
				}
			})
			t.Run("gitlab", func(t *testing.T) {
				f := newFakeGitLab(t, "fleet", "podinfo")
				others(func(n int, head, state string, merged bool) {
					s := map[string]string{"open": "opened", "closed": "closed"}[state]
					if merged {
						s = "merged"
					}
					f.mrs = append(f.mrs, gitlabMR(f.webURL(), n, head, "main", s))
				})
				check(t, hostAPIOf(t, f.srv.URL, ProviderGitLab, f.client()))
			})
			t.Run("gitea", func(t *testing.T) {
				f := newFakeGitea(t)
				others(func(n int, head, state string, merged bool) {
					f.prs = append(f.prs, giteaPR(f.srv.URL, n, head, state, merged))
				})
				check(t, hostAPIOf(t, f.srv.URL, ProviderGitea, nil))
				// Gitea cannot filter by head: every page is read (two of
				// open ones, then the closed ones) unless an open one is found.
				if tc.want == nil && len(f.calls) != 3 {
					t.Errorf("Gitea calls %v, want both pages of open pull requests and the closed ones", f.calls)
				}
			})
		})
	}
}

// statusServer serves n statuses of a commit, page by page as provider
// does, serin's (context serin/apps/podinfo) the last, on the last page.
func statusServer(t *testing.T, provider string, n int, tlsServer bool) (*fakeAPI, *httptest.Server) {
	f := &fakeAPI{t: t}
	var items []map[string]any
	for i := n; i > 1; i-- {
		items = append(items, map[string]any{"id": i, "state": "success", "status": "success", "context": fmt.Sprintf("ci/%d", i), "name": fmt.Sprintf("ci/%d", i)})
	}
	items = append(items, map[string]any{"id": 1, "state": "failure", "status": "failed", "context": "serin/apps/podinfo", "name": "serin/apps/podinfo"})
	sizeParam, size := "per_page", 30
	if provider == ProviderGitea {
		sizeParam, size = "limit", 50
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.record(r)
		if provider == ProviderGitLab {
			// GitLab says X-Next-Page; its Link header too, left out here.
			page, _ := strconv.Atoi(r.URL.Query().Get("page"))
			page = max(page, 1)
			per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
			per = cmp.Or(per, 20)
			from, to := min((page-1)*per, len(items)), min(page*per, len(items))
			next := ""
			if to < len(items) {
				next = strconv.Itoa(page + 1)
			}
			w.Header().Set("X-Next-Page", next)
			w.Header().Set("X-Total", strconv.Itoa(len(items)))
			writeJSON(w, http.StatusOK, items[from:to])
			return
		}
		f.page(w, r, items, sizeParam, size)
	})
	var srv *httptest.Server
	if tlsServer {
		srv = httptest.NewTLSServer(handler)
	} else {
		srv = httptest.NewServer(handler)
	}
	t.Cleanup(srv.Close)
	return f, srv
}

// A stage's verdict on the second page of a commit's statuses is read.
func TestHTTPStatusReader_EveryPage(t *testing.T) {
	sha := strings.Repeat("ab", 20)
	for provider, n := range map[string]int{ProviderGitHub: 150, ProviderGitLab: 150, ProviderGitea: 80} {
		t.Run(provider, func(t *testing.T) {
			f, srv := statusServer(t, provider, n, false)
			r, err := NewHTTPStatusReader(context.Background(), hostAPIOf(t, srv.URL, provider, nil))
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.Statuses(context.Background(), sha)
			if err != nil {
				t.Fatal(err)
			}
			s, ok := latestStatus(got, "serin/apps/podinfo")
			if len(got) != n || !ok || s.State != CommitFailure {
				t.Errorf("%d statuses, serin's %+v (%v); want %d and serin's failure", len(got), s, ok, n)
			}
			if len(f.calls) != 2 || !strings.Contains(f.calls[1], "page=2") {
				t.Errorf("calls %v, want pages 1 and 2", f.calls)
			}
		})
	}
}

// The pull request API and the status reads trust the CA of the
// GitRepository's secret (ca.crt), as the clone does, and nothing else.
func TestHostAPI_PrivateCA(t *testing.T) {
	sha := strings.Repeat("ab", 20)
	for _, provider := range []string{ProviderGitHub, ProviderGitLab, ProviderGitea} {
		t.Run(provider, func(t *testing.T) {
			_, srv := statusServer(t, provider, 3, true)
			ca := pemOf(srv.Certificate())
			for name, auth := range map[string]*git.AuthOptions{"with ca.crt": {CAFile: ca}, "without": nil} {
				j := jobFor(t, srv.URL+"/fleet/podinfo.git", fakeAPIToken, auth, "")
				j.provider = provider
				api, err := j.hostAPI()
				if err != nil {
					t.Fatal(err)
				}
				reader, err := NewHTTPStatusReader(context.Background(), api)
				if err != nil {
					t.Fatal(err)
				}
				_, statusErr := reader.Statuses(context.Background(), sha)
				_, findErr := findPullRequest(context.Background(), api, "serin/x")
				for what, err := range map[string]error{"statuses": statusErr, "pull requests": findErr} {
					switch {
					case auth != nil && err != nil:
						t.Errorf("%s %s: %v", name, what, err)
					case auth == nil && (err == nil || !strings.Contains(err.Error(), "certificate")):
						t.Errorf("%s %s: %v, want a certificate error", name, what, err)
					}
				}
			}
		})
	}
}

// A pull request opened on a host with a private CA: go-git-providers'
// calls go through the same client.
func TestGitHubHost_PrivateCA(t *testing.T) {
	f := newFakeGitHub(t, "acme", "deploy")
	u, err := ParseRepositoryURL(f.repoURL())
	if err != nil {
		t.Fatal(err)
	}
	noCA, _ := hostHTTPClient(nil, DefaultConnectTimeout)
	if _, err := NewGitProviderHost(context.Background(), HostAPI{Repo: u, Provider: ProviderGitHub, Token: fakeAPIToken, HTTP: noCA}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA: %v, want a certificate error", err)
	}
	h := newGitHubHost(t, f) // with it
	if pr, opened, err := findOrOpen(context.Background(), h, "serin/x", "main", "t", "b"); err != nil || !opened {
		t.Errorf("with the CA: %+v, %v, %v", pr, opened, err)
	}
}

// GitHub: a read made again is a conditional request (If-None-Match),
// whose 304 costs no rate limit and gives the answer remembered.
func TestGitHub_ConditionalRequests(t *testing.T) {
	f, srv := statusServer(t, ProviderGitHub, 3, false)
	api := hostAPIOf(t, srv.URL, ProviderGitHub, nil)
	r, err := NewHTTPStatusReader(context.Background(), api)
	if err != nil {
		t.Fatal(err)
	}
	sha := strings.Repeat("ab", 20)
	first, err := r.Statuses(context.Background(), sha)
	if err != nil {
		t.Fatal(err)
	}
	again, err := r.Statuses(context.Background(), sha)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.conditional) != 2 || f.conditional[0] != "" || f.conditional[1] == "" {
		t.Errorf("If-None-Match sent: %q, want none then the ETag", f.conditional)
	}
	if len(first) != 3 || len(again) != 3 {
		t.Errorf("statuses %d then %d (from a 304), want 3 both times", len(first), len(again))
	}
}

// A rate limit (GitHub's 403 with X-RateLimit-Remaining: 0, or a 429
// with Retry-After) is a transient error that says until when.
func TestHostAPI_RateLimit(t *testing.T) {
	for name, set := range map[string]func(w http.ResponseWriter){
		"403 remaining 0": func(w http.ResponseWriter) {
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset", "1893456000")
			w.WriteHeader(http.StatusForbidden)
		},
		"429 retry-after": func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(http.StatusTooManyRequests)
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { set(w) }))
			defer srv.Close()
			_, err := findPullRequest(context.Background(), hostAPIOf(t, srv.URL, ProviderGitHub, nil), "serin/x")
			if !errors.Is(err, ErrRateLimited) || !IsTransient(err) || !strings.Contains(err.Error(), "until") {
				t.Errorf("err = %v, want a transient rate limit naming when", err)
			}
		})
	}
	// A 403 that is no rate limit stays permanent.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusForbidden) }))
	defer srv.Close()
	if _, err := findPullRequest(context.Background(), hostAPIOf(t, srv.URL, ProviderGitHub, nil), "serin/x"); err == nil || IsTransient(err) {
		t.Errorf("a plain 403 = %v, want a permanent error", err)
	}
}

// A Git host API that accepts and answers nothing is given up on after
// the job's connect timeout, as a clone gives it up, not after the 30 s a
// call may take: a tenant's tarpit holds a Git slot that long at most.
func TestHostHTTPClient_GivesUpOnASilentHost(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // accepted, never answered
		}
	}()
	c, err := hostHTTPClient(nil, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	resp, err := c.Get("http://" + ln.Addr().String() + "/api/v1/version")
	if err == nil {
		resp.Body.Close()
		t.Fatal("a silent host answered")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("gave up after %s, want about the connect timeout", took)
	}
}
