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

package notifier

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// The commit-status Provider types (github, gitlab, gitea) mark the commit
// a Canary rolls out with the Canary's phase, under a context of its own,
// so that whoever watches the commit (the next stage of a wave, a pull
// request) reads the Canary's verdict on it. Only phase changes about a Git
// commit set a status; every other event is skipped (errSkip).

// Commit status states, as GitHub and Gitea spell them (gitlabState maps
// them onto GitLab's).
const (
	commitPending = "pending"
	commitSuccess = "success"
	commitFailure = "failure"
)

// maxDescription is GitHub's limit on a commit status description, in
// characters.
const maxDescription = 140

// commitStatus is the status an event sets on a commit.
type commitStatus struct {
	// sha is the commit.
	sha string
	// state is commitPending, commitSuccess or commitFailure.
	state string
	// context names the status: serin/[<cluster>/]<namespace>/<canary>.
	context string
	// description is the event's message, at most maxDescription
	// characters.
	description string
}

// commitStatusOf returns the status an event sets, or errSkip for an event
// that sets none: only a phase-change event (its reason is its phase)
// whose revision names a Git commit does. The context is the agent's
// cluster name (--cluster-name, when set) and the involved object's (the
// Canary's) namespace and name.
func commitStatusOf(e eventv1.Event, cluster string) (commitStatus, error) {
	phase := e.Metadata[MetaPhase]
	if phase == "" || e.Reason != phase {
		return commitStatus{}, errSkip
	}
	sha, ok := commitOf(e.Metadata[MetaRevision])
	if !ok {
		return commitStatus{}, errSkip
	}
	state, ok := commitState(v1alpha1.CanaryPhase(phase))
	if !ok {
		return commitStatus{}, errSkip
	}
	return commitStatus{
		sha:         sha,
		state:       state,
		context:     v1alpha1.CommitStatusContext(cluster, e.InvolvedObject.Namespace, e.InvolvedObject.Name),
		description: truncate(e.Message, maxDescription),
	}, nil
}

// commitOf returns the commit of a Flux revision, the hex after its last
// "sha1:" (main@sha1:<hex>, sha1:<hex>, refs/heads/main@sha1:<hex>), and
// false for a revision that names no Git commit (none, an OCI digest).
func commitOf(revision string) (string, bool) {
	const prefix = "sha1:"
	i := strings.LastIndex(revision, prefix)
	if i < 0 {
		return "", false
	}
	sha := revision[i+len(prefix):]
	if sha == "" || strings.Trim(sha, "0123456789abcdefABCDEF") != "" {
		return "", false
	}
	return sha, true
}

// commitState maps a Canary phase onto a commit state: Succeeded (an
// analysis completed and promoted) is success, Failed and Halted are
// failure, a rollout under way is pending. Initializing and Initialized
// set none (false): serin adopted the target and analysed nothing, so it
// vouches for nothing on the commit.
func commitState(phase v1alpha1.CanaryPhase) (string, bool) {
	switch phase {
	case v1alpha1.PhaseInitializing, v1alpha1.PhaseInitialized:
		return "", false
	case v1alpha1.PhaseSucceeded:
		return commitSuccess, true
	case v1alpha1.PhaseFailed, v1alpha1.PhaseHalted:
		return commitFailure, true
	default:
		return commitPending, true
	}
}

// truncate cuts s to at most limit characters on a rune boundary, the
// last one an ellipsis when s is cut.
func truncate(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	return string([]rune(s)[:limit-1]) + "…"
}

// commitStatusFor checks what every commit-status Provider type needs
// before it posts: a status to set (else errSkip, before anything else, so
// that a progress event is never an error), the Provider's token and the
// repository its address names.
func commitStatusFor(cfg providerConfig, e eventv1.Event) (commitStatus, gitRepository, error) {
	s, err := commitStatusOf(e, cfg.cluster)
	if err != nil {
		return s, gitRepository{}, err
	}
	if cfg.token == "" {
		return s, gitRepository{}, fmt.Errorf("%s Provider without a token: its Secret needs a 'token' key", cfg.typ)
	}
	repo, err := parseGitRepository(cfg.address)
	if err != nil {
		return s, repo, fmt.Errorf("invalid %s Provider address: %w", cfg.typ, err)
	}
	return s, repo, nil
}

// gitRepository is the repository a commit-status Provider's address
// names.
type gitRepository struct {
	// scheme is http or https (ssh addresses map to https).
	scheme string
	// host is the host name, with the port of an http(s) address.
	host string
	// owner is the user, organization or group path ("group/subgroup").
	owner string
	// name is the repository's name, without .git.
	name string
}

// base is the host's web address, <scheme>://<host>.
func (r gitRepository) base() string { return r.scheme + "://" + r.host }

// ownerAndName returns the path-escaped owner and name of a repository on
// a host whose owners are users or organizations, never paths (GitHub,
// Gitea).
func (r gitRepository) ownerAndName() (owner, name string, err error) {
	if strings.Contains(r.owner, "/") {
		return "", "", errors.New("the address must name a repository as <scheme>://<host>/<owner>/<repository>")
	}
	return url.PathEscape(r.owner), url.PathEscape(r.name), nil
}

// parseGitRepository splits a commit-status Provider's address, the
// repository's web or clone URL as notification-controller takes it
// (https://github.com/owner/repo, http://gitea.example:3000/owner/repo.git,
// https://gitlab.com/group/sub/repo, ssh://git@host/owner/repo): the
// scheme and host give the API, the path the owner and the name. The
// errors never quote the address.
func parseGitRepository(address string) (gitRepository, error) {
	u, err := url.Parse(address)
	if err != nil {
		return gitRepository{}, errors.New("not a URL")
	}
	var r gitRepository
	switch u.Scheme {
	case "http", "https":
		r.scheme, r.host = u.Scheme, u.Host
	case "ssh":
		r.scheme, r.host = "https", u.Hostname()
	default:
		return r, fmt.Errorf("unsupported scheme %q: want https, http or ssh", u.Scheme)
	}
	if r.host == "" {
		return r, errors.New("no host")
	}
	p := strings.TrimSuffix(strings.Trim(u.Path, "/"), ".git")
	i := strings.LastIndex(p, "/")
	if i <= 0 || i == len(p)-1 {
		return r, errors.New("the address must name an owner and a repository")
	}
	r.owner, r.name = p[:i], p[i+1:]
	return r, nil
}
