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

// GitHub's API cannot run here, so these tests drive serin's host layer
// (NewGitProviderHost, then Find and Open as the reverter calls them)
// against an httptest server that impersonates GitHub Enterprise's REST
// API and checks the exact wire format GitHub expects: method, path under
// /api/v3 (go-github's enterprise base URL), the Authorization header, the
// go-github media type and API version headers, and the JSON body of the
// pull request it creates. It answers with the fields of GitHub's real
// responses that go-github and go-git-providers read.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fluxcd/pkg/git"
)

const fakeAPIToken = "s3cr3t-token"

// fakeAPI is the common part of the GitHub and GitLab impersonations: it
// records every request and fails the test on any it does not expect.
type fakeAPI struct {
	t      *testing.T
	mu     sync.Mutex
	calls  []string // "METHOD escaped-path?query"
	posted []map[string]any
	// conditional is the If-None-Match of each listing read.
	conditional []string
}

func (f *fakeAPI) record(r *http.Request) string {
	call := r.Method + " " + r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		call += "?" + r.URL.RawQuery
	}
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.mu.Unlock()
	return call
}

func (f *fakeAPI) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if strings.HasPrefix(c, method+" ") {
			n++
		}
	}
	return n
}

// decodeBody decodes a JSON request body and checks that it holds exactly
// fields, each a string; the tests check the values.
func (f *fakeAPI) decodeBody(r *http.Request, fields ...string) map[string]any {
	f.t.Helper()
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		f.t.Errorf("%s %s: Content-Type = %q, want application/json", r.Method, r.URL.Path, ct)
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		f.t.Errorf("%s %s: body %q is not a JSON object: %v", r.Method, r.URL.Path, raw, err)
		return nil
	}
	want := map[string]bool{}
	for _, k := range fields {
		want[k] = true
		if _, ok := body[k].(string); !ok {
			f.t.Errorf("%s %s: body field %q = %#v, want a string (body %s)", r.Method, r.URL.Path, k, body[k], raw)
		}
	}
	for k := range body {
		if !want[k] {
			f.t.Errorf("%s %s: unexpected body field %q (body %s)", r.Method, r.URL.Path, k, raw)
		}
	}
	f.mu.Lock()
	f.posted = append(f.posted, body)
	f.mu.Unlock()
	return body
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	_ = json.NewEncoder(&buf).Encode(v)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// findOrOpen is what the reverter does with a host for a revert branch:
// report the pull request already open from branch, else open one.
func findOrOpen(ctx context.Context, h PullRequestHost, branch, base, title, body string) (*PullRequest, bool, error) {
	pr, err := h.Find(ctx, branch)
	if err != nil || (pr != nil && pr.State == PullRequestOpen) {
		return pr, false, err
	}
	pr, err = h.Open(ctx, branch, base, title, body)
	return pr, err == nil, err
}

// fakeGitHub impersonates the GitHub Enterprise REST API for one
// repository, owner/name, with pull requests prs.
type fakeGitHub struct {
	fakeAPI
	owner, name string
	prs         []map[string]any
	nextNumber  int
	rejectToken string // a token the test sends on purpose, answered 401
	srv         *httptest.Server
}

func githubPR(base string, number int, owner, name, head, into, state string, merged bool) map[string]any {
	return map[string]any{
		"id":       1000 + number,
		"number":   number,
		"state":    state,
		"title":    "Revert " + head,
		"body":     "",
		"html_url": fmt.Sprintf("%s/%s/%s/pull/%d", base, owner, name, number),
		"url":      fmt.Sprintf("%s/api/v3/repos/%s/%s/pulls/%d", base, owner, name, number),
		"merged":   merged,
		"merged_at": func() any {
			if merged {
				return "2025-01-02T04:04:05Z"
			}
			return nil
		}(),
		"draft": false,
		"head":  map[string]any{"label": owner + ":" + head, "ref": head, "sha": "0123456789abcdef0123456789abcdef01234567", "repo": map[string]any{"full_name": owner + "/" + name}},
		"base":  map[string]any{"label": owner + ":" + into, "ref": into, "sha": "89abcdef0123456789abcdef0123456789abcdef"},
		"user":  map[string]any{"login": "serin-bot", "type": "User"},
	}
}

func newFakeGitHub(t *testing.T, owner, name string) *fakeGitHub {
	f := &fakeGitHub{fakeAPI: fakeAPI{t: t}, owner: owner, name: name, nextNumber: 7}
	f.srv = httptest.NewTLSServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// client is the Git host client of a GitRepository whose secret carries
// the test server's CA: go-git-providers builds GitHub Enterprise
// clients for https://<domain>/api/v3/ only.
func (f *fakeGitHub) client() *http.Client {
	f.t.Helper()
	c, err := hostHTTPClient(&git.AuthOptions{CAFile: pemOf(f.srv.Certificate())}, DefaultConnectTimeout)
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// pemOf is a certificate as a ca.crt holds it.
func pemOf(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// page serves items page by page (per_page, page) with GitHub's and
// Gitea's Link header, and answers 304 to a request whose If-None-Match
// is the page's ETag.
func (f *fakeAPI) page(w http.ResponseWriter, r *http.Request, items []map[string]any, sizeParam string, defaultSize int) {
	size, _ := strconv.Atoi(r.URL.Query().Get(sizeParam))
	if size <= 0 {
		size = defaultSize
	}
	n, _ := strconv.Atoi(r.URL.Query().Get("page"))
	n = max(n, 1)
	from, to := min((n-1)*size, len(items)), min(n*size, len(items))
	out := items[from:to]
	if to < len(items) {
		next := *r.URL
		q := next.Query()
		q.Set("page", strconv.Itoa(n+1))
		next.RawQuery = q.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<http://%s%s>; rel="next"`, r.Host, next.RequestURI()))
	}
	raw, _ := json.Marshal(out)
	sum := sha256.Sum256(raw)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	w.Header().Set("ETag", etag)
	f.mu.Lock()
	f.conditional = append(f.conditional, r.Header.Get("If-None-Match"))
	f.mu.Unlock()
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// repoURL is the Git URL of the repository on the fake host.
func (f *fakeGitHub) repoURL() string { return f.srv.URL + "/" + f.owner + "/" + f.name + ".git" }

func (f *fakeGitHub) serve(w http.ResponseWriter, r *http.Request) {
	t := f.t
	call := f.record(r)
	// Every GitHub API call is authenticated the way go-git-providers'
	// WithOAuth2Token sends it, with go-github's headers.
	if got := r.Header.Get("Authorization"); got != "Bearer "+fakeAPIToken {
		if got != "Bearer "+f.rejectToken {
			t.Errorf("%s: Authorization = %q, want %q", call, got, "Bearer "+fakeAPIToken)
		}
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"})
		return
	}
	// go-github asks for application/vnd.github.v3+json, or for preview
	// media types on some endpoints (repositories): all GitHub media types.
	for _, mt := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt = strings.TrimSpace(mt); !strings.HasPrefix(mt, "application/vnd.github.") && mt != "application/vnd.github+json" {
			t.Errorf("%s: Accept = %q, want GitHub media types", call, r.Header.Get("Accept"))
		}
	}
	if got := r.Header.Get("X-GitHub-Api-Version"); got != "2022-11-28" {
		t.Errorf("%s: X-GitHub-Api-Version = %q, want 2022-11-28", call, got)
	}
	if ua := r.Header.Get("User-Agent"); !strings.HasPrefix(ua, "go-github/") && !strings.HasPrefix(ua, "serin/") {
		t.Errorf("%s: User-Agent = %q, want go-github/... or serin/...", call, ua)
	}

	repoPath := "/api/v3/repos/" + f.owner + "/" + f.name
	switch {
	case r.Method == http.MethodGet && r.URL.EscapedPath() == repoPath && r.URL.RawQuery == "":
		writeJSON(w, http.StatusOK, map[string]any{
			"id":             4242,
			"name":           f.name,
			"full_name":      f.owner + "/" + f.name,
			"owner":          map[string]any{"login": f.owner, "type": "Organization"},
			"private":        true,
			"visibility":     "private",
			"default_branch": "main",
			"html_url":       f.srv.URL + "/" + f.owner + "/" + f.name,
		})
	case r.Method == http.MethodGet && r.URL.EscapedPath() == repoPath+"/pulls":
		// GitHub lists open pull requests unless state says otherwise.
		state := r.URL.Query().Get("state")
		if state == "" {
			state = "open"
		}
		for k := range r.URL.Query() {
			if k != "state" && k != "head" && k != "base" && k != "page" && k != "per_page" {
				t.Errorf("%s: unexpected query parameter %q", call, k)
			}
		}
		head := r.URL.Query().Get("head")
		out := []map[string]any{}
		f.mu.Lock()
		for _, pr := range f.prs {
			if state != "all" && pr["state"] != state {
				continue
			}
			if head != "" && pr["head"].(map[string]any)["label"] != head {
				continue
			}
			out = append(out, pr)
		}
		f.mu.Unlock()
		// GitHub lists the newest first.
		slices.Reverse(out)
		f.page(w, r, out, "per_page", 30)
	case r.Method == http.MethodPost && r.URL.EscapedPath() == repoPath+"/pulls" && r.URL.RawQuery == "":
		body := f.decodeBody(r, "title", "head", "base", "body")
		if body == nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON"})
			return
		}
		head, _ := body["head"].(string)
		base, _ := body["base"].(string)
		f.mu.Lock()
		n := f.nextNumber
		f.nextNumber++
		pr := githubPR(f.srv.URL, n, f.owner, f.name, head, base, "open", false)
		pr["title"], pr["body"] = body["title"], body["body"]
		f.prs = append(f.prs, pr)
		f.mu.Unlock()
		writeJSON(w, http.StatusCreated, pr)
	default:
		t.Errorf("unexpected GitHub API request: %s", call)
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found", "documentation_url": "https://docs.github.com/rest"})
	}
}

func newGitHubHost(t *testing.T, f *fakeGitHub) PullRequestHost {
	t.Helper()
	u, err := ParseRepositoryURL(f.repoURL())
	if err != nil {
		t.Fatal(err)
	}
	provider, err := ProviderFor(ProviderGitHub, u)
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewGitProviderHost(context.Background(), HostAPI{Repo: u, Provider: provider, Token: fakeAPIToken, HTTP: f.client()})
	if err != nil {
		t.Fatalf("NewGitProviderHost(%s): %v", f.repoURL(), err)
	}
	return h
}

func TestGitHubHostOpensPullRequest(t *testing.T) {
	f := newFakeGitHub(t, "acme", "deploy")
	// Another branch's pull request, and a closed one from the revert
	// branch: neither is the revert's open pull request.
	f.prs = append(f.prs,
		githubPR(f.srv.URL, 3, "acme", "deploy", "feature/x", "main", "open", false),
		githubPR(f.srv.URL, 4, "acme", "deploy", "serin/revert-web-abc123", "main", "closed", false))
	h := newGitHubHost(t, f)

	const branch = "serin/revert-web-abc123"
	pr, opened, err := findOrOpen(context.Background(), h, branch, "main", "Revert web to abc123", "Canary web failed its analysis.")
	if err != nil {
		t.Fatal(err)
	}
	if !opened {
		t.Fatalf("findOrOpen found %+v, want a new pull request", pr)
	}
	want := f.srv.URL + "/acme/deploy/pull/7"
	if pr.URL != want || pr.Number != 7 || pr.State != PullRequestOpen {
		t.Errorf("opened %+v, want #7 at %s, not merged", pr, want)
	}
	if n := f.count(http.MethodPost); n != 1 {
		t.Errorf("%d POSTs, want 1: %v", n, f.calls)
	}
	if len(f.posted) == 1 {
		want := map[string]any{"title": "Revert web to abc123", "head": branch, "base": "main", "body": "Canary web failed its analysis."}
		for k, v := range want {
			if f.posted[0][k] != v {
				t.Errorf("POST body %q = %#v, want %#v", k, f.posted[0][k], v)
			}
		}
		if len(f.posted[0]) != len(want) {
			t.Errorf("POST body = %v, want exactly the fields %v", f.posted[0], want)
		}
	}
	wantCalls := []string{
		"GET /api/v3/repos/acme/deploy",
		"GET /api/v3/repos/acme/deploy/pulls?head=acme%3Aserin%2Frevert-web-abc123&page=1&per_page=100&state=all",
		"POST /api/v3/repos/acme/deploy/pulls",
	}
	if strings.Join(f.calls, "\n") != strings.Join(wantCalls, "\n") {
		t.Errorf("API calls:\n%s\nwant:\n%s", strings.Join(f.calls, "\n"), strings.Join(wantCalls, "\n"))
	}
}

func TestGitHubHostFindsExistingPullRequest(t *testing.T) {
	f := newFakeGitHub(t, "acme", "deploy")
	const branch = "serin/revert-web-abc123"
	f.prs = append(f.prs,
		githubPR(f.srv.URL, 3, "acme", "deploy", "feature/x", "main", "open", false),
		githubPR(f.srv.URL, 5, "acme", "deploy", branch, "main", "open", false))
	h := newGitHubHost(t, f)

	for i := 0; i < 2; i++ { // a retried revert stays idempotent
		pr, opened, err := findOrOpen(context.Background(), h, branch, "main", "Revert web to abc123", "")
		if err != nil {
			t.Fatal(err)
		}
		if opened || pr == nil || pr.Number != 5 || pr.URL != f.srv.URL+"/acme/deploy/pull/5" {
			t.Fatalf("findOrOpen = %+v (opened %v), want the open pull request #5", pr, opened)
		}
	}
	if n := f.count(http.MethodPost); n != 0 {
		t.Errorf("%d POSTs for a branch whose pull request is open, want none: %v", n, f.calls)
	}
}

func TestGitHubHostOpenOnlyOnce(t *testing.T) {
	f := newFakeGitHub(t, "acme", "deploy")
	h := newGitHubHost(t, f)
	const branch = "serin/revert-api-def456"
	first, opened, err := findOrOpen(context.Background(), h, branch, "main", "Revert api", "body")
	if err != nil || !opened {
		t.Fatalf("first findOrOpen = %+v, %v, %v; want a new pull request", first, opened, err)
	}
	again, opened, err := findOrOpen(context.Background(), h, branch, "main", "Revert api", "body")
	if err != nil || opened || again == nil || again.URL != first.URL {
		t.Fatalf("second findOrOpen = %+v, %v, %v; want the pull request at %s found", again, opened, err, first.URL)
	}
	if n := f.count(http.MethodPost); n != 1 {
		t.Errorf("%d POSTs, want 1: %v", n, f.calls)
	}
}

func TestGitHubHostRejectedToken(t *testing.T) {
	f := newFakeGitHub(t, "acme", "deploy")
	u, err := ParseRepositoryURL(f.repoURL())
	if err != nil {
		t.Fatal(err)
	}
	// The fake answers 401 to any other token, as GitHub does.
	f.rejectToken = "wrong"
	_, err = NewGitProviderHost(context.Background(), HostAPI{Repo: u, Provider: ProviderGitHub, Token: "wrong", HTTP: f.client()})
	if err == nil {
		t.Fatal("NewGitProviderHost with a rejected token succeeded")
	}
	if !strings.Contains(err.Error(), "acme/deploy") {
		t.Errorf("error %q does not name the repository", err)
	}
}
