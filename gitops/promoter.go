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
	"time"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// PromotionRequest asks for the promotion of a Canary's promoted revision
// to one stage of its wave.
type PromotionRequest struct {
	// Canary whose promoted revision is promoted.
	Canary *v1alpha1.Canary
	// Stage is where it goes.
	Stage v1alpha1.PromotionTarget
	// Revision is the Canary's promoted Flux revision.
	Revision string
	// Images are the promoted images (the primary's).
	Images []string
	// Branch is the promotion's branch as written (status.promotions[].branch),
	// "" before it is: a verdict is read from it, never from another
	// branch of the same name someone else created first.
	Branch string
	// Group is the CanaryGroup whose release the promotion carries
	// whole, with Members: the other members of the release promoted to
	// the same stage, whose images it writes too, in the same commit and
	// pull request. "" for a Canary's own promotion.
	Group string
	// Members are the other members of Group's release the promotion
	// carries (rollout.ReleaseStageOf); those whose stage is in another
	// repository or branch are left to their own promotion there.
	Members []PromotionMember
	// Since is when the wave started (or a person promoted by hand): in
	// mode Push, a commit that is not serin's and changed the stage's
	// path after it refuses the promotion (ErrChangedMeanwhile). Zero
	// checks nothing.
	Since time.Time
}

// PromotionMember is another member of a group's release that a
// release's promotion carries.
type PromotionMember struct {
	// Canary is the member.
	Canary *v1alpha1.Canary
	// Stage is the member's stage of the same name.
	Stage v1alpha1.PromotionTarget
	// Images are its promoted images (its primary's).
	Images []string
}

// PromotionState is what a promotion came to (PromotionResult.State).
type PromotionState string

// Promotion states.
const (
	// PromotionOpened: the promotion's pull request is open.
	PromotionOpened PromotionState = "Opened"
	// PromotionPushed: the promotion is pushed to the stage's branch
	// (mode Push).
	PromotionPushed PromotionState = "Pushed"
	// PromotionMerged: the promotion is in the stage's branch already
	// (its branch merged before a restart recorded it).
	PromotionMerged PromotionState = "Merged"
	// PromotionUpToDate: the stage already runs the promoted images;
	// nothing was written.
	PromotionUpToDate PromotionState = "UpToDate"
)

// PromotionResult is what the promotion wrote, or found written.
type PromotionResult struct {
	// Branch is the promotion's branch (mode PullRequest), or the stage's
	// branch it was pushed to or found in.
	Branch string
	// Commit is the promotion commit, or the stage's head when it is up
	// to date.
	Commit string
	// PullRequestURL is the promotion's pull request, when it has one.
	PullRequestURL string
	// State is one of the PromotionState constants.
	State PromotionState
	// Message explains the state.
	Message string
	// Covers are, for a release's promotion, the members of
	// PromotionRequest.Members it carries: those whose stage is in the
	// same repository and branch. Each of the others is promoted from its
	// own repository (its commit's message says where).
	Covers []string
}

// Verdict is what the next stage says of a promotion.
type Verdict struct {
	// Merged: the promotion is in the stage's branch.
	Merged bool
	// State is the stage Canary's commit status (CommitPending,
	// CommitSuccess, CommitFailure, CommitError), "" while it has none.
	State string
	// StageCommit is the commit of the stage's branch the status is on
	// (the first one that brought the promotion in, when there is none).
	StageCommit string
	// Description and URL are the status's.
	Description, URL string
	// Closed: the promotion's pull request was closed without a merge.
	Closed bool
	// Members are, for a release's promotion (PromotionRequest.Group),
	// the commit status of each member's Canary in the stage: the
	// Canary's first, then each of PromotionRequest.Members.
	Members []MemberVerdict
}

// MemberVerdict is one stage Canary's commit status on a release's
// promotion.
type MemberVerdict struct {
	// StageCanary is the stage's Canary (namespace/name).
	StageCanary string
	// State, StageCommit, Description and URL are as Verdict's.
	State, StageCommit, Description, URL string
}

// Promoter writes promotions and reads their verdicts.
type Promoter interface {
	// Promote writes the promotion: a branch and a pull request, or a
	// push. It is idempotent: the same revision and stage never yield a
	// second branch, pull request or commit.
	Promote(ctx context.Context, req PromotionRequest) (PromotionResult, error)
	// Verdict reads the next stage's verdict on the promotion commit.
	Verdict(ctx context.Context, req PromotionRequest, commit string) (Verdict, error)
}

// Promote returns ErrNotConfigured.
func (Disabled) Promote(context.Context, PromotionRequest) (PromotionResult, error) {
	return PromotionResult{}, ErrNotConfigured
}

// Verdict returns ErrNotConfigured.
func (Disabled) Verdict(context.Context, PromotionRequest, string) (Verdict, error) {
	return Verdict{}, ErrNotConfigured
}
