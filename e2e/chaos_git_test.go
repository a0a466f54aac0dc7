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

package e2e

import (
	"context"
	"fmt"
	"strings"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// gitLane is a chaos lane whose Canary, Deployment and revisions come from
// Git through Flux, and whose halted promotions serin reverts by pull
// request while its agents are killed.
type gitLane struct {
	f      *fleet
	ns     string
	c      *v1alpha1.Canary
	pushed []string // every commit the lane pushed or merged into main
	bad    int      // the bad revisions released
}

// newGitLane seeds a fleet with podinfo v1 whose Canary belongs to the
// chaos agents, and waits until it is initialized.
func newGitLane(g Gomega, f func(map[string]string) *fleet, ns string) *gitLane {
	files := chaosApp(ns, "v1", "")
	l := &gitLane{f: f(files), ns: ns, c: &v1alpha1.Canary{}}
	l.c.Name, l.c.Namespace = "podinfo", ns
	head, err := l.f.repo.Reference("refs/heads/main", true)
	g.Expect(err).NotTo(HaveOccurred())
	l.pushed = append(l.pushed, head.Hash().String())
	l.f.sync(g, head.Hash().String())
	waitForPhase(g, l.c, v1alpha1.PhaseInitialized, 60*time.Second)
	return l
}

// chaosApp is podinfoApp at tag, its Canary labelled for the chaos agents,
// with templateMeta in the Deployment's pod template.
func chaosApp(ns, tag, templateMeta string) map[string]string {
	files := podinfoApp(ns, tag, v1alpha1.PullRequestRevert)
	files["apps/podinfo/canary.yaml"] = strings.Replace(files["apps/podinfo/canary.yaml"],
		"metadata:\n  name: podinfo\n", "metadata:\n  name: podinfo\n  labels:\n    "+shardLabel+": chaos\n", 1)
	files["apps/podinfo/deployment.yaml"] = podinfoDeployment(templateMeta)
	return files
}

// round releases one revision through Git: a bad one (its primary never
// gets ready), which must halt and be reverted by serin's pull request,
// merged here, or a good one, which must be promoted.
func (l *gitLane) round(g Gomega, tag string, bad bool) string {
	ctx := context.Background()
	l.f.pull(g)
	if !bad {
		commit := l.f.push(chaosApp(l.ns, tag, ""), "Release podinfo "+tag)
		l.pushed = append(l.pushed, commit)
		l.f.sync(g, commit)
		waitForPromotedRevision(g, l.c, commit)
		return string(v1alpha1.PhaseSucceeded)
	}
	l.bad++
	commit := l.f.push(chaosApp(l.ns, tag, "\n      annotations:\n        "+testbed.NeverReadyAsPrimaryAnnotation+`: "true"`), "Release podinfo "+tag)
	l.pushed = append(l.pushed, commit)
	l.f.sync(g, commit)
	waitForPhase(g, l.c, v1alpha1.PhaseHalted, 180*time.Second)
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(l.c), l.c)).To(Succeed())
		g.Expect(l.c.Status.Revert).NotTo(BeNil())
		g.Expect(l.c.Status.Revert.Revision).To(Equal("main@sha1:" + commit))
		g.Expect(l.c.Status.Revert.State).To(Equal(gitops.StateOpened), "revert: %+v", l.c.Status.Revert)
	}, 180*time.Second, 200*time.Millisecond).Should(Succeed())
	var pr *pullRequest
	for _, p := range l.f.pullRequests(g) {
		if p.HTMLURL == l.c.Status.Revert.PullRequestURL {
			pr = &p
		}
	}
	g.Expect(pr).NotTo(BeNil(), "the pull request %s", l.c.Status.Revert.PullRequestURL)
	g.Expect(gitea.API(ctx, "POST", fmt.Sprintf("/repos/%s/%s/pulls/%d/merge", gitea.User, l.f.name, pr.Number),
		map[string]any{"Do": "merge"}, nil)).To(Succeed())
	merged := l.f.head(g)
	l.pushed = append(l.pushed, merged)
	l.f.sync(g, merged)
	waitForPhase(g, l.c, v1alpha1.PhaseSucceeded, 180*time.Second)
	return string(v1alpha1.PhaseSucceeded) + " (reverted by pull request)"
}

// audit counts, at the end, the pull requests and branches beyond one per
// bad revision, and the commits pushed or merged that main lost.
func (l *gitLane) audit(g Gomega) (duplicatePRs, duplicateBranches, lostCommits int) {
	prs := l.f.pullRequests(g)
	heads := map[string]bool{}
	for _, p := range prs {
		heads[p.Head.Ref] = true
	}
	duplicatePRs = len(prs) - l.bad + (len(prs) - len(heads))
	duplicateBranches = len(l.f.branches(g)) - 1 - l.bad
	l.f.pull(g)
	reachable := map[string]bool{}
	head, err := l.f.repo.Reference("refs/heads/main", true)
	g.Expect(err).NotTo(HaveOccurred())
	commits, err := l.f.repo.Log(&gogit.LogOptions{From: head.Hash()})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(commits.ForEach(func(c *object.Commit) error { reachable[c.Hash.String()] = true; return nil })).To(Succeed())
	for _, c := range l.pushed {
		if !reachable[c] {
			lostCommits++
		}
	}
	return duplicatePRs, duplicateBranches, lostCommits
}

// waitForPromotedRevision waits until the Canary promoted commit.
func waitForPromotedRevision(g Gomega, c *v1alpha1.Canary, commit string) {
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(c.Status.Phase).To(Equal(v1alpha1.PhaseSucceeded))
		g.Expect(c.Status.LastPromotedRevision).To(Equal("main@sha1:" + commit))
	}, 180*time.Second, 200*time.Millisecond).Should(Succeed())
}

// pull brings the fleet's clone to main as Gitea has it (after merges).
func (f *fleet) pull(g Gomega) {
	err := f.repo.Fetch(&gogit.FetchOptions{Auth: giteaAuth(), Force: true,
		RefSpecs: []config.RefSpec{"+refs/heads/main:refs/remotes/origin/main"}})
	if err != nil && err != gogit.NoErrAlreadyUpToDate {
		g.Expect(err).NotTo(HaveOccurred())
	}
	remote, err := f.repo.Reference("refs/remotes/origin/main", true)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(f.repo.Storer.SetReference(plumbing.NewHashReference("refs/heads/main", remote.Hash()))).To(Succeed())
	wt, err := f.repo.Worktree()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(wt.Reset(&gogit.ResetOptions{Commit: remote.Hash(), Mode: gogit.HardReset})).To(Succeed())
}

// head is main's commit on Gitea.
func (f *fleet) head(g Gomega) string {
	var main struct {
		Commit struct {
			ID string `json:"id"`
		} `json:"commit"`
	}
	g.Expect(gitea.API(context.Background(), "GET", fmt.Sprintf("/repos/%s/%s/branches/main", gitea.User, f.name), nil, &main)).To(Succeed())
	return main.Commit.ID
}
