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

package rollout

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// A wave carries the revision a Canary promoted to the next stages of
// spec.gitops.promote, through Git. Each stage of status.promotions
// moves through
//
//	Soaking → Promoting → Opened → Merged → Progressing → Succeeded
//	Soaking → Stopped (threshold failed checks in a row on the primary)
//	Promoting, Opened → Error (a person must act: serin promote --to)
//	Promoting → UpToDate (the stage already runs the images)
//	Merged, Progressing → Failed (the stage's Canary failed it)
//
// The rules live here, pure: DecideWave says whether the wave has work,
// the Wave* functions say what each stage does next and what an outcome
// (a soak check, a promotion written, a verdict read) makes of it. The
// handler (controllers, AdvanceWave) carries out the Git jobs and the
// checks and emits the events these functions return.

// AdvanceWave moves the stages of the wave of the Canary's promoted
// revision one step (spec.gitops.promote); the Canary is Succeeded and
// the rollout has nothing else to do. A member of a CanaryGroup writes a
// promotion only for a release every member of which is promoted
// (ReleaseWaveGate): Hold says what it waits for, Stop why the release is
// never promoted to the next stages.
type AdvanceWave struct {
	Hold, Stop string
}

// WaveSeverity is how an event of the wave is reported (notifier's
// severities; rollout does not import notifier).
type WaveSeverity string

const (
	WaveInfo    WaveSeverity = "info"
	WaveWarning WaveSeverity = "warn"
	WaveError   WaveSeverity = "error"
)

// WaveEvent is an event a wave's decision asks the handler to emit. A
// stage's failure and a soak's stop are warnings, not errors: an error
// would mark this stage's commit failed through a commit-status Provider,
// and the failure is the next stage's, marked on its commit.
type WaveEvent struct {
	Severity WaveSeverity
	Reason   string
	Message  string
}

// DecideWave returns AdvanceWave when the wave of a Canary that has
// nothing else to do has work: stages to move, or the entries of
// removed stages to drop. Only a Succeeded Canary moves its wave: a new
// revision freezes it, and the next promotion starts the next wave.
func DecideWave(c *v1alpha1.Canary) (Action, bool) {
	st := c.Status
	if len(c.Spec.GitOps.GetPromote()) == 0 {
		return AdvanceWave{}, len(st.Promotions) > 0
	}
	if st.Phase != v1alpha1.PhaseSucceeded || st.LastPromotedRevision == "" {
		return nil, false
	}
	return AdvanceWave{}, true
}

// ReleaseWaveGate says whether a member of a group may write the
// promotions of its wave: not until every member of its release is
// promoted in it (hold: what it waits for), and never when another member
// failed or halted the release (stop: why), so that the next stage never
// gets part of a release the first one did not promote whole. "" and ""
// outside a release.
func ReleaseWaveGate(c *v1alpha1.Canary, o Observation) (hold, stop string) {
	st := c.Status.Group
	if !o.Group.InGroup() || st == nil || st.Name != o.Group.Name || st.Release == "" {
		return "", ""
	}
	var waiting []string
	for _, p := range o.Group.ReleasePeers(c) {
		switch {
		case !p.inItsRelease():
		case p.Phase == v1alpha1.PhaseFailed || p.Phase == v1alpha1.PhaseHalted:
			return "", fmt.Sprintf("release %s was not promoted whole: %s is %s; the next stages get none of it", st.Release, p.Name, p.Phase)
		case p.Phase != v1alpha1.PhaseSucceeded:
			waiting = append(waiting, fmt.Sprintf("%s (%s)", p.Name, cmp.Or(string(p.Phase), "new")))
		}
	}
	if len(waiting) > 0 {
		return fmt.Sprintf("waiting for every member of release %s to be promoted before writing the promotion: %s", st.Release, strings.Join(waiting, ", ")), ""
	}
	return "", ""
}

// PromoteToRefusal says why a serin.dev/promote-to request (its stage)
// cannot be acted on: the Canary has no stage, no promoted revision to
// carry (it is not Succeeded: a rollout runs, or the last one failed),
// or no stage of that name. "" when the wave acts on it.
func PromoteToRefusal(c *v1alpha1.Canary, stage string) string {
	switch {
	case len(c.Spec.GitOps.GetPromote()) == 0:
		return fmt.Sprintf("serin.dev/promote-to %s not acted on: spec.gitops.promote lists no stage", stage)
	case c.Status.Phase != v1alpha1.PhaseSucceeded || c.Status.LastPromotedRevision == "":
		return fmt.Sprintf("serin.dev/promote-to %s not acted on: the Canary is %s, not Succeeded: a wave carries a promoted revision",
			stage, cmp.Or(string(c.Status.Phase), "new"))
	}
	for _, s := range c.Spec.GitOps.GetPromote() {
		if s.Stage == stage {
			return ""
		}
	}
	return fmt.Sprintf("serin.dev/promote-to names stage %q, which spec.gitops.promote does not list", stage)
}

// PromoteToStage is the stage of a serin.dev/promote-to request
// (STAGE@TOKEN).
func PromoteToStage(request string) string {
	stage, _, _ := strings.Cut(request, "@")
	return stage
}

// WaveEntries returns status.promotions for the Canary's promoted
// revision: one entry per stage of the spec, in its order (a removed
// stage's entry goes), a stage of a newer revision started over, and the
// stage named by a promote-to request (byHand, valid) moved by hand.
func WaveEntries(c *v1alpha1.Canary, now time.Time, byHand string) ([]v1alpha1.PromotionStatus, []WaveEvent) {
	rev := c.Status.LastPromotedRevision
	stages := c.Spec.GitOps.GetPromote()
	out := make([]v1alpha1.PromotionStatus, 0, len(stages))
	var events []WaveEvent
	for _, stage := range stages {
		p, ok := promotionOf(c.Status.Promotions, stage.Stage)
		if !ok || p.Revision != rev {
			var ev WaveEvent
			p, ev = startStage(stage, rev, now)
			if ev.Reason != "" {
				events = append(events, ev)
			}
		}
		if byHand == stage.Stage {
			events = append(events, promoteByHand(&p, now))
		}
		out = append(out, p)
	}
	return out, events
}

// startStage is a stage's entry for a newly promoted revision: Soaking
// when the stage soaks, else Promoting.
func startStage(stage v1alpha1.PromotionTarget, rev string, now time.Time) (v1alpha1.PromotionStatus, WaveEvent) {
	p := v1alpha1.PromotionStatus{Stage: stage.Stage, Revision: rev, StartedAt: ptrTime(now)}
	if stage.Soak != nil && stage.Soak.Duration > 0 {
		until := metav1.NewTime(now.Add(stage.Soak.Duration))
		p.SoakUntil = &until
		setWavePhase(&p, v1alpha1.WaveSoaking, fmt.Sprintf("soaking until %s: the checks must keep passing on the primary", until.UTC().Format(time.RFC3339)), now)
		return p, WaveEvent{WaveInfo, v1alpha1.StageSoakingReason, fmt.Sprintf("%s: revision %s soaks for %s before it is promoted", stage.Stage, rev, stage.Soak.Duration)}
	}
	setWavePhase(&p, v1alpha1.WavePromoting, "writing the promotion to Git", now)
	return p, WaveEvent{}
}

// promoteByHand acts on serin promote --to for a stage: a soaking,
// stopped or refused stage is written now; a stage waiting out a Git
// host's backoff is tried now; any other is left as it is, with a
// warning that says why.
func promoteByHand(p *v1alpha1.PromotionStatus, now time.Time) WaveEvent {
	switch p.Phase {
	case v1alpha1.WaveSoaking, v1alpha1.WaveStopped, v1alpha1.WaveError:
		ev := WaveEvent{WaveInfo, v1alpha1.StagePromoteRequestedReason, fmt.Sprintf("%s: promotion of %s requested by hand (was %s)", p.Stage, p.Revision, p.Phase)}
		setWavePhase(p, v1alpha1.WavePromoting, "promoted by hand: writing it to Git", now)
		// The person takes the stage's path as it is now: a change made
		// to it before no longer refuses a push.
		p.SoakUntil, p.Attempts, p.NextAttemptTime, p.StartedAt = nil, 0, nil, ptrTime(now)
		return ev
	case v1alpha1.WavePromoting:
		p.NextAttemptTime = nil
		return WaveEvent{WaveInfo, v1alpha1.StagePromoteRequestedReason, fmt.Sprintf("%s: promotion of %s tried again now", p.Stage, p.Revision)}
	}
	return WaveEvent{WaveWarning, v1alpha1.StagePromoteRequestedReason, fmt.Sprintf("%s: promotion of %s not written again: the stage is %s (%s)", p.Stage, p.Revision, p.Phase, p.Message)}
}

// StageWork is the Git work a stage asks for now.
type StageWork int

const (
	// NoWork: the stage waits (its soak, a backoff, the next read) or is
	// final for its revision.
	NoWork StageWork = iota
	// WritePromotion: write the promotion to Git (Promoting).
	WritePromotion
	// ReadVerdict: read whether the promotion was merged and what the
	// stage's Canary says of it.
	ReadVerdict
)

// NextStageWork says what a stage does now, and otherwise when to look
// again (0: nothing waits; the soak's checks, a Git job's end or a new
// revision wake the Canary). A soaking stage whose soak is over leaves
// it (Promoting) here.
func NextStageWork(c *v1alpha1.Canary, p *v1alpha1.PromotionStatus, now time.Time) (StageWork, time.Duration) {
	switch p.Phase {
	case v1alpha1.WaveSoaking:
		if p.SoakUntil != nil && now.Before(p.SoakUntil.Time) {
			return NoWork, p.SoakUntil.Sub(now)
		}
		if !Soaked(c, p) {
			return NoWork, 0
		}
		setWavePhase(p, v1alpha1.WavePromoting, "soaked: writing the promotion to Git", now)
		p.SoakUntil = nil
		fallthrough
	case v1alpha1.WavePromoting, v1alpha1.WaveOpened, v1alpha1.WaveMerged, v1alpha1.WaveProgressing:
		if p.NextAttemptTime != nil && now.Before(p.NextAttemptTime.Time) {
			return NoWork, p.NextAttemptTime.Sub(now)
		}
		if p.Phase == v1alpha1.WavePromoting {
			return WritePromotion, 0
		}
		return ReadVerdict, 0
	}
	return NoWork, 0 // Succeeded, Failed, Stopped, Error, UpToDate: final for this revision
}

// SoakChecks reports whether the Canary has metric checks to soak on.
func SoakChecks(c *v1alpha1.Canary) bool {
	return c.Spec.Analysis != nil && len(c.Spec.Analysis.Metrics) > 0
}

// soakChecksWanted is the number of checks a soak makes: one per analysis
// interval of its duration, at least one.
func soakChecksWanted(c *v1alpha1.Canary, p *v1alpha1.PromotionStatus) int32 {
	if p.SoakUntil == nil || p.LastTransitionTime == nil {
		return 1
	}
	return int32(max(p.SoakUntil.Sub(p.LastTransitionTime.Time)/c.GetAnalysisInterval(), 1))
}

// Soaked reports whether a stage whose soak time is over may leave it:
// without checks, at once; with checks, once it made one check per
// analysis interval of the soak (a check missed while the agent was down
// is made late, never skipped) and the last one passed.
func Soaked(c *v1alpha1.Canary, p *v1alpha1.PromotionStatus) bool {
	if !SoakChecks(c) {
		return true
	}
	return p.CheckedAt != nil && p.FailedChecks == 0 && p.Checks >= soakChecksWanted(c, p)
}

// SoakCheck is the soak check due on the primary, shared by the soaking
// stages: its number (the checks the stage next due made so far, plus
// one) and when it is due. The first check is made one interval after the
// soak started (it judges one interval of traffic), each next one an
// interval after the last: a restart delays a check, never skips it.
func SoakCheck(c *v1alpha1.Canary, promotions []v1alpha1.PromotionStatus) (n int32, due time.Time, ok bool) {
	if !SoakChecks(c) {
		return 0, time.Time{}, false
	}
	for i := range promotions {
		p := &promotions[i]
		if p.Phase != v1alpha1.WaveSoaking || p.LastTransitionTime == nil {
			continue
		}
		from := p.LastTransitionTime.Time
		if p.CheckedAt != nil && p.CheckedAt.After(from) {
			from = p.CheckedAt.Time
		}
		if at := from.Add(c.GetAnalysisInterval()); !ok || at.Before(due) {
			n, due, ok = p.Checks+1, at, true
		}
	}
	return n, due, ok
}

// SoakOutcome is a soak check's result.
type SoakOutcome struct {
	// At is when the check was made.
	At time.Time
	// Failure is the first failed metric's message; "" when it passed.
	Failure string
}

// WaveSoakCheck records a soak check's outcome on every soaking stage
// that has not counted it: a pass clears the failed checks; as many
// failed checks in a row as the analysis threshold (GetThreshold) stop
// the stage, with a warning.
func WaveSoakCheck(c *v1alpha1.Canary, promotions []v1alpha1.PromotionStatus, out SoakOutcome, now time.Time) []WaveEvent {
	threshold := int32(c.GetThreshold())
	var events []WaveEvent
	for i := range promotions {
		p := &promotions[i]
		if p.Phase != v1alpha1.WaveSoaking || (p.CheckedAt != nil && !out.At.After(p.CheckedAt.Time)) {
			continue // not soaking, or counted
		}
		at := metav1.NewTime(out.At)
		p.CheckedAt = &at
		p.Checks++
		if out.Failure == "" {
			p.FailedChecks = 0
			continue
		}
		p.FailedChecks++
		if p.FailedChecks < threshold {
			p.Message = fmt.Sprintf("soaking until %s; %d of %d failed checks in a row: %s",
				p.SoakUntil.UTC().Format(time.RFC3339), p.FailedChecks, threshold, out.Failure)
			continue
		}
		setWavePhase(p, v1alpha1.WaveStopped, fmt.Sprintf("%d failed checks in a row on the primary during the soak: %s", p.FailedChecks, out.Failure), now)
		p.SoakUntil = nil
		events = append(events, WaveEvent{WaveWarning, v1alpha1.StageStoppedReason,
			fmt.Sprintf("%s: wave of revision %s stopped: %s (serin promote --to %s promotes it anyway)", p.Stage, p.Revision, p.Message, p.Stage)})
	}
	return events
}

// PromotionState is what writing a promotion did (gitops.PromotionState;
// rollout does not import gitops).
type PromotionState string

const (
	PromotionOpened   PromotionState = "Opened"
	PromotionPushed   PromotionState = "Pushed"
	PromotionMerged   PromotionState = "Merged"
	PromotionUpToDate PromotionState = "UpToDate"
)

// PromotionWritten is a promotion the Git host took.
type PromotionWritten struct {
	State                          PromotionState
	Branch, Commit, PullRequestURL string
	Message                        string
}

// WavePromotionWritten records a written promotion: UpToDate (final),
// Opened, or Merged (pushed, or merged before a restart recorded it),
// and when to read its verdict.
func WavePromotionWritten(c *v1alpha1.Canary, p *v1alpha1.PromotionStatus, res PromotionWritten, now time.Time) (WaveEvent, time.Duration) {
	p.Attempts, p.NextAttemptTime = 0, nil
	p.Branch, p.Commit, p.PullRequestURL = res.Branch, res.Commit, res.PullRequestURL
	var ev WaveEvent
	switch res.State {
	case PromotionUpToDate:
		setWavePhase(p, v1alpha1.WaveUpToDate, res.Message+": nothing written, no verdict awaited", now)
		return WaveEvent{WaveInfo, v1alpha1.StageOpenedReason, fmt.Sprintf("%s: %s", p.Stage, p.Message)}, 0
	case PromotionOpened:
		setWavePhase(p, v1alpha1.WaveOpened, res.Message, now)
		ev = WaveEvent{WaveInfo, v1alpha1.StageOpenedReason, fmt.Sprintf("%s: promotion of %s proposed: %s", p.Stage, p.Revision, res.PullRequestURL)}
	default:
		setWavePhase(p, v1alpha1.WaveMerged, res.Message, now)
		ev = WaveEvent{WaveInfo, v1alpha1.StageOpenedReason, fmt.Sprintf("%s: promotion of %s pushed to %s as %s", p.Stage, p.Revision, res.Branch, res.Commit)}
	}
	return ev, NextVerdictRead(c, p, now)
}

// Verdict states, as the stage's Canary posts them on its commit
// (gitops.Commit*).
const (
	VerdictPending = "pending"
	VerdictSuccess = "success"
)

// StageVerdict is what the next stage says of a promotion (gitops.Verdict).
type StageVerdict struct {
	Merged, Closed                bool
	State, StageCommit            string
	Description, URL, StageCanary string
}

// WaveVerdict records a verdict read: a pull request closed without a
// merge is an Error; a merged promotion takes the phase its stage
// Canary's status says (Merged while it has none, Progressing, Succeeded,
// Failed for any other state). It returns the event to emit (none while
// the stage waits) and when to read again (0: final).
func WaveVerdict(c *v1alpha1.Canary, stage v1alpha1.PromotionTarget, p *v1alpha1.PromotionStatus, v StageVerdict, now time.Time) (WaveEvent, time.Duration) {
	ev, wait := waveVerdict(c, stage, p, v, now)
	if ev.Reason == "" && wait > 0 {
		ev = overdue(p, v.StageCanary, now)
	}
	return ev, wait
}

// WaitBounds are how long a stage waits in a phase before it warns, once,
// saying what it waits for: a pull request left unmerged, a stage Canary
// that does not report (its agent down, or no commit-status Provider, or
// another cluster name), a rollout that does not end.
var WaitBounds = map[string]time.Duration{
	v1alpha1.WaveOpened:      24 * time.Hour,
	v1alpha1.WaveMerged:      30 * time.Minute,
	v1alpha1.WaveProgressing: 2 * time.Hour,
}

// overdue warns once when a stage waited past its phase's bound.
func overdue(p *v1alpha1.PromotionStatus, stageCanary string, now time.Time) WaveEvent {
	bound, ok := WaitBounds[p.Phase]
	if !ok || p.Overdue || p.LastTransitionTime == nil || now.Sub(p.LastTransitionTime.Time) < bound {
		return WaveEvent{}
	}
	p.Overdue = true
	since := p.LastTransitionTime.UTC().Format(time.RFC3339)
	var what string
	switch p.Phase {
	case v1alpha1.WaveOpened:
		what = fmt.Sprintf("pull request %s has waited for a merge since %s", cmp.Or(p.PullRequestURL, "of the promotion"), since)
	case v1alpha1.WaveMerged:
		what = fmt.Sprintf("Canary %s has not reported on %s since %s: is its agent running, with a commit-status Provider in its spec.alerts, and spec.gitops.promote[].canary.cluster its --cluster-name?", stageCanary, shortSHA(p.StageCommit), since)
	default:
		what = fmt.Sprintf("Canary %s has been rolling it out since %s", stageCanary, since)
	}
	return WaveEvent{WaveWarning, v1alpha1.StageOverdueReason, fmt.Sprintf("%s: promotion of %s waits past %s: %s", p.Stage, p.Revision, bound, what)}
}

// waveVerdict is WaveVerdict without the overdue warning.
func waveVerdict(c *v1alpha1.Canary, stage v1alpha1.PromotionTarget, p *v1alpha1.PromotionStatus, v StageVerdict, now time.Time) (WaveEvent, time.Duration) {
	p.Attempts = 0
	switch {
	case v.Closed && p.Phase == v1alpha1.WaveOpened:
		return StageError(p, fmt.Sprintf("pull request %s was closed without a merge", p.PullRequestURL), now), 0
	case !v.Merged && p.Phase != v1alpha1.WaveOpened:
		// Found before, no longer among the branch's last commits: keep
		// what was known, and say so.
		p.Message = fmt.Sprintf("the commit that brought the promotion in is no longer among the last commits of the branch; waiting for Canary %s's verdict on %s", v.StageCanary, shortSHA(p.StageCommit))
		return WaveEvent{}, NextVerdictRead(c, p, now)
	case !v.Merged:
		p.Message = "waiting for the pull request to be merged"
		if p.PullRequestURL == "" {
			p.Message = "waiting for the promotion commit to reach " + cmp.Or(stage.Branch, "the stage's branch")
		}
		return WaveEvent{}, NextVerdictRead(c, p, now)
	}
	p.StageCommit, p.URL = v.StageCommit, v.URL
	switch v.State {
	case "":
		setWavePhase(p, v1alpha1.WaveMerged, fmt.Sprintf("merged as %s; waiting for Canary %s to report", shortSHA(v.StageCommit), v.StageCanary), now)
		return WaveEvent{}, NextVerdictRead(c, p, now)
	case VerdictPending:
		setWavePhase(p, v1alpha1.WaveProgressing, fmt.Sprintf("Canary %s: %s", v.StageCanary, cmp.Or(v.Description, "rolling out")), now)
		return WaveEvent{}, NextVerdictRead(c, p, now)
	case VerdictSuccess:
		setWavePhase(p, v1alpha1.WaveSucceeded, fmt.Sprintf("Canary %s: %s", v.StageCanary, cmp.Or(v.Description, "succeeded")), now)
		p.NextAttemptTime = nil
		return WaveEvent{WaveInfo, v1alpha1.StageSucceededReason, fmt.Sprintf("%s: revision %s succeeded at %s: %s", p.Stage, p.Revision, shortSHA(v.StageCommit), p.Message)}, 0
	}
	setWavePhase(p, v1alpha1.WaveFailed, fmt.Sprintf("Canary %s: %s", v.StageCanary, cmp.Or(v.Description, v.State)), now)
	p.NextAttemptTime = nil
	return WaveEvent{WaveWarning, v1alpha1.StageFailedReason, fmt.Sprintf("%s: revision %s failed at %s: %s", p.Stage, p.Revision, shortSHA(v.StageCommit), p.Message)}, 0
}

// WaveRetry records a stage's failed Git work (what) to be tried again
// with the reverts' backoff (GitRetryDelay), and warns on the first
// failure only: one alert per outage, not one per attempt.
func WaveRetry(p *v1alpha1.PromotionStatus, what, reason string, now time.Time) (WaveEvent, time.Duration) {
	p.Attempts++
	wait := GitRetryDelay(p.Attempts)
	at := metav1.NewTime(now.Add(wait))
	p.NextAttemptTime = &at
	p.Message = fmt.Sprintf("%s failed (attempt %d), next in %s: %s", what, p.Attempts, wait, reason)
	if p.Attempts > 1 {
		return WaveEvent{}, wait
	}
	return WaveEvent{WaveWarning, v1alpha1.StageRetryingReason, fmt.Sprintf("%s: %s of %s failed, retrying with backoff: %s", p.Stage, what, p.Revision, reason)}, wait
}

// StageStopped stops a stage whose promotion is not to be written (the
// release it belongs to failed): nothing goes to Git for the revision;
// serin promote --to writes it by hand.
func StageStopped(p *v1alpha1.PromotionStatus, msg string, now time.Time) WaveEvent {
	p.NextAttemptTime = nil
	setWavePhase(p, v1alpha1.WaveStopped, msg, now)
	return WaveEvent{WaveWarning, v1alpha1.StageStoppedReason, fmt.Sprintf("%s: promotion of %s stopped: %s", p.Stage, p.Revision, msg)}
}

// StageError records a promotion that cannot be written or followed
// without a person: Error, alerted once.
func StageError(p *v1alpha1.PromotionStatus, msg string, now time.Time) WaveEvent {
	p.NextAttemptTime = nil
	setWavePhase(p, v1alpha1.WaveError, msg, now)
	return WaveEvent{WaveError, v1alpha1.StageErrorReason, fmt.Sprintf("%s: promotion of %s cannot be written: %s (serin promote --to %s tries again)", p.Stage, p.Revision, msg, p.Stage)}
}

// Backoff of Git work a retry may fix (reverts, promotions, verdict
// reads): the first retry after gitRetryFirst, doubling up to
// gitRetryMax, for as long as the Git host fails.
const (
	gitRetryFirst = 5 * time.Second
	gitRetryMax   = 5 * time.Minute
)

// GitRetryDelay is the wait before the retry that follows attempts
// failed attempts.
func GitRetryDelay(attempts int32) time.Duration {
	d := gitRetryFirst
	for i := int32(1); i < attempts && d < gitRetryMax; i++ {
		d *= 2
	}
	return min(d, gitRetryMax)
}

// MaxVerdictPoll bounds the time between two reads of a verdict.
const MaxVerdictPoll = 5 * time.Minute

// verdictPoll bounds how often a stage's verdict is read while it has none.
const verdictPoll = 10 * time.Second

// VerdictPoll is how often the agent reads a stage's verdict while it has
// none: the Canary's analysis interval, between 5 s and 10 s.
func VerdictPoll(c *v1alpha1.Canary) time.Duration {
	return min(max(c.GetAnalysisInterval(), 5*time.Second), verdictPoll)
}

// NextVerdictRead schedules the next read of a stage's verdict: every
// poll interval at first, then less often the longer the stage waits in
// its phase (a tenth of the wait, up to MaxVerdictPoll), so that a pull
// request left for days costs a clone every 5 minutes, not every 10 s.
func NextVerdictRead(c *v1alpha1.Canary, p *v1alpha1.PromotionStatus, now time.Time) time.Duration {
	wait := VerdictPoll(c)
	if p.LastTransitionTime != nil {
		wait = min(max(wait, now.Sub(p.LastTransitionTime.Time)/10), MaxVerdictPoll)
	}
	at := metav1.NewTime(now.Add(wait))
	p.NextAttemptTime = &at
	return wait
}

// promotionOf is a copy of the entry of a stage in status.promotions.
func promotionOf(ps []v1alpha1.PromotionStatus, stage string) (v1alpha1.PromotionStatus, bool) {
	for _, p := range ps {
		if p.Stage == stage {
			return p, true
		}
	}
	return v1alpha1.PromotionStatus{}, false
}

// setWavePhase sets a stage's phase and message, and the time of a change.
func setWavePhase(p *v1alpha1.PromotionStatus, phase, message string, now time.Time) {
	if p.Phase != phase || p.LastTransitionTime == nil {
		t := metav1.NewTime(now)
		p.LastTransitionTime, p.Overdue = &t, false
	}
	p.Phase, p.Message = phase, message
}

// ptrTime is t as a *metav1.Time.
func ptrTime(t time.Time) *metav1.Time {
	m := metav1.NewTime(t)
	return &m
}

// shortSHA cuts a commit hash to 8 characters (gitops.ShortSHA).
func shortSHA(s string) string {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}

func (AdvanceWave) isAction()      {}
func (AdvanceWave) String() string { return "advance-wave" }
