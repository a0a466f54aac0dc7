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

package controllers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/analysis"
	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/notifier"
)

// A wave carries the revision a Canary promoted to the next stages of
// spec.gitops.promote, through Git: after the soak (the checks keep
// passing on the promoted primary), a pull request or a push writes the
// promoted images to each stage's kustomization; the stage's own Canary
// rolls it out and posts its verdict as a commit status, which is read
// back into status.promotions. Git work runs off the reconcile workers
// (gitJobs), retried with the reverts' backoff while the Git host fails.
// A stage's failure and a soak's stop are warnings, not errors: an error
// event would mark this stage's commit failed through a commit-status
// Provider, and the failure is the next stage's, marked on its commit.
// The wave moves only while the Canary is Succeeded and has nothing else
// to do: a new revision freezes it, and the next promotion starts the
// next wave.

// promotionOutcome is the result of a stage's Git job: the promotion
// written, or the verdict read.
type promotionOutcome struct {
	res     gitops.PromotionResult
	verdict gitops.Verdict
}

// advanceWave moves each stage of the wave of the Canary's promoted
// revision one step, and returns when to look again (0: nothing waits).
func (r *CanaryReconciler) advanceWave(ctx context.Context, obj *v1alpha1.Canary) time.Duration {
	st := &obj.Status
	stages := obj.Spec.GitOps.GetPromote()
	if len(stages) == 0 {
		if len(st.Promotions) > 0 {
			st.Promotions = nil
		}
		r.refusePromoteTo(ctx, obj)
		return 0
	}
	rev := st.LastPromotedRevision
	if st.Phase != v1alpha1.PhaseSucceeded || rev == "" {
		r.refusePromoteTo(ctx, obj)
		return 0
	}
	now := r.now()
	manual, manualToken := promoteToRequest(obj)
	var next time.Duration
	wake := func(d time.Duration) {
		if d > 0 && (next == 0 || d < next) {
			next = d
		}
	}
	kept := make([]v1alpha1.PromotionStatus, 0, len(stages))
	for _, stage := range stages {
		p := promotionOf(st.Promotions, stage.Stage)
		if p == nil || p.Revision != rev {
			p = r.startStage(ctx, obj, stage, rev, now)
		}
		if manual == stage.Stage {
			st.HandledRequests.PromoteTo = manualToken
			r.promoteByHand(ctx, obj, p, now)
		}
		kept = append(kept, *p)
	}
	st.Promotions = kept
	if manual != "" && st.HandledRequests.PromoteTo != manualToken {
		st.HandledRequests.PromoteTo = manualToken
		r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.StagePromoteRequestedReason, "serin.dev/promote-to names stage %q, which spec.gitops.promote does not list", manual)
	}
	// The soak's checks first: a stage whose soak ends now leaves it on
	// their last outcome, not before it.
	wake(r.soak(ctx, obj, now))
	for i, stage := range stages {
		wake(r.advanceStage(ctx, obj, stage, &st.Promotions[i], now))
	}
	return next
}

// promoteByHand acts on serin promote --to for a stage: a soaking,
// stopped or refused stage is written now; a stage waiting out a Git
// host's backoff is tried now; any other is left as it is, with a
// warning that says why.
func (r *CanaryReconciler) promoteByHand(ctx context.Context, obj *v1alpha1.Canary, p *v1alpha1.PromotionStatus, now time.Time) {
	switch p.Phase {
	case v1alpha1.WaveSoaking, v1alpha1.WaveStopped, v1alpha1.WaveError:
		r.emit(ctx, obj, notifier.SeverityInfo, v1alpha1.StagePromoteRequestedReason, "%s: promotion of %s requested by hand (was %s)", p.Stage, p.Revision, p.Phase)
		setWavePhase(p, v1alpha1.WavePromoting, "promoted by hand: writing it to Git", now)
		p.SoakUntil, p.Attempts, p.NextAttemptTime = nil, 0, nil
	case v1alpha1.WavePromoting:
		r.emit(ctx, obj, notifier.SeverityInfo, v1alpha1.StagePromoteRequestedReason, "%s: promotion of %s tried again now", p.Stage, p.Revision)
		p.NextAttemptTime = nil
	default:
		r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.StagePromoteRequestedReason, "%s: promotion of %s not written again: the stage is %s (%s)", p.Stage, p.Revision, p.Phase, p.Message)
	}
}

// refusePromoteTo handles a serin.dev/promote-to request the wave cannot
// act on: the Canary has no stage, or has no promoted revision to carry
// (it is not Succeeded: a rollout runs, or the last one failed). The
// request is recorded as handled, with a warning that says why, so that
// it does not wait for a later state it did not ask for.
func (r *CanaryReconciler) refusePromoteTo(ctx context.Context, obj *v1alpha1.Canary) {
	stage, token := promoteToRequest(obj)
	if stage == "" {
		return
	}
	obj.Status.HandledRequests.PromoteTo = token
	why := fmt.Sprintf("the Canary is %s, not Succeeded: a wave carries a promoted revision", cmp.Or(string(obj.Status.Phase), "new"))
	if len(obj.Spec.GitOps.GetPromote()) == 0 {
		why = "spec.gitops.promote lists no stage"
	}
	r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.StagePromoteRequestedReason, "serin.dev/promote-to %s not acted on: %s", stage, why)
}

// startStage is a stage's entry for a newly promoted revision: Soaking
// when the stage soaks, else Promoting.
func (r *CanaryReconciler) startStage(ctx context.Context, obj *v1alpha1.Canary, stage v1alpha1.PromotionTarget, rev string, now time.Time) *v1alpha1.PromotionStatus {
	p := &v1alpha1.PromotionStatus{Stage: stage.Stage, Revision: rev}
	if stage.Soak != nil && stage.Soak.Duration > 0 {
		until := metav1.NewTime(now.Add(stage.Soak.Duration))
		p.SoakUntil = &until
		setWavePhase(p, v1alpha1.WaveSoaking, fmt.Sprintf("soaking until %s: the checks must keep passing on the primary", until.UTC().Format(time.RFC3339)), now)
		r.emit(ctx, obj, notifier.SeverityInfo, v1alpha1.StageSoakingReason, "%s: revision %s soaks for %s before it is promoted", stage.Stage, rev, stage.Soak.Duration)
		return p
	}
	setWavePhase(p, v1alpha1.WavePromoting, "writing the promotion to Git", now)
	return p
}

// advanceStage moves one stage on; it returns when to look again.
func (r *CanaryReconciler) advanceStage(ctx context.Context, obj *v1alpha1.Canary, stage v1alpha1.PromotionTarget, p *v1alpha1.PromotionStatus, now time.Time) time.Duration {
	switch p.Phase {
	case v1alpha1.WaveSoaking:
		if p.SoakUntil != nil && now.Before(p.SoakUntil.Time) {
			return p.SoakUntil.Sub(now)
		}
		if !soaked(obj, p) {
			return 0 // the soak's checks wake the Canary
		}
		setWavePhase(p, v1alpha1.WavePromoting, "soaked: writing the promotion to Git", now)
		p.SoakUntil = nil
		fallthrough
	case v1alpha1.WavePromoting, v1alpha1.WaveOpened, v1alpha1.WaveMerged, v1alpha1.WaveProgressing:
		if p.NextAttemptTime != nil && now.Before(p.NextAttemptTime.Time) {
			return p.NextAttemptTime.Sub(now)
		}
		if p.Phase == v1alpha1.WavePromoting {
			return r.writePromotion(ctx, obj, stage, p, now)
		}
		return r.readVerdict(ctx, obj, stage, p, now)
	}
	return 0 // Succeeded, Failed, Stopped, Error: final for this revision
}

// writePromotion asks for the stage's promotion and records its result.
func (r *CanaryReconciler) writePromotion(ctx context.Context, obj *v1alpha1.Canary, stage v1alpha1.PromotionTarget, p *v1alpha1.PromotionStatus, now time.Time) time.Duration {
	if len(p.Images) == 0 {
		images, err := r.primaryImages(ctx, obj)
		if err != nil && !errors.Is(err, errNoImages) && !apierrors.IsNotFound(err) {
			p.Message = "cannot read the primary's images yet: " + err.Error()
			return 5 * time.Second
		}
		if err != nil {
			r.stageError(ctx, obj, p, err, now)
			return 0
		}
		p.Images = images
	}
	req := gitops.PromotionRequest{Canary: obj.DeepCopy(), Stage: stage, Revision: p.Revision, Images: p.Images}
	out, err, done := r.promotions.result(ctx, client.ObjectKeyFromObject(obj), "promote/"+stage.Stage,
		fmt.Sprintf("%s#%d", p.Revision, p.Attempts),
		func(ctx context.Context) (promotionOutcome, error) {
			res, err := r.Promoter.Promote(ctx, req)
			return promotionOutcome{res: res}, err
		})
	switch {
	case !done:
		return time.Minute // the job's end reconciles
	case errors.Is(err, gitops.ErrBusy):
		return 5 * time.Second
	case err != nil && gitops.IsTransient(err):
		return r.retryStage(ctx, obj, p, now, "writing the promotion", err)
	case err != nil:
		r.stageError(ctx, obj, p, err, now)
		return 0
	}
	res := out.res
	p.Attempts, p.NextAttemptTime = 0, nil
	p.Branch, p.Commit, p.PullRequestURL = res.Branch, res.Commit, res.PullRequestURL
	switch res.State {
	case gitops.PromotionUpToDate:
		setWavePhase(p, v1alpha1.WaveUpToDate, res.Message+": nothing written, no verdict awaited", now)
		r.emit(ctx, obj, notifier.SeverityInfo, v1alpha1.StageOpenedReason, "%s: %s", stage.Stage, p.Message)
		return 0
	case gitops.PromotionOpened:
		setWavePhase(p, v1alpha1.WaveOpened, res.Message, now)
		r.emit(ctx, obj, notifier.SeverityInfo, v1alpha1.StageOpenedReason, "%s: promotion of %s proposed: %s", stage.Stage, p.Revision, res.PullRequestURL)
	default: // Pushed, or a branch merged before a restart
		setWavePhase(p, v1alpha1.WaveMerged, res.Message, now)
		r.emit(ctx, obj, notifier.SeverityInfo, v1alpha1.StageOpenedReason, "%s: promotion of %s pushed to %s as %s", stage.Stage, p.Revision, res.Branch, res.Commit)
	}
	return r.nextVerdictRead(obj, p, now)
}

// readVerdict asks for the stage's verdict and records it.
func (r *CanaryReconciler) readVerdict(ctx context.Context, obj *v1alpha1.Canary, stage v1alpha1.PromotionTarget, p *v1alpha1.PromotionStatus, now time.Time) time.Duration {
	req := gitops.PromotionRequest{Canary: obj.DeepCopy(), Stage: stage, Revision: p.Revision, Images: p.Images}
	asked := p.NextAttemptTime
	key := p.Revision
	if asked != nil {
		key += "@" + asked.UTC().Format(time.RFC3339)
	}
	out, err, done := r.promotions.result(ctx, client.ObjectKeyFromObject(obj), "verdict/"+stage.Stage, key,
		func(ctx context.Context) (promotionOutcome, error) {
			v, err := r.Promoter.Verdict(ctx, req, p.Commit)
			return promotionOutcome{verdict: v}, err
		})
	switch {
	case !done:
		return time.Minute
	case errors.Is(err, gitops.ErrBusy):
		return 5 * time.Second
	case err != nil:
		// The verdict is read again later whatever failed: a stage that
		// cannot be read now may be readable after a fix, and the
		// promotion itself is done.
		return r.retryStage(ctx, obj, p, now, "reading the verdict", err)
	}
	v := out.verdict
	p.Attempts = 0
	name := gitops.StageCanary(obj, stage)
	switch {
	case v.Closed && p.Phase == v1alpha1.WaveOpened:
		r.stageError(ctx, obj, p, fmt.Errorf("pull request %s was closed without a merge", p.PullRequestURL), now)
		return 0
	case !v.Merged && p.Phase != v1alpha1.WaveOpened:
		// Found before, no longer among the branch's last commits: keep
		// what was known, and say so.
		p.Message = fmt.Sprintf("the commit that brought the promotion in is no longer among the last commits of the branch; waiting for Canary %s's verdict on %s", name, gitops.ShortSHA(p.StageCommit))
	case !v.Merged:
		p.Message = "waiting for the pull request to be merged"
		if p.PullRequestURL == "" {
			p.Message = "waiting for the promotion commit to reach " + cmp.Or(stage.Branch, "the stage's branch")
		}
	default:
		p.StageCommit, p.URL = v.StageCommit, v.URL
		if r.recordVerdict(ctx, obj, stage, p, v, now) {
			return 0
		}
	}
	return r.nextVerdictRead(obj, p, now)
}

// recordVerdict sets the phase a merged promotion's verdict says, and
// reports whether it is final (Succeeded or Failed, with an event).
func (r *CanaryReconciler) recordVerdict(ctx context.Context, obj *v1alpha1.Canary, stage v1alpha1.PromotionTarget, p *v1alpha1.PromotionStatus, v gitops.Verdict, now time.Time) bool {
	name := gitops.StageCanary(obj, stage)
	switch v.State {
	case "":
		setWavePhase(p, v1alpha1.WaveMerged, fmt.Sprintf("merged as %s; waiting for Canary %s to report", gitops.ShortSHA(v.StageCommit), name), now)
		return false
	case gitops.CommitPending:
		setWavePhase(p, v1alpha1.WaveProgressing, fmt.Sprintf("Canary %s: %s", name, cmp.Or(v.Description, "rolling out")), now)
		return false
	case gitops.CommitSuccess:
		setWavePhase(p, v1alpha1.WaveSucceeded, fmt.Sprintf("Canary %s: %s", name, cmp.Or(v.Description, "succeeded")), now)
		p.NextAttemptTime = nil
		r.emit(ctx, obj, notifier.SeverityInfo, v1alpha1.StageSucceededReason, "%s: revision %s succeeded at %s: %s", stage.Stage, p.Revision, gitops.ShortSHA(v.StageCommit), p.Message)
		return true
	}
	setWavePhase(p, v1alpha1.WaveFailed, fmt.Sprintf("Canary %s: %s", name, cmp.Or(v.Description, v.State)), now)
	p.NextAttemptTime = nil
	r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.StageFailedReason, "%s: revision %s failed at %s: %s", stage.Stage, p.Revision, gitops.ShortSHA(v.StageCommit), p.Message)
	return true
}

// retryStage records a stage's failed Git work (what) to be tried again
// with the reverts' backoff, and warns on the first failure only: one
// alert per outage, not one per attempt.
func (r *CanaryReconciler) retryStage(ctx context.Context, obj *v1alpha1.Canary, p *v1alpha1.PromotionStatus, now time.Time, what string, err error) time.Duration {
	p.Attempts++
	wait := revertRetryDelay(p.Attempts)
	at := metav1.NewTime(now.Add(wait))
	p.NextAttemptTime = &at
	p.Message = fmt.Sprintf("%s failed (attempt %d), next in %s: %s", what, p.Attempts, wait, err.Error())
	if p.Attempts == 1 {
		r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.StageRetryingReason, "%s: %s of %s failed, retrying with backoff: %s", p.Stage, what, p.Revision, err.Error())
	}
	return wait
}

// maxVerdictPoll bounds the time between two reads of a verdict.
const maxVerdictPoll = 5 * time.Minute

// nextVerdictRead schedules the next read of a stage's verdict: every
// poll interval at first, then less often the longer the stage waits in
// its phase (a tenth of the wait, up to maxVerdictPoll), so that a pull
// request left for days costs a clone every 5 minutes, not every 10 s.
func (r *CanaryReconciler) nextVerdictRead(obj *v1alpha1.Canary, p *v1alpha1.PromotionStatus, now time.Time) time.Duration {
	wait := gitops.VerdictPoll(obj)
	if p.LastTransitionTime != nil {
		wait = min(max(wait, now.Sub(p.LastTransitionTime.Time)/10), maxVerdictPoll)
	}
	at := metav1.NewTime(now.Add(wait))
	p.NextAttemptTime = &at
	return wait
}

// stageError records a promotion that cannot be written or followed
// without a person: Error, alerted once.
func (r *CanaryReconciler) stageError(ctx context.Context, obj *v1alpha1.Canary, p *v1alpha1.PromotionStatus, err error, now time.Time) {
	msg := err.Error()
	if errors.Is(err, gitops.ErrNotConfigured) {
		msg = "spec.gitops.promote is set but this agent runs without GitOps (--gitops-revert): " + msg
	}
	p.NextAttemptTime = nil
	setWavePhase(p, v1alpha1.WaveError, msg, now)
	r.emit(ctx, obj, notifier.SeverityError, v1alpha1.StageErrorReason, "%s: promotion of %s cannot be written: %s (serin promote --to %s tries again)", p.Stage, p.Revision, msg, p.Stage)
}

// soak runs the Canary's metric checks on the primary once per analysis
// interval while a stage soaks. Each outcome is counted once (its time is
// the stage's checkedAt); as many failed checks in a row as the analysis
// threshold stop every soaking stage.
func (r *CanaryReconciler) soak(ctx context.Context, obj *v1alpha1.Canary, now time.Time) time.Duration {
	var soaking []*v1alpha1.PromotionStatus
	var start time.Time
	for i := range obj.Status.Promotions {
		p := &obj.Status.Promotions[i]
		if p.Phase == v1alpha1.WaveSoaking {
			soaking = append(soaking, p)
			if p.LastTransitionTime != nil && (start.IsZero() || p.LastTransitionTime.Time.Before(start)) {
				start = p.LastTransitionTime.Time
			}
		}
	}
	if len(soaking) == 0 || !soakChecks(obj) {
		return 0
	}
	interval := obj.GetAnalysisInterval()
	n := int(now.Sub(start) / interval)
	if n < 1 {
		return start.Add(interval).Sub(now) // the first check judges one interval of traffic
	}
	key := fmt.Sprintf("soak revision=%s n=%d", obj.Status.LastPromotedRevision, n)
	work := analysis.Work{Canary: obj.DeepCopy(), At: now, Metrics: obj.Spec.Analysis.Metrics, Primary: true}
	out, state := r.Analysis.Result(client.ObjectKeyFromObject(obj), key, work)
	nextCheck := start.Add(time.Duration(n+1) * interval).Sub(now)
	if state != analysis.Done {
		return nextCheck
	}
	threshold := int32(max(obj.Spec.Analysis.Threshold, 1))
	for _, p := range soaking {
		if p.CheckedAt != nil && !out.At.After(p.CheckedAt.Time) {
			continue // counted
		}
		at := metav1.NewTime(out.At)
		p.CheckedAt = &at
		if out.MetricFailure == "" {
			p.FailedChecks = 0
			continue
		}
		p.FailedChecks++
		if p.FailedChecks < threshold {
			p.Message = fmt.Sprintf("soaking until %s; %d of %d failed checks in a row: %s",
				p.SoakUntil.UTC().Format(time.RFC3339), p.FailedChecks, threshold, out.MetricFailure)
			continue
		}
		setWavePhase(p, v1alpha1.WaveStopped, fmt.Sprintf("%d failed checks in a row on the primary during the soak: %s", p.FailedChecks, out.MetricFailure), now)
		p.SoakUntil = nil
		r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.StageStoppedReason,
			"%s: wave of revision %s stopped: %s (serin promote --to %s promotes it anyway)", p.Stage, p.Revision, p.Message, p.Stage)
	}
	return nextCheck
}

// soakChecks reports whether the Canary has metric checks to soak on.
func soakChecks(obj *v1alpha1.Canary) bool {
	return obj.Spec.Analysis != nil && len(obj.Spec.Analysis.Metrics) > 0
}

// soaked reports whether a stage whose soak time is over may leave it:
// without checks, at once; with checks, once the last check, made within
// an interval of the soak's end, passed.
func soaked(obj *v1alpha1.Canary, p *v1alpha1.PromotionStatus) bool {
	if !soakChecks(obj) {
		return true
	}
	if p.CheckedAt == nil || p.FailedChecks > 0 || p.SoakUntil == nil {
		return false
	}
	return !p.CheckedAt.Time.Before(p.SoakUntil.Add(-obj.GetAnalysisInterval()))
}

// errNoImages means the Canary's target runs no image to promote.
var errNoImages = errors.New("no image to promote")

// primaryImages are the images the promoted primary runs (init
// containers first), which a promotion writes to the next stage.
func (r *CanaryReconciler) primaryImages(ctx context.Context, obj *v1alpha1.Canary) ([]string, error) {
	pk, ok := r.targetKindOf(obj).(podKind)
	if !ok {
		return nil, fmt.Errorf("%w: a %s target: spec.gitops.promote needs a Deployment or a DaemonSet", errNoImages, obj.Spec.TargetRef.Kind)
	}
	primary := pk.primaryObject()
	if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}, primary); err != nil {
		return nil, fmt.Errorf("failed to read the primary's images: %w", err)
	}
	tpl := pk.podTemplate(primary)
	var images []string
	for _, c := range append(tpl.Spec.InitContainers, tpl.Spec.Containers...) {
		images = append(images, c.Image)
	}
	return images, nil
}

// promoteToRequest is the stage and token of an unhandled
// serin.dev/promote-to request (STAGE@TOKEN), or "".
func promoteToRequest(obj *v1alpha1.Canary) (stage, token string) {
	v := obj.GetAnnotations()[v1alpha1.PromoteToRequestAnnotation]
	if v == "" || v == obj.Status.HandledRequests.PromoteTo {
		return "", ""
	}
	stage, _, _ = strings.Cut(v, "@")
	return stage, v
}

// promotionOf is the entry of a stage in status.promotions, or nil.
func promotionOf(ps []v1alpha1.PromotionStatus, stage string) *v1alpha1.PromotionStatus {
	for i := range ps {
		if ps[i].Stage == stage {
			p := ps[i]
			return &p
		}
	}
	return nil
}

// setWavePhase sets a stage's phase and message, and the time of a change.
func setWavePhase(p *v1alpha1.PromotionStatus, phase, message string, now time.Time) {
	if p.Phase != phase || p.LastTransitionTime == nil {
		t := metav1.NewTime(now)
		p.LastTransitionTime = &t
	}
	p.Phase, p.Message = phase, message
}
