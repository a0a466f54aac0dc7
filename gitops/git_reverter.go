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
	"os"
	"strings"
	"text/template"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/record"
)

// pushAttempts bounds the re-plans of mode Push when the branch moves.
const pushAttempts = 3

// GitReverter reverts bad revisions in the Git repository of the Flux
// Kustomization that applied a Canary's target: it plans and verifies the
// change (PlanRevert), commits it, and pushes a branch with a pull request,
// or, with mode Push, fast-forwards the tracked branch.
type GitReverter struct {
	client    client.Reader
	author    Signature
	message   *template.Template
	provider  string
	tokenFile string
	hosts     HostFactory
	statuses  StatusReaderFactory
	now       func() time.Time
	limiter   *revertLimiter
	// readLimiter bounds the reads of promotions' verdicts, apart from
	// the reverts and promotions that write.
	readLimiter *revertLimiter
	clone       cloneOptions
	// maxFile bounds a file a revert reads (0: DefaultMaxFileSize).
	maxFile int64
	// crossNamespace lets a Canary revert through a Kustomization or
	// GitRepository in another namespace (not under --no-cross-namespace-refs).
	crossNamespace bool
}

// WithMaxFileSize bounds the size of one file a revert reads from the
// repository; 0 is DefaultMaxFileSize.
func WithMaxFileSize(bytes int64) ReverterOption {
	return func(g *GitReverter) error {
		if bytes < 0 {
			return fmt.Errorf("a negative file size bound: %d", bytes)
		}
		g.maxFile = bytes
		return nil
	}
}

// WithNoCrossNamespaceRefs refuses a Kustomization or GitRepository in
// another namespace than the Canary's (Flux's --no-cross-namespace-refs).
func WithNoCrossNamespaceRefs(refuse bool) ReverterOption {
	return func(g *GitReverter) error {
		g.crossNamespace = !refuse
		return nil
	}
}

// ReverterOption configures a GitReverter.
type ReverterOption func(*GitReverter) error

// WithAuthor sets the author and committer of revert commits.
func WithAuthor(name, email string) ReverterOption {
	return func(g *GitReverter) error {
		if name == "" || email == "" {
			return errors.New("the commit author needs a name and an email")
		}
		g.author.Name, g.author.Email = name, email
		return nil
	}
}

// WithMessageTemplate sets the commit message template (see MessageData).
func WithMessageTemplate(text string) ReverterOption {
	return func(g *GitReverter) error {
		t, err := ParseMessageTemplate(text)
		g.message = t
		return err
	}
}

// WithProvider sets the Git host provider (github, gitlab, gitea); without
// it the provider is inferred from github.com and gitlab.com URLs.
func WithProvider(p string) ReverterOption {
	return func(g *GitReverter) error {
		if _, err := ProviderFor(p, RepositoryURL{}); err != nil && p != "" {
			return err
		}
		g.provider = p
		return nil
	}
}

// WithProviderTokenFile reads the Git host API token from a file at each
// revert, instead of the GitRepository secret's password or bearerToken.
func WithProviderTokenFile(path string) ReverterOption {
	return func(g *GitReverter) error {
		g.tokenFile = path
		return nil
	}
}

// WithHostFactory replaces the Git host API (tests use an in-memory one).
func WithHostFactory(f HostFactory) ReverterOption {
	return func(g *GitReverter) error {
		g.hosts = f
		return nil
	}
}

// WithClock sets the commit time source.
func WithClock(now func() time.Time) ReverterOption {
	return func(g *GitReverter) error {
		g.now = now
		return nil
	}
}

// WithMaxConcurrentReverts bounds the reverts that run at once, across
// the agent (DefaultMaxConcurrentReverts by default). Reverts of the same
// repository branch run one at a time whatever the bound.
func WithMaxConcurrentReverts(n int) ReverterOption {
	return func(g *GitReverter) error {
		if n < 1 {
			return fmt.Errorf("at least one revert must be able to run, not %d", n)
		}
		g.limiter = newRevertLimiter(n)
		return nil
	}
}

// WithCloneDir makes clones in dir (by default os.TempDir(): $TMPDIR or
// /tmp), each in a directory of its own that is removed when the revert
// ends.
func WithCloneDir(dir string) ReverterOption {
	return func(g *GitReverter) error {
		g.clone.parent = dir
		return nil
	}
}

// WithMaxCloneSize bounds the disk a clone takes, in bytes
// (DefaultMaxCloneSize by default, 0 for no bound): a revert whose clone
// grows beyond it stops with ErrCloneTooLarge.
func WithMaxCloneSize(bytes int64) ReverterOption {
	return func(g *GitReverter) error {
		if bytes < 0 {
			return fmt.Errorf("a negative clone size bound: %d", bytes)
		}
		g.clone.maxSize = bytes
		return nil
	}
}

// NewGitReverter returns a Reverter that reads Kubernetes objects with c
// (an uncached reader: reverts are rare).
func NewGitReverter(c client.Reader, opts ...ReverterOption) (*GitReverter, error) {
	g := &GitReverter{
		client: c, author: Signature{Name: "serin", Email: "serin@users.noreply.serin.dev"}, hosts: NewGitProviderHost, statuses: NewHTTPStatusReader, now: time.Now,
		limiter: newRevertLimiter(DefaultMaxConcurrentReverts), readLimiter: newRevertLimiter(DefaultMaxConcurrentReverts),
		clone: cloneOptions{maxSize: DefaultMaxCloneSize}, crossNamespace: true,
	}
	var err error
	if g.message, err = ParseMessageTemplate(""); err != nil {
		return nil, err
	}
	for _, o := range opts {
		if err := o(g); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// RevertBranch is the branch of the revert of a Canary's bad commit.
func RevertBranch(c *v1alpha1.Canary, badCommit string) string {
	return fmt.Sprintf("serin/revert/%s/%s/%s", c.Namespace, c.Name, ShortSHA(badCommit))
}

// GroupRevertBranch is the branch of the revert of a group's release: the
// same whichever member asks for it.
func GroupRevertBranch(namespace, group, badCommit string) string {
	return fmt.Sprintf("serin/revert/%s/groups/%s/%s", namespace, group, ShortSHA(badCommit))
}

// branch is the job's revert branch.
func (j *revertJob) branch() string {
	if j.req.Group != "" {
		return GroupRevertBranch(j.req.Canary.Namespace, j.req.Group, j.bad)
	}
	return RevertBranch(j.req.Canary, j.bad)
}

// marker is the trailers that mark the job's revert commit.
func (j *revertJob) marker() string {
	if j.req.Group != "" {
		return groupTrailers(j.req.Canary.Namespace, j.req.Group, j.bad)
	}
	return trailers(j.req.Canary.Namespace, j.req.Canary.Name, j.bad)
}

// memberSources finds the source of each other member of a group's
// release: it must be the Canary's repository and branch (one commit
// reverts them all); its path may differ.
func (g *GitReverter) memberSources(ctx context.Context, req RevertRequest, src *Source) ([]*Source, error) {
	out := make([]*Source, len(req.Members))
	for i, m := range req.Members {
		ms, err := DiscoverSource(ctx, g.client, m, g.crossNamespace)
		if err != nil {
			return nil, fmt.Errorf("member %s of group %s: %w", m.Name, req.Group, err)
		}
		if ms.URL != src.URL || ms.Branch != src.Branch {
			return nil, fmt.Errorf("%w: member %s of group %s is applied from %s (branch %s), not %s (branch %s): one commit cannot revert the release",
				ErrUnverifiable, m.Name, req.Group, ms.URL, ms.Branch, src.URL, src.Branch)
		}
		out[i] = ms
	}
	return out, nil
}

// Revert implements Reverter. It is idempotent: with mode PullRequest the
// branch name is derived from the bad commit and an existing branch or
// pull request is returned as is; with mode Push a commit carrying the
// Serin-Reverts trailer of the bad commit is looked for first. It waits,
// as long as ctx allows, for its turn: reverts of one repository branch
// run one at a time, and at most WithMaxConcurrentReverts at once.
func (g *GitReverter) Revert(ctx context.Context, req RevertRequest) (RevertResult, error) {
	if req.Canary == nil {
		return RevertResult{}, errors.New("no canary")
	}
	bad, err := CommitOf(req.BadRevision)
	if err != nil {
		return RevertResult{}, fmt.Errorf("cannot revert: %w", err)
	}
	src, err := DiscoverSource(ctx, g.client, req.Canary, g.crossNamespace)
	if err != nil {
		return RevertResult{}, err
	}
	members, err := g.memberSources(ctx, req, src)
	if err != nil {
		return RevertResult{}, err
	}
	repo, done, err := g.takeTurn(ctx, g.limiter, src)
	if err != nil {
		return RevertResult{}, err
	}
	defer done()
	// The time bound starts once the revert runs, not while it waited.
	ctx, cancel := context.WithTimeout(ctx, RevertTimeout)
	defer cancel()
	job := &revertJob{GitReverter: g, req: req, src: src, members: members, repo: repo, bad: bad}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("repository", src.URL, "branch", src.Branch, "badCommit", ShortSHA(bad)))
	if m := req.Canary.Spec.GitOps; m != nil && m.Revert != nil && m.Revert.Mode == v1alpha1.PushRevert {
		return job.push(ctx)
	}
	return job.pullRequest(ctx)
}

// takeTurn waits for the turn of src's branch in limiter without holding
// the caller (when the branch's job or every slot is taken it says so,
// ErrBusy, and is asked again), then opens the clone of src. done
// removes the clone and ends the turn.
func (g *GitReverter) takeTurn(ctx context.Context, limiter *revertLimiter, src *Source) (*Repository, func(), error) {
	turnCtx, cancelTurn := context.WithTimeout(ctx, turnWait)
	release, err := limiter.acquire(turnCtx, src.URL, src.Branch)
	cancelTurn()
	if err != nil {
		if ctx.Err() == nil {
			err = fmt.Errorf("%w: %w", ErrBusy, err)
		}
		return nil, nil, err
	}
	clone := g.clone
	clone.maxObject = cmp.Or(g.maxFile, DefaultMaxFileSize)
	repo, err := OpenRepository(src.URL, src.Branch, WithAuth(src.Auth), withClone(clone))
	if err != nil {
		release()
		return nil, nil, fmt.Errorf("GitRepository %s: %w", src.GitRepository, err)
	}
	done := func() {
		if err := repo.Close(); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "clone not removed")
		}
		release()
	}
	return repo, done, nil
}

// revertJob is one revert.
type revertJob struct {
	*GitReverter
	req RevertRequest
	src *Source
	// members are the sources of req.Members, in order.
	members []*Source
	repo    *Repository
	bad     string
	// secretTokenOnly: the Git host API token is the GitRepository
	// secret's, never the agent's --git-provider-token-file (a promotion's
	// repository URL is a tenant's choice: the agent's token must not go
	// to a host the tenant names).
	secretTokenOnly bool
}

// pullRequest pushes the revert to its own branch and opens a pull request,
// or returns the branch and pull request an earlier call made.
func (j *revertJob) pullRequest(ctx context.Context) (RevertResult, error) {
	start := time.Now()
	log := ctrl.LoggerFrom(ctx)
	host, err := j.host(ctx)
	if err != nil {
		return RevertResult{}, err
	}
	branch := j.branch()
	res := RevertResult{Branch: branch}
	existing, open, err := j.existingPullRequest(ctx, host, &res)
	if err != nil || open {
		return res, err
	}
	if existing {
		return j.reopen(ctx, host, res)
	}

	if err := j.repo.Clone(ctx); err != nil {
		return res, err
	}
	var head *object.Commit
	var plan *Plan
	var msg string
	err = j.withHistory(ctx, func() error {
		if head, err = j.repo.Head(j.src.Branch); err != nil {
			return err
		}
		plan, msg, err = j.plan(ctx, head)
		return err
	})
	if err != nil {
		return res, err
	}
	planned := time.Since(start)
	if plan.UpToDate {
		return j.upToDate(head), nil
	}
	commit, err := j.repo.CommitFiles(head, plan.Files, j.author, j.now(), msg)
	if err != nil {
		return res, err
	}
	res.Commit = commit.Hash.String()
	if err := j.repo.Push(ctx, commit.Hash, branch); err != nil {
		return res, err
	}
	// How long the clone and the plan took (cloneDepth 0: the whole
	// branch was needed), and the push, tells where a slow revert goes.
	log.Info("revert branch pushed", "revertBranch", branch, "commit", ShortSHA(res.Commit), "strategy", plan.Strategy,
		"cloneDepth", j.repo.depth, "planned", planned.Round(time.Millisecond).String(), "pushed", time.Since(start).Round(time.Millisecond).String())
	title, body := splitMessage(msg)
	pr, err := host.Open(ctx, branch, j.src.Branch, title, body)
	if err != nil {
		return res, err
	}
	log.Info("revert pull request opened", "url", pr.URL, "took", time.Since(start).Round(time.Millisecond).String())
	res.PullRequestURL, res.State = pr.URL, StateOpened
	res.Message = fmt.Sprintf("pull request #%d opened from %s (%s of %s)", pr.Number, branch, strings.ToLower(string(plan.Strategy)), strings.Join(plan.Paths(), ", "))
	return res, nil
}

// existingPullRequest looks for res.Branch on the remote (existing, its
// tip in res.Commit) and for its open pull request (open, recorded in res
// as Opened): what an earlier run of the same revert or promotion made.
func (j *revertJob) existingPullRequest(ctx context.Context, host PullRequestHost, res *RevertResult) (existing, open bool, err error) {
	tip, err := j.repo.RemoteBranch(ctx, res.Branch)
	if err != nil || tip.IsZero() {
		return false, false, err
	}
	res.Commit = tip.String()
	pr, err := host.Find(ctx, res.Branch)
	if err != nil || pr == nil {
		return true, false, err
	}
	res.PullRequestURL, res.State = pr.URL, StateOpened
	res.Message = fmt.Sprintf("pull request #%d from %s is already open", pr.Number, res.Branch)
	return true, true, nil
}

// reopen handles a revert branch without an open pull request: pushed
// before a restart, or its pull request merged or closed. A branch already
// in the tracked branch is reported as merged; otherwise its pull request
// is opened again.
func (j *revertJob) reopen(ctx context.Context, host PullRequestHost, res RevertResult) (RevertResult, error) {
	if err := j.repo.Clone(ctx); err != nil {
		return res, err
	}
	var tip *object.Commit
	var merged bool
	err := j.withHistory(ctx, func() error {
		if err := j.repo.Fetch(ctx, res.Branch); err != nil {
			return err
		}
		var err error
		if tip, err = j.repo.Head(res.Branch); err != nil {
			return err
		}
		head, err := j.repo.Head(j.src.Branch)
		if err != nil {
			return err
		}
		merged, err = isAncestor(ctx, tip, head)
		if errors.Is(err, ErrShallowHistory) || ctx.Err() != nil {
			return err
		}
		return nil // a history that cannot be walked counts as not merged
	})
	if err != nil {
		return res, err
	}
	if merged {
		res.State = StateMerged
		res.Message = fmt.Sprintf("%s is already merged into %s", res.Branch, j.src.Branch)
		return res, nil
	}
	title, body := splitMessage(tip.Message)
	pr, err := host.Open(ctx, res.Branch, j.src.Branch, title, body)
	if err != nil {
		return res, err
	}
	res.PullRequestURL, res.State = pr.URL, StateOpened
	res.Message = fmt.Sprintf("pull request #%d opened from the existing branch %s", pr.Number, res.Branch)
	return res, nil
}

// push commits the revert onto the tracked branch and fast-forwards it,
// re-planning on the new head when the branch moved; it never forces.
func (j *revertJob) push(ctx context.Context) (RevertResult, error) {
	marker := j.marker()
	return j.pushOnto(ctx, "reverted", func(head *object.Commit) (*object.Commit, *Plan, string, error) {
		bad, err := j.repo.Commit(j.bad)
		if err != nil {
			return nil, nil, "", err
		}
		if done, err := j.repo.FindCommit(ctx, head, bad, marker); err != nil || done != nil {
			return done, nil, "", err
		}
		plan, msg, err := j.plan(ctx, head)
		if err == nil && plan.UpToDate {
			return nil, plan, "", errUpToDate
		}
		return nil, plan, msg, err
	})
}

// errUpToDate is what a pushOnto step returns when the tracked branch
// already is as the change would make it.
var errUpToDate = errors.New("up to date")

// pushOnto is mode Push, for reverts and promotions alike: it clones the
// tracked branch, asks step for the commit already there (done) or the
// plan and message of the change on its head, commits the change and
// fast-forwards the branch, and plans again on the new head when the
// branch moved (pushAttempts); it never forces. step returns errUpToDate
// when there is nothing to change; verb says what a done commit did.
func (j *revertJob) pushOnto(ctx context.Context, verb string,
	step func(head *object.Commit) (done *object.Commit, plan *Plan, msg string, err error)) (RevertResult, error) {
	res := RevertResult{Branch: j.src.Branch}
	if err := j.repo.Clone(ctx); err != nil {
		return res, err
	}
	for attempt := 1; ; attempt++ {
		var head, done *object.Commit
		var plan *Plan
		var msg string
		err := j.withHistory(ctx, func() error {
			var err error
			if head, err = j.repo.Head(j.src.Branch); err != nil {
				return err
			}
			done, plan, msg, err = step(head)
			return err
		})
		switch {
		case errors.Is(err, errUpToDate):
			return j.upToDate(head), nil
		case err != nil:
			return res, err
		case done != nil:
			res.Commit, res.State = done.Hash.String(), StatePushed
			res.Message = fmt.Sprintf("already %s on %s by %s", verb, j.src.Branch, ShortSHA(res.Commit))
			return res, nil
		}
		commit, err := j.repo.CommitFiles(head, plan.Files, j.author, j.now(), msg)
		if err != nil {
			return res, err
		}
		err = j.repo.Push(ctx, commit.Hash, j.src.Branch)
		if errors.Is(err, ErrNonFastForward) && attempt < pushAttempts {
			ctrl.LoggerFrom(ctx).Info("tracked branch moved, planning again on its new head", "attempt", attempt)
			if err := j.repo.Fetch(ctx, j.src.Branch); err != nil {
				return res, err
			}
			continue
		}
		if err != nil {
			return res, err
		}
		res.Commit, res.State = commit.Hash.String(), StatePushed
		res.Message = fmt.Sprintf("pushed to %s (%s of %s)", j.src.Branch, strings.ToLower(string(plan.Strategy)), strings.Join(plan.Paths(), ", "))
		return res, nil
	}
}

// plan computes and verifies the revert on head, and its commit message.
// A group's release is reverted member by member, each planned on top of
// the ones before (so that each verifies that it changes nothing but its
// target), into one set of files.
func (j *revertJob) plan(ctx context.Context, head *object.Commit) (*Plan, string, error) {
	bad, err := j.repo.Commit(j.bad)
	if err != nil {
		return nil, "", fmt.Errorf("the bad revision is not in the history of %s (was the branch rewritten?): %w", j.src.Branch, err)
	}
	plan, good, goodRevision, notes, err := j.planTarget(ctx, j.req.Canary, j.req.GoodRevision, j.src.Path, bad, head)
	if err != nil {
		return nil, "", err
	}
	targets := []string{}
	if !plan.UpToDate {
		t := targetOf(j.req.Canary)
		targets = append(targets, t.Kind+"/"+t.Name)
	}
	if len(j.req.Members) > 0 {
		if plan, targets, notes, err = j.planMembers(ctx, plan, targets, notes, bad, head); err != nil {
			return nil, "", err
		}
	}
	if plan.UpToDate {
		return plan, "", nil
	}
	phase := string(j.req.Canary.Status.Phase)
	if phase == "" {
		phase = string(v1alpha1.PhaseHalted)
	}
	// The analysis of the bad revision, when the record still has it.
	var decisive *v1alpha1.AnalysisStep
	if rec := record.Latest(&j.req.Canary.Status); rec != nil && rec.Revision == j.req.BadRevision {
		decisive = record.Decisive(rec)
	}
	weight, analysis := 0, record.Lines(decisive)
	if decisive != nil {
		weight = decisive.Weight
		if len(analysis) == 0 {
			analysis = []string{"no metric check or webhook in this step: " + decisive.Verdict}
		}
	}
	msg, err := renderMessage(j.message, MessageData{
		Canary:          j.req.Canary.Name,
		Namespace:       j.req.Canary.Namespace,
		Group:           j.req.Group,
		Phase:           phase,
		Target:          strings.Join(targets, ", "),
		BadRevision:     j.req.BadRevision,
		GoodRevision:    goodRevision,
		BadCommit:       bad.Hash.String(),
		GoodCommit:      good.Hash.String(),
		Reason:          j.req.Reason,
		Analysis:        analysis,
		AnalysisWeight:  weight,
		Strategy:        string(plan.Strategy),
		RevertedCommits: plan.RevertedCommits,
		Files:           plan.Paths(),
		Notes:           append(notes, plan.Notes...),
	}, j.bad)
	return plan, msg, err
}

// planTarget plans the revert of one Canary's target on head: back to its
// good revision (its last promoted one, else the last commit before bad
// that rendered it differently).
func (j *revertJob) planTarget(ctx context.Context, c *v1alpha1.Canary, goodRevision, path string, bad, head *object.Commit) (*Plan, *object.Commit, string, []string, error) {
	target := targetOf(c)
	var good *object.Commit
	var notes []string
	var err error
	if goodRevision != "" {
		hash, err := CommitOf(goodRevision)
		if err != nil {
			return nil, nil, "", nil, fmt.Errorf("cannot revert: last promoted %w", err)
		}
		if good, err = j.repo.Commit(hash); err != nil {
			return nil, nil, "", nil, err
		}
	} else {
		if good, err = PreviousDefinition(ctx, bad, path, target, j.maxFile); err != nil {
			return nil, nil, "", nil, err
		}
		goodRevision = fmt.Sprintf("%s@sha1:%s", j.src.Branch, good.Hash)
		notes = append(notes, fmt.Sprintf("No promoted revision is recorded: %s, the last commit before %s that rendered the target differently, is taken as good.",
			ShortSHA(good.Hash.String()), ShortSHA(j.bad)))
	}
	plan, err := PlanRevert(ctx, PlanInput{Path: path, Target: target, Good: good, Bad: bad, Head: head, MaxFileSize: j.maxFile})
	if errors.Is(err, ErrSameRendering) {
		// The revision may have been read before kustomize-controller
		// recorded the one it applied: take the one it applied since.
		applied, appliedErr := j.appliedAfter(ctx, bad)
		if appliedErr != nil {
			return nil, nil, "", nil, appliedErr
		}
		if applied != nil {
			notes = append(notes, fmt.Sprintf("Commit %s, recorded as bad, renders the target as the good one; %s, which the Kustomization applied after it, is reverted.",
				ShortSHA(j.bad), ShortSHA(applied.Hash.String())))
			plan, err = PlanRevert(ctx, PlanInput{Path: path, Target: target, Good: good, Bad: applied, Head: head, MaxFileSize: j.maxFile})
		}
	}
	return plan, good, goodRevision, notes, err
}

// planMembers adds the revert of each other member of a group's release
// to plan, each planned on the files the ones before changed. A member
// the bad revision did not change is left as it is.
func (j *revertJob) planMembers(ctx context.Context, plan *Plan, targets, notes []string, bad, head *object.Commit) (*Plan, []string, []string, error) {
	files := map[string][]byte{}
	cur := head
	apply := func(p *Plan) error {
		for _, f := range p.Files {
			files[f.Path] = f.Content
		}
		next, err := j.repo.CommitFiles(cur, p.Files, j.author, j.now(), "serin: group revert in progress")
		if err != nil {
			return err
		}
		cur = next
		return nil
	}
	combined := &Plan{UpToDate: plan.UpToDate, Strategy: plan.Strategy, RevertedCommits: plan.RevertedCommits, Notes: plan.Notes}
	if !plan.UpToDate {
		if err := apply(plan); err != nil {
			return nil, nil, nil, err
		}
	}
	for i, m := range j.req.Members {
		good := m.Status.LastPromotedRevision
		if good == j.req.BadRevision {
			// Promoted with the release before another member halted:
			// back to the last commit before it that rendered it otherwise.
			good = ""
		}
		promotedWithRelease := good == ""
		mp, _, good, mnotes, err := j.planTarget(ctx, m, good, j.members[i].Path, bad, cur)
		if promotedWithRelease && m.Status.LastPromotedRevision == j.req.BadRevision {
			mnotes = []string{fmt.Sprintf("Canary %s was promoted with the release: it goes back to %s, the last commit before %s that rendered it otherwise.", m.Name, good, ShortSHA(j.bad))}
		}
		switch {
		case errors.Is(err, ErrSameRendering):
			notes = append(notes, fmt.Sprintf("Canary %s of the group: revision %s does not change its target; left as it is.", m.Name, ShortSHA(j.bad)))
			continue
		case err != nil:
			return nil, nil, nil, fmt.Errorf("member %s of group %s: %w", m.Name, j.req.Group, err)
		case mp.UpToDate:
			continue
		}
		if err := apply(mp); err != nil {
			return nil, nil, nil, err
		}
		t := targetOf(m)
		targets = append(targets, t.Kind+"/"+t.Name)
		notes = append(notes, mnotes...)
		notes = append(notes, fmt.Sprintf("Canary %s of the group: %s/%s back to %s (%s of %s).", m.Name, t.Kind, t.Name, good, strings.ToLower(string(mp.Strategy)), strings.Join(mp.Paths(), ", ")))
		combined.UpToDate = false
		if mp.Strategy != combined.Strategy || combined.Strategy == "" {
			combined.Strategy = StrategyEdit
		}
		combined.RevertedCommits = nil
	}
	combined.Files = fileChanges(files)
	if combined.UpToDate {
		return combined, targets, notes, nil
	}
	if len(targets) > 0 && !plan.UpToDate {
		notes = append([]string{fmt.Sprintf("This reverts release %s of CanaryGroup %s: %s.", j.req.BadRevision, j.req.Group, strings.Join(targets, ", "))}, notes...)
	}
	return combined, targets, notes, nil
}

// appliedAfter returns the Kustomization's last applied commit when it is a
// descendant of bad, or nil. It fails only when the clone is too shallow
// to tell (ErrShallowHistory) or ctx is done.
func (j *revertJob) appliedAfter(ctx context.Context, bad *object.Commit) (*object.Commit, error) {
	hash, err := CommitOf(j.src.LastAppliedRevision)
	if err != nil || hash == bad.Hash.String() {
		return nil, nil
	}
	applied, err := j.repo.Commit(hash)
	if errors.Is(err, ErrShallowHistory) {
		return nil, err
	}
	if err != nil {
		return nil, nil
	}
	ok, err := isAncestor(ctx, bad, applied)
	if errors.Is(err, ErrShallowHistory) || ctx.Err() != nil {
		return nil, err
	}
	if err != nil || !ok {
		return nil, nil
	}
	return applied, nil
}

// withHistory runs f on the clone, and while f needs history older than
// the clone holds (ErrShallowHistory), deepens the clone and runs f again,
// up to the whole branch. f reads the commits it works on from the clone
// each time: a deeper clone is a new one.
func (j *revertJob) withHistory(ctx context.Context, f func() error) error {
	for {
		err := f()
		if !errors.Is(err, ErrShallowHistory) {
			return err
		}
		deeper, deepenErr := j.repo.Deepen(ctx)
		if deepenErr != nil {
			return deepenErr
		}
		if !deeper {
			return err
		}
		ctrl.LoggerFrom(ctx).V(1).Info("clone deepened", "reason", err.Error(), "depth", j.repo.depth)
	}
}

// upToDate is the result when the tracked branch already renders the
// target as promoted: nothing to commit.
func (j *revertJob) upToDate(head *object.Commit) RevertResult {
	return RevertResult{
		Branch: j.src.Branch, Commit: head.Hash.String(), State: StateMerged,
		Message: fmt.Sprintf("%s at %s already renders the target as promoted: nothing to revert", j.src.Branch, ShortSHA(head.Hash.String())),
	}
}

// host returns the pull request API of the source's repository.
func (j *revertJob) host(ctx context.Context) (PullRequestHost, error) {
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
	return j.hosts(ctx, u, provider, token)
}

// hostToken is the Git host API token: the agent's token file, read at
// each call, else (and always for a promotion) the GitRepository secret's.
func (j *revertJob) hostToken() (string, error) {
	if j.tokenFile == "" || j.secretTokenOnly {
		return j.src.HostToken, nil
	}
	b, err := os.ReadFile(j.tokenFile)
	if err != nil {
		return "", fmt.Errorf("failed to read the Git provider token: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}
