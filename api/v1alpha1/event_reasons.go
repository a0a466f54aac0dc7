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

package v1alpha1

// Reasons of the events serin emits for a Canary, as Kubernetes Events and
// through Flux's notification machinery, besides the condition reasons that
// are events too (HaltedReason, RevertedReason, ShieldedReason,
// PrimaryRepairedReason). Alerts and tools match on them: they are part of
// the API and do not change within v1alpha1.
const (
	// NewRevisionReason: a new revision of the target was detected; its
	// analysis starts.
	NewRevisionReason string = "NewRevision"
	// RevisionAcceptedReason: the target's new spec equals the primary's
	// (a manual rollback), so it is accepted without analysis.
	RevisionAcceptedReason string = "RevisionAccepted"
	// AnalysisRestartedReason: the target changed during the analysis;
	// traffic went back to the primary and the analysis starts over.
	AnalysisRestartedReason string = "AnalysisRestarted"
	// WeightIncreasedReason: a step passed its checks and the canary's
	// weight went up. Sent to the notifier and the event webhooks only: the
	// step is in status.analyses, not a Kubernetes Event.
	WeightIncreasedReason string = "WeightIncreased"
	// IterationReason: a blue/green iteration passed its checks. Sent to
	// the notifier and the event webhooks only, as WeightIncreased.
	IterationReason string = "Iteration"
	// CheckFailedReason: a metric check or webhook of a step failed; the
	// message counts the failed checks against the threshold.
	CheckFailedReason string = "CheckFailed"
	// RouteProgrammedReason: the gateway accepted the canary's new weight.
	RouteProgrammedReason string = "RouteProgrammed"
	// WaitingPromotionReason: the analysis passed and a confirm-promotion
	// webhook holds the promotion.
	WaitingPromotionReason string = "WaitingPromotion"
	// PromotingReason: the canary's spec is being copied to the primary.
	PromotingReason string = "Promoting"
	// FinalisingReason: the primary runs the new revision and is ready;
	// traffic moves back to it.
	FinalisingReason string = "Finalising"
	// PromotedReason: the promotion completed and the canary was scaled to
	// zero.
	PromotedReason string = "Promoted"
	// PostRolloutFailedReason: a post-rollout webhook failed after the
	// promotion (the promotion stands).
	PostRolloutFailedReason string = "PostRolloutFailed"
	// RolledBackReason: the analysis failed; all traffic went back to the
	// primary and the canary was scaled to zero.
	RolledBackReason string = "RolledBack"
	// RestoringPrimaryReason: with failurePolicy RestorePrimary, the primary
	// is being restored to its last promoted revision.
	RestoringPrimaryReason string = "RestoringPrimary"
	// RevertOpenedReason: a pull request reverting the bad revision in Git
	// was opened.
	RevertOpenedReason string = "RevertOpened"
	// RevertPushedReason: a commit reverting the bad revision was pushed
	// (gitops.revert.mode Push).
	RevertPushedReason string = "RevertPushed"
	// RevertMergedReason: the revert of the bad revision is already in Git.
	RevertMergedReason string = "RevertMerged"
	// RevertRetryingReason: the revert of the bad revision failed in a way
	// a retry may fix (the Git host unreachable, a 5xx, a rate limit); it
	// is tried again with backoff (status.revert.nextAttemptTime).
	RevertRetryingReason string = "RevertRetrying"
	// RevertFailedReason: serin could not revert the bad revision in Git;
	// the message says why.
	RevertFailedReason string = "RevertFailed"
	// StageSoakingReason: a promoted revision soaks before it goes to
	// the next stage of its wave.
	StageSoakingReason string = "StageSoaking"
	// StageOpenedReason: the promotion of a revision to the next stage
	// was proposed (a pull request) or pushed.
	StageOpenedReason string = "StageOpened"
	// StageRetryingReason: writing a promotion failed in a way a retry
	// may fix; it is retried with backoff.
	StageRetryingReason string = "StageRetrying"
	// StageSucceededReason: the next stage's Canary promoted the
	// revision (or already ran it).
	StageSucceededReason string = "StageSucceeded"
	// StageFailedReason: the next stage's Canary failed the revision.
	StageFailedReason string = "StageFailed"
	// StageStoppedReason: a check failed on the primary during the
	// soak; the wave stops there.
	StageStoppedReason string = "StageStopped"
	// StageErrorReason: the promotion cannot be written without a
	// person (the message says why).
	StageErrorReason string = "StageError"
	// StagePromoteRequestedReason: serin.dev/promote-to was acted on.
	StagePromoteRequestedReason string = "StagePromoteRequested"
	// RevertOnDeletionSkippedReason: a Canary with revertOnDeletion was
	// deleted while its target ran a revision that was never promoted, so
	// the primary keeps serving instead.
	RevertOnDeletionSkippedReason string = "RevertOnDeletionSkipped"
	// OrphanedReason: a Canary without revertOnDeletion was deleted; the
	// objects it generated keep serving, no longer owned by it.
	OrphanedReason string = "Orphaned"
	// CommitStatusRetryingReason: a verdict's commit status did not reach
	// a commit-status Provider; it is tried again with backoff until it
	// does (status.commitStatus).
	CommitStatusRetryingReason = "CommitStatusRetrying"
	// StageOverdueReason: a stage of a wave waited in its phase past the
	// phase's bound; the message says what it waits for.
	StageOverdueReason = "StageOverdue"
)
