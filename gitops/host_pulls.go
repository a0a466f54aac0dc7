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
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// A pull request is found by its head branch, with each host's own
// query, whatever its state and however busy the repository:
//   - GitHub: GET /repos/{owner}/{repo}/pulls?head={owner}:{branch}&state=all&per_page=100
//   - GitLab: GET /projects/{id}/merge_requests?source_branch={branch}&state=all&per_page=100
//   - Gitea (whose listing cannot filter by head): GET
//     /repos/{owner}/{repo}/pulls?state=open&limit=50, every page, then
//     state=closed, every page, while no open one is found.
//
// Each page after the first is asked for with page=N.

// Page sizes of the listings (the hosts' maximums; Gitea's default one).
const (
	githubPageSize = 100
	gitlabPageSize = 100
	giteaPageSize  = 50
)

// findPullRequest returns the pull request from branch in api's
// repository (PullRequestHost.Find).
func findPullRequest(ctx context.Context, api HostAPI, branch string) (*PullRequest, error) {
	var (
		found *PullRequest
		err   error
	)
	switch api.Provider {
	case ProviderGitHub:
		found, err = findGitHubPull(ctx, api, branch)
	case ProviderGitLab:
		found, err = findGitLabMerge(ctx, api, branch)
	case ProviderGitea:
		found, err = findGiteaPull(ctx, api, branch)
	default:
		return nil, fmt.Errorf("unknown Git provider %q", api.Provider)
	}
	if err != nil {
		return nil, fmt.Errorf("failed to find the pull request from %s in %s/%s: %w", branch, api.Repo.Owner, api.Repo.Name, err)
	}
	return found, nil
}

// preferred returns the pull request that stands for a branch among two:
// an open one, else a merged one, else the newer.
func preferred(a, b *PullRequest) *PullRequest {
	rank := map[PullRequestState]int{PullRequestOpen: 3, PullRequestMerged: 2, PullRequestClosed: 1}
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case rank[a.State] != rank[b.State]:
		if rank[a.State] > rank[b.State] {
			return a
		}
		return b
	case b.Number > a.Number:
		return b
	}
	return a
}

// hubPull is what serin reads of a GitHub or Gitea pull request (Gitea's
// API follows GitHub's; GitHub's listing has merged_at, not merged).
type hubPull struct {
	Number   int        `json:"number"`
	State    string     `json:"state"`
	HTMLURL  string     `json:"html_url"`
	Merged   bool       `json:"merged"`
	MergedAt *time.Time `json:"merged_at"`
	Head     struct {
		Ref  string `json:"ref"`
		Repo *struct {
			FullName string `json:"full_name"`
		} `json:"repo"`
	} `json:"head"`
}

// hubPulls reads a page of GitHub or Gitea pull requests and returns its
// length and the one from branch of repo itself that stands for it with
// found (preferred). A fork's branch of that name (its repository maybe
// gone: no head repo) is another's.
func hubPulls(body []byte, repo RepositoryURL, branch string, found *PullRequest) (int, *PullRequest, error) {
	var page []hubPull
	if err := json.Unmarshal(body, &page); err != nil {
		return 0, found, fmt.Errorf("the pull requests are not a JSON list: %w", err)
	}
	for _, p := range page {
		if p.Head.Ref != branch || p.Head.Repo == nil || !strings.EqualFold(p.Head.Repo.FullName, repo.Owner+"/"+repo.Name) {
			continue
		}
		pr := &PullRequest{Number: p.Number, URL: p.HTMLURL, State: PullRequestOpen}
		switch {
		case p.Merged || p.MergedAt != nil:
			pr.State = PullRequestMerged
		case p.State != "open":
			pr.State = PullRequestClosed
		}
		found = preferred(found, pr)
	}
	return len(page), found, nil
}

func findGitHubPull(ctx context.Context, api HostAPI, branch string) (*PullRequest, error) {
	repo := api.Repo
	u, err := url.Parse(fmt.Sprintf("%s/repos/%s/%s/pulls", githubAPI(repo), url.PathEscape(repo.Owner), url.PathEscape(repo.Name)))
	if err != nil {
		return nil, err
	}
	u.RawQuery = url.Values{"head": {repo.Owner + ":" + branch}, "state": {"all"}, "per_page": {fmt.Sprint(githubPageSize)}}.Encode()
	var found *PullRequest
	err = api.listPages(ctx, u, githubPageSize, func(body []byte) (n int, _ bool, err error) {
		n, found, err = hubPulls(body, repo, branch, found)
		return n, false, err
	})
	return found, err
}

// gitlabMerge is what serin reads of a GitLab merge request.
type gitlabMerge struct {
	IID             int    `json:"iid"`
	State           string `json:"state"`
	WebURL          string `json:"web_url"`
	SourceBranch    string `json:"source_branch"`
	ProjectID       int64  `json:"project_id"`
	SourceProjectID int64  `json:"source_project_id"`
}

func findGitLabMerge(ctx context.Context, api HostAPI, branch string) (*PullRequest, error) {
	repo := api.Repo
	u, err := url.Parse(fmt.Sprintf("%s/api/v4/projects/%s/merge_requests", repo.BaseURL(), url.PathEscape(repo.Owner+"/"+repo.Name)))
	if err != nil {
		return nil, err
	}
	u.RawQuery = url.Values{"source_branch": {branch}, "state": {"all"}, "per_page": {fmt.Sprint(gitlabPageSize)}}.Encode()
	var found *PullRequest
	err = api.listPages(ctx, u, gitlabPageSize, func(body []byte) (int, bool, error) {
		var page []gitlabMerge
		if err := json.Unmarshal(body, &page); err != nil {
			return 0, false, fmt.Errorf("the merge requests are not a JSON list: %w", err)
		}
		for _, m := range page {
			if m.SourceBranch != branch || (m.SourceProjectID != 0 && m.ProjectID != 0 && m.SourceProjectID != m.ProjectID) {
				continue // another project's branch of that name (a fork)
			}
			pr := &PullRequest{Number: m.IID, URL: m.WebURL}
			switch m.State {
			case "opened", "locked":
				pr.State = PullRequestOpen
			case "merged":
				pr.State = PullRequestMerged
			default:
				pr.State = PullRequestClosed
			}
			found = preferred(found, pr)
		}
		return len(page), false, nil
	})
	return found, err
}

func findGiteaPull(ctx context.Context, api HostAPI, branch string) (*PullRequest, error) {
	repo := api.Repo
	u, err := url.Parse(fmt.Sprintf("%s/api/v1/repos/%s/%s/pulls", repo.BaseURL(), url.PathEscape(repo.Owner), url.PathEscape(repo.Name)))
	if err != nil {
		return nil, err
	}
	var found *PullRequest
	// The open ones first: usually few, and one ends the search.
	for _, state := range []string{"open", "closed"} {
		u.RawQuery = url.Values{"state": {state}, "limit": {fmt.Sprint(giteaPageSize)}}.Encode()
		err = api.listPages(ctx, u, giteaPageSize, func(body []byte) (n int, _ bool, err error) {
			n, found, err = hubPulls(body, repo, branch, found)
			return n, found != nil && found.State == PullRequestOpen, err
		})
		if err != nil || found != nil && found.State == PullRequestOpen {
			return found, err
		}
	}
	return found, nil
}
