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
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/fluxcd/pkg/git"
)

// Git host providers serin opens pull requests on.
const (
	ProviderGitHub = "github"
	ProviderGitLab = "gitlab"
	ProviderGitea  = "gitea"
)

// PullRequestState is what became of a pull request.
type PullRequestState string

// The states of a pull request, as serin tells them apart on every host.
const (
	// PullRequestOpen: open (GitLab's opened and locked).
	PullRequestOpen PullRequestState = "open"
	// PullRequestMerged: merged.
	PullRequestMerged PullRequestState = "merged"
	// PullRequestClosed: closed without a merge.
	PullRequestClosed PullRequestState = "closed"
)

// PullRequest is a pull (or merge) request on a Git host.
type PullRequest struct {
	Number int
	URL    string
	State  PullRequestState
}

// PullRequestHost finds and opens pull requests in one repository.
type PullRequestHost interface {
	// Find returns the pull request whose head is branch in the
	// repository itself, whatever its state (an open one first, else the
	// newest merged, else the newest closed), or nil when there is none:
	// it asks the host for that branch (or reads every page), so a busy
	// repository hides none.
	Find(ctx context.Context, branch string) (*PullRequest, error)
	// Open opens a pull request from branch into base.
	Open(ctx context.Context, branch, base, title, body string) (*PullRequest, error)
}

// HostAPI is how the API of one repository's Git host is reached.
type HostAPI struct {
	Repo RepositoryURL
	// Provider is github, gitlab or gitea.
	Provider string
	// Token is the API token (hostToken says whose).
	Token string
	// HTTP carries every call: it trusts the GitRepository's CA (ca.crt),
	// unless Token is the platform's (platformTLS), presents its client
	// certificate, follows the environment's proxy and no redirect
	// (hostHTTPClient); each call, an SDK's too, goes only to the
	// repository's API origins (apiOrigins). Nil is a default client.
	HTTP *http.Client
	// conditional remembers GitHub's answers for conditional requests
	// (nil: none).
	conditional *conditionalCache
}

// HostFactory returns the PullRequestHost of a repository.
type HostFactory func(ctx context.Context, api HostAPI) (PullRequestHost, error)

// RepositoryURL is a Git repository URL split into what a Git host API
// needs.
type RepositoryURL struct {
	// Scheme is http or https (ssh URLs map to https).
	Scheme string
	// Host is the host name, with a port for http(s) URLs.
	Host string
	// Owner is the user, organization or group path ("group/subgroup").
	Owner string
	// Name is the repository name, without .git.
	Name string
}

// BaseURL is the web address of the host, e.g. https://github.com.
func (u RepositoryURL) BaseURL() string { return u.Scheme + "://" + u.Host }

// ParseRepositoryURL splits an http(s), ssh:// or scp-like Git URL.
func ParseRepositoryURL(raw string) (RepositoryURL, error) {
	var out RepositoryURL
	var p string
	if !strings.Contains(raw, "://") {
		// scp-like: git@host:owner/name.git
		hostPart, rest, ok := strings.Cut(raw, ":")
		if !ok {
			return out, fmt.Errorf("cannot parse Git URL %q", raw)
		}
		_, out.Host, _ = strings.Cut(hostPart, "@")
		if out.Host == "" {
			out.Host = hostPart
		}
		out.Scheme, p = "https", rest
	} else {
		u, err := url.Parse(raw)
		if err != nil {
			return out, fmt.Errorf("cannot parse Git URL %q: %w", raw, err)
		}
		switch u.Scheme {
		case "http", "https":
			out.Scheme, out.Host = u.Scheme, u.Host
		case "ssh":
			out.Scheme, out.Host = "https", u.Hostname()
		default:
			return out, fmt.Errorf("unsupported Git URL scheme %q", u.Scheme)
		}
		p = u.Path
	}
	p = strings.TrimSuffix(strings.Trim(p, "/"), ".git")
	i := strings.LastIndex(p, "/")
	if i <= 0 || i == len(p)-1 {
		return out, fmt.Errorf("the Git URL %q does not name an owner and a repository", raw)
	}
	out.Owner, out.Name = p[:i], p[i+1:]
	return out, nil
}

// ProviderFor returns the configured provider, or the one the host name
// tells (github.com, gitlab.com).
func ProviderFor(configured string, repo RepositoryURL) (string, error) {
	switch configured {
	case ProviderGitHub, ProviderGitLab, ProviderGitea:
		return configured, nil
	case "":
	default:
		return "", fmt.Errorf("unknown Git provider %q: want github, gitlab or gitea", configured)
	}
	host := strings.ToLower(repo.Host)
	switch {
	case host == "github.com" || strings.HasSuffix(host, ".github.com"):
		return ProviderGitHub, nil
	case host == "gitlab.com" || strings.HasSuffix(host, ".gitlab.com"):
		return ProviderGitLab, nil
	}
	return "", fmt.Errorf("cannot tell which Git host serves %s: start the agent with --git-provider=github|gitlab|gitea", repo.Host)
}

// hostList is the Git hosts the platform lends the agent's own API token
// to (--git-provider-hosts), each with the scheme the token may travel
// over: an entry is host or host:port (https only), https://host[:port],
// or http://host[:port], which lets the token go in clear text to that
// host and only there. A repository matches an entry of its scheme and
// host (an ssh:// or scp-like repository's API is https on its host
// name): a tenant's http:// URL of a host listed as host gets no token.
// Names compare without case; the scheme's default port (443, or 80 for
// http) may be written or left out.
type hostList []hostEntry

// hostEntry is one entry of a hostList.
type hostEntry struct {
	// scheme is https, or http when the entry says so.
	scheme string
	// name is the host name, port the port ("" for the scheme's default).
	name, port string
}

// String is the entry as the flag takes it, the scheme written only for
// http.
func (e hostEntry) String() string {
	host := e.name
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if e.port != "" {
		host += ":" + e.port
	}
	if e.scheme == "http" {
		return "http://" + host
	}
	return host
}

// ParseHostList reads a comma-separated list of host[:port],
// https://host[:port] or http://host[:port].
func ParseHostList(s string) (hostList, error) {
	var out hostList
	for _, raw := range strings.Split(s, ",") {
		h := strings.ToLower(strings.TrimSpace(raw))
		if h == "" {
			continue
		}
		e := hostEntry{scheme: "https"}
		if scheme, rest, ok := strings.Cut(h, "://"); ok {
			if scheme != "http" && scheme != "https" {
				return nil, fmt.Errorf("invalid Git host %q: the scheme must be https or http", h)
			}
			e.scheme, h = scheme, strings.TrimSuffix(rest, "/")
		}
		if h == "" || strings.ContainsAny(h, "/@?#") {
			return nil, fmt.Errorf("invalid Git host %q: want host, host:port, https://host[:port] or http://host[:port], no path or user", strings.TrimSpace(raw))
		}
		e.name, e.port = splitHostPort(h, e.scheme)
		if e.name == "" {
			return nil, fmt.Errorf("invalid Git host %q: no host name", strings.TrimSpace(raw))
		}
		out = append(out, e)
	}
	return out, nil
}

// lists reports whether repo's API is listed: its scheme and its host.
func (l hostList) lists(repo RepositoryURL) bool {
	name, port := splitHostPort(strings.ToLower(repo.Host), repo.Scheme)
	for _, e := range l {
		if e.scheme == repo.Scheme && e.name == name && e.port == port {
			return true
		}
	}
	return false
}

// PlainHTTP returns the entries that let the token travel over plain
// HTTP (http://host[:port]).
func (l hostList) PlainHTTP() []string {
	var out []string
	for _, e := range l {
		if e.scheme == "http" {
			out = append(out, e.String())
		}
	}
	return out
}

func (l hostList) String() string {
	if len(l) == 0 {
		return "none"
	}
	out := make([]string, len(l))
	for i, e := range l {
		out[i] = e.String()
	}
	return strings.Join(out, ",")
}

// splitHostPort splits host[:port], the scheme's default port dropped.
func splitHostPort(hostport, scheme string) (string, string) {
	name, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return strings.Trim(hostport, "[]"), ""
	}
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	return name, port
}

// listedAs is how --git-provider-hosts would list repo's API host.
func listedAs(repo RepositoryURL) string {
	if repo.Scheme == "http" {
		return "http://" + repo.Host
	}
	return repo.Host
}

// WithProviderTrustRepositoryCA lets the agent's own token
// (WithProviderTokenFile) trust the ca.crt of a GitRepository's secret;
// by default it trusts the system's roots only (SSL_CERT_FILE,
// SSL_CERT_DIR), since a tenant who writes ca.crt could otherwise stand
// in for a listed host and read the token.
func WithProviderTrustRepositoryCA(trust bool) ReverterOption {
	return func(g *GitReverter) error {
		g.trustRepositoryCA = trust
		return nil
	}
}

// platformTLS is what of a GitRepository's TLS settings the platform's
// token goes with: the secret's client certificate, and its ca.crt only
// under WithProviderTrustRepositoryCA (else the system's roots).
func (c *gitCore) platformTLS(auth *git.AuthOptions) *git.AuthOptions {
	if auth == nil || c.trustRepositoryCA || len(auth.CAFile) == 0 {
		return auth
	}
	out := *auth
	out.CAFile = nil
	return &out
}
