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
	"maps"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/util"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/internal/record"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

var (
	// gitea is the Git host of the GitOps revert tests.
	gitea *testbed.Gitea
	// flux is source-controller and kustomize-controller.
	flux *testbed.Flux
)

// startGitOps starts Gitea, source-controller and kustomize-controller on
// the testbed and returns the agent flags of GitOps revert against them.
func startGitOps(ctx context.Context) ([]string, error) {
	var err error
	if gitea, err = env.StartGitea(ctx, testbed.GiteaOptions{}); err != nil {
		return nil, fmt.Errorf("gitea: %w", err)
	}
	if flux, err = env.StartFlux(ctx, testbed.FluxOptions{}); err != nil {
		return nil, fmt.Errorf("flux: %w", err)
	}
	return []string{"--git-provider=gitea", "--git-author-name=serin-e2e", "--git-author-email=serin-e2e@testbed.serin.dev"}, nil
}

// fleet is a Gitea repository applied by a GitRepository and a
// Kustomization in the test's namespace, and a clone to commit to it.
type fleet struct {
	t    testing.TB
	ns   string
	name string
	repo *gogit.Repository
	// in is the cluster that applies it; the testbed's when nil. Its Flux
	// reads the repository as the cluster's Gitea user.
	in *cluster
}

// cluster is the cluster that applies the fleet.
func (f *fleet) cluster() *cluster {
	if f.in == nil {
		return testbedCluster()
	}
	return f.in
}

func giteaAuth() *http.BasicAuth { return &http.BasicAuth{Username: gitea.User, Password: gitea.Token} }

// newFleet creates the repository, commits files as its first commit, and
// has Flux apply ./apps/podinfo from it.
func newFleet(t testing.TB, g Gomega, ns string, files map[string]string) *fleet {
	t.Helper()
	return newFleetWith(t, g, ns, files, nil)
}

// newFleetWith is newFleet whose GitRepository spec is completed with
// source (e.g. another url to the same repository).
func newFleetWith(t testing.TB, g Gomega, ns string, files map[string]string, source map[string]any) *fleet {
	t.Helper()
	return createFleet(t, g, ns, files, source, nil)
}

// newFleetWithKustomization is newFleet whose Kustomization spec is
// completed with kustomization (e.g. a shorter interval, ignore rules).
func newFleetWithKustomization(t testing.TB, g Gomega, ns string, files map[string]string, kustomization map[string]any) *fleet {
	t.Helper()
	return createFleet(t, g, ns, files, nil, kustomization)
}

// createFleet is newFleet with the GitRepository's and Kustomization's
// specs completed with source and kustomization.
func createFleet(t testing.TB, g Gomega, ns string, files map[string]string, source, kustomization map[string]any) *fleet {
	t.Helper()
	ctx := context.Background()
	f := &fleet{t: t, ns: ns, name: ns}
	g.Expect(gitea.CreateRepository(ctx, f.name)).To(Succeed())
	repo, err := gogit.InitWithOptions(memory.NewStorage(), memfs.New(), gogit.InitOptions{DefaultBranch: "refs/heads/main"})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{gitea.RepositoryURL(f.name)}})
	g.Expect(err).NotTo(HaveOccurred())
	f.repo = repo
	f.push(files, "Add podinfo")
	applyFleet(t, g, f, source, kustomization)
	return f
}

// applyFleet creates the GitRepository of the fleet's repository (with
// its secret) and the Kustomization that applies ./apps/podinfo from it,
// their specs completed with source and kustomization (e.g. timeout,
// targetNamespace).
func applyFleet(t testing.TB, g Gomega, f *fleet, source, kustomization map[string]any) {
	t.Helper()
	ctx := context.Background()
	in := f.cluster()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet-auth", Namespace: f.ns},
		StringData: map[string]string{"username": in.git.User, "password": in.git.Token},
	}
	g.Expect(in.k8s.Create(ctx, secret)).To(Succeed())
	repo := map[string]any{
		"url": gitea.RepositoryURL(f.name), "interval": "10m", "timeout": "30s",
		"ref": map[string]any{"branch": "main"}, "secretRef": map[string]any{"name": "fleet-auth"},
	}
	maps.Copy(repo, source)
	g.Expect(in.k8s.Create(ctx, fluxObject("source.toolkit.fluxcd.io/v1", "GitRepository", f.ns, "fleet", repo))).To(Succeed())
	spec := map[string]any{
		"interval": "10m", "path": "./apps/podinfo", "prune": true, "timeout": "1m",
		"sourceRef": map[string]any{"kind": "GitRepository", "name": "fleet"},
	}
	maps.Copy(spec, kustomization)
	g.Expect(in.k8s.Create(ctx, fluxObject("kustomize.toolkit.fluxcd.io/v1", "Kustomization", f.ns, "apps", spec))).To(Succeed())
}

func fluxObject(apiVersion, kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
}

// push commits the files (on top of the previous commit's) to main and
// returns the commit hash.
func (f *fleet) push(files map[string]string, message string) string {
	f.t.Helper()
	wt, err := f.repo.Worktree()
	if err != nil {
		f.t.Fatal(err)
	}
	for p, c := range files {
		if err := util.WriteFile(wt.Filesystem, p, []byte(c), 0o644); err != nil {
			f.t.Fatal(err)
		}
	}
	if err := wt.AddWithOptions(&gogit.AddOptions{All: true}); err != nil {
		f.t.Fatal(err)
	}
	sig := &object.Signature{Name: "Dev", Email: "dev@testbed.serin.dev", When: time.Now()}
	hash, err := wt.Commit(message, &gogit.CommitOptions{Author: sig, Committer: sig})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.repo.Push(&gogit.PushOptions{Auth: giteaAuth(), RefSpecs: []config.RefSpec{"refs/heads/main:refs/heads/main"}}); err != nil {
		f.t.Fatal(err)
	}
	return hash.String()
}

// sync asks source-controller to fetch now and waits until the
// Kustomization applied commit.
func (f *fleet) sync(g Gomega, commit string) {
	ctx := context.Background()
	k8s := f.cluster().k8s
	repo := &unstructured.Unstructured{}
	repo.SetAPIVersion("source.toolkit.fluxcd.io/v1")
	repo.SetKind("GitRepository")
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: f.ns, Name: "fleet"}, repo)).To(Succeed())
	patch := client.MergeFrom(repo.DeepCopy())
	ann := repo.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann["reconcile.fluxcd.io/requestedAt"] = time.Now().Format(time.RFC3339Nano)
	repo.SetAnnotations(ann)
	g.Expect(k8s.Patch(ctx, repo, patch)).To(Succeed())
	g.Eventually(func(g Gomega) {
		ks := &unstructured.Unstructured{}
		ks.SetAPIVersion("kustomize.toolkit.fluxcd.io/v1")
		ks.SetKind("Kustomization")
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: f.ns, Name: "apps"}, ks)).To(Succeed())
		rev, _, _ := unstructured.NestedString(ks.Object, "status", "lastAppliedRevision")
		g.Expect(rev).To(Equal("main@sha1:" + commit))
	}, 120*time.Second, 200*time.Millisecond).Should(Succeed(), "Flux never applied %s", commit)
}

// pullRequest is the part of Gitea's pull request the tests read.
type pullRequest struct {
	Number  int    `json:"number"`
	Title   string `json:"title"`
	Body    string `json:"body"`
	HTMLURL string `json:"html_url"`
	Merged  bool   `json:"merged"`
	// User is who opened it.
	User struct {
		Login string `json:"login"`
	} `json:"user"`
	Head struct {
		Ref string `json:"ref"`
		Sha string `json:"sha"`
	} `json:"head"`
	Base struct {
		Ref string `json:"ref"`
	} `json:"base"`
}

// pullRequests lists every pull request of the fleet, open or not.
func (f *fleet) pullRequests(g Gomega) []pullRequest {
	var prs []pullRequest
	g.Expect(gitea.API(context.Background(), "GET", fmt.Sprintf("/repos/%s/%s/pulls?state=all", gitea.User, f.name), nil, &prs)).To(Succeed())
	return prs
}

// mergePull merges a pull request of the fleet with a merge commit, as a
// person does, has Flux apply main and returns main's commit.
func (f *fleet) mergePull(g Gomega, number int) string {
	g.Expect(gitea.API(context.Background(), "POST", fmt.Sprintf("/repos/%s/%s/pulls/%d/merge", gitea.User, f.name, number),
		map[string]any{"Do": "merge"}, nil)).To(Succeed())
	head := f.head(g)
	f.sync(g, head)
	return head
}

// branches lists the fleet's branch names.
func (f *fleet) branches(g Gomega) []string {
	var list []struct {
		Name string `json:"name"`
	}
	g.Expect(gitea.API(context.Background(), "GET", fmt.Sprintf("/repos/%s/%s/branches", gitea.User, f.name), nil, &list)).To(Succeed())
	names := make([]string, 0, len(list))
	for _, b := range list {
		names = append(names, b.Name)
	}
	return names
}

// podinfoApp is the app's directory in the fleet at an image tag: a
// Deployment without replicas (serin scales it), a Canary that reverts in
// Git with mode, and a kustomization.yaml that sets the tag.
func podinfoApp(ns, tag string, mode v1alpha1.RevertMode) map[string]string {
	return map[string]string{
		"apps/podinfo/kustomization.yaml": fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: %s
resources:
  - deployment.yaml
  - canary.yaml
images:
  - name: podinfo
    newTag: %s # the released version
`, ns, tag),
		"apps/podinfo/deployment.yaml": podinfoDeployment(""),
		"apps/podinfo/canary.yaml": fmt.Sprintf(`apiVersion: serin.dev/v1alpha1
kind: Canary
metadata:
  name: podinfo
spec:
  targetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: podinfo
  progressDeadlineSeconds: 5
  service:
    port: 9898
  routing:
    provider: kubernetes
  analysis:
    interval: 1s
    iterations: 1
  gitops:
    revert:
      on: [Halted]
      mode: %s
`, mode),
	}
}

// podinfoDeployment is the app's Deployment; templateMeta is inserted in its
// pod template's metadata.
func podinfoDeployment(templateMeta string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: podinfo
  labels:
    app: podinfo
spec:
  selector:
    matchLabels:
      app: podinfo
  template:
    metadata:%s
      labels:
        app: podinfo
    spec:
      containers:
        - name: podinfo
          image: podinfo
          ports:
            - name: http
              containerPort: 9898
`, templateMeta)
}

// The full GitOps loop: a revision whose primary never becomes ready halts
// the promotion; serin opens a pull request in Gitea that reverts it, a
// second reconcile opens no other, and once the pull request is merged
// Flux applies the good spec again and serin restores the primary.
func TestRevert_HaltedPromotionOpensPullRequest(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	f, canary, good, bad := haltBadRevision(t, g, ns, v1alpha1.PullRequestRevert)

	// serin opens the revert pull request by itself and records it.
	branch := "serin/revert/" + ns + "/podinfo/" + bad[:8]
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)).To(Succeed())
		g.Expect(canary.Status.Revert).NotTo(BeNil())
		g.Expect(canary.Status.Revert.State).To(Equal(gitops.StateOpened), "revert: %+v", canary.Status.Revert)
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	revert := *canary.Status.Revert
	g.Expect(revert.Revision).To(Equal("main@sha1:" + bad))
	g.Expect(revert.Branch).To(Equal(branch))
	g.Expect(revert.Commit).To(HaveLen(40))

	prs := f.pullRequests(g)
	g.Expect(prs).To(HaveLen(1))
	pr := prs[0]
	g.Expect(pr.HTMLURL).To(Equal(revert.PullRequestURL))
	g.Expect(pr.Head.Ref).To(Equal(branch))
	g.Expect(pr.Head.Sha).To(Equal(revert.Commit))
	g.Expect(pr.Base.Ref).To(Equal("main"))
	g.Expect(pr.Title).To(Equal("Revert Deployment/podinfo in " + ns + " to " + good[:8]))
	// The description says why, with the bad revision's analysis record:
	// its last step's checks, as the Canary recorded them.
	g.Expect(canary.Status.Analyses).NotTo(BeEmpty())
	g.Expect(canary.Status.Analyses[0].Revision).To(Equal("main@sha1:" + bad))
	last := record.Decisive(&canary.Status.Analyses[0])
	g.Expect(last).NotTo(BeNil())
	g.Expect(pr.Body).To(ContainSubstring(fmt.Sprintf("Analysis at canary weight %d%%", last.Weight)))
	lines := record.Lines(last)
	if len(lines) == 0 {
		lines = []string{"no metric check or webhook in this step: " + last.Verdict}
	}
	for _, line := range lines {
		g.Expect(pr.Body).To(ContainSubstring("- " + line))
	}
	t.Logf("revert pull request description:\n%s", pr.Body)
	diff, err := gitea.Raw(ctx, fmt.Sprintf("/repos/%s/%s/pulls/%d.diff", gitea.User, f.name, pr.Number))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(diff).To(ContainSubstring("-    newTag: v3 # the released version"))
	g.Expect(diff).To(ContainSubstring("+    newTag: v2 # the released version"))
	g.Expect(diff).To(ContainSubstring("-        " + testbed.NeverReadyAsPrimaryAnnotation))
	t.Logf("revert pull request %s:\n%s", pr.HTMLURL, diff)

	// Another reconcile (a revert request) finds the same pull request.
	requestRevert(g, canary)
	g.Expect(canary.Status.Revert.State).To(Equal(gitops.StateOpened))
	g.Expect(canary.Status.Revert.PullRequestURL).To(Equal(revert.PullRequestURL))
	g.Expect(canary.Status.Revert.Commit).To(Equal(revert.Commit))
	g.Expect(f.pullRequests(g)).To(HaveLen(1))
	g.Expect(f.branches(g)).To(ConsistOf("main", branch))

	// A person merges the pull request; Flux applies the good spec again.
	f.mergePull(g, pr.Number)
	target := &appsv1.Deployment{}
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, target)).To(Succeed())
		g.Expect(target.Spec.Template.Spec.Containers[0].Image).To(Equal("podinfo:v2"))
		g.Expect(target.Spec.Template.Annotations).NotTo(HaveKey(testbed.NeverReadyAsPrimaryAnnotation))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(f.pullRequests(g)[0].Merged).To(BeTrue())

	// serin restores the primary to the good spec: the loop is closed. No
	// user saw an error from v2's rollout through the halt, the pull
	// request and the restore.
	waitForPhase(g, canary, v1alpha1.PhaseSucceeded, 60*time.Second)
	g.Eventually(func() string { return lastVersion(usersIn(ns)) }, 10*time.Second).Should(Equal("v2"))
	expectNoUserErrors(t, g, ns)
}

// haltBadRevision seeds a fleet, promotes v2, then pushes v3 with a
// template whose primary never becomes ready, and waits for Halted. It
// returns the fleet, the Canary, and the good and bad commits.
func haltBadRevision(t testing.TB, g Gomega, ns string, mode v1alpha1.RevertMode) (*fleet, *v1alpha1.Canary, string, string) {
	t.Helper()
	return haltBadRevisionOf(t, g, newFleet(t, g, ns, podinfoApp(ns, "v1", mode)), ns, mode)
}

// haltBadRevisionOf is haltBadRevision on a fleet seeded with podinfo v1.
func haltBadRevisionOf(t testing.TB, g Gomega, f *fleet, ns string, mode v1alpha1.RevertMode) (*fleet, *v1alpha1.Canary, string, string) {
	t.Helper()
	ctx := context.Background()
	first, err := f.repo.Reference("refs/heads/main", true)
	g.Expect(err).NotTo(HaveOccurred())
	f.sync(g, first.Hash().String())
	canary := &v1alpha1.Canary{ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: ns}}
	waitForPhase(g, canary, v1alpha1.PhaseInitialized, 60*time.Second)
	// The users reach the apex Service through the Gateway (blue/green).
	createRoute(t, g, ns, "podinfo", appHost(ns), "podinfo")
	users.Store(ns, startUsers(t, appHost(ns)))

	good := f.push(podinfoApp(ns, "v2", mode), "Release podinfo v2")
	f.sync(g, good)
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)).To(Succeed())
		g.Expect(canary.Status.Phase).To(Equal(v1alpha1.PhaseSucceeded))
		g.Expect(canary.Status.LastPromotedRevision).To(Equal("main@sha1:" + good))
	}, 90*time.Second, 200*time.Millisecond).Should(Succeed())

	bad := f.push(map[string]string{
		"apps/podinfo/kustomization.yaml": podinfoApp(ns, "v3", mode)["apps/podinfo/kustomization.yaml"],
		"apps/podinfo/deployment.yaml":    podinfoDeployment("\n      annotations:\n        " + testbed.NeverReadyAsPrimaryAnnotation + `: "true"`),
	}, "Release podinfo v3")
	f.sync(g, bad)
	waitForPhase(g, canary, v1alpha1.PhaseHalted, 90*time.Second)
	g.Expect(canary.Status.LastAttemptedRevision).To(Equal("main@sha1:" + bad))
	return f, canary, good, bad
}

// With mode Push the revert is pushed to the tracked branch itself
// (fast-forward), and Flux applies the good spec without a person.
// The agent reads and writes Git with the GitRepository's own secret.
func TestRevert_PushModeFastForwardsTheBranch(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	f, canary, _, bad := haltBadRevision(t, g, ns, v1alpha1.PushRevert)

	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)).To(Succeed())
		g.Expect(canary.Status.Revert).NotTo(BeNil())
		g.Expect(canary.Status.Revert.State).To(Equal(gitops.StatePushed), "revert: %+v", canary.Status.Revert)
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	revert := *canary.Status.Revert
	g.Expect(revert.Revision).To(Equal("main@sha1:" + bad))
	g.Expect(revert.Branch).To(Equal("main"))
	g.Expect(revert.PullRequestURL).To(BeEmpty())

	var main struct {
		Commit struct {
			ID      string `json:"id"`
			Message string `json:"message"`
		} `json:"commit"`
	}
	g.Expect(gitea.API(ctx, "GET", fmt.Sprintf("/repos/%s/%s/branches/main", gitea.User, f.name), nil, &main)).To(Succeed())
	g.Expect(main.Commit.ID).To(Equal(revert.Commit))
	g.Expect(main.Commit.Message).To(ContainSubstring("Serin-Reverts: " + bad))
	g.Expect(main.Commit.Message).To(ContainSubstring("This reverts commit " + bad))
	var parent struct {
		Parents []struct {
			Sha string `json:"sha"`
		} `json:"parents"`
	}
	g.Expect(gitea.API(ctx, "GET", fmt.Sprintf("/repos/%s/%s/git/commits/%s", gitea.User, f.name, revert.Commit), nil, &parent)).To(Succeed())
	g.Expect(parent.Parents).To(HaveLen(1))
	g.Expect(parent.Parents[0].Sha).To(Equal(bad), "a fast-forward on top of the bad commit")
	g.Expect(f.pullRequests(g)).To(BeEmpty())
	g.Expect(f.branches(g)).To(ConsistOf("main"))

	f.sync(g, revert.Commit)
	target := &appsv1.Deployment{}
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, target)).To(Succeed())
		g.Expect(target.Spec.Template.Spec.Containers[0].Image).To(Equal("podinfo:v2"))
		g.Expect(target.Spec.Template.Annotations).NotTo(HaveKey(testbed.NeverReadyAsPrimaryAnnotation))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	waitForPhase(g, canary, v1alpha1.PhaseSucceeded, 60*time.Second)
}
