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
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/internal/redact"
)

// This file holds what reverts and promotions share: the settings of
// the agent's Git work (gitCore), and one job on a clone of a repository
// branch (gitJob): its turn, its clone, its history, its Git host, and
// the two ways a change (a revert or a promotion) is written, a pull
// request (pullRequest) or a fast-forward of the tracked branch
// (pushOnto).

// pushAttempts bounds the re-plans of mode Push when the branch moves.
const pushAttempts = 3

// gitCore is what a GitReverter and its GitPromoter share: how they read
// Kubernetes objects, who commits, the Git host API and its token, the
// clone and file bounds, the clock, and the limiter that gives a
// repository branch to one writing job at a time.
type gitCore struct {
	client   client.Reader
	author   Signature
	provider string
	// tokenFile is the agent's own Git host API token, sent only to
	// tokenHosts (--git-provider-hosts).
	tokenFile  string
	tokenHosts hostList
	hosts      HostFactory
	// conditional remembers GitHub's answers for conditional requests.
	conditional *conditionalCache
	now         func() time.Time
	// limiter bounds the jobs that write, reverts and promotions alike.
	limiter *revertLimiter
	clone   cloneOptions
	// maxFile bounds a file a job reads (0: DefaultMaxFileSize).
	maxFile int64
	// crossNamespace lets a Canary revert through a Kustomization or
	// GitRepository in another namespace (not under --no-cross-namespace-refs).
	crossNamespace bool
	// charts downloads the charts of HelmRepositories a revert or a wave
	// renders (nil: only charts kept in Git are rendered).
	charts ChartSource
	// seal seals the commits serin writes and tells its own branches
	// across restarts (nil: no key, branches are told by re-planning).
	seal *commitSeal
	// trustRepositoryCA lets the platform's token trust the ca.crt of a
	// GitRepository's secret (--git-provider-trust-repository-ca).
	trustRepositoryCA bool
	// chartOptions configure charts (WithChartRenderer,
	// WithChartFetchAllowLoopback).
	chartOptions HelmChartsOptions
}

// gitJob is one job's work on a clone of one repository branch, a
// revert's or a promotion's.
type gitJob struct {
	*gitCore
	src  *Source
	repo *Repository
}

// openJob waits for the turn of src's branch in limiter, and for a slot
// in the queue of namespace (the tenant's: the Canary's), at most
// turnWait (then it says so, ErrBusy, and is asked again), then opens
// the clone of src. done removes the clone and ends the turn.
func (c *gitCore) openJob(ctx context.Context, limiter *revertLimiter, namespace string, src *Source) (*gitJob, func(), error) {
	turnCtx, cancelTurn := context.WithTimeout(ctx, turnWait)
	release, err := limiter.acquire(turnCtx, namespace, src.URL, src.Branch)
	cancelTurn()
	if err != nil {
		if ctx.Err() == nil {
			err = fmt.Errorf("%w: %w", ErrBusy, err)
		}
		return nil, nil, err
	}
	clone := c.clone
	clone.maxObject = cmp.Or(c.maxFile, DefaultMaxFileSize)
	repo, err := OpenRepository(src.URL, src.Branch, WithAuth(src.Auth), withClone(clone))
	if err != nil {
		release()
		return nil, nil, fmt.Errorf("GitRepository %s: %w", src.GitRepository, err)
	}
	done := func() {
		if err := repo.Close(); err != nil {
			ctrl.LoggerFrom(ctx).Error(redact.Error(err), "clone not removed")
		}
		release()
	}
	return &gitJob{gitCore: c, src: src, repo: repo}, done, nil
}

// gitState is what a job's pull request or push came to.
type gitState int

const (
	// gitOpened: a pull request is open.
	gitOpened gitState = iota + 1
	// gitPushed: the change is pushed to the tracked branch.
	gitPushed
	// gitMerged: the change is in the tracked branch already.
	gitMerged
	// gitUpToDate: the tracked branch already is as the change would
	// make it; nothing was written.
	gitUpToDate
)

// gitResult is what a job's pull request or push made, before a revert
// tells it as a RevertResult (revertResult) and a promotion as a
// PromotionResult (promotionResult).
type gitResult struct {
	Branch         string
	Commit         string
	PullRequestURL string
	State          gitState
	Message        string
}

// change is one revert or promotion as gitJob.write asks for it: how to
// plan it, how to find it written already, and the words that tell it.
type change struct {
	// kind names the change in logs: "revert", "promotion"; verb says
	// what its commit did: "reverted", "promoted".
	kind, verb string
	// branch is the change's own branch, the head of its pull request.
	branch string
	// plan plans the change on head and writes its commit message.
	plan func(head *object.Commit) (*Plan, string, error)
	// pushed finds, for mode Push, the commit in head's history that
	// already made the change, or nil.
	pushed func(head *object.Commit) (*object.Commit, error)
	// brought, when set, finds for mode PullRequest the commit in head's
	// history that already brought the change in, or nil; tip is the tip
	// of the change's branch when it exists, else "". A change brought in
	// is not written again. Without brought, an existing branch's pull
	// request is opened again at once.
	brought func(head *object.Commit, tip string) (*object.Commit, error)
	// upToDate is the result when head already is as the change would
	// make it.
	upToDate func(head string) gitResult
	// describe says, in a pull request's message, what the plan changes.
	describe func(plan *Plan) string
	// guard, when set, refuses a Push-mode write of plan on head that
	// would write over a change someone else made (ErrChangedMeanwhile).
	guard func(head *object.Commit, plan *Plan) error
}

// write writes c, for reverts and promotions alike: pushed onto the
// tracked branch with mode Push (pushOnto), else as a pull request
// (pullRequest).
func (j *gitJob) write(ctx context.Context, push bool, c change) (gitResult, error) {
	c.plan = redactedPlan(c.plan)
	if push {
		return j.pushOnto(ctx, c)
	}
	return j.pullRequest(ctx, c)
}

// pullRequest is mode PullRequest. It clones the tracked branch and
// looks at every name the change's branch may take (branchCandidates),
// with one listing: a name that holds serin's own commit for the change
// (ownCommit) is resumed: its open pull request adopted, or reported
// merged, or its pull request opened again; else a name whose tip carries
// serin's seal (written before a restart, planned before the base or the
// change moved) is rebased: the change planned on the head replaces it;
// else the first name nobody pushed gets the change, planned on the head,
// committed, pushed and proposed (unless the change is in the tracked
// branch already). A name that holds anything else is left alone. Once
// the change has its branch, serin's sealed duplicates of it under the
// other names are deleted.
func (j *gitJob) pullRequest(ctx context.Context, c change) (gitResult, error) {
	host, err := j.host(ctx)
	if err != nil {
		return gitResult{}, err
	}
	if err := j.repo.Clone(ctx); err != nil {
		return gitResult{Branch: c.branch}, err
	}
	names := branchCandidates(c.branch)
	tips, err := j.repo.RemoteBranches(ctx, names...)
	if err != nil {
		return gitResult{Branch: c.branch}, err
	}
	candidates := make([]branchCandidate, 0, len(names))
	for _, name := range names {
		bc, err := j.inspectBranch(ctx, c, name, tips[name])
		if err != nil {
			return gitResult{Branch: name, Commit: bc.tipHash()}, err
		}
		candidates = append(candidates, bc)
	}
	i := pickBranch(candidates)
	if i < 0 {
		var foreign []string
		for _, bc := range candidates {
			foreign = append(foreign, bc.name+" ("+bc.why+")")
		}
		return gitResult{Branch: c.branch}, fmt.Errorf("%w: %s; delete them and the %s is written again", ErrForeignBranch, strings.Join(foreign, ", "), c.kind)
	}
	chosen := candidates[i]
	var res gitResult
	switch chosen.state {
	case branchOwn:
		res, err = j.resume(ctx, host, c, gitResult{Branch: chosen.name, Commit: chosen.tipHash()}, chosen.tip, chosen.msg)
	case branchSealed:
		res, err = j.rebase(ctx, host, c, chosen)
	default:
		res, err = j.propose(ctx, host, c, chosen.name)
	}
	if err == nil {
		j.deleteDuplicates(ctx, candidates, i)
	}
	return res, err
}

// branchState is what one of a change's branch names holds.
type branchState int

const (
	// branchFree: nobody pushed it.
	branchFree branchState = iota
	// branchOwn: serin's commit for the change, as planned on its parent.
	branchOwn
	// branchSealed: a commit carrying serin's seal for this name, which is
	// not the change serin plans now on its parent (written before a
	// restart, before the base or the change's inputs moved).
	branchSealed
	// branchForeign: anything else; left alone.
	branchForeign
)

// branchCandidate is one name a change's branch may take and what it
// holds.
type branchCandidate struct {
	name  string
	state branchState
	tip   *object.Commit
	// sealed: the tip carries serin's seal for name.
	sealed bool
	// msg is the message serin plans for an own tip; why says why a
	// foreign tip is not serin's.
	msg, why string
}

// tipHash is the candidate's tip, or "".
func (bc branchCandidate) tipHash() string {
	if bc.tip == nil {
		return ""
	}
	return bc.tip.Hash.String()
}

// pickBranch is where a change goes: the first name that holds serin's
// own commit for it, else the first serin sealed, else the first free
// one; -1 when every name holds someone else's commit.
func pickBranch(candidates []branchCandidate) int {
	for _, want := range []branchState{branchOwn, branchSealed, branchFree} {
		for i, bc := range candidates {
			if bc.state == want {
				return i
			}
		}
	}
	return -1
}

// inspectBranch tells what the branch name, whose remote tip is tip (zero:
// none), holds for c.
func (j *gitJob) inspectBranch(ctx context.Context, c change, name string, tip plumbing.Hash) (branchCandidate, error) {
	bc := branchCandidate{name: name, state: branchFree}
	if tip.IsZero() {
		return bc, nil
	}
	err := j.withHistory(ctx, func() error {
		if err := j.repo.Fetch(ctx, name); err != nil {
			return err
		}
		head, err := j.repo.Head(j.src.Branch)
		if err != nil {
			return err
		}
		if bc.tip, err = j.repo.Head(name); err != nil {
			return err
		}
		var own bool
		if own, bc.msg, bc.why, err = j.ownCommit(ctx, c, bc.tip, head); err != nil {
			return err
		}
		bc.sealed = j.seal.verifies(bc.tip, name)
		switch {
		case own:
			bc.state = branchOwn
		case bc.sealed:
			bc.state = branchSealed
		default:
			bc.state = branchForeign
		}
		return nil
	})
	if err != nil {
		return bc, err
	}
	if bc.state == branchForeign {
		ctrl.LoggerFrom(ctx).Info("branch not written by serin: left alone", "branch", name, "why", bc.why)
	}
	return bc, nil
}

// rebase carries on with a branch serin sealed whose commit is not the
// change it plans now: unless its pull request was merged, the change is
// planned on the head and replaces the branch's tip (only while the
// branch still points at it), and its pull request is adopted, or opened
// again. A change the head already holds needs no branch: it is deleted.
func (j *gitJob) rebase(ctx context.Context, host PullRequestHost, c change, bc branchCandidate) (gitResult, error) {
	log := ctrl.LoggerFrom(ctx)
	res := gitResult{Branch: bc.name, Commit: bc.tipHash()}
	pr, err := host.Find(ctx, bc.name)
	if err != nil {
		return res, err
	}
	if pr != nil && pr.State == PullRequestMerged {
		res.PullRequestURL, res.State = pr.URL, gitMerged
		res.Message = fmt.Sprintf("pull request #%d from %s is already merged", pr.Number, bc.name)
		return res, nil
	}
	var head, brought *object.Commit
	var plan *Plan
	var msg string
	err = j.withHistory(ctx, func() error {
		var err error
		if head, err = j.repo.Head(j.src.Branch); err != nil {
			return err
		}
		if c.brought != nil {
			if brought, err = c.brought(head, bc.tipHash()); err != nil || brought != nil {
				return err
			}
		}
		plan, msg, err = c.plan(head)
		return err
	})
	if err != nil {
		return res, err
	}
	switch {
	case brought != nil:
		res.Commit, res.State = brought.Hash.String(), gitMerged
		res.Message = fmt.Sprintf("already in %s as %s", j.src.Branch, ShortSHA(brought.Hash.String()))
		return res, nil
	case plan.UpToDate:
		if err := j.repo.DeleteBranch(ctx, bc.name, bc.tip.Hash); err != nil {
			log.Error(redact.Error(err), "serin's branch not deleted", "branch", bc.name)
		}
		return c.upToDate(head.Hash.String()), nil
	}
	commit, err := j.commit(head, plan.Files, msg, bc.name)
	if err != nil {
		return res, err
	}
	if err := j.repo.Replace(ctx, commit.Hash, bc.name, bc.tip.Hash); err != nil {
		return res, err
	}
	res.Commit = commit.Hash.String()
	log.Info(c.kind+" branch rebased", c.kind+"Branch", bc.name, "was", ShortSHA(bc.tipHash()), "commit", ShortSHA(res.Commit))
	if pr != nil && pr.State == PullRequestOpen {
		res.PullRequestURL, res.State = pr.URL, gitOpened
		res.Message = fmt.Sprintf("pull request #%d from %s is open, its branch planned again on %s (%s)", pr.Number, bc.name, ShortSHA(head.Hash.String()), c.describe(plan))
		return res, nil
	}
	title, body := splitMessage(msg)
	if pr, err = host.Open(ctx, bc.name, j.src.Branch, title, body); err != nil {
		return res, err
	}
	res.PullRequestURL, res.State = pr.URL, gitOpened
	res.Message = fmt.Sprintf("pull request #%d opened from %s, planned again on %s (%s)", pr.Number, bc.name, ShortSHA(head.Hash.String()), c.describe(plan))
	return res, nil
}

// deleteDuplicates deletes, once the change has its branch (chosen), the
// other names whose tip carries serin's seal: a duplicate of the change an
// earlier run wrote and abandoned. Only a seal proves a branch serin's to
// delete; a failure is logged, and tried again by the next job.
func (j *gitJob) deleteDuplicates(ctx context.Context, candidates []branchCandidate, chosen int) {
	for i, bc := range candidates {
		if i == chosen || !bc.sealed {
			continue
		}
		if err := j.repo.DeleteBranch(ctx, bc.name, bc.tip.Hash); err != nil {
			ctrl.LoggerFrom(ctx).Error(redact.Error(err), "serin's duplicate branch not deleted", "branch", bc.name)
			continue
		}
		ctrl.LoggerFrom(ctx).Info("serin's duplicate branch deleted", "branch", bc.name, "commit", ShortSHA(bc.tipHash()), "kept", candidates[chosen].name)
	}
}

// commit writes files on parent as serin's commit for branch, with msg,
// sealed for branch when the agent has a seal key.
func (j *gitJob) commit(parent *object.Commit, files []FileChange, msg, branch string) (*object.Commit, error) {
	if j.seal != nil {
		tree, err := j.repo.PlannedTree(parent, files)
		if err != nil {
			return nil, err
		}
		msg = j.seal.seal(msg, branch, parent.Hash, tree)
	}
	return j.repo.CommitFiles(parent, files, j.author, j.now(), msg)
}

// propose writes the change under branch, which nobody pushed: unless the
// tracked branch already holds it (merged, maybe squashed, before a
// restart recorded it, its branch deleted) or already is as it would make
// it, planned on its head, committed, pushed and proposed.
func (j *gitJob) propose(ctx context.Context, host PullRequestHost, c change, branch string) (gitResult, error) {
	start := time.Now()
	log := ctrl.LoggerFrom(ctx)
	res := gitResult{Branch: branch}
	var head, brought *object.Commit
	var plan *Plan
	var msg string
	err := j.withHistory(ctx, func() error {
		var err error
		if head, err = j.repo.Head(j.src.Branch); err != nil {
			return err
		}
		if c.brought != nil {
			if brought, err = c.brought(head, ""); err != nil || brought != nil {
				return err
			}
		}
		plan, msg, err = c.plan(head)
		return err
	})
	if err != nil {
		return res, err
	}
	planned := time.Since(start)
	switch {
	case brought != nil:
		res.Commit, res.State = brought.Hash.String(), gitMerged
		res.Message = fmt.Sprintf("already in %s as %s", j.src.Branch, ShortSHA(brought.Hash.String()))
		return res, nil
	case plan.UpToDate:
		return c.upToDate(head.Hash.String()), nil
	}
	commit, err := j.commit(head, plan.Files, msg, branch)
	if err != nil {
		return res, err
	}
	res.Commit = commit.Hash.String()
	if err := j.repo.Push(ctx, commit.Hash, branch); err != nil {
		return res, err
	}
	// How long the clone and the plan took (cloneDepth 0: the whole
	// branch was needed), and the push, tells where a slow job goes.
	log.Info(c.kind+" branch pushed", c.kind+"Branch", branch, "commit", ShortSHA(res.Commit), "strategy", plan.Strategy,
		"cloneDepth", j.repo.depth, "planned", planned.Round(time.Millisecond).String(), "pushed", time.Since(start).Round(time.Millisecond).String())
	title, body := splitMessage(msg)
	pr, err := host.Open(ctx, branch, j.src.Branch, title, body)
	if err != nil {
		return res, err
	}
	log.Info(c.kind+" pull request opened", "url", pr.URL, "commit", ShortSHA(res.Commit), "took", time.Since(start).Round(time.Millisecond).String())
	res.PullRequestURL, res.State = pr.URL, gitOpened
	res.Message = fmt.Sprintf("pull request #%d opened from %s (%s)", pr.Number, branch, c.describe(plan))
	return res, nil
}

// planSummary says what a plan changes: its strategy and its files.
func planSummary(plan *Plan) string {
	return strings.ToLower(string(plan.Strategy)) + " of " + strings.Join(plan.Paths(), ", ")
}

// resume carries on with a change's branch that holds serin's own commit
// (tip), pushed by an earlier run: its open pull request is adopted; a
// change already in the tracked branch (the branch merged, or squashed
// with the change's trailers) is reported merged; otherwise its pull
// request is opened again (pushed before a restart, or closed), with the
// words serin plans for it, never the branch's own.
func (j *gitJob) resume(ctx context.Context, host PullRequestHost, c change, res gitResult, tip *object.Commit, msg string) (gitResult, error) {
	pr, err := host.Find(ctx, res.Branch)
	if err != nil {
		return res, err
	}
	switch {
	case pr != nil && pr.State == PullRequestOpen:
		res.PullRequestURL, res.State = pr.URL, gitOpened
		res.Message = fmt.Sprintf("pull request #%d from %s is already open", pr.Number, res.Branch)
		return res, nil
	case pr != nil && pr.State == PullRequestMerged:
		// Merged, maybe squashed: the host says so whatever the history.
		res.PullRequestURL, res.State = pr.URL, gitMerged
		res.Message = fmt.Sprintf("pull request #%d from %s is already merged", pr.Number, res.Branch)
		return res, nil
	}
	var merged bool
	var brought *object.Commit
	err = j.withHistory(ctx, func() error {
		head, err := j.repo.Head(j.src.Branch)
		if err != nil {
			return err
		}
		if c.brought != nil {
			if brought, err = c.brought(head, tip.Hash.String()); err != nil || brought != nil {
				return err
			}
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
	switch {
	case brought != nil:
		res.State = gitMerged
		res.Message = fmt.Sprintf("already in %s as %s", j.src.Branch, ShortSHA(brought.Hash.String()))
		return res, nil
	case merged:
		res.State = gitMerged
		res.Message = fmt.Sprintf("%s is already merged into %s", res.Branch, j.src.Branch)
		return res, nil
	}
	title, body := splitMessage(msg)
	pr, err = host.Open(ctx, res.Branch, j.src.Branch, title, body)
	if err != nil {
		return res, err
	}
	res.PullRequestURL, res.State = pr.URL, gitOpened
	res.Message = fmt.Sprintf("pull request #%d opened from the existing branch %s", pr.Number, res.Branch)
	return res, nil
}

// pushOnto is mode Push: it clones the tracked branch, looks for the
// commit that already made the change, else plans the change on its
// head, commits it and fast-forwards the branch, and plans again on the
// new head when the branch moved (pushAttempts); it never forces.
func (j *gitJob) pushOnto(ctx context.Context, c change) (gitResult, error) {
	res := gitResult{Branch: j.src.Branch}
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
			if done, err = c.pushed(head); err != nil {
				return err
			}
			if done != nil {
				// Counted as made only when it is serin's own commit for
				// the change: trailers alone can be copied.
				own, _, why, err := j.ownCommit(ctx, c, done, head)
				if err != nil || own || j.seal.verifies(done, j.src.Branch) {
					return err
				}
				ctrl.LoggerFrom(ctx).Info("a commit carries the change's trailers but is not serin's: not counted", "commit", ShortSHA(done.Hash.String()), "why", why)
				done = nil
			}
			if plan, msg, err = c.plan(head); err != nil || plan.UpToDate || c.guard == nil {
				return err
			}
			return c.guard(head, plan)
		})
		switch {
		case err != nil:
			return res, err
		case done != nil:
			res.Commit, res.State = done.Hash.String(), gitPushed
			res.Message = fmt.Sprintf("already %s on %s by %s", c.verb, j.src.Branch, ShortSHA(res.Commit))
			return res, nil
		case plan.UpToDate:
			return c.upToDate(head.Hash.String()), nil
		}
		commit, err := j.commit(head, plan.Files, msg, j.src.Branch)
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
		res.Commit, res.State = commit.Hash.String(), gitPushed
		res.Message = fmt.Sprintf("pushed to %s (%s)", j.src.Branch, planSummary(plan))
		return res, nil
	}
}

// withHistory runs f on the clone, and while f needs history older than
// the clone holds (ErrShallowHistory), deepens the clone and runs f again,
// up to the whole branch. f reads the commits it works on from the clone
// each time: a deeper clone is a new one.
func (j *gitJob) withHistory(ctx context.Context, f func() error) error {
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
		ctrl.LoggerFrom(ctx).V(1).Info("clone deepened", "reason", redact.Message(err), "depth", j.repo.depth)
	}
}

// host returns the pull request API of the source's repository.
func (j *gitJob) host(ctx context.Context) (PullRequestHost, error) {
	api, err := j.hostAPI()
	if err != nil {
		return nil, err
	}
	return j.hosts(ctx, api)
}

// hostAPI is how the Git host API of the source's repository is reached:
// the repository, its provider, the token (hostToken) and a client that
// trusts the GitRepository's CA, unless the token is the platform's
// (platformTLS).
func (j *gitJob) hostAPI() (HostAPI, error) {
	u, err := ParseRepositoryURL(j.src.URL)
	if err != nil {
		return HostAPI{}, err
	}
	provider, err := ProviderFor(j.provider, u)
	if err != nil {
		return HostAPI{}, err
	}
	token, platform, err := j.hostToken(u)
	if err != nil {
		return HostAPI{}, err
	}
	tlsFrom := j.src.Auth
	if platform {
		tlsFrom = j.platformTLS(j.src.Auth)
	}
	httpClient, err := hostHTTPClient(tlsFrom, j.clone.connectTimeout)
	if err != nil {
		return HostAPI{}, fmt.Errorf("GitRepository %s: %w", j.src.GitRepository, err)
	}
	return HostAPI{Repo: u, Provider: provider, Token: token, HTTP: httpClient, conditional: j.conditional}, nil
}

// hostToken is the Git host API token of repo, for reverts and
// promotions alike: the agent's token file (read at each call) when the
// platform lists repo's scheme and host (--git-provider-hosts), then
// platform is true; else the GitRepository secret's password or
// bearerToken. The repository URL is a tenant's to write: the agent's
// token never goes to a host the platform did not list, nor over plain
// HTTP to a host the platform listed for https. Without either, the job
// cannot go on.
func (j *gitJob) hostToken(repo RepositoryURL) (token string, platform bool, err error) {
	if j.tokenFile != "" && j.tokenHosts.lists(repo) {
		b, err := os.ReadFile(j.tokenFile)
		if err != nil {
			return "", false, fmt.Errorf("failed to read the Git provider token: %w", err)
		}
		return strings.TrimSpace(string(b)), true, nil
	}
	if j.src.HostToken != "" {
		return j.src.HostToken, false, nil
	}
	if j.tokenFile != "" {
		return "", false, fmt.Errorf("no API token for %s: the secret of GitRepository %s has no password or bearerToken, and the agent's token is only for the hosts of --git-provider-hosts (%s): put a token in the GitRepository's secret, or ask the platform to list %s",
			repo.BaseURL(), j.src.GitRepository, j.tokenHosts, listedAs(repo))
	}
	return "", false, fmt.Errorf("no API token for %s: the secret of GitRepository %s has no password or bearerToken: put a token with the pull request scope in it",
		repo.Host, j.src.GitRepository)
}
