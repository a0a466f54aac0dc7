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
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/record"
	"github.com/serin-dev/serin/internal/redact"
)

// GitPromoter writes promotions to the Git repositories of a wave's
// stages (PlanPromotion), as a pull request or a push, and reads the
// stages' verdicts back from the commit statuses their Canaries post. It
// shares the settings and the limiter of the GitReverter it comes from
// (GitReverter.Promoter).
type GitPromoter struct {
	*gitCore
	// statuses is the Git host commit status API verdicts are read from.
	statuses StatusReaderFactory
	// readLimiter bounds the reads of promotions' verdicts, apart from
	// the reverts and promotions that write.
	readLimiter *revertLimiter
}

// newGitPromoter returns the GitPromoter of core.
func newGitPromoter(core *gitCore) *GitPromoter {
	return &GitPromoter{gitCore: core, statuses: NewHTTPStatusReader, readLimiter: newRevertLimiter(DefaultMaxConcurrentReverts)}
}

// WithStatusReaderFactory replaces the Git host commit status API that
// the GitPromoter reads promotions' verdicts from (tests use an
// in-memory one).
func WithStatusReaderFactory(f StatusReaderFactory) ReverterOption {
	return func(g *GitReverter) error {
		g.promoter.statuses = f
		return nil
	}
}

// verdictDepth bounds the commits of the stage's branch, newest first,
// searched for the one that brought a promotion in, when the wave's start
// is not known (a status written before status.promotions[].startedAt).
// With it, the search goes down to the first commit made before the wave
// started (less clockSkew), however many commits followed.
const verdictDepth = 100

// clockSkew is the difference allowed between the agent's clock (the
// wave's start) and a Git host's (a merge commit's time).
const clockSkew = time.Hour

// verdictCandidates bounds, at each end, the commits whose statuses are
// read: the one that brought the promotion in and the next ones (the
// stage's Flux applied one of them: it skipped the merge when several
// commits landed before it looked), and the newest ones of the branch
// (it looked long after).
const verdictCandidates = 10

// PromoteBranch is the branch of the promotion of a Canary's commit to a
// stage.
func PromoteBranch(c *v1alpha1.Canary, stage, commit string) string {
	return fmt.Sprintf("serin/promote/%s/%s/%s/%s", stage, c.Namespace, c.Name, ShortSHA(commit))
}

// ReleasePromoteBranch is the branch of the promotion of a group's
// release (the commit of the member that writes it) to a stage: one per
// release and stage, whichever member writes it.
func ReleasePromoteBranch(namespace, group, stage, commit string) string {
	return fmt.Sprintf("serin/promote/%s/%s/groups/%s/%s", stage, namespace, group, ShortSHA(commit))
}

// promoteTrailers identify a promotion commit, whatever else its message
// says, also after a rebase or a squash that keeps the message.
func promoteTrailers(c *v1alpha1.Canary, stage, commit string) string {
	return fmt.Sprintf("Serin-Canary: %s/%s\nSerin-Stage: %s\nSerin-Promotes: %s\n", c.Namespace, c.Name, stage, commit)
}

// Trailer keys of a promotion commit: a Canary's, or a group's release's.
const (
	trailerCanary = "Serin-Canary"
	trailerGroup  = "Serin-Group"
)

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

// StatusContext is the commit status context the stage's Canary posts
// its verdicts under (spec.alerts' commit-status Providers), with its
// agent's cluster name when the stage names one.
func StatusContext(c *v1alpha1.Canary, stage v1alpha1.PromotionTarget) string {
	key := StageCanary(c, stage)
	cluster := ""
	if stage.Canary != nil {
		cluster = stage.Canary.Cluster
	}
	return v1alpha1.CommitStatusContext(cluster, key.Namespace, key.Name)
}

// promotionJob is one promotion's work on the stage's clone.
type promotionJob struct {
	*gitJob
	promote PromotionRequest
	source  string
	target  Target
	// staging is the Canary's source when a HelmRelease rendered its
	// target (nil otherwise); helm what its HelmRelease promotes, read
	// once from the clone (helmPromotion).
	staging *Source
	helm    *HelmPromotion
	// members are the other members a release's promotion writes;
	// elsewhere says where each of the others is promoted.
	members   []promotedMember
	elsewhere []string
}

// promotedMember is another member a release's promotion writes.
type promotedMember struct {
	canary *v1alpha1.Canary
	stage  v1alpha1.PromotionTarget
	path   string
	target Target
	images []string
}

// stageSource is where the stage's manifests live: its GitRepository
// (spec.gitops.promote[].sourceRef, else the Canary's own) and branch.
func (g *GitPromoter) stageSource(ctx context.Context, req PromotionRequest) (*Source, error) {
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
func (g *GitPromoter) openPromotion(ctx context.Context, req PromotionRequest, limiter *revertLimiter) (*promotionJob, func(), error) {
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
	staging, err := g.stagingHelmRelease(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	members, elsewhere, err := g.releaseMembers(ctx, req, src)
	if err != nil {
		return nil, nil, err
	}
	base, done, err := g.openJob(ctx, limiter, req.Canary.Namespace, src)
	if err != nil {
		return nil, nil, err
	}
	job := &promotionJob{gitJob: base, promote: req, source: source, staging: staging, target: stageTarget(req.Canary, req.Stage), members: members, elsewhere: elsewhere}
	return job, done, nil
}

// stageTarget is the object of the stage that a Canary's promotion sets.
func stageTarget(c *v1alpha1.Canary, stage v1alpha1.PromotionTarget) Target {
	return Target{Kind: c.Spec.TargetRef.Kind, Namespace: StageCanary(c, stage).Namespace,
		Name: cmp.Or(stage.TargetName, c.Spec.TargetRef.Name)}
}

// releaseMembers finds where each other member of a release's promotion
// goes: those of the same repository and branch as the writer's (their
// paths may differ) are written with it; each of another is promoted
// there, on the release's branch of its own commit, which the notes name.
func (g *GitPromoter) releaseMembers(ctx context.Context, req PromotionRequest, src *Source) ([]promotedMember, []string, error) {
	var out []promotedMember
	var elsewhere []string
	for _, m := range req.Members {
		ms, err := g.stageSource(ctx, PromotionRequest{Canary: m.Canary, Stage: m.Stage})
		if err != nil {
			return nil, nil, fmt.Errorf("member %s of group %s: %w", m.Canary.Name, req.Group, err)
		}
		if ms.URL == src.URL && ms.Branch == src.Branch {
			out = append(out, promotedMember{canary: m.Canary, stage: m.Stage, path: ms.Path, target: stageTarget(m.Canary, m.Stage), images: m.Images})
			continue
		}
		branch := "its own release branch"
		if c, err := CommitOf(m.Canary.Status.LastPromotedRevision); err == nil {
			branch = ReleasePromoteBranch(m.Canary.Namespace, req.Group, req.Stage.Stage, c)
		}
		elsewhere = append(elsewhere, fmt.Sprintf("Member %s of the release is promoted to %s in %s (branch %s), on %s.",
			m.Canary.Name, req.Stage.Stage, ms.URL, ms.Branch, branch))
	}
	return out, elsewhere, nil
}

// Promote implements Promoter. It is idempotent: with mode PullRequest
// the branch is named after the stage and the promoted commit, and an
// existing branch or pull request is returned as is; with mode Push a
// commit carrying the promotion's trailers is looked for first.
func (g *GitPromoter) Promote(ctx context.Context, req PromotionRequest) (_ PromotionResult, err error) {
	// Its error goes to status, events and logs: redacted, never raw.
	defer func() { err = redact.Error(err) }()
	if len(req.Images) == 0 {
		return PromotionResult{}, errors.New("cannot promote: the promoted workload runs no image")
	}
	job, done, err := g.openPromotion(ctx, req, g.limiter)
	if err != nil {
		return PromotionResult{}, err
	}
	defer done()
	ctx, cancel := context.WithTimeout(ctx, RevertTimeout)
	defer cancel()
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("stage", req.Stage.Stage, "repository", redact.URL(job.src.URL), "branch", job.src.Branch))
	res, err := job.write(ctx, req.Stage.Mode == v1alpha1.PushRevert, job.change(ctx))
	out := res.promotionResult()
	out.Covers = memberNamesOf(job.members)
	return out, err
}

// promotionResult tells r as a promotion's result.
func (r gitResult) promotionResult() PromotionResult {
	states := map[gitState]PromotionState{gitOpened: PromotionOpened, gitPushed: PromotionPushed, gitMerged: PromotionMerged, gitUpToDate: PromotionUpToDate}
	return PromotionResult{Branch: r.Branch, Commit: r.Commit, PullRequestURL: r.PullRequestURL, State: states[r.State], Message: r.Message}
}

// change is the promotion as gitJob.write asks for it: the commit that
// brought the promotion into the stage's branch is the promotion already
// written (promotionMatch).
func (j *promotionJob) change(ctx context.Context) change {
	return change{
		kind: "promotion", verb: "promoted", branch: j.branch(),
		plan: func(head *object.Commit) (*Plan, string, error) {
			plan, err := j.plan(ctx, head)
			if err != nil || plan.UpToDate {
				return plan, "", err
			}
			if j.promote.Group != "" {
				return plan, j.releaseMessage(plan), nil
			}
			return plan, j.message(plan), nil
		},
		pushed: func(head *object.Commit) (*object.Commit, error) {
			done, _, err := j.bringsIn(head, j.match(ctx, ""))
			return done, err
		},
		brought: func(head *object.Commit, tip string) (*object.Commit, error) {
			m := j.match(ctx, tip)
			m.tip = tip
			done, _, err := j.bringsIn(head, m)
			return done, err
		},
		upToDate: j.alreadyThere,
		describe: func(plan *Plan) string { return strings.Join(plan.Paths(), ", ") },
		guard: func(head *object.Commit, _ *Plan) error {
			since := j.promote.Since
			if since.IsZero() {
				return nil
			}
			// Git keeps whole seconds: a commit of the wave's first
			// second counts as made since it started.
			start := since.Truncate(time.Second)
			stop := func(c *object.Commit) bool { return c.Committer.When.Before(start) }
			path := displayPath(strings.Trim(j.src.Path, "./"))
			under := []func(string) bool{underPath(j.src.Path)}
			for _, m := range j.members {
				under = append(under, underPath(m.path))
			}
			changed, err := j.changedSince(ctx, head, stop, func(f string) bool {
				return slices.ContainsFunc(under, func(in func(string) bool) bool { return in(f) })
			})
			if err != nil || changed == nil {
				return err
			}
			return changedMeanwhile("promotion", path, "the wave started at "+since.UTC().Format(time.RFC3339), changed)
		},
	}
}

// alreadyThere is the result when the stage already runs the images.
func (j *promotionJob) alreadyThere(head string) gitResult {
	images := slices.Clone(j.promote.Images)
	for _, m := range j.members {
		images = append(images, m.images...)
	}
	return gitResult{
		Branch: j.src.Branch, Commit: head, State: gitUpToDate,
		Message: fmt.Sprintf("%s at %s already runs %s in %s", j.src.Branch, ShortSHA(head),
			strings.Join(images, ", "), displayPath(strings.Trim(j.src.Path, "./"))),
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
	// canary, stage and source are the trailers' values; key is
	// canary's trailer (trailerCanary when empty, or trailerGroup).
	canary, stage, source string
	key                   string
	// runsImages reports whether the stage runs the promoted images at a
	// commit: a commit that matches but does not is not the promotion
	// (someone else's branch of the same name merged, trailers copied).
	runsImages func(*object.Commit) (bool, error)
}

// brings reports whether c brought the promotion in: it is the promotion
// commit, a merge of it (or of its branch's tip, or a merge whose message
// names its branch), or a copy of it carrying its trailers (rebased, or
// squashed with its message).
func (m promotionMatch) brings(c *object.Commit) bool {
	if h := c.Hash.String(); h == m.commit || (m.tip != "" && h == m.tip) {
		return true
	}
	if hasPromoteTrailers(c.Message, cmp.Or(m.key, trailerCanary), m.canary, m.stage, m.source) {
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
	return m.branch != "" && namesBranch(c.Message, m.branch)
}

// namesBranch reports whether a merge message names branch itself, not a
// longer branch name it begins (serin/promote/…/abc and …/abc-2).
func namesBranch(msg, branch string) bool {
	for i := 0; ; {
		j := strings.Index(msg[i:], branch)
		if j < 0 {
			return false
		}
		end := i + j + len(branch)
		if end == len(msg) || !strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./", rune(msg[end])) {
			return true
		}
		i = end
	}
}

// hasPromoteTrailers reports whether a message carries a promotion's
// three trailers, each on a line of its own, wherever the host put them
// (a squash may trim the last newline, indent them or make them bullets).
func hasPromoteTrailers(msg, key, canary, stage, source string) bool {
	want := map[string]string{key: canary, "Serin-Stage": stage, "Serin-Promotes": source}
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

// bringsIn finds, in the first-parent history from head, newest first,
// down to the wave's start (or verdictDepth commits), the commit that
// brought the promotion into the branch (promotionMatch.brings). It
// returns that commit and the ones after it, oldest first, or nil.
func (j *promotionJob) bringsIn(head *object.Commit, m promotionMatch) (*object.Commit, []*object.Commit, error) {
	var chain []*object.Commit
	since := j.promote.Since
	c := head
	for n := 0; since.IsZero() && n < verdictDepth || !since.IsZero() && !c.Committer.When.Before(since.Add(-clockSkew)); n++ {
		chain = append(chain, c)
		brings := m.brings(c)
		if brings && m.runsImages != nil {
			var err error
			if brings, err = m.runsImages(c); err != nil {
				return nil, nil, err
			}
		}
		if brings {
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
func (j *promotionJob) match(ctx context.Context, commit string) promotionMatch {
	c := j.promote.Canary
	m := promotionMatch{commit: commit, canary: c.Namespace + "/" + c.Name, stage: j.promote.Stage.Stage, source: j.source}
	if j.promote.Group != "" {
		m.key, m.canary = trailerGroup, c.Namespace+"/"+j.promote.Group
	}
	if j.promote.Stage.Mode != v1alpha1.PushRevert {
		m.branch = cmp.Or(j.promote.Branch, j.branch())
	}
	m.runsImages = func(c *object.Commit) (bool, error) {
		plan, err := j.plan(ctx, c)
		if err != nil {
			return false, err
		}
		return plan.UpToDate, nil
	}
	return m
}

// Verdict implements Promoter: it finds the commit of the stage's branch
// that brought the promotion commit in, then reads the stage Canary's
// commit status on it and, while it has none, on the commits after it.
func (g *GitPromoter) Verdict(ctx context.Context, req PromotionRequest, commit string) (_ Verdict, err error) {
	defer func() { err = redact.Error(err) }()
	job, done, err := g.openPromotion(ctx, req, g.readLimiter)
	if err != nil {
		return Verdict{}, err
	}
	defer done()
	ctx, cancel := context.WithTimeout(ctx, RevertTimeout)
	defer cancel()
	m := job.match(ctx, commit)
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
		switch {
		case err != nil:
			return Verdict{}, err
		case pr == nil:
			// Not closed: gone, or out of the token's sight. Read again.
			return Verdict{}, fmt.Errorf("no pull request from %s in %s: deleted, or the API token cannot see it", m.branch, job.src.URL)
		}
		return Verdict{Closed: pr.State == PullRequestClosed}, nil
	}
	out := Verdict{Merged: true, StageCommit: in.Hash.String()}
	reader, err := job.statusReader(ctx, g.statuses)
	if err != nil {
		return out, err
	}
	read := onceEach(reader)
	commits := verdictCommits(after)
	own, err := stageStatus(ctx, read, commits, StageCanary(req.Canary, req.Stage).String(), StatusContext(req.Canary, req.Stage), out.StageCommit)
	if err != nil {
		return out, err
	}
	out.State, out.StageCommit, out.Description, out.URL = own.State, own.StageCommit, own.Description, own.URL
	if req.Group == "" {
		return out, nil
	}
	out.Members = []MemberVerdict{own}
	for _, m := range job.members {
		v, err := stageStatus(ctx, read, commits, StageCanary(m.canary, m.stage).String(), StatusContext(m.canary, m.stage), in.Hash.String())
		if err != nil {
			return out, err
		}
		out.Members = append(out.Members, v)
	}
	return out, nil
}

// stageStatus is the verdict of one stage Canary (its commit status
// context) on the commits, oldest first: the first one that is not
// pending, else the first pending one; none while it posted nothing.
func stageStatus(ctx context.Context, read func(context.Context, string) ([]CommitStatus, error), commits []*object.Commit,
	stageCanary, statusContext, brought string) (MemberVerdict, error) {
	out := MemberVerdict{StageCanary: stageCanary, StageCommit: brought}
	for _, c := range commits {
		statuses, err := read(ctx, c.Hash.String())
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

// onceEach reads each commit's statuses once, however many stage
// Canaries' verdicts are read on it.
func onceEach(reader StatusReader) func(context.Context, string) ([]CommitStatus, error) {
	seen := map[string][]CommitStatus{}
	return func(ctx context.Context, sha string) ([]CommitStatus, error) {
		if s, ok := seen[sha]; ok {
			return s, nil
		}
		s, err := reader.Statuses(ctx, sha)
		if err == nil {
			seen[sha] = s
		}
		return s, err
	}
}

// verdictCommits are the commits whose statuses are read, oldest first:
// all of them, or the verdictCandidates oldest and newest.
func verdictCommits(after []*object.Commit) []*object.Commit {
	if len(after) <= 2*verdictCandidates {
		return after
	}
	return append(slices.Clip(after[:verdictCandidates]), after[len(after)-verdictCandidates:]...)
}

// statusReader returns the commit status API of the stage's repository.
func (j *promotionJob) statusReader(ctx context.Context, statuses StatusReaderFactory) (StatusReader, error) {
	api, err := j.hostAPI()
	if err != nil {
		return nil, err
	}
	return statuses(ctx, api)
}
