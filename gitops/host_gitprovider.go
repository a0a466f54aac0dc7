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

	giteasdk "code.gitea.io/sdk/gitea"
	"github.com/fluxcd/go-git-providers/gitea"
	"github.com/fluxcd/go-git-providers/github"
	"github.com/fluxcd/go-git-providers/gitlab"
	"github.com/fluxcd/go-git-providers/gitprovider"
)

// NewGitProviderHost is the HostFactory of GitHub, GitLab and Gitea,
// through github.com/fluxcd/go-git-providers. Its API calls are bound to
// ctx (deadline included).
func NewGitProviderHost(ctx context.Context, repo RepositoryURL, provider, token string) (PullRequestHost, error) {
	if token == "" {
		return nil, fmt.Errorf("no %s API token: set password or bearerToken in the GitRepository's secret, or start the agent with --git-provider-token-file", provider)
	}
	opts := []gitprovider.ClientOption{gitprovider.WithPreChainTransportHook(func(in http.RoundTripper) http.RoundTripper {
		return contextTransport{ctx: ctx, next: in}
	})}
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
		client, err = github.NewClient(append(opts, gitprovider.WithOAuth2Token(token), gitprovider.WithDomain(domain))...)
	case ProviderGitLab:
		domain = gitlab.DefaultDomain
		if repo.Host != gitlab.DefaultDomain {
			domain = repo.BaseURL()
		}
		client, err = gitlab.NewClient(token, "", append(opts, gitprovider.WithDomain(domain))...)
	case ProviderGitea:
		domain = repo.BaseURL()
		client, err = gitea.NewClient(token, append(opts, gitprovider.WithDomain(domain))...)
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
	return &gitProviderHost{prs: r.PullRequests()}, nil
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
	prs gitprovider.PullRequestClient
}

// Find implements PullRequestHost.
func (h *gitProviderHost) Find(ctx context.Context, branch string) (*PullRequest, error) {
	prs, err := h.prs.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("failed to list pull requests: %w", err)
	}
	for _, pr := range prs {
		if sourceBranch(pr) == branch {
			return pullRequestOf(pr), nil
		}
	}
	return nil, nil
}

// Open implements PullRequestHost.
func (h *gitProviderHost) Open(ctx context.Context, branch, base, title, body string) (*PullRequest, error) {
	pr, err := h.prs.Create(ctx, title, branch, base, body)
	if err != nil {
		return nil, fmt.Errorf("failed to open a pull request from %s into %s: %w", branch, base, err)
	}
	return pullRequestOf(pr), nil
}

func pullRequestOf(pr gitprovider.PullRequest) *PullRequest {
	info := pr.Get()
	return &PullRequest{Number: info.Number, URL: info.WebURL, Merged: info.Merged}
}

// sourceBranch returns a pull request's head branch; go-git-providers'
// Gitea provider leaves it out of PullRequestInfo.
func sourceBranch(pr gitprovider.PullRequest) string {
	if b := pr.Get().SourceBranch; b != "" {
		return b
	}
	if g, ok := pr.APIObject().(*giteasdk.PullRequest); ok && g.Head != nil {
		return g.Head.Ref
	}
	return ""
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
