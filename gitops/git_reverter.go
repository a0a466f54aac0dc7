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
	"fmt"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/record"
	"github.com/serin-dev/serin/internal/redact"
)

// GitReverter reverts bad revisions in the Git repository of the Flux
// Kustomization that applied a Canary's target: it plans and verifies the
// change (PlanRevert), commits it, and pushes a branch with a pull request,
// or, with mode Push, fast-forwards the tracked branch. Its GitPromoter
// (Promoter) shares its settings and its limiter.
type GitReverter struct {
	*gitCore
	message  *template.Template
	promoter *GitPromoter
}

// WithMaxFileSize bounds the size of one file a revert or a promotion
// reads from the repository; 0 is DefaultMaxFileSize.
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

// ReverterOption configures a GitReverter and the GitPromoter that
// shares its settings (GitReverter.Promoter). The options about the Git
// host, the author, the clones and the limiter are the promotions' too;
// WithMessageTemplate is the reverts' only, WithStatusReaderFactory the
// promotions' only.
type ReverterOption func(*GitReverter) error

// WithAuthor sets the author and committer of revert and promotion
// commits.
func WithAuthor(name, email string) ReverterOption {
	return func(g *GitReverter) error {
		if name == "" || email == "" {
			return errors.New("the commit author needs a name and an email")
		}
		g.author.Name, g.author.Email = name, email
		return nil
	}
}

// WithMessageTemplate sets the revert commit message template (see
// MessageData).
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

// WithProviderTokenFile reads the agent's own Git host API token from a
// file at each call to a host of WithProviderHosts, instead of the
// GitRepository secret's password or bearerToken; it goes to no other
// host.
func WithProviderTokenFile(path string) ReverterOption {
	return func(g *GitReverter) error {
		g.tokenFile = path
		return nil
	}
}

// WithProviderHosts lists the Git hosts (host or host:port) the token of
// WithProviderTokenFile is sent to, for reverts and promotions alike;
// none by default.
func WithProviderHosts(hosts ...string) ReverterOption {
	return func(g *GitReverter) error {
		list, err := ParseHostList(strings.Join(hosts, ","))
		g.tokenHosts = list
		return err
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

// WithMaxConcurrentReverts bounds the reverts and promotions that run at
// once, across the agent (DefaultMaxConcurrentReverts by default), shared
// fairly among the Canaries' namespaces (revertLimiter). Those of the
// same repository branch run one at a time whatever the bound.
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
// or the promotion ends.
func WithCloneDir(dir string) ReverterOption {
	return func(g *GitReverter) error {
		g.clone.parent = dir
		return nil
	}
}

// WithMaxCloneSize bounds the disk a clone takes, in bytes
// (DefaultMaxCloneSize by default, 0 for no bound): a revert or a
// promotion whose clone grows beyond it stops with ErrCloneTooLarge.
func WithMaxCloneSize(bytes int64) ReverterOption {
	return func(g *GitReverter) error {
		if bytes < 0 {
			return fmt.Errorf("a negative clone size bound: %d", bytes)
		}
		g.clone.maxSize = bytes
		return nil
	}
}

// WithCloneDiskBudget bounds the disk all clones take together, in bytes
// (DefaultCloneDiskBudget by default, 0 for no bound): reverts,
// promotions and verdict reads alike. Each write of a clone is counted
// before it reaches the disk: a clone that alone would pass the budget
// stops with ErrCloneTooLarge (permanent), one that would pass what the
// clones beside it leave stops with ErrCloneDiskBusy (retried). Keep it
// below the size of the clone directory's volume (the chart's emptyDir).
func WithCloneDiskBudget(bytes int64) ReverterOption {
	return func(g *GitReverter) error {
		if bytes < 0 {
			return fmt.Errorf("a negative clone disk budget: %d", bytes)
		}
		g.clone.disk = newDiskBudget(bytes)
		return nil
	}
}

// WithConnectTimeout bounds how long a Git host may take to answer each
// request of a clone or a fetch, connection and TLS handshake included
// (DefaultConnectTimeout by default, 0 for no bound but the job's): a
// host that answers nothing fails the job with a transient error, which
// gives its slot back. It applies to Git over HTTP(S).
func WithConnectTimeout(d time.Duration) ReverterOption {
	return func(g *GitReverter) error {
		if d < 0 {
			return fmt.Errorf("a negative connect timeout: %s", d)
		}
		g.clone.connectTimeout = d
		return nil
	}
}

// NewGitReverter returns a Reverter that reads Kubernetes objects with c
// (an uncached reader: reverts are rare), and its GitPromoter.
func NewGitReverter(c client.Reader, opts ...ReverterOption) (*GitReverter, error) {
	core := &gitCore{
		client: c, author: Signature{Name: "serin", Email: "serin@users.noreply.serin.dev"}, hosts: NewGitProviderHost, now: time.Now,
		conditional: newConditionalCache(), limiter: newRevertLimiter(DefaultMaxConcurrentReverts), crossNamespace: true,
		clone: cloneOptions{maxSize: DefaultMaxCloneSize, disk: newDiskBudget(DefaultCloneDiskBudget), connectTimeout: DefaultConnectTimeout},
	}
	g := &GitReverter{gitCore: core, promoter: newGitPromoter(core)}
	var err error
	if g.message, err = ParseMessageTemplate(""); err != nil {
		return nil, err
	}
	for _, o := range opts {
		if err := o(g); err != nil {
			return nil, err
		}
	}
	core.chartOptions.CrossNamespace = core.crossNamespace
	core.charts = NewHelmCharts(c, core.chartOptions)
	return g, nil
}

// Promoter returns the GitPromoter that shares g's settings and limiter:
// a promotion waits for its turn with the reverts of the same branch.
func (g *GitReverter) Promoter() *GitPromoter {
	return g.promoter
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
// release. The members applied from the Canary's repository and branch
// (their paths and Kustomizations may differ) are reverted by this
// revert, in one commit: it returns them and their sources. Each applied
// from another repository or branch reverts its own there; the notes name
// them and the branch of their revert.
func (g *GitReverter) memberSources(ctx context.Context, req RevertRequest, src *Source) ([]*v1alpha1.Canary, []*Source, []string, error) {
	var members []*v1alpha1.Canary
	var sources []*Source
	var notes []string
	for _, m := range req.Members {
		ms, err := DiscoverSource(ctx, g.client, m, g.crossNamespace)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("member %s of group %s: %w", m.Name, req.Group, err)
		}
		if ms.URL == src.URL && ms.Branch == src.Branch {
			members, sources = append(members, m), append(sources, ms)
			continue
		}
		branch := "its own revert branch"
		if c, err := CommitOf(m.Status.LastAttemptedRevision); err == nil {
			branch = GroupRevertBranch(m.Namespace, req.Group, c)
		}
		notes = append(notes, fmt.Sprintf("member %s of the release is applied from %s (branch %s): it is reverted there, on %s",
			m.Name, ms.URL, ms.Branch, branch))
	}
	return members, sources, notes, nil
}

// Revert implements Reverter. It is idempotent: with mode PullRequest the
// branch name is derived from the bad commit and an existing branch or
// pull request is returned as is; with mode Push a commit carrying the
// Serin-Reverts trailer of the bad commit is looked for first. It waits,
// as long as ctx allows, for its turn: reverts of one repository branch
// run one at a time, and at most WithMaxConcurrentReverts at once.
func (g *GitReverter) Revert(ctx context.Context, req RevertRequest) (_ RevertResult, err error) {
	// Its error goes to status, events and logs: redacted, never raw.
	defer func() { err = redact.Error(err) }()
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
	members, sources, elsewhere, err := g.memberSources(ctx, req, src)
	if err != nil {
		return RevertResult{}, err
	}
	req.Members = members
	base, done, err := g.openJob(ctx, g.limiter, req.Canary.Namespace, src)
	if err != nil {
		return RevertResult{}, err
	}
	defer done()
	// The time bound starts once the revert runs, not while it waited.
	ctx, cancel := context.WithTimeout(ctx, RevertTimeout)
	defer cancel()
	job := &revertJob{gitJob: base, message: g.message, req: req, members: sources, elsewhere: elsewhere, bad: bad}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("repository", redact.URL(src.URL), "branch", src.Branch, "badCommit", ShortSHA(bad)))
	m := req.Canary.Spec.GitOps
	push := m != nil && m.Revert != nil && m.Revert.Mode == v1alpha1.PushRevert
	res, err := job.write(ctx, push, job.change(ctx))
	out := res.revertResult()
	if req.Group != "" {
		out.Covered = []string{req.Canary.Name}
		for _, m := range members {
			out.Covered = append(out.Covered, m.Name)
		}
	}
	return out, err
}

// revertResult tells r as a revert's result. A revert has no UpToDate
// state: a tracked branch that already renders the target as promoted is
// Merged, nothing to revert.
func (r gitResult) revertResult() RevertResult {
	states := map[gitState]string{gitOpened: StateOpened, gitPushed: StatePushed, gitMerged: StateMerged, gitUpToDate: StateMerged}
	return RevertResult{Branch: r.Branch, Commit: r.Commit, PullRequestURL: r.PullRequestURL, State: states[r.State], Message: r.Message}
}

// revertJob is one revert.
type revertJob struct {
	*gitJob
	message *template.Template
	req     RevertRequest
	// members are the sources of req.Members, in order.
	members []*Source
	// elsewhere names the members of the release that revert their own,
	// in another repository or branch (the message's notes).
	elsewhere []string
	bad       string
}

// change is the revert as gitJob.write asks for it. With mode Push, a
// commit carrying the Serin-Reverts trailer of the bad commit is the
// revert already pushed; with mode PullRequest, the revert's branch is.
func (j *revertJob) change(ctx context.Context) change {
	marker := j.marker()
	return change{
		kind: "revert", verb: "reverted", branch: j.branch(),
		plan: func(head *object.Commit) (*Plan, string, error) { return j.plan(ctx, head) },
		pushed: func(head *object.Commit) (*object.Commit, error) {
			bad, err := j.repo.Commit(j.bad)
			if err != nil {
				return nil, err
			}
			return j.repo.FindCommit(ctx, head, bad, marker)
		},
		upToDate: j.alreadyReverted,
		describe: planSummary,
		guard: func(head *object.Commit, plan *Plan) error {
			bad, err := j.repo.Commit(j.bad)
			if err != nil {
				return err
			}
			edits := plan.Paths()
			stop := func(c *object.Commit) bool { return c.Hash == bad.Hash || c.Committer.When.Before(bad.Committer.When) }
			changed, err := j.changedSince(ctx, head, stop, func(f string) bool { return slices.Contains(edits, f) })
			if err != nil || changed == nil {
				return err
			}
			return changedMeanwhile("revert", strings.Join(edits, ", "), "the bad revision "+ShortSHA(j.bad), changed)
		},
	}
}

// alreadyReverted is the result when the tracked branch already renders
// the target as promoted: nothing to commit.
func (j *revertJob) alreadyReverted(head string) gitResult {
	return gitResult{
		Branch: j.src.Branch, Commit: head, State: gitUpToDate,
		Message: fmt.Sprintf("%s at %s already renders the target as promoted: nothing to revert", j.src.Branch, ShortSHA(head)),
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
	plan, good, goodRevision, notes, err := j.planTarget(ctx, j.req.Canary, j.req.GoodRevision, j.src, bad, head)
	if err != nil {
		return nil, "", err
	}
	targets := []string{}
	if !plan.UpToDate {
		t := revertTarget(j.req.Canary, j.src)
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
		Notes:           append(append(notes, plan.Notes...), j.elsewhere...),
	}, j.bad)
	return plan, msg, err
}

// planTarget plans the revert of one Canary's target on head: back to its
// good revision (its last promoted one, else the last commit before bad
// that rendered it differently). src is where the target is defined: for a
// target a HelmRelease rendered, the HelmRelease is restored.
func (j *revertJob) planTarget(ctx context.Context, c *v1alpha1.Canary, goodRevision string, src *Source, bad, head *object.Commit) (*Plan, *object.Commit, string, []string, error) {
	target, path := revertTarget(c, src), src.Path
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
	in := PlanInput{Path: path, Target: target, Good: good, Bad: bad, Head: head, MaxFileSize: j.maxFile}
	if src.HelmRelease != nil {
		rendered := targetOf(c)
		in.Rendered, in.Charts, in.GitRepository = &rendered, j.charts, j.src.GitRepository
	}
	plan, err := PlanRevert(ctx, in)
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
			in.Bad = applied
			plan, err = PlanRevert(ctx, in)
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
		mp, _, good, mnotes, err := j.planTarget(ctx, m, good, j.members[i], bad, cur)
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
		t := revertTarget(m, j.members[i])
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
