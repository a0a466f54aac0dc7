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

// GitLab.com cannot run here, so these tests drive serin's host layer
// (NewGitProviderHost, then Find and Open as the reverter calls them)
// against an httptest server that impersonates GitLab's REST API v4 for a
// self-managed instance, and checks the exact wire format GitLab expects:
// method, path (/api/v4/projects/<URL-encoded namespace/project>/...), the
// PRIVATE-TOKEN header, and the JSON body of the merge request it creates.
// It answers with the fields of GitLab's real responses that go-gitlab
// (gitlab.com/gitlab-org/api/client-go) and go-git-providers read.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// fakeGitLab impersonates GitLab's API v4 for one project.
type fakeGitLab struct {
	fakeAPI
	namespace, name string
	mrs             []map[string]any
	nextIID         int
	srv             *httptest.Server
}

func newFakeGitLab(t *testing.T, namespace, name string) *fakeGitLab {
	f := &fakeGitLab{fakeAPI: fakeAPI{t: t}, namespace: namespace, name: name, nextIID: 12}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// client is the Git host client of a GitRepository with no CA.
func (f *fakeGitLab) client() *http.Client {
	c, _ := hostHTTPClient(nil, DefaultConnectTimeout)
	return c
}

func (f *fakeGitLab) repoURL() string { return f.srv.URL + "/" + f.namespace + "/" + f.name + ".git" }

func (f *fakeGitLab) webURL() string { return f.srv.URL + "/" + f.namespace + "/" + f.name }

func gitlabMR(web string, iid int, source, target, state string) map[string]any {
	mr := map[string]any{
		"id":            5000 + iid,
		"iid":           iid,
		"project_id":    4242,
		"title":         "Revert " + source,
		"description":   "",
		"state":         state, // opened, closed, locked or merged
		"source_branch": source,
		"target_branch": target,
		"web_url":       fmt.Sprintf("%s/-/merge_requests/%d", web, iid),
		"author":        map[string]any{"id": 9, "username": "serin-bot"},
		"draft":         false,
		"sha":           "0123456789abcdef0123456789abcdef01234567",
		"created_at":    "2025-01-02T03:04:05.000Z",
	}
	if state == "merged" {
		mr["merged_at"] = "2025-01-02T04:04:05.000Z"
	}
	return mr
}

func (f *fakeGitLab) serve(w http.ResponseWriter, r *http.Request) {
	t := f.t
	call := f.record(r)
	// go-git-providers' GitLab client authenticates with a personal (or
	// project) access token in the PRIVATE-TOKEN header.
	if got := r.Header.Get("PRIVATE-TOKEN"); got != fakeAPIToken {
		t.Errorf("%s: PRIVATE-TOKEN = %q, want %q", call, got, fakeAPIToken)
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "401 Unauthorized"})
		return
	}
	// GitLab addresses a project by its URL-encoded full path.
	project := "/api/v4/projects/" + url.PathEscape(f.namespace+"/"+f.name)
	path := r.URL.EscapedPath()
	switch {
	case r.Method == http.MethodGet && path == project:
		writeJSON(w, http.StatusOK, map[string]any{
			"id":                  4242,
			"name":                f.name,
			"path":                f.name,
			"path_with_namespace": f.namespace + "/" + f.name,
			"namespace":           map[string]any{"id": 77, "full_path": f.namespace, "kind": "group"},
			"default_branch":      "main",
			"visibility":          "private",
			"web_url":             f.webURL(),
			"http_url_to_repo":    f.webURL() + ".git",
		})
	case r.Method == http.MethodGet && path == project+"/merge_requests":
		// GitLab lists merge requests of every state unless told a state,
		// the newest first, 20 a page unless told per_page.
		q := r.URL.Query()
		for k := range q {
			if k != "state" && k != "source_branch" && k != "page" && k != "per_page" {
				t.Errorf("%s: unexpected query parameter %q", call, k)
			}
		}
		state, source := q.Get("state"), q.Get("source_branch")
		out := []map[string]any{}
		f.mu.Lock()
		for _, mr := range f.mrs {
			if (state == "" || state == "all" || mr["state"] == state) && (source == "" || mr["source_branch"] == source) {
				out = append(out, mr)
			}
		}
		f.mu.Unlock()
		slices.Reverse(out)
		size, _ := strconv.Atoi(q.Get("per_page"))
		if size <= 0 {
			size = 20
		}
		page, _ := strconv.Atoi(q.Get("page"))
		page = max(page, 1)
		from, to := min((page-1)*size, len(out)), min(page*size, len(out))
		if to < len(out) {
			w.Header().Set("X-Next-Page", strconv.Itoa(page+1))
		}
		w.Header().Set("X-Total", strconv.Itoa(len(out)))
		writeJSON(w, http.StatusOK, out[from:to])
	case r.Method == http.MethodGet && strings.HasPrefix(path, project+"/merge_requests/"):
		iid, err := strconv.Atoi(strings.TrimPrefix(path, project+"/merge_requests/"))
		f.mu.Lock()
		var found map[string]any
		for _, mr := range f.mrs {
			if err == nil && mr["iid"] == iid {
				found = mr
			}
		}
		f.mu.Unlock()
		if found == nil {
			t.Errorf("%s: no such merge request", call)
			writeJSON(w, http.StatusNotFound, map[string]any{"message": "404 Not found"})
			return
		}
		writeJSON(w, http.StatusOK, found)
	case r.Method == http.MethodPost && path == project+"/merge_requests" && r.URL.RawQuery == "":
		body := f.decodeBody(r, "source_branch", "target_branch", "title", "description")
		if body == nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid JSON"})
			return
		}
		source, _ := body["source_branch"].(string)
		target, _ := body["target_branch"].(string)
		f.mu.Lock()
		iid := f.nextIID
		f.nextIID++
		mr := gitlabMR(f.webURL(), iid, source, target, "opened")
		mr["title"], mr["description"] = body["title"], body["description"]
		f.mrs = append(f.mrs, mr)
		f.mu.Unlock()
		writeJSON(w, http.StatusCreated, mr)
	default:
		t.Errorf("unexpected GitLab API request: %s", call)
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "404 Project Not Found"})
	}
}

func newGitLabHost(t *testing.T, f *fakeGitLab) PullRequestHost {
	t.Helper()
	u, err := ParseRepositoryURL(f.repoURL())
	if err != nil {
		t.Fatal(err)
	}
	provider, err := ProviderFor(ProviderGitLab, u)
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewGitProviderHost(context.Background(), HostAPI{Repo: u, Provider: provider, Token: fakeAPIToken, HTTP: f.client()})
	if err != nil {
		t.Fatalf("NewGitProviderHost(%s): %v", f.repoURL(), err)
	}
	return h
}

func TestGitLabHostOpensMergeRequest(t *testing.T) {
	f := newFakeGitLab(t, "acme", "deploy")
	f.mrs = append(f.mrs, gitlabMR(f.webURL(), 3, "feature/x", "main", "opened"))
	h := newGitLabHost(t, f)

	const branch = "serin/revert-web-abc123"
	pr, opened, err := findOrOpen(context.Background(), h, branch, "main", "Revert web to abc123", "Canary web failed its analysis.")
	if err != nil {
		t.Fatal(err)
	}
	if !opened {
		t.Fatalf("findOrOpen found %+v, want a new merge request", pr)
	}
	want := f.webURL() + "/-/merge_requests/12"
	if pr.URL != want || pr.Number != 12 || pr.State != PullRequestOpen {
		t.Errorf("opened %+v, want !12 at %s, not merged", pr, want)
	}
	if n := f.count(http.MethodPost); n != 1 || len(f.posted) != 1 {
		t.Fatalf("%d POSTs, want 1: %v", n, f.calls)
	}
	wantBody := map[string]any{"source_branch": branch, "target_branch": "main", "title": "Revert web to abc123", "description": "Canary web failed its analysis."}
	for k, v := range wantBody {
		if f.posted[0][k] != v {
			t.Errorf("POST body %q = %#v, want %#v", k, f.posted[0][k], v)
		}
	}
	wantCalls := []string{
		"GET /api/v4/projects/acme%2Fdeploy",
		"GET /api/v4/projects/acme%2Fdeploy/merge_requests?page=1&per_page=100&source_branch=serin%2Frevert-web-abc123&state=all",
		"POST /api/v4/projects/acme%2Fdeploy/merge_requests",
	}
	if strings.Join(f.calls, "\n") != strings.Join(wantCalls, "\n") {
		t.Errorf("API calls:\n%s\nwant:\n%s", strings.Join(f.calls, "\n"), strings.Join(wantCalls, "\n"))
	}
}

func TestGitLabHostFindsExistingMergeRequest(t *testing.T) {
	f := newFakeGitLab(t, "acme", "deploy")
	const branch = "serin/revert-web-abc123"
	f.mrs = append(f.mrs,
		gitlabMR(f.webURL(), 3, "feature/x", "main", "opened"),
		gitlabMR(f.webURL(), 5, branch, "main", "opened"))
	h := newGitLabHost(t, f)

	for i := 0; i < 2; i++ { // a retried revert stays idempotent
		pr, opened, err := findOrOpen(context.Background(), h, branch, "main", "Revert web to abc123", "")
		if err != nil {
			t.Fatal(err)
		}
		if opened || pr == nil || pr.Number != 5 || pr.URL != f.webURL()+"/-/merge_requests/5" {
			t.Fatalf("findOrOpen = %+v (opened %v), want the open merge request !5", pr, opened)
		}
	}
	if n := f.count(http.MethodPost); n != 0 {
		t.Errorf("%d POSTs for a branch whose merge request is open, want none: %v", n, f.calls)
	}
}

func TestGitLabHostOpenOnlyOnce(t *testing.T) {
	f := newFakeGitLab(t, "acme", "deploy")
	h := newGitLabHost(t, f)
	const branch = "serin/revert-api-def456"
	first, opened, err := findOrOpen(context.Background(), h, branch, "main", "Revert api", "body")
	if err != nil || !opened {
		t.Fatalf("first findOrOpen = %+v, %v, %v; want a new merge request", first, opened, err)
	}
	again, opened, err := findOrOpen(context.Background(), h, branch, "main", "Revert api", "body")
	if err != nil || opened || again == nil || again.URL != first.URL {
		t.Fatalf("second findOrOpen = %+v, %v, %v; want the merge request at %s found", again, opened, err, first.URL)
	}
	if n := f.count(http.MethodPost); n != 1 {
		t.Errorf("%d POSTs, want 1: %v", n, f.calls)
	}
}

func TestGitLabHostSubgroupProject(t *testing.T) {
	f := newFakeGitLab(t, "platform/team", "deploy")
	h := newGitLabHost(t, f)
	pr, opened, err := findOrOpen(context.Background(), h, "serin/revert-web-abc123", "main", "Revert web", "")
	if err != nil || !opened {
		t.Fatalf("findOrOpen = %+v, %v, %v; want a new merge request", pr, opened, err)
	}
	if want := f.webURL() + "/-/merge_requests/12"; pr.URL != want {
		t.Errorf("opened %s, want %s", pr.URL, want)
	}
	// The project is addressed by its full path, subgroup included: it is
	// not a user's, so its user lookup is skipped.
	wantCalls := []string{
		"GET /api/v4/projects/platform%2Fteam%2Fdeploy",
		"GET /api/v4/projects/platform%2Fteam%2Fdeploy/merge_requests?page=1&per_page=100&source_branch=serin%2Frevert-web-abc123&state=all",
		"POST /api/v4/projects/platform%2Fteam%2Fdeploy/merge_requests",
	}
	if strings.Join(f.calls, "\n") != strings.Join(wantCalls, "\n") {
		t.Errorf("API calls:\n%s\nwant:\n%s", strings.Join(f.calls, "\n"), strings.Join(wantCalls, "\n"))
	}
}
