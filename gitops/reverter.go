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

	"github.com/serin-dev/serin/api/v1alpha1"
)

// Revert states recorded in status.revert.state. A tracked branch that
// already renders the target as promoted is Merged: nothing to revert.
const (
	StateOpened  = "Opened"
	StatePushed  = "Pushed"
	StateFailed  = "Failed"
	StateMerged  = "Merged"
	StatePending = "Pending"
	// StateRetrying: the Git host failed in a way a retry may fix
	// (IsTransient); the revert is tried again with backoff.
	StateRetrying = "Retrying"
)

// RevertRequest asks for the revert of a Canary's bad revision.
type RevertRequest struct {
	// Canary whose target is reverted.
	Canary *v1alpha1.Canary
	// BadRevision is the Flux revision to revert (status.lastAttemptedRevision).
	BadRevision string
	// GoodRevision is the last promoted Flux revision (status.lastPromotedRevision).
	GoodRevision string
	// Reason is why the revision is bad, for the commit message and PR.
	Reason string
	// Group names the Canary's CanaryGroup when the revert is its
	// release's: one branch, commit and pull request for the group and
	// the revision, which restores Members' targets too.
	Group string
	// Members are the other members of the release; each is restored to
	// its own last promoted revision. A member applied from another
	// repository or branch is left to its own revert there, and named in
	// this one's message.
	Members []*v1alpha1.Canary
}

// RevertResult is what the revert produced.
type RevertResult struct {
	Branch         string
	Commit         string
	PullRequestURL string
	// State is one of the State constants.
	State string
	// Message explains the state.
	Message string
	// Covered are the members of a group's release the revert restores
	// (the Canary's and the other members of its repository and branch).
	Covered []string
}

// ErrNotConfigured means the agent runs without GitOps revert support.
var ErrNotConfigured = errors.New("gitops revert is not configured on this agent")

// Reverter reverts a bad revision in Git. Implementations are idempotent:
// the same bad revision never yields a second branch or pull request.
type Reverter interface {
	Revert(ctx context.Context, req RevertRequest) (RevertResult, error)
}

// Disabled is the Reverter and the Promoter of an agent without GitOps
// support.
type Disabled struct{}

// Revert returns ErrNotConfigured.
func (Disabled) Revert(context.Context, RevertRequest) (RevertResult, error) {
	return RevertResult{}, ErrNotConfigured
}
