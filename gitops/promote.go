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
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/record"
)

// This file is the forward half of the GitOps loop (waves): a revision a
// Canary promoted is written to the next stage's kustomization (its
// images:, PlanPromotion), as a pull request or a push, and the next
// stage's verdict is read back from the commit statuses its Canary posts
// on the commit that brought the promotion into its branch.

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
}

// Promoter writes promotions and reads their verdicts.
type Promoter interface {
	// Promote writes the promotion: a branch and a pull request, or a
	// push. It is idempotent: the same revision and stage never yield a
	// second branch, pull request or commit.
	Promote(ctx context.Context, req PromotionRequest) (RevertResult, error)
	// Verdict reads the next stage's verdict on the promotion commit.
	Verdict(ctx context.Context, req PromotionRequest, commit string) (Verdict, error)
}

// Promote returns ErrNotConfigured.
func (Disabled) Promote(context.Context, PromotionRequest) (RevertResult, error) {
	return RevertResult{}, ErrNotConfigured
}

// Verdict returns ErrNotConfigured.
func (Disabled) Verdict(context.Context, PromotionRequest, string) (Verdict, error) {
	return Verdict{}, ErrNotConfigured
}

// verdictDepth bounds the commits of the stage's branch, newest first,
// searched for the one that brought a promotion in.
const verdictDepth = 100

// verdictCandidates bounds the commits whose statuses are read: the one
// that brought the promotion in and the next ones, where a stage that
// skipped it (two merges before Flux looked) reports.
const verdictCandidates = 10

// PromoteBranch is the branch of the promotion of a Canary's commit to a
// stage.
func PromoteBranch(c *v1alpha1.Canary, stage, commit string) string {
	return fmt.Sprintf("serin/promote/%s/%s/%s/%s", stage, c.Namespace, c.Name, ShortSHA(commit))
}

// promoteTrailers identify a promotion commit, whatever else its message
// says, also after a rebase or a squash that keeps the message.
func promoteTrailers(c *v1alpha1.Canary, stage, commit string) string {
	return fmt.Sprintf("Serin-Canary: %s/%s\nSerin-Stage: %s\nSerin-Promotes: %s\n", c.Namespace, c.Name, stage, commit)
}

// StageCanary is the next stage's Canary a promotion's verdict is read
// from.
func StageCanary(c *v1alpha1.Canary, stage v1alpha1.PromotionTarget) types.NamespacedName {
	key := types.NamespacedName{Namespace: c.Namespace, Name: c.Name}
	if r := stage.Canary; r != nil {
		key.Name = r.Name
		key.Namespace = cmp.Or(r.Namespace, c.Namespace)
	}
	return key
}

// StatusContext is the commit status context a Canary posts its verdicts
// under (spec.alerts' commit-status Providers).
func StatusContext(canary types.NamespacedName) string {
	return "serin/" + canary.Namespace + "/" + canary.Name
}

// promotionJob is one promotion's work on the stage's clone.
type promotionJob struct {
	*revertJob
	promote PromotionRequest
	source  string
	target  Target
}

// stageSource is where the stage's manifests live: its GitRepository
// (spec.gitops.promote[].sourceRef, else the Canary's own) and branch.
func (g *GitReverter) stageSource(ctx context.Context, req PromotionRequest) (*Source, error) {
	var src *Source
	var err error
	if ref := req.Stage.SourceRef; ref != nil {
		src, err = repositorySource(ctx, g.client, types.NamespacedName{Namespace: req.Canary.Namespace, Name: ref.Name})
	} else {
		src, err = DiscoverSource(ctx, g.client, req.Canary, g.crossNamespace)
	}
	if err != nil {
		return nil, err
	}
	// A promotion writes wherever its path says, not only the Canary's
	// own target: it is written with a credential of the Canary's
	// namespace only, never with a platform's GitRepository that other
	// tenants' manifests live in.
	if src.GitRepository.Namespace != req.Canary.Namespace {
		return nil, fmt.Errorf("%w: GitRepository %s is in another namespace than the Canary; a promotion writes with a GitRepository of the Canary's namespace (its own credentials): set spec.gitops.promote[].sourceRef",
			ErrUnsupportedSource, src.GitRepository)
	}
	src.Branch = cmp.Or(req.Stage.Branch, src.Branch)
	src.Path = req.Stage.Path
	return src, nil
}

// openPromotion clones nothing yet: it finds the stage's source, waits
// for its turn in limiter (one job per repository branch at a time) and
// opens the clone. Promotions share the reverts' limiter; verdict reads,
// which poll, have their own, so that they never hold up a revert.
// The returned release ends the turn and removes the clone.
func (g *GitReverter) openPromotion(ctx context.Context, req PromotionRequest, limiter *revertLimiter) (*promotionJob, func(), error) {
	if req.Canary == nil {
		return nil, nil, errors.New("no canary")
	}
	source, err := CommitOf(req.Revision)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot promote: %w", err)
	}
	src, err := g.stageSource(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	repo, done, err := g.takeTurn(ctx, limiter, src)
	if err != nil {
		return nil, nil, err
	}
	stageCanary := StageCanary(req.Canary, req.Stage)
	job := &promotionJob{
		revertJob: &revertJob{GitReverter: g, req: RevertRequest{Canary: req.Canary}, src: src, repo: repo, secretTokenOnly: true},
		promote:   req, source: source,
		target: Target{Kind: req.Canary.Spec.TargetRef.Kind, Namespace: stageCanary.Namespace,
			Name: cmp.Or(req.Stage.TargetName, req.Canary.Spec.TargetRef.Name)},
	}
	return job, done, nil
}

// Promote implements Promoter. It is idempotent: with mode PullRequest
// the branch is named after the stage and the promoted commit, and an
// existing branch or pull request is returned as is; with mode Push a
// commit carrying the promotion's trailers is looked for first.
func (g *GitReverter) Promote(ctx context.Context, req PromotionRequest) (RevertResult, error) {
	if len(req.Images) == 0 {
		return RevertResult{}, errors.New("cannot promote: the promoted workload runs no image")
	}
	job, done, err := g.openPromotion(ctx, req, g.limiter)
	if err != nil {
		return RevertResult{}, err
	}
	defer done()
	ctx, cancel := context.WithTimeout(ctx, RevertTimeout)
	defer cancel()
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("stage", req.Stage.Stage, "repository", job.src.URL, "branch", job.src.Branch))
	if req.Stage.Mode == v1alpha1.PushRevert {
		return job.pushPromotion(ctx)
	}
	return job.promotionPullRequest(ctx)
}

// promotionPullRequest pushes the promotion to its own branch and opens a
// pull request, or returns what an earlier call made.
func (j *promotionJob) promotionPullRequest(ctx context.Context) (RevertResult, error) {
	host, err := j.host(ctx)
	if err != nil {
		return RevertResult{}, err
	}
	branch := PromoteBranch(j.promote.Canary, j.promote.Stage.Stage, j.source)
	res := RevertResult{Branch: branch}
	existing, open, err := j.existingPullRequest(ctx, host, &res)
	if err != nil || open {
		return res, err
	}
	m := j.match("")
	if existing {
		m.commit, m.tip = res.Commit, res.Commit
	}
	if err := j.repo.Clone(ctx); err != nil {
		return res, err
	}
	var head, merged *object.Commit
	var plan *Plan
	err = j.withHistory(ctx, func() error {
		if head, err = j.repo.Head(j.src.Branch); err != nil {
			return err
		}
		// Already in the branch (merged, maybe squashed, before a restart
		// recorded it): nothing to write again.
		if merged, _, err = j.bringsIn(head, m); err != nil || merged != nil {
			return err
		}
		if existing {
			return nil
		}
		plan, err = PlanPromotion(ctx, PromotionInput{Head: head, Path: j.src.Path, Target: j.target, Images: j.promote.Images, MaxFileSize: j.maxFile})
		return err
	})
	if err != nil {
		return res, err
	}
	if merged != nil {
		res.Commit, res.State = cmp.Or(res.Commit, merged.Hash.String()), StateMerged
		res.Message = fmt.Sprintf("already in %s as %s", j.src.Branch, ShortSHA(merged.Hash.String()))
		return res, nil
	}
	if existing {
		// The branch without its pull request (pushed before a restart,
		// or its pull request closed): open it again.
		return j.reopen(ctx, host, res)
	}
	if plan.UpToDate {
		return j.alreadyThere(head.Hash.String()), nil
	}
	msg := j.message(plan)
	commit, err := j.repo.CommitFiles(head, plan.Files, j.author, j.now(), msg)
	if err != nil {
		return res, err
	}
	res.Commit = commit.Hash.String()
	if err := j.repo.Push(ctx, commit.Hash, branch); err != nil {
		return res, err
	}
	title, body := splitMessage(msg)
	pr, err := host.Open(ctx, branch, j.src.Branch, title, body)
	if err != nil {
		return res, err
	}
	ctrl.LoggerFrom(ctx).Info("promotion pull request opened", "url", pr.URL, "commit", ShortSHA(res.Commit))
	res.PullRequestURL, res.State = pr.URL, StateOpened
	res.Message = fmt.Sprintf("pull request #%d opened from %s (%s)", pr.Number, branch, strings.Join(plan.Paths(), ", "))
	return res, nil
}

// pushPromotion commits the promotion onto the stage's branch and
// fast-forwards it, planning again when the branch moved; never forces.
func (j *promotionJob) pushPromotion(ctx context.Context) (RevertResult, error) {
	res, err := j.pushOnto(ctx, "promoted", func(head *object.Commit) (*object.Commit, *Plan, string, error) {
		if done, _, err := j.bringsIn(head, j.match("")); err != nil || done != nil {
			return done, nil, "", err
		}
		plan, err := PlanPromotion(ctx, PromotionInput{Head: head, Path: j.src.Path, Target: j.target, Images: j.promote.Images, MaxFileSize: j.maxFile})
		if err != nil {
			return nil, nil, "", err
		}
		if plan.UpToDate {
			return nil, nil, "", errUpToDate
		}
		return nil, plan, j.message(plan), nil
	})
	if err == nil && res.State == StateMerged {
		// The branch already ran the images (pushOnto's up to date): say
		// it as a promotion does.
		res = j.alreadyThere(res.Commit)
	}
	return res, err
}

// alreadyThere is the result when the stage already runs the images.
func (j *promotionJob) alreadyThere(head string) RevertResult {
	return RevertResult{
		Branch: j.src.Branch, Commit: head, State: StateUpToDate,
		Message: fmt.Sprintf("%s at %s already runs %s in %s", j.src.Branch, ShortSHA(head),
			strings.Join(j.promote.Images, ", "), displayPath(strings.Trim(j.src.Path, "./"))),
	}
}

// message is the promotion commit's message: what is promoted, from
// which revision, on the strength of which analysis, and the trailers.
func (j *promotionJob) message(plan *Plan) string {
	c := j.promote.Canary
	var b strings.Builder
	fmt.Fprintf(&b, "serin: promote %s/%s to %s\n\n", j.target.Kind, j.target.Name, j.promote.Stage.Stage)
	fmt.Fprintf(&b, "Canary %s/%s promoted %s; this writes its images to %s:\n\n", c.Namespace, c.Name, j.promote.Revision, displayPath(strings.Trim(j.src.Path, "./")))
	for _, img := range j.promote.Images {
		fmt.Fprintf(&b, "- %s\n", img)
	}
	if rec := record.Latest(&c.Status); rec != nil && rec.Revision == j.promote.Revision {
		if lines := record.Lines(record.Decisive(rec)); len(lines) > 0 {
			b.WriteString("\nThe analysis that promoted it:\n\n")
			for _, l := range lines {
				fmt.Fprintf(&b, "- %s\n", l)
			}
		}
	}
	for _, n := range plan.Notes {
		fmt.Fprintf(&b, "\n%s\n", n)
	}
	b.WriteString("\n" + promoteTrailers(c, j.promote.Stage.Stage, j.source))
	return b.String()
}

// promotionMatch tells the commit that brought a promotion into the
// stage's branch.
type promotionMatch struct {
	// commit is the promotion commit; tip the promotion branch's tip
	// (newer after a host's "update branch"); either may be empty.
	commit, tip string
	// branch is the promotion branch, which a host's merge message names.
	branch string
	// canary, stage and source are the trailers' values.
	canary, stage, source string
}

// brings reports whether c brought the promotion in: it is the promotion
// commit, a merge of it (or of its branch's tip, or a merge whose message
// names its branch), or a copy of it carrying its trailers (rebased, or
// squashed with its message).
func (m promotionMatch) brings(c *object.Commit) bool {
	if h := c.Hash.String(); h == m.commit || (m.tip != "" && h == m.tip) {
		return true
	}
	if hasPromoteTrailers(c.Message, m.canary, m.stage, m.source) {
		return true
	}
	if len(c.ParentHashes) < 2 {
		return false
	}
	for _, p := range c.ParentHashes[1:] {
		if p.String() == m.commit || (m.tip != "" && p.String() == m.tip) {
			return true
		}
	}
	return m.branch != "" && strings.Contains(c.Message, m.branch)
}

// hasPromoteTrailers reports whether a message carries a promotion's
// three trailers, each on a line of its own, wherever the host put them
// (a squash may trim the last newline, indent them or make them bullets).
func hasPromoteTrailers(msg, canary, stage, source string) bool {
	want := map[string]string{"Serin-Canary": canary, "Serin-Stage": stage, "Serin-Promotes": source}
	found := 0
	for _, line := range strings.Split(msg, "\n") {
		// A squash lists the commits' messages, as bullets on some hosts.
		key, value, ok := strings.Cut(strings.TrimLeft(line, " \t*-"), ":")
		if v, known := want[key]; ok && known && strings.TrimSpace(value) == v {
			found++
			delete(want, key)
		}
	}
	return found == 3
}

// bringsIn finds, among the last verdictDepth commits of the first-parent
// history from head, newest first, the commit that brought the promotion
// into the branch (promotionMatch.brings). It returns that commit and the
// ones after it, oldest first, or nil.
func (j *promotionJob) bringsIn(head *object.Commit, m promotionMatch) (*object.Commit, []*object.Commit, error) {
	var chain []*object.Commit
	c := head
	for range verdictDepth {
		chain = append(chain, c)
		if m.brings(c) {
			after := make([]*object.Commit, 0, len(chain))
			for i := len(chain) - 1; i >= 0; i-- {
				after = append(after, chain[i])
			}
			return c, after, nil
		}
		if len(c.ParentHashes) == 0 {
			return nil, nil, nil
		}
		next, err := firstParent(c)
		if err != nil {
			return nil, nil, err
		}
		c = next
	}
	return nil, nil, nil
}

// match is the job's promotionMatch for the promotion commit.
func (j *promotionJob) match(commit string) promotionMatch {
	c := j.promote.Canary
	m := promotionMatch{commit: commit, canary: c.Namespace + "/" + c.Name, stage: j.promote.Stage.Stage, source: j.source}
	if j.promote.Stage.Mode != v1alpha1.PushRevert {
		m.branch = PromoteBranch(c, j.promote.Stage.Stage, j.source)
	}
	return m
}

// Verdict implements Promoter: it finds the commit of the stage's branch
// that brought the promotion commit in, then reads the stage Canary's
// commit status on it and, while it has none, on the commits after it.
func (g *GitReverter) Verdict(ctx context.Context, req PromotionRequest, commit string) (Verdict, error) {
	job, done, err := g.openPromotion(ctx, req, g.readLimiter)
	if err != nil {
		return Verdict{}, err
	}
	defer done()
	ctx, cancel := context.WithTimeout(ctx, RevertTimeout)
	defer cancel()
	m := job.match(commit)
	if m.branch != "" {
		// The branch's tip: newer than the promotion commit when the
		// host brought the branch up to date before the merge.
		tip, err := job.repo.RemoteBranch(ctx, m.branch)
		if err != nil {
			return Verdict{}, err
		}
		if !tip.IsZero() {
			m.tip = tip.String()
		}
	}
	if err := job.repo.Clone(ctx); err != nil {
		return Verdict{}, err
	}
	var in *object.Commit
	var after []*object.Commit
	err = job.withHistory(ctx, func() error {
		head, err := job.repo.Head(job.src.Branch)
		if err != nil {
			return err
		}
		in, after, err = job.bringsIn(head, m)
		return err
	})
	if err != nil {
		return Verdict{}, err
	}
	if in == nil {
		if m.branch == "" {
			return Verdict{}, nil
		}
		// Not in the branch: is its pull request still open?
		host, err := job.host(ctx)
		if err != nil {
			return Verdict{}, err
		}
		pr, err := host.Find(ctx, m.branch)
		if err != nil {
			return Verdict{}, err
		}
		return Verdict{Closed: pr == nil}, nil
	}
	out := Verdict{Merged: true, StageCommit: in.Hash.String()}
	reader, err := job.statusReader(ctx)
	if err != nil {
		return out, err
	}
	statusContext := StatusContext(StageCanary(req.Canary, req.Stage))
	for _, c := range after[:min(len(after), verdictCandidates)] {
		statuses, err := reader.Statuses(ctx, c.Hash.String())
		if err != nil {
			return out, err
		}
		s, ok := latestStatus(statuses, statusContext)
		if !ok {
			continue
		}
		if out.State == "" || s.State != CommitPending {
			out.State, out.StageCommit, out.Description, out.URL = s.State, c.Hash.String(), s.Description, s.TargetURL
		}
		if s.State != CommitPending {
			break
		}
	}
	return out, nil
}

// statusReader returns the commit status API of the stage's repository.
func (j *revertJob) statusReader(ctx context.Context) (StatusReader, error) {
	u, err := ParseRepositoryURL(j.src.URL)
	if err != nil {
		return nil, err
	}
	provider, err := ProviderFor(j.provider, u)
	if err != nil {
		return nil, err
	}
	token, err := j.hostToken()
	if err != nil {
		return nil, err
	}
	return j.statuses(ctx, u, provider, token)
}

// WithStatusReaderFactory replaces the Git host commit status API (tests
// use an in-memory one).
func WithStatusReaderFactory(f StatusReaderFactory) ReverterOption {
	return func(g *GitReverter) error {
		g.statuses = f
		return nil
	}
}

// verdictPoll is how often a stage's verdict is read while it has none.
const verdictPoll = 10 * time.Second

// VerdictPoll is how often the agent reads a stage's verdict while it
// has none: the Canary's analysis interval, between 5 s and verdictPoll.
func VerdictPoll(c *v1alpha1.Canary) time.Duration {
	return min(max(c.GetAnalysisInterval(), 5*time.Second), verdictPoll)
}
