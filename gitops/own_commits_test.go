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
	"strings"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// pushOnMain commits files on top of main's head, as author at when,
// and pushes the commit to branch (main moves only when branch is main):
// what anyone who may push to the repository can do.
func (f *gitFixture) pushOnMain(branch string, files map[string]string, author Signature, when time.Time, message string) *object.Commit {
	f.t.Helper()
	r, parent, changes := f.onMain(files)
	repo := r.repo
	c, err := r.CommitFiles(parent, changes, author, when, message)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := repo.Storer.SetReference(plumbing.NewHashReference("refs/heads/pushed", c.Hash)); err != nil {
		f.t.Fatal(err)
	}
	if err := repo.Push(&gogit.PushOptions{Auth: f.auth(), RefSpecs: []config.RefSpec{config.RefSpec("refs/heads/pushed:refs/heads/" + branch)}}); err != nil {
		f.t.Fatal(err)
	}
	return c
}

// onMain clones main and returns the clone, main's head and files as
// changes.
func (f *gitFixture) onMain(files map[string]string) (*Repository, *object.Commit, []FileChange) {
	f.t.Helper()
	repo, err := gogit.Clone(memory.NewStorage(), nil, &gogit.CloneOptions{
		URL: f.url, Auth: f.auth(), ReferenceName: "refs/heads/main", SingleBranch: true, NoCheckout: true,
	})
	if err != nil {
		f.t.Fatal(err)
	}
	head, _ := repo.Head()
	parent, _ := repo.CommitObject(head.Hash())
	var changes []FileChange
	for p, content := range files {
		changes = append(changes, FileChange{Path: p, Content: []byte(content)})
	}
	return &Repository{repo: repo}, parent, changes
}

var (
	mallory  = Signature{Name: "Mallory", Email: "mallory@example.com"}
	serinBot = Signature{Name: "serin-bot", Email: "serin-bot@example.com"}
)

// evilKustomization is apps/podinfo's kustomization with another image.
const evilKustomization = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: apps
resources:
  - deployment.yaml
  - service.yaml
  - canary.yaml
images:
  - name: ghcr.io/stefanprodan/podinfo
    newTag: evil
`

// Anyone who may push can create the promotion's branch first, during
// the soak, with other images, and open a pull request from it: serin
// opens nothing from it and adopts nothing; it writes its own commit
// under the next name. A branch that imitates serin's author but not its
// change is left alone too.
func TestGitPromoter_NeverVouchesForABranchItDidNotWrite(t *testing.T) {
	f := newGitFixture(t)
	g := f.promoter(WithStatusReaderFactory((&fakeStatuses{}).factory))
	ctx := context.Background()
	req := f.promotion(v1alpha1.PullRequestRevert)
	branch := PromoteBranch(req.Canary, "production", f.good.Hash.String())
	evil := map[string]string{"apps/podinfo/kustomization.yaml": evilKustomization}
	f.pushOnMain(branch, evil, mallory, testEpoch.Add(2*time.Hour), "serin: promote Deployment/podinfo to production")
	f.pushOnMain(branch+"-2", evil, serinBot, testEpoch.Add(2*time.Hour), "serin: promote Deployment/podinfo to production")
	// Its pull request is open already.
	f.host.prs = append(f.host.prs, &fakePR{PullRequest: PullRequest{Number: 1, URL: "https://git.example/pulls/1"}, branch: branch, base: "main", open: true})

	res, err := g.Promote(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.State != PromotionOpened || res.Branch != branch+"-3" || res.PullRequestURL == "https://git.example/pulls/1" {
		t.Fatalf("promotion = %+v, want a pull request of its own from %s-3", res, branch)
	}
	got, commit := f.file(branch+"-3", "apps/podinfo/kustomization.yaml")
	if !strings.Contains(got, "newTag: 6.9.0") || strings.Contains(got, "evil") || commit.Author.Name != "serin-bot" {
		t.Errorf("kustomization on serin's branch, by %s:\n%s", commit.Author.Name, got)
	}
	if len(f.host.prs) != 2 || f.host.prs[1].branch != branch+"-3" {
		t.Errorf("pull requests: %d, the new one from %s", len(f.host.prs), f.host.prs[len(f.host.prs)-1].branch)
	}
	// Asked again (a restart): the same pull request, nothing new.
	again, err := g.Promote(ctx, req)
	if err != nil || again.Branch != branch+"-3" || again.PullRequestURL != res.PullRequestURL || len(f.host.prs) != 2 {
		t.Errorf("again = %+v, %v; %d pull requests", again, err, len(f.host.prs))
	}

	// Its verdict is read from the branch serin wrote, never from the one
	// someone else created first: merging theirs is not the promotion
	// (the stage does not run the promoted images there), and serin's
	// pull request closed without a merge is told.
	req.Branch = res.Branch
	req.Since = testEpoch
	f.mergeIntoMain(f.branches()[branch].String())
	v, err := g.Verdict(ctx, req, res.Commit)
	if err != nil || v.Merged || v.Closed {
		t.Fatalf("verdict after the foreign branch was merged: %+v, %v", v, err)
	}
	f.host.prs[1].open = false
	if v, err = g.Verdict(ctx, req, res.Commit); err != nil || !v.Closed {
		t.Errorf("verdict after serin's pull request was closed: %+v, %v", v, err)
	}

	// Every name taken: nothing is written, and the error names them.
	f2 := newGitFixture(t)
	g2 := f2.promoter(WithStatusReaderFactory((&fakeStatuses{}).factory))
	for _, b := range branchCandidates(branch) {
		f2.pushOnMain(b, evil, mallory, testEpoch.Add(2*time.Hour), "promote")
	}
	_, err = g2.Promote(ctx, f2.promotion(v1alpha1.PullRequestRevert))
	if !errors.Is(err, ErrForeignBranch) || IsTransient(err) || !strings.Contains(err.Error(), branch+"-2") || !strings.Contains(err.Error(), "Mallory") || len(f2.host.prs) != 0 {
		t.Errorf("all names taken: %v (transient %v), %d pull requests", err, IsTransient(err), len(f2.host.prs))
	}
}

// A revert's branch created first by someone else is not proposed as the
// revert either.
func TestGitReverter_NeverVouchesForABranchItDidNotWrite(t *testing.T) {
	f := newGitFixture(t)
	g := f.reverter()
	req := f.request(v1alpha1.PullRequestRevert)
	branch := RevertBranch(req.Canary, f.bad.Hash.String())
	f.pushOnMain(branch, map[string]string{"apps/podinfo/kustomization.yaml": evilKustomization}, mallory, testEpoch.Add(2*time.Hour), "serin: revert")
	res, err := g.Revert(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.State != StateOpened || res.Branch != branch+"-2" || len(f.host.prs) != 1 || f.host.prs[0].branch != branch+"-2" {
		t.Fatalf("revert = %+v; pull requests %d", res, len(f.host.prs))
	}
	if got, _ := f.file(branch+"-2", "apps/podinfo/kustomization.yaml"); strings.Contains(got, "evil") || !strings.Contains(got, "6.7.0") {
		t.Errorf("revert branch:\n%s", got)
	}
}

// In mode Push a commit that copies a promotion's trailers is not taken
// for the promotion: serin pushes its own.
func TestGitPromoter_CopiedTrailersAreNotAPromotion(t *testing.T) {
	f := newGitFixture(t)
	g := f.promoter(WithStatusReaderFactory((&fakeStatuses{}).factory))
	req := f.promotion(v1alpha1.PushRevert)
	fake := "serin: promote\n\n" + promoteTrailers(req.Canary, "production", f.good.Hash.String())
	copied := f.pushOnMain("main", map[string]string{"README.md": "nothing promoted here"}, serinBot, testEpoch.Add(2*time.Hour), fake)
	res, err := g.Promote(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.State != PromotionPushed || res.Commit == copied.Hash.String() {
		t.Fatalf("promotion = %+v, want a push of its own (not %s)", res, ShortSHA(copied.Hash.String()))
	}
	if got, _ := f.file("main", "apps/podinfo/kustomization.yaml"); !strings.Contains(got, "newTag: 6.9.0") {
		t.Errorf("main after the promotion:\n%s", got)
	}
}

// A hotfix a person pushed to the stage's path after the wave started is
// not written over in mode Push: the promotion is refused, with a message
// naming the commit, until a person promotes by hand (Since moves on).
func TestGitPromoter_PushNeverOverwritesAHotfix(t *testing.T) {
	f := newGitFixture(t)
	g := f.promoter(WithStatusReaderFactory((&fakeStatuses{}).factory))
	ctx := context.Background()
	req := f.promotion(v1alpha1.PushRevert)
	req.Since = testEpoch.Add(time.Hour)
	hotfix := strings.Replace(evilKustomization, "newTag: evil", "newTag: 6.7.1 # hotfix", 1)
	fix := f.pushOnMain("main", map[string]string{"apps/podinfo/kustomization.yaml": hotfix}, Signature{Name: "Dev", Email: "dev@example.com"}, testEpoch.Add(2*time.Hour), "hotfix podinfo 6.7.1")
	_, err := g.Promote(ctx, req)
	if !errors.Is(err, ErrChangedMeanwhile) || IsTransient(err) || !strings.Contains(err.Error(), ShortSHA(fix.Hash.String())) || !strings.Contains(err.Error(), "hotfix podinfo 6.7.1") {
		t.Fatalf("promotion over a hotfix: %v", err)
	}
	if f.branches()["main"] != fix.Hash {
		t.Fatalf("main moved to %s", f.branches()["main"])
	}
	// Git keeps whole seconds: a hotfix of the wave's first second is
	// one made since it started.
	req.Since = testEpoch.Add(2*time.Hour + 500*time.Millisecond)
	if _, err := g.Promote(ctx, req); !errors.Is(err, ErrChangedMeanwhile) {
		t.Fatalf("promotion over a hotfix of the wave's first second: %v", err)
	}
	// Someone else's change outside the stage's path is no reason to stop.
	f.pushOnMain("main", map[string]string{"README.md": "docs"}, Signature{Name: "Dev", Email: "dev@example.com"}, testEpoch.Add(3*time.Hour), "docs")
	// Promoted by hand after the hotfix: written.
	req.Since = testEpoch.Add(150 * time.Minute)
	res, err := g.Promote(ctx, req)
	if err != nil || res.State != PromotionPushed {
		t.Fatalf("promoted by hand: %+v, %v", res, err)
	}
}

// A Push-mode revert does not write over a change a person made after the
// bad revision to a file the revert edits.
func TestGitReverter_PushNeverOverwritesAHotfix(t *testing.T) {
	f := newGitFixture(t)
	g := f.reverter()
	original := strings.Replace(evilKustomization, "newTag: evil", "newTag: 6.8.0-rc.1 # try the release candidate", 1)
	fix := f.pushOnMain("main", map[string]string{"apps/podinfo/kustomization.yaml": "# tuned by hand\n" + original}, Signature{Name: "Dev", Email: "dev@example.com"}, testEpoch.Add(2*time.Hour), "comment")
	_, err := g.Revert(context.Background(), f.request(v1alpha1.PushRevert))
	if !errors.Is(err, ErrChangedMeanwhile) || !strings.Contains(err.Error(), ShortSHA(fix.Hash.String())) {
		t.Fatalf("revert over a later change: %v", err)
	}
	if f.branches()["main"] != fix.Hash {
		t.Errorf("main moved to %s", f.branches()["main"])
	}
}

// pushCommitsToMain lands n commits on main, as a busy repository does.
func (f *gitFixture) pushCommitsToMain(n int, when time.Time) *object.Commit {
	f.t.Helper()
	repo, err := gogit.Clone(memory.NewStorage(), nil, &gogit.CloneOptions{
		URL: f.url, Auth: f.auth(), ReferenceName: "refs/heads/main", SingleBranch: true, NoCheckout: true,
	})
	if err != nil {
		f.t.Fatal(err)
	}
	r := &Repository{repo: repo}
	head, _ := repo.Head()
	c, _ := repo.CommitObject(head.Hash())
	for i := range n {
		if c, err = r.CommitFiles(c, []FileChange{{Path: "docs/log.txt", Content: []byte(time.Duration(i).String())}}, Signature{Name: "Bot", Email: "bot@example.com"}, when.Add(time.Duration(i)*time.Second), "docs"); err != nil {
			f.t.Fatal(err)
		}
	}
	if err := repo.Storer.SetReference(plumbing.NewHashReference("refs/heads/main", c.Hash)); err != nil {
		f.t.Fatal(err)
	}
	if err := repo.Push(&gogit.PushOptions{Auth: f.auth(), RefSpecs: []config.RefSpec{"refs/heads/main:refs/heads/main"}}); err != nil {
		f.t.Fatal(err)
	}
	return c
}

// The verdict is found however many commits followed the merge (here
// 150, past the 100 a fixed depth allowed), read under the context of
// the stage's cluster: another cluster's status on the same commits is
// not this stage's verdict.
func TestGitPromoter_VerdictAfterManyCommitsFromItsCluster(t *testing.T) {
	f := newGitFixture(t)
	statuses := &fakeStatuses{bySHA: map[string][]CommitStatus{}}
	g := f.promoter(WithStatusReaderFactory(statuses.factory))
	ctx := context.Background()
	req := f.promotion(v1alpha1.PullRequestRevert)
	req.Since = testEpoch
	req.Stage.Canary = &v1alpha1.PromotionCanaryReference{Name: "podinfo", Cluster: "prod-eu"}
	res, err := g.Promote(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	merge := f.mergeIntoMain(res.Commit)
	head := f.pushCommitsToMain(150, testEpoch.Add(4*time.Hour))
	statuses.bySHA[merge.String()] = []CommitStatus{{Context: "serin/prod-us/apps/podinfo", State: CommitFailure, Updated: testEpoch}}
	statuses.bySHA[head.Hash.String()] = []CommitStatus{
		{Context: "serin/apps/podinfo", State: CommitFailure, Updated: testEpoch},
		{Context: "serin/prod-eu/apps/podinfo", State: CommitSuccess, Description: "promoted", Updated: testEpoch},
	}
	v, err := g.Verdict(ctx, req, res.Commit)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Merged || v.State != CommitSuccess || v.StageCommit != head.Hash.String() {
		t.Errorf("verdict = %+v, want prod-eu's success on the newest commit %s", v, ShortSHA(head.Hash.String()))
	}
	if len(statuses.reads) > 2*verdictCandidates {
		t.Errorf("%d status reads, want at most %d", len(statuses.reads), 2*verdictCandidates)
	}
}

// A merge message names the branch itself, not a longer name it begins.
func TestNamesBranch(t *testing.T) {
	const b = "serin/promote/production/apps/podinfo/c7f9e3ad"
	cases := map[string]bool{
		"Merge pull request 'serin: promote' (#2) from " + b + " into main": true,
		"Merge branch '" + b + "'":                   true,
		"Merge branch '" + b + "-2'":                 false,
		"Merge pull request #3 from org/" + b + "-3": false,
		"Merge " + b + "-2 and then " + b:            true,
		"Merge pull request #3 from " + b + "/x":     false,
		"nothing":                                    false,
	}
	for msg, want := range cases {
		if got := namesBranch(msg, b); got != want {
			t.Errorf("namesBranch(%q) = %v, want %v", msg, got, want)
		}
	}
}

// testSealKey is the agent's commit seal key in these tests.
var testSealKey = []byte("0123456789abcdef0123456789abcdef")

// pushSealed pushes to branch, on main's head, a commit of files by serin's
// author whose message carries a seal made with key for branch: a commit
// serin (or, with another key, an impostor) wrote before a restart.
func (f *gitFixture) pushSealed(branch string, files map[string]string, key []byte) *object.Commit {
	f.t.Helper()
	r, parent, changes := f.onMain(files)
	tree, err := r.PlannedTree(parent, changes)
	if err != nil {
		f.t.Fatal(err)
	}
	msg := (&commitSeal{key: key}).seal("serin: revert Deployment/podinfo\n\n"+trailers("apps", "podinfo", f.bad.Hash.String()), branch, parent.Hash, tree)
	return f.pushOnMain(branch, files, serinBot, testEpoch.Add(2*time.Hour), msg)
}

// A revert branch serin pushed before a restart, whose change it plans
// differently now (the base or the inputs moved), is serin's by its seal:
// it is rebased in place and its pull request opened from it, never
// written beside it under another name.
func TestGitReverter_RebasesItsSealedBranchInsteadOfWritingBesideIt(t *testing.T) {
	f := newGitFixture(t)
	g := f.reverter(WithCommitSealKey(testSealKey))
	req := f.request(v1alpha1.PullRequestRevert)
	branch := RevertBranch(req.Canary, f.bad.Hash.String())
	stale := f.pushSealed(branch, map[string]string{"apps/podinfo/kustomization.yaml": evilKustomization}, testSealKey)

	res, err := g.Revert(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.State != StateOpened || res.Branch != branch || len(f.host.prs) != 1 || f.host.prs[0].branch != branch {
		t.Fatalf("revert = %+v; pull requests %d, want one from %s", res, len(f.host.prs), branch)
	}
	got, commit := f.file(branch, "apps/podinfo/kustomization.yaml")
	if strings.Contains(got, "evil") || !strings.Contains(got, "6.7.0") || commit.Hash == stale.Hash {
		t.Errorf("revert branch at %s:\n%s", ShortSHA(commit.Hash.String()), got)
	}
	if !(&commitSeal{key: testSealKey}).verifies(commit, branch) {
		t.Errorf("the rebased commit carries no valid seal:\n%s", commit.Message)
	}
	for name := range f.branches() {
		if name != "main" && name != branch {
			t.Errorf("branch %s written beside %s", name, branch)
		}
	}
	// Asked again: the same branch and pull request, nothing new.
	again, err := g.Revert(context.Background(), req)
	if err != nil || again.Branch != branch || again.PullRequestURL != res.PullRequestURL || len(f.host.prs) != 1 {
		t.Errorf("again = %+v, %v; %d pull requests", again, err, len(f.host.prs))
	}
}

// A seal proves nothing made with another key, or copied from one of
// serin's commits onto another change: such a branch is someone else's,
// left alone, and the revert goes under the next name.
func TestGitReverter_ASealItCannotVerifyIsNotItsOwn(t *testing.T) {
	for name, key := range map[string][]byte{
		"made with another key":          []byte("fedcba9876543210fedcba9876543210"),
		"copied from one of its commits": testSealKey,
	} {
		t.Run(name, func(t *testing.T) {
			f := newGitFixture(t)
			g := f.reverter(WithCommitSealKey(testSealKey))
			req := f.request(v1alpha1.PullRequestRevert)
			branch := RevertBranch(req.Canary, f.bad.Hash.String())
			// A commit sealed with key for the branch, on another branch.
			sealed := f.pushSealed(branch, map[string]string{"README.md": "sealed"}, key)
			f.pushOnMain("elsewhere", map[string]string{"README.md": "sealed"}, serinBot, testEpoch.Add(2*time.Hour), sealed.Message)
			f.deleteBranch(branch)
			// Its seal line on another change, under the revert's name.
			_, seal, _ := strings.Cut(sealed.Message, sealTrailer)
			evil := f.pushOnMain(branch, map[string]string{"apps/podinfo/kustomization.yaml": evilKustomization}, serinBot, testEpoch.Add(2*time.Hour),
				"serin: revert\n\n"+trailers("apps", "podinfo", f.bad.Hash.String())+sealTrailer+seal)
			res, err := g.Revert(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Branch != branch+"-2" {
				t.Fatalf("revert = %+v, want its own branch %s-2", res, branch)
			}
			if got := f.branches()[branch]; got != evil.Hash {
				t.Errorf("the branch with the seal it cannot verify was changed: %s", got)
			}
		})
	}
}

// Once a change has its branch, nothing serin wrote for it is left under
// another name: its own branch is taken first, whatever the names before
// it, and its sealed duplicates are deleted.
func TestGitReverter_KeepsOneBranchOfItsOwn(t *testing.T) {
	f := newGitFixture(t)
	g := f.reverter(WithCommitSealKey(testSealKey))
	req := f.request(v1alpha1.PullRequestRevert)
	branch := RevertBranch(req.Canary, f.bad.Hash.String())
	// An earlier run found the first name taken and wrote under -2.
	f.pushOnMain(branch, map[string]string{"apps/podinfo/kustomization.yaml": evilKustomization}, mallory, testEpoch.Add(2*time.Hour), "not serin's")
	first, err := g.Revert(context.Background(), req)
	if err != nil || first.Branch != branch+"-2" {
		t.Fatalf("first revert = %+v, %v", first, err)
	}
	// The first name is free again, and -3 holds a stale commit of serin's.
	f.deleteBranch(branch)
	f.pushSealed(branch+"-3", map[string]string{"README.md": "stale"}, testSealKey)
	f.host.prs = nil // the pull request was never recorded (a restart)

	res, err := g.Revert(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Branch != branch+"-2" || res.Commit != first.Commit || len(f.host.prs) != 1 || f.host.prs[0].branch != branch+"-2" {
		t.Fatalf("revert = %+v; pull requests %d; want %s-2 at %s again", res, len(f.host.prs), branch, ShortSHA(first.Commit))
	}
	branches := f.branches()
	delete(branches, "main")
	if len(branches) != 1 || branches[branch+"-2"].String() != first.Commit {
		t.Errorf("branches after the revert: %v, want only %s-2", branches, branch)
	}
}

// deleteBranch deletes a branch of the server, as a person may.
func (f *gitFixture) deleteBranch(branch string) {
	f.t.Helper()
	repo, err := gogit.Clone(memory.NewStorage(), nil, &gogit.CloneOptions{
		URL: f.url, Auth: f.auth(), ReferenceName: "refs/heads/main", SingleBranch: true, NoCheckout: true,
	})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := repo.Push(&gogit.PushOptions{Auth: f.auth(), RefSpecs: []config.RefSpec{config.RefSpec(":refs/heads/" + branch)}}); err != nil {
		f.t.Fatal(err)
	}
}

// A seal verifies for the branch, parent, tree and message it was made
// for, and for nothing else.
func TestCommitSeal_CoversBranchParentTreeAndMessage(t *testing.T) {
	s := &commitSeal{key: testSealKey}
	parent, tree := plumbing.NewHash("1111111111111111111111111111111111111111"), plumbing.NewHash("2222222222222222222222222222222222222222")
	msg := s.seal("serin: revert\n\n"+trailers("apps", "podinfo", "abc"), "serin/revert/apps/podinfo/abc", parent, tree)
	commit := func(msg string, parent, tree plumbing.Hash) *object.Commit {
		return &object.Commit{Message: msg, ParentHashes: []plumbing.Hash{parent}, TreeHash: tree}
	}
	other := plumbing.NewHash("3333333333333333333333333333333333333333")
	for name, tc := range map[string]struct {
		c      *object.Commit
		branch string
		key    []byte
		want   bool
	}{
		"as sealed":               {c: commit(msg, parent, tree), branch: "serin/revert/apps/podinfo/abc", key: testSealKey, want: true},
		"another branch":          {c: commit(msg, parent, tree), branch: "serin/revert/apps/podinfo/abc-2", key: testSealKey},
		"another parent":          {c: commit(msg, other, tree), branch: "serin/revert/apps/podinfo/abc", key: testSealKey},
		"another tree":            {c: commit(msg, parent, other), branch: "serin/revert/apps/podinfo/abc", key: testSealKey},
		"other trailers":          {c: commit(strings.Replace(msg, "Serin-Reverts: abc", "Serin-Reverts: def", 1), parent, tree), branch: "serin/revert/apps/podinfo/abc", key: testSealKey},
		"a line after the seal":   {c: commit(msg+"Signed-off-by: x\n", parent, tree), branch: "serin/revert/apps/podinfo/abc", key: testSealKey},
		"another key":             {c: commit(msg, parent, tree), branch: "serin/revert/apps/podinfo/abc", key: []byte("fedcba9876543210fedcba9876543210")},
		"no key verifies nothing": {c: commit(msg, parent, tree), branch: "serin/revert/apps/podinfo/abc"},
		"no seal":                 {c: commit("serin: revert\n", parent, tree), branch: "serin/revert/apps/podinfo/abc", key: testSealKey},
	} {
		t.Run(name, func(t *testing.T) {
			var s *commitSeal
			if tc.key != nil {
				s = &commitSeal{key: tc.key}
			}
			if got := s.verifies(tc.c, tc.branch); got != tc.want {
				t.Errorf("verifies = %v, want %v", got, tc.want)
			}
		})
	}
}
