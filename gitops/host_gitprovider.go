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
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/fluxcd/go-git-providers/gitea"
	"github.com/fluxcd/go-git-providers/github"
	"github.com/fluxcd/go-git-providers/gitlab"
	"github.com/fluxcd/go-git-providers/gitprovider"
)

// NewGitProviderHost is the HostFactory of GitHub, GitLab and Gitea: it
// opens pull requests through github.com/fluxcd/go-git-providers, and
// finds them with the host's own query by branch, which
// go-git-providers cannot ask (host_pulls.go). Every call goes through api.HTTP (the
// GitRepository's CA) and is bound to ctx (deadline included).
func NewGitProviderHost(ctx context.Context, api HostAPI) (PullRequestHost, error) {
	repo, provider := api.Repo, api.Provider
	if api.Token == "" {
		return nil, fmt.Errorf("no %s API token for %s", provider, repo.Host)
	}
	if api.HTTP == nil {
		var err error
		if api.HTTP, err = hostHTTPClient(nil, DefaultConnectTimeout); err != nil {
			return nil, err
		}
	}
	// Every call, a redirect's too, goes to the repository's API only.
	base := originGuard{allowed: apiOrigins(repo, provider), next: api.HTTP.Transport}
	opts := []gitprovider.ClientOption{
		gitprovider.WithPostChainTransportHook(func(http.RoundTripper) http.RoundTripper { return base }),
		gitprovider.WithPreChainTransportHook(func(in http.RoundTripper) http.RoundTripper {
			return contextTransport{ctx: ctx, next: in}
		}),
	}
	var (
		client gitprovider.Client
		domain string
		err    error
	)
	switch provider {
	case ProviderGitHub:
		domain = github.DefaultDomain
		if repo.Host != github.DefaultDomain {
			domain = repo.Host
		}
		client, err = github.NewClient(append(opts, gitprovider.WithOAuth2Token(api.Token), gitprovider.WithDomain(domain))...)
	case ProviderGitLab:
		domain = gitlab.DefaultDomain
		if repo.Host != gitlab.DefaultDomain {
			domain = repo.BaseURL()
		}
		client, err = gitlab.NewClient(api.Token, "", append(opts, gitprovider.WithDomain(domain))...)
	case ProviderGitea:
		domain = repo.BaseURL()
		client, err = gitea.NewClient(api.Token, append(opts, gitprovider.WithDomain(domain))...)
	default:
		return nil, fmt.Errorf("unknown Git provider %q", provider)
	}
	if err != nil {
		return nil, fmt.Errorf("failed to create the %s client for %s: %w", provider, repo.BaseURL(), err)
	}
	r, err := getRepository(ctx, client, domain, repo)
	if err != nil {
		return nil, fmt.Errorf("failed to get repository %s/%s from %s: %w", repo.Owner, repo.Name, domain, err)
	}
	return &gitProviderHost{api: api, prs: r.PullRequests()}, nil
}

// getRepository reads a repository as a user's, then as an organization's
// (a GitLab subgroup path, "group/subgroup", is the organization).
func getRepository(ctx context.Context, c gitprovider.Client, domain string, repo RepositoryURL) (interface {
	PullRequests() gitprovider.PullRequestClient
}, error) {
	if !strings.Contains(repo.Owner, "/") {
		r, err := c.UserRepositories().Get(ctx, gitprovider.UserRepositoryRef{
			UserRef:        gitprovider.UserRef{Domain: domain, UserLogin: repo.Owner},
			RepositoryName: repo.Name,
		})
		if err == nil {
			return r, nil
		}
		if !errors.Is(err, gitprovider.ErrNotFound) {
			return nil, err
		}
	}
	// A GitLab subgroup goes whole in Organization: go-git-providers' GitLab
	// client rejects SubOrganizations, and addresses the project by
	// "<Organization>/<name>".
	return c.OrgRepositories().Get(ctx, gitprovider.OrgRepositoryRef{
		OrganizationRef: gitprovider.OrganizationRef{Domain: domain, Organization: repo.Owner},
		RepositoryName:  repo.Name,
	})
}

type gitProviderHost struct {
	api HostAPI
	prs gitprovider.PullRequestClient
}

// Find implements PullRequestHost (findPullRequest).
func (h *gitProviderHost) Find(ctx context.Context, branch string) (*PullRequest, error) {
	return findPullRequest(ctx, h.api, branch)
}

// Open implements PullRequestHost.
func (h *gitProviderHost) Open(ctx context.Context, branch, base, title, body string) (*PullRequest, error) {
	pr, err := h.prs.Create(ctx, title, branch, base, body)
	if err != nil {
		return nil, fmt.Errorf("failed to open a pull request from %s into %s: %w", branch, base, err)
	}
	return pullRequestOf(pr), nil
}

// pullRequestOf is a pull request go-git-providers opened.
func pullRequestOf(pr gitprovider.PullRequest) *PullRequest {
	info := pr.Get()
	state := PullRequestOpen
	if info.Merged {
		state = PullRequestMerged
	}
	return &PullRequest{Number: info.Number, URL: info.WebURL, State: state}
}

// contextTransport binds requests without a context (the Gitea SDK's) to
// the revert's context, so that its deadline applies to every API call.
type contextTransport struct {
	ctx  context.Context
	next http.RoundTripper
}

func (t contextTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Context() == context.Background() {
		req = req.WithContext(t.ctx)
	}
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(req)
}
