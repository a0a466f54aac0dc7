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
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// Commit status states, as GitHub and Gitea spell them (GitLab's are
// mapped onto them).
const (
	CommitPending = "pending"
	CommitSuccess = "success"
	CommitFailure = "failure"
	CommitError   = "error"
)

// CommitStatus is one status a Git host holds for a commit.
type CommitStatus struct {
	Context     string
	State       string
	Description string
	TargetURL   string
	// Updated is when the host recorded it.
	Updated time.Time
	// ID is the host's id of the status: larger is newer where Updated
	// ties (hosts record seconds).
	ID int64
}

// StatusReader lists the commit statuses of one repository.
type StatusReader interface {
	// Statuses returns the statuses of commit sha, newest first.
	Statuses(ctx context.Context, sha string) ([]CommitStatus, error)
}

// StatusReaderFactory returns the StatusReader of a repository.
type StatusReaderFactory func(ctx context.Context, api HostAPI) (StatusReader, error)

// NewHTTPStatusReader is the StatusReaderFactory of GitHub, GitLab and
// Gitea, through their REST APIs: go-git-providers has no commit status
// API. It reads every page of a commit's statuses:
//   - GitHub: GET /repos/{owner}/{repo}/commits/{sha}/statuses?per_page=100&page=N
//   - GitLab: GET /projects/{id}/repository/commits/{sha}/statuses?per_page=100&page=N
//   - Gitea: GET /repos/{owner}/{repo}/commits/{sha}/statuses?limit=50&page=N
//
// Its calls go through api.HTTP (the GitRepository's CA) and are bound
// to ctx.
func NewHTTPStatusReader(_ context.Context, api HostAPI) (StatusReader, error) {
	if api.Token == "" {
		return nil, fmt.Errorf("no %s API token for %s to read commit statuses with", api.Provider, api.Repo.Host)
	}
	repo := api.Repo
	r := &httpStatusReader{api: api}
	switch api.Provider {
	case ProviderGitHub:
		r.url = fmt.Sprintf("%s/repos/%s/%s/commits/{sha}/statuses?per_page=%d", githubAPI(repo), url.PathEscape(repo.Owner), url.PathEscape(repo.Name), githubPageSize)
		r.pageSize = githubPageSize
	case ProviderGitea:
		r.url = fmt.Sprintf("%s/api/v1/repos/%s/%s/commits/{sha}/statuses?limit=%d", repo.BaseURL(), url.PathEscape(repo.Owner), url.PathEscape(repo.Name), giteaPageSize)
		r.pageSize = giteaPageSize
	case ProviderGitLab:
		r.url = fmt.Sprintf("%s/api/v4/projects/%s/repository/commits/{sha}/statuses?per_page=%d", repo.BaseURL(), url.PathEscape(repo.Owner+"/"+repo.Name), gitlabPageSize)
		r.pageSize = gitlabPageSize
	default:
		return nil, fmt.Errorf("unknown Git provider %q", api.Provider)
	}
	return r, nil
}

type httpStatusReader struct {
	api HostAPI
	// url has {sha} where the commit goes.
	url      string
	pageSize int
}

// hostStatus is a status as the three hosts write it: GitHub's state,
// Gitea's status (and state), GitLab's status and name.
type hostStatus struct {
	ID          int64     `json:"id"`
	State       string    `json:"state"`
	Status      string    `json:"status"`
	Context     string    `json:"context"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	TargetURL   string    `json:"target_url"`
	Created     time.Time `json:"created_at"`
	Updated     time.Time `json:"updated_at"`
}

// Statuses implements StatusReader: every page of them.
func (r *httpStatusReader) Statuses(ctx context.Context, sha string) ([]CommitStatus, error) {
	u, err := url.Parse(strings.Replace(r.url, "{sha}", url.PathEscape(sha), 1))
	if err != nil {
		return nil, err
	}
	var out []CommitStatus
	err = r.api.listPages(ctx, u, r.pageSize, func(body []byte) (int, bool, error) {
		var raw []hostStatus
		if err := json.Unmarshal(body, &raw); err != nil {
			return 0, false, fmt.Errorf("the %s commit statuses are not a JSON list: %w", r.api.Provider, err)
		}
		out = append(out, statusesOf(raw)...)
		return len(raw), false, nil
	})
	if isNotFound(err) {
		return nil, nil // a commit the host does not know yet has no status
	}
	if err != nil {
		return nil, fmt.Errorf("failed to read the commit statuses of %s: %w", ShortSHA(sha), err)
	}
	return out, nil
}

// statusesOf reads the statuses a host wrote, bounded, without those in
// a state serin does not know.
func statusesOf(raw []hostStatus) []CommitStatus {
	out := make([]CommitStatus, 0, len(raw))
	for _, s := range raw {
		st := CommitStatus{ID: s.ID, Context: s.Context, Description: s.Description, TargetURL: s.TargetURL, Updated: s.Updated}
		if st.Context == "" {
			st.Context = s.Name
		}
		if st.Updated.IsZero() {
			st.Updated = s.Created
		}
		var ok bool
		if st.State, ok = commitState(cmp.Or(s.State, s.Status)); !ok {
			continue // skipped, manual, or a state serin does not know
		}
		st.Description = boundedText(st.Description, maxStatusText)
		st.TargetURL = webURL(st.TargetURL)
		out = append(out, st)
	}
	return out
}

// maxStatusText bounds a description a Git host answers, before it goes
// into a status and an event.
const maxStatusText = 256

// commitState maps the states of GitHub, Gitea and GitLab onto serin's,
// false for one to ignore.
func commitState(state string) (string, bool) {
	switch strings.ToLower(state) {
	case CommitSuccess:
		return CommitSuccess, true
	case CommitFailure, "failed", "canceled", "warning":
		return CommitFailure, true
	case CommitError:
		return CommitError, true
	case CommitPending, "running", "created", "waiting_for_resource", "preparing", "scheduled":
		return CommitPending, true
	}
	return "", false
}

// boundedText cuts s to at most n bytes, on a rune boundary.
func boundedText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// webURL is u when it is an http(s) URL of at most 2048 bytes, else "".
func webURL(u string) string {
	if len(u) > 2048 {
		return ""
	}
	parsed, err := url.Parse(u)
	if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
		return ""
	}
	return u
}

// latestStatus returns the newest status of context among statuses: the
// latest recorded; of two recorded in the same second, a verdict over a
// pending one, else the larger id. A Canary's last progress report
// (pending, sent best effort) may reach the host just after its verdict
// (sent apart, kept until delivered): within one second no new rollout
// of the commit began, and the verdict is the last word.
func latestStatus(statuses []CommitStatus, context string) (CommitStatus, bool) {
	var best CommitStatus
	found := false
	for _, s := range statuses {
		if s.Context != context {
			continue
		}
		if !found || newerStatus(s, best) {
			best, found = s, true
		}
	}
	return best, found
}

// newerStatus reports whether s supersedes best (latestStatus).
func newerStatus(s, best CommitStatus) bool {
	switch {
	case !s.Updated.Equal(best.Updated):
		return s.Updated.After(best.Updated)
	case (s.State == CommitPending) != (best.State == CommitPending):
		return best.State == CommitPending
	}
	return s.ID > best.ID
}
