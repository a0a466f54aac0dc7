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
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/analysis"
	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/notifier"
)

// The wave's rules are rollout's (internal/rollout/wave.go): this
// handler carries out what they ask — the soak's checks through the
// analysis runner, the promotion and the verdict through Git jobs run
// off the reconcile workers (gitJobs), retried with the reverts' backoff
// while the Git host fails — and emits the events they return.

// promotionOutcome is the result of a stage's Git job: the promotion
// written, or the verdict read.
type promotionOutcome struct {
	res     gitops.PromotionResult
	verdict gitops.Verdict
}

// advanceWave carries out rollout.AdvanceWave: each stage of the wave of
// the Canary's promoted revision moves one step; a member of a group
// writes no promotion while its release is not promoted whole (a.Hold),
// and stops the stages it would write when the release failed (a.Stop).
func (r *CanaryReconciler) advanceWave(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, a rollout.AdvanceWave) (ctrl.Result, error) {
	st := &obj.Status
	if len(obj.Spec.GitOps.GetPromote()) == 0 {
		st.Promotions = nil
		return ctrl.Result{}, nil
	}
	now := r.now()
	byHand := ""
	if req := obs.Requests.PromoteTo; req != "" {
		st.HandledRequests.PromoteTo = req
		byHand = rollout.PromoteToStage(req)
	}
	promotions, events := rollout.WaveEntries(obj, now, byHand)
	st.Promotions = promotions
	r.emitWave(ctx, obj, events...)
	var next time.Duration
	wake := func(d time.Duration) {
		if d > 0 && (next == 0 || d < next) {
			next = d
		}
	}
	// The soak's checks first: a stage whose soak ends now leaves it on
	// their last outcome, not before it.
	wake(r.soak(ctx, obj, now))
	for i, stage := range obj.Spec.GitOps.GetPromote() {
		p := &st.Promotions[i]
		// One member writes the release's promotion for the others
		// (rollout.ReleaseStageOf); one promoted by hand writes its own.
		rs := rollout.ReleaseStage{Writer: obj.Name}
		if stage.Stage != byHand {
			rs = rollout.ReleaseStageOf(obj, obs, stage)
		}
		switch work, wait := rollout.NextStageWork(obj, p, now); {
		case work == rollout.WritePromotion && a.Stop != "" && stage.Stage != byHand:
			r.emitWave(ctx, obj, rollout.StageStopped(p, a.Stop, now))
		case work == rollout.WritePromotion && a.Hold != "" && stage.Stage != byHand:
			// The other members' status changes reconcile this one.
			p.Message = a.Hold
			wake(obj.GetAnalysisInterval())
		case rs.Writer != obj.Name && (work == rollout.WritePromotion || work == rollout.ReadVerdict && p.CoveredBy != ""):
			// The writer's status changes reconcile this one.
			writer, _ := obs.Group.Peer(rs.Writer)
			r.emitWave(ctx, obj, rollout.CoveredStage(p, rs, writer, now))
			wake(rollout.VerdictPoll(obj))
		case work == rollout.WritePromotion && rs.Stop != "":
			r.emitWave(ctx, obj, rollout.StageStopped(p, rs.Stop, now))
		case work == rollout.WritePromotion && rs.Hold != "":
			p.Message = rs.Hold
			wake(obj.GetAnalysisInterval())
		case work == rollout.WritePromotion:
			wake(r.writePromotion(ctx, obj, stage, p, rs, now))
		case work == rollout.ReadVerdict:
			wake(r.readVerdict(ctx, obj, stage, p, rs, now))
		default:
			wake(wait)
		}
	}
	return ctrl.Result{RequeueAfter: next}, nil
}

// releaseRequest makes req the promotion of the Canary's release to its
// stage, carrying the members rs.Covers (their stage of the same name
// and their primaries' images, or the images written holds for them:
// what a written promotion carried); a Canary alone is left as it is.
func (r *CanaryReconciler) releaseRequest(ctx context.Context, obj *v1alpha1.Canary, rs rollout.ReleaseStage, written []v1alpha1.MemberImages, req *gitops.PromotionRequest) error {
	p := &req.Stage
	if rs.Alone() || obj.Status.Group == nil {
		return nil
	}
	req.Group = obj.Status.Group.Name
	for _, name := range rs.Covers {
		c := &v1alpha1.Canary{}
		if err := r.Get(ctx, client.ObjectKey{Namespace: obj.Namespace, Name: name}, c); err != nil {
			return fmt.Errorf("member %s of the release: %w", name, err)
		}
		m := gitops.PromotionMember{Canary: c}
		for _, s := range c.Spec.GitOps.GetPromote() {
			if s.Stage == p.Stage {
				m.Stage = s
			}
		}
		// A member may have promoted a newer commit since: a written
		// promotion is what it wrote.
		if i := slices.IndexFunc(written, func(w v1alpha1.MemberImages) bool { return w.Canary == name }); i >= 0 {
			m.Images = written[i].Images
		} else {
			images, err := r.primaryImages(ctx, c)
			if err != nil {
				return fmt.Errorf("member %s of the release: %w", name, err)
			}
			m.Images = images
		}
		req.Members = append(req.Members, m)
	}
	return nil
}

// carried are the images of the members covers that a release's
// promotion carried, as it wrote them.
func carried(members []gitops.PromotionMember, covers []string) []v1alpha1.MemberImages {
	var out []v1alpha1.MemberImages
	for _, m := range members {
		if slices.Contains(covers, m.Canary.Name) {
			out = append(out, v1alpha1.MemberImages{Canary: m.Canary.Name, Images: slices.Clone(m.Images)})
		}
	}
	return out
}

// answerPromoteTo answers a serin.dev/promote-to request the wave cannot
// act on (rollout.PromoteToRefusal) with a warning that says why, and
// records it as handled, so that it does not wait for a state it did not
// ask for. A request the wave acts on is left to it.
func (r *CanaryReconciler) answerPromoteTo(ctx context.Context, obj *v1alpha1.Canary, obs *rollout.Observation) {
	req := obs.Requests.PromoteTo
	if req == "" {
		return
	}
	why := rollout.PromoteToRefusal(obj, rollout.PromoteToStage(req))
	if why == "" {
		return
	}
	obj.Status.HandledRequests.PromoteTo = req
	obs.Requests.PromoteTo = ""
	r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.StagePromoteRequestedReason, "%s", why)
}

// writePromotion asks for the stage's promotion (the release's, for
// the members rs.Covers too) and records its result.
func (r *CanaryReconciler) writePromotion(ctx context.Context, obj *v1alpha1.Canary, stage v1alpha1.PromotionTarget, p *v1alpha1.PromotionStatus, rs rollout.ReleaseStage, now time.Time) time.Duration {
	if len(p.Images) == 0 {
		images, err := r.primaryImages(ctx, obj)
		if err != nil && !errors.Is(err, errNoImages) && !apierrors.IsNotFound(err) {
			p.Message = "cannot read the primary's images yet: " + err.Error()
			return 5 * time.Second
		}
		if err != nil {
			r.emitWave(ctx, obj, rollout.StageError(p, err.Error(), now))
			return 0
		}
		p.Images = images
	}
	req := gitops.PromotionRequest{Canary: obj.DeepCopy(), Stage: stage, Revision: p.Revision, Images: p.Images}
	if p.StartedAt != nil {
		req.Since = p.StartedAt.Time
	}
	if err := r.releaseRequest(ctx, obj, rs, nil, &req); err != nil {
		p.Message = "cannot read the release's members yet: " + err.Error()
		return 5 * time.Second
	}
	p.Covers, p.CoveredBy, p.CoveredImages = rs.Covers, "", nil
	out, err, done := r.promotions.result(ctx, client.ObjectKeyFromObject(obj), "promote/"+stage.Stage,
		fmt.Sprintf("%s#%d%v", p.Revision, p.Attempts, rs.Covers),
		func(ctx context.Context) (promotionOutcome, error) {
			res, err := r.Promoter.Promote(ctx, req)
			return promotionOutcome{res: res}, err
		})
	if wait, handled := r.gitJobFailed(ctx, obj, p, "writing the promotion", done, err, true, now); handled {
		return wait
	}
	res := out.res
	if req.Group != "" {
		// The members it carries: one of another repository is written
		// there (rollout.ReleaseStageOf).
		p.Covers = res.Covers
		p.CoveredImages = carried(req.Members, res.Covers)
	}
	ev, wait := rollout.WavePromotionWritten(obj, p, rollout.PromotionWritten{
		State: rollout.PromotionState(res.State), Branch: res.Branch, Commit: res.Commit,
		PullRequestURL: res.PullRequestURL, Message: res.Message,
	}, now)
	r.emitWave(ctx, obj, ev)
	return wait
}

// readVerdict asks for the stage's verdict (the release's: every
// member's stage Canary's, when the promotion carries rs.Covers) and
// records it.
func (r *CanaryReconciler) readVerdict(ctx context.Context, obj *v1alpha1.Canary, stage v1alpha1.PromotionTarget, p *v1alpha1.PromotionStatus, rs rollout.ReleaseStage, now time.Time) time.Duration {
	req := gitops.PromotionRequest{Canary: obj.DeepCopy(), Stage: stage, Revision: p.Revision, Images: p.Images, Branch: p.Branch}
	if p.StartedAt != nil {
		req.Since = p.StartedAt.Time
	}
	// The release's promotion as it was written: the members it carried,
	// or none when every other was written from its own repository.
	rs.Covers = p.Covers
	if err := r.releaseRequest(ctx, obj, rs, p.CoveredImages, &req); err != nil {
		p.Message = "cannot read the release's members yet: " + err.Error()
		return 5 * time.Second
	}
	if g := obj.Status.Group; req.Group == "" && g != nil && p.Branch != "" {
		if c, err := gitops.CommitOf(p.Revision); err == nil && p.Branch == gitops.ReleasePromoteBranch(obj.Namespace, g.Name, stage.Stage, c) {
			req.Group = g.Name
		}
	}
	key := p.Revision
	if asked := p.NextAttemptTime; asked != nil {
		key += "@" + asked.UTC().Format(time.RFC3339)
	}
	commit := p.Commit
	out, err, done := r.promotions.result(ctx, client.ObjectKeyFromObject(obj), "verdict/"+stage.Stage, key,
		func(ctx context.Context) (promotionOutcome, error) {
			v, err := r.Promoter.Verdict(ctx, req, commit)
			return promotionOutcome{verdict: v}, err
		})
	// The verdict is read again later whatever failed: a stage that
	// cannot be read now may be readable after a fix, and the promotion
	// itself is done.
	if wait, handled := r.gitJobFailed(ctx, obj, p, "reading the verdict", done, err, false, now); handled {
		return wait
	}
	v := out.verdict
	verdict := rollout.StageVerdict{
		Merged: v.Merged, Closed: v.Closed, State: v.State, StageCommit: v.StageCommit,
		Description: v.Description, URL: v.URL, StageCanary: gitops.StageCanary(obj, stage).String(),
	}
	if len(v.Members) > 0 {
		members := make([]rollout.MemberVerdict, len(v.Members))
		for i, m := range v.Members {
			members[i] = rollout.MemberVerdict{StageCanary: m.StageCanary, State: m.State, Description: m.Description, URL: m.URL, StageCommit: m.StageCommit}
		}
		verdict = rollout.ReleaseVerdict(verdict, members)
	}
	ev, wait := rollout.WaveVerdict(obj, stage, p, verdict, now)
	r.emitWave(ctx, obj, ev)
	return wait
}

// gitJobFailed handles a stage's Git job that has not ended or failed,
// and reports whether it did (with when to look again): a job still
// running waits for its end, which reconciles; a busy agent tries again
// soon; a failure a retry may fix (any failure when permanent is false)
// is retried with backoff; any other is the stage's Error.
func (r *CanaryReconciler) gitJobFailed(ctx context.Context, obj *v1alpha1.Canary, p *v1alpha1.PromotionStatus,
	what string, done bool, err error, permanent bool, now time.Time) (time.Duration, bool) {
	switch {
	case !done:
		return time.Minute, true
	case err == nil:
		return 0, false
	case errors.Is(err, gitops.ErrBusy):
		return 5 * time.Second, true
	case !permanent || gitops.IsTransient(err):
		ev, wait := rollout.WaveRetry(p, what, err.Error(), now)
		r.emitWave(ctx, obj, ev)
		return wait, true
	}
	msg := err.Error()
	if errors.Is(err, gitops.ErrNotConfigured) {
		msg = "spec.gitops.promote is set but this agent runs without GitOps (--gitops-revert): " + msg
	}
	r.emitWave(ctx, obj, rollout.StageError(p, msg, now))
	return 0, true
}

// soak makes the soak check rollout.SoakCheck asks for, on the primary,
// and records its outcome (rollout.WaveSoakCheck); it returns when the
// next check is due.
func (r *CanaryReconciler) soak(ctx context.Context, obj *v1alpha1.Canary, now time.Time) time.Duration {
	n, due, ok := rollout.SoakCheck(obj, obj.Status.Promotions)
	if !ok {
		return 0
	}
	if now.Before(due) {
		return due.Sub(now)
	}
	key := fmt.Sprintf("soak revision=%s n=%d", obj.Status.LastPromotedRevision, n)
	work := analysis.Work{Canary: obj.DeepCopy(), At: now, Metrics: obj.Spec.Analysis.Metrics, Primary: true}
	out, state := r.Analysis.Result(client.ObjectKeyFromObject(obj), key, work)
	if state != analysis.Done {
		return obj.GetAnalysisInterval() // the check's end reconciles
	}
	r.emitWave(ctx, obj, rollout.WaveSoakCheck(obj, obj.Status.Promotions, rollout.SoakOutcome{At: out.At, Failure: out.MetricFailure}, now)...)
	if _, due, ok := rollout.SoakCheck(obj, obj.Status.Promotions); ok {
		return max(due.Sub(now), time.Millisecond)
	}
	return 0
}

// emitWave emits the events of the wave's decisions.
func (r *CanaryReconciler) emitWave(ctx context.Context, obj *v1alpha1.Canary, events ...rollout.WaveEvent) {
	for _, ev := range events {
		if ev.Reason != "" {
			r.emit(ctx, obj, notifier.Severity(ev.Severity), ev.Reason, "%s", ev.Message)
		}
	}
}

// errNoImages means the Canary's target runs no image to promote.
var errNoImages = errors.New("no image to promote")

// primaryImages are the images the promoted primary runs (init
// containers first), which a promotion writes to the next stage.
func (r *CanaryReconciler) primaryImages(ctx context.Context, obj *v1alpha1.Canary) ([]string, error) {
	if obj.Spec.TargetRef.Kind == v1alpha1.StatefulSetKind {
		// Promoted in place: the StatefulSet's own template.
		sts := &appsv1.StatefulSet{}
		if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.TargetRef.Name}, sts); err != nil {
			return nil, fmt.Errorf("failed to read the promoted statefulset's images: %w", err)
		}
		return templateImages(&sts.Spec.Template), nil
	}
	pk, ok := r.targetKindOf(obj).(podKind)
	if !ok {
		return nil, fmt.Errorf("%w: a %s target: spec.gitops.promote needs a Deployment, a DaemonSet or a StatefulSet", errNoImages, obj.Spec.TargetRef.Kind)
	}
	primary := pk.primaryObject()
	if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}, primary); err != nil {
		return nil, fmt.Errorf("failed to read the primary's images: %w", err)
	}
	return templateImages(pk.podTemplate(primary)), nil
}

// templateImages are a pod template's images, init containers first.
func templateImages(tpl *corev1.PodTemplateSpec) []string {
	var images []string
	for _, c := range append(tpl.Spec.InitContainers, tpl.Spec.Containers...) {
		images = append(images, c.Image)
	}
	return images
}
