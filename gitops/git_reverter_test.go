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
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/gittestserver"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testutil"
)

const (
	gitUser     = "serin"
	gitPassword = "s3cret-token"
	repoPath    = "fleet/podinfo.git"
)

// gitFixture is a real Git server over HTTP holding a fleet repository
// whose main branch has a good and a bad commit (testdata case
// image-bump-kustomization), and the Flux objects that apply it.
type gitFixture struct {
	t         testing.TB
	server    *gittestserver.GitServer
	url       string
	good, bad *object.Commit
	k8s       client.Client
	host      *fakeHost
}

func newGitFixture(t *testing.T) *gitFixture {
	t.Helper()
	server := startGitServer(t)
	f := &gitFixture{t: t, server: server, url: server.HTTPAddress() + "/" + repoPath, host: &fakeHost{}}

	local := newTestRepo(t)
	f.good = local.commitDir(filepath.Join("testdata", "image-bump-kustomization", "good"), "Promote podinfo 6.7.0")
	f.bad = local.commitDir(filepath.Join("testdata", "image-bump-kustomization", "original"), "Try podinfo 6.8.0-rc.1")
	f.pushLocal(local)
	f.k8s = fleetClient(f.url, f.bad.Hash)
	return f
}

// pushLocal pushes the master branch of local to the server's main.
func (f *gitFixture) pushLocal(local *testRepo) {
	f.t.Helper()
	if _, err := local.repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{f.url}}); err != nil {
		f.t.Fatal(err)
	}
	if err := local.repo.Push(&gogit.PushOptions{
		RemoteName: "origin", RefSpecs: []config.RefSpec{"refs/heads/master:refs/heads/main"}, Auth: f.auth(),
	}); err != nil {
		f.t.Fatal(err)
	}
}

// startGitServer starts a Git server over HTTP that creates repositories
// on their first push, stopped and removed when the test ends.
func startGitServer(t testing.TB) *gittestserver.GitServer {
	t.Helper()
	log.SetOutput(io.Discard) // gitkit logs every request
	server, err := gittestserver.NewTempGitServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		server.StopHTTP()
		_ = os.RemoveAll(server.Root())
	})
	server.AutoCreate().Auth(gitUser, gitPassword)
	if err := server.StartHTTP(); err != nil {
		t.Fatal(err)
	}
	return server
}

// fleetClient is a cluster holding the target Deployment apps/podinfo, the
// Kustomization of ./apps/podinfo that applied lastApplied (its inventory
// lists the target), and the
// GitRepository of url with its secret.
func fleetClient(url string, lastApplied plumbing.Hash) client.Client {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	_ = kustomizev1.AddToScheme(scheme)
	_ = sourcev1.AddToScheme(scheme)
	target := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: "apps", Labels: map[string]string{
		"kustomize.toolkit.fluxcd.io/name": "apps", "kustomize.toolkit.fluxcd.io/namespace": "flux-system",
	}}}
	ks := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: "flux-system"},
		Spec: kustomizev1.KustomizationSpec{
			Path:      "./apps/podinfo",
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "fleet"},
		},
		Status: kustomizev1.KustomizationStatus{
			LastAppliedRevision: "main@sha1:" + lastApplied.String(),
			Inventory:           &kustomizev1.ResourceInventory{Entries: []kustomizev1.ResourceRef{{ID: "apps_podinfo_apps_Deployment", Version: "v1"}}},
		},
	}
	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "flux-system"},
		Spec: sourcev1.GitRepositorySpec{
			URL:       url,
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
			SecretRef: &meta.LocalObjectReference{Name: "git-auth"},
		},
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "git-auth", Namespace: "flux-system"},
		Data:       map[string][]byte{"username": []byte(gitUser), "password": []byte(gitPassword)},
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(target, ks, repo, secret).Build()
}

func (f *gitFixture) auth() *http.BasicAuth {
	return &http.BasicAuth{Username: gitUser, Password: gitPassword}
}

func (f *gitFixture) canary(mode v1alpha1.RevertMode) *v1alpha1.Canary {
	return &v1alpha1.Canary{
		ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: "apps"},
		Spec: v1alpha1.CanarySpec{
			TargetRef: v1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "podinfo"},
			GitOps:    &v1alpha1.GitOpsSpec{Revert: &v1alpha1.RevertSpec{Mode: mode}},
		},
		Status: v1alpha1.CanaryStatus{Phase: v1alpha1.PhaseHalted},
	}
}

func (f *gitFixture) request(mode v1alpha1.RevertMode) RevertRequest {
	canary := f.canary(mode)
	bad := "main@sha1:" + f.bad.Hash.String()
	// The analysis record of the bad revision: its decisive step goes into
	// the commit message and the pull request.
	canary.Status.Analyses = []v1alpha1.AnalysisRecord{{Revision: bad, Spec: "bad", Result: v1alpha1.PhaseHalted, Steps: []v1alpha1.AnalysisStep{
		{Weight: 20, Verdict: v1alpha1.VerdictPassed, Checks: []v1alpha1.CheckResult{{Name: "request-success-rate", Value: "100", Min: "99", Verdict: v1alpha1.VerdictPassed}}},
		{Weight: 40, Verdict: v1alpha1.VerdictPassed, Checks: []v1alpha1.CheckResult{{Name: "request-success-rate", Value: "99.5", Min: "99", Verdict: v1alpha1.VerdictPassed}},
			Webhooks: []v1alpha1.WebhookResult{{Name: "load-test", Type: v1alpha1.RolloutHook, Verdict: v1alpha1.VerdictPassed}}},
	}}}
	return RevertRequest{
		Canary:       canary,
		BadRevision:  bad,
		GoodRevision: "main@sha1:" + f.good.Hash.String(),
		Reason:       "primary not ready within the progress deadline (10s) after promotion",
	}
}

func (f *gitFixture) reverter(opts ...ReverterOption) *GitReverter {
	f.t.Helper()
	clock := func() time.Time { return testEpoch.Add(time.Hour) }
	g, err := NewGitReverter(f.k8s, append([]ReverterOption{
		WithAuthor("serin-bot", "serin-bot@example.com"), WithProvider(ProviderGitea),
		WithHostFactory(f.host.factory), WithClock(clock),
	}, opts...)...)
	if err != nil {
		f.t.Fatal(err)
	}
	return g
}

// promoter is the GitPromoter of f.reverter(opts...).
func (f *gitFixture) promoter(opts ...ReverterOption) *GitPromoter {
	f.t.Helper()
	return f.reverter(opts...).Promoter()
}

// branches lists the server's branches.
func (f *gitFixture) branches() map[string]plumbing.Hash {
	f.t.Helper()
	remote := gogit.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{f.url}})
	refs, err := remote.List(&gogit.ListOptions{Auth: f.auth()})
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[string]plumbing.Hash{}
	for _, r := range refs {
		if r.Name().IsBranch() {
			out[r.Name().Short()] = r.Hash()
		}
	}
	return out
}

// file reads a file at the tip of a branch of the server.
func (f *gitFixture) file(branch, path string) (string, *object.Commit) {
	f.t.Helper()
	repo, err := gogit.Clone(memory.NewStorage(), nil, &gogit.CloneOptions{
		URL: f.url, Auth: f.auth(), ReferenceName: plumbing.NewBranchReferenceName(branch), SingleBranch: true, NoCheckout: true,
	})
	if err != nil {
		f.t.Fatal(err)
	}
	ref, err := repo.Head()
	if err != nil {
		f.t.Fatal(err)
	}
	c, err := repo.CommitObject(ref.Hash())
	if err != nil {
		f.t.Fatal(err)
	}
	file, err := c.File(path)
	if err != nil {
		f.t.Fatal(err)
	}
	content, _ := file.Contents()
	return content, c
}

// pushToMain commits a file on top of main on the server, as a person
// would, and returns the commit.
func (f *gitFixture) pushToMain(path, content, message string) *object.Commit {
	f.t.Helper()
	return f.pushOnMain("main", map[string]string{path: content}, Signature{Name: "Dev", Email: "dev@example.com"}, testEpoch.Add(2*time.Hour), message)
}

// fakeHost is an in-memory Git host API.
type fakeHost struct {
	mu        sync.Mutex
	prs       []*fakePR
	providers []string
	tokens    []string
}

type fakePR struct {
	PullRequest
	branch, base, title, body string
	open                      bool
}

func (h *fakeHost) factory(_ context.Context, api HostAPI) (PullRequestHost, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.providers = append(h.providers, api.Provider+" "+api.Repo.BaseURL()+" "+api.Repo.Owner+"/"+api.Repo.Name)
	h.tokens = append(h.tokens, api.Token)
	return h, nil
}

// Find returns the pull request from branch, as a host does: an open one
// first, else the newest merged or closed one.
func (h *fakeHost) Find(_ context.Context, branch string) (*PullRequest, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var found *PullRequest
	for _, pr := range h.prs {
		if pr.branch != branch {
			continue
		}
		p := pr.PullRequest
		switch {
		case pr.open:
			p.State = PullRequestOpen
		case p.State != PullRequestMerged:
			p.State = PullRequestClosed
		}
		found = preferred(found, &p)
	}
	return found, nil
}

func (h *fakeHost) Open(_ context.Context, branch, base, title, body string) (*PullRequest, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(h.prs) + 1
	pr := &fakePR{PullRequest: PullRequest{Number: n, URL: fmt.Sprintf("https://git.example/fleet/podinfo/pulls/%d", n)}, branch: branch, base: base, title: title, body: body, open: true}
	h.prs = append(h.prs, pr)
	p := pr.PullRequest
	return &p, nil
}

// A halted revision is reverted by a pull request from a branch named
// after it; the second call returns the same pull request and pushes
// nothing; once merged, the revert is reported as merged.
func TestGitReverter_PullRequestIsIdempotent(t *testing.T) {
	f := newGitFixture(t)
	g := f.reverter()
	ctx := context.Background()
	before := f.branches()

	res, err := g.Revert(ctx, f.request(v1alpha1.PullRequestRevert))
	if err != nil {
		t.Fatal(err)
	}
	wantBranch := "serin/revert/apps/podinfo/" + f.bad.Hash.String()[:8]
	if res.State != StateOpened || res.Branch != wantBranch || res.PullRequestURL != "https://git.example/fleet/podinfo/pulls/1" || len(res.Commit) != 40 {
		t.Fatalf("first revert = %+v", res)
	}
	after := f.branches()
	if len(after) != len(before)+1 || after[wantBranch].String() != res.Commit || after["main"] != before["main"] {
		t.Errorf("branches after the revert = %v (before %v)", after, before)
	}
	got, commit := f.file(wantBranch, "apps/podinfo/kustomization.yaml")
	want, _ := f.file("main", "apps/podinfo/kustomization.yaml")
	if !strings.Contains(got, "newTag: 6.7.0 # promoted on Monday") || got == want {
		t.Errorf("kustomization.yaml on the revert branch:\n%s", got)
	}
	if commit.Author.Name != "serin-bot" || commit.Author.Email != "serin-bot@example.com" || commit.ParentHashes[0] != f.bad.Hash {
		t.Errorf("revert commit by %s <%s> on %v", commit.Author.Name, commit.Author.Email, commit.ParentHashes)
	}
	testutil.Golden(t, filepath.Join("testdata", "revert-message.golden"), commit.Message)
	pr := f.host.prs[0]
	if title, _ := splitMessage(commit.Message); pr.title != title || pr.base != "main" || pr.branch != wantBranch {
		t.Errorf("pull request %q from %s into %s", pr.title, pr.branch, pr.base)
	}
	if f.host.providers[0] != "gitea "+strings.TrimSuffix(f.server.HTTPAddress(), "/")+" fleet/podinfo" || f.host.tokens[0] != gitPassword {
		t.Errorf("host %q with token %q", f.host.providers[0], f.host.tokens[0])
	}

	again, err := g.Revert(ctx, f.request(v1alpha1.PullRequestRevert))
	if err != nil {
		t.Fatal(err)
	}
	if again.State != StateOpened || again.PullRequestURL != res.PullRequestURL || again.Commit != res.Commit || again.Branch != res.Branch {
		t.Errorf("second revert = %+v, want the first one's %+v", again, res)
	}
	if len(f.host.prs) != 1 {
		t.Errorf("%d pull requests opened, want 1", len(f.host.prs))
	}
	if b := f.branches(); len(b) != len(after) || b[wantBranch] != after[wantBranch] {
		t.Errorf("branches after the second revert = %v, want %v", b, after)
	}

	// A person merges the pull request (fast-forward) and it closes.
	f.pushBranchTo(res.Commit, "main")
	f.host.prs[0].open = false
	merged, err := g.Revert(ctx, f.request(v1alpha1.PullRequestRevert))
	if err != nil {
		t.Fatal(err)
	}
	if merged.State != StateMerged || len(f.host.prs) != 1 {
		t.Errorf("revert after the merge = %+v with %d pull requests", merged, len(f.host.prs))
	}
}

// pushBranchTo points a branch of the server at a commit it has.
func (f *gitFixture) pushBranchTo(commit, branch string) {
	f.t.Helper()
	repo, err := gogit.Clone(memory.NewStorage(), nil, &gogit.CloneOptions{URL: f.url, Auth: f.auth(), ReferenceName: "refs/heads/main", NoCheckout: true})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := repo.Fetch(&gogit.FetchOptions{Auth: f.auth(), RefSpecs: []config.RefSpec{"+refs/heads/*:refs/remotes/origin/*"}}); err != nil && !errors.Is(err, gogit.NoErrAlreadyUpToDate) {
		f.t.Fatal(err)
	}
	if err := repo.Storer.SetReference(plumbing.NewHashReference("refs/heads/merge", plumbing.NewHash(commit))); err != nil {
		f.t.Fatal(err)
	}
	if err := repo.Push(&gogit.PushOptions{Auth: f.auth(), RefSpecs: []config.RefSpec{config.RefSpec("refs/heads/merge:refs/heads/" + branch)}}); err != nil {
		f.t.Fatal(err)
	}
}

// A branch pushed without its pull request (the agent restarted in
// between) gets its pull request, and no second branch.
func TestGitReverter_OpensThePullRequestOfAnExistingBranch(t *testing.T) {
	f := newGitFixture(t)
	g := f.reverter()
	ctx := context.Background()
	res, err := g.Revert(ctx, f.request(v1alpha1.PullRequestRevert))
	if err != nil {
		t.Fatal(err)
	}
	f.host.prs = nil // the first pull request was never recorded by the host
	again, err := g.Revert(ctx, f.request(v1alpha1.PullRequestRevert))
	if err != nil {
		t.Fatal(err)
	}
	if again.State != StateOpened || again.Commit != res.Commit || len(f.host.prs) != 1 || f.host.prs[0].branch != res.Branch {
		t.Errorf("revert of an existing branch = %+v, pull requests %+v", again, f.host.prs)
	}
	if title, _ := splitMessage(f.host.prs[0].title); !strings.HasPrefix(title, "Revert Deployment/podinfo in apps to ") {
		t.Errorf("pull request title %q", title)
	}
}

// Mode Push fast-forwards the tracked branch; when the branch moves
// between the clone and the push, the revert is planned again on the new
// head and pushed on top of it, never forced; a second call finds it.
func TestGitReverter_PushRetriesOnAMovedBranch(t *testing.T) {
	f := newGitFixture(t)
	moved := false
	g := f.reverter(WithClock(func() time.Time {
		if !moved { // someone pushes while serin commits
			moved = true
			f.pushToMain("docs/NOTES.md", "unrelated\n", "Add notes")
		}
		return testEpoch.Add(time.Hour)
	}))
	ctx := context.Background()
	res, err := g.Revert(ctx, f.request(v1alpha1.PushRevert))
	if err != nil {
		t.Fatal(err)
	}
	if res.State != StatePushed || res.Branch != "main" || res.PullRequestURL != "" {
		t.Fatalf("push revert = %+v", res)
	}
	got, tip := f.file("main", "apps/podinfo/kustomization.yaml")
	if tip.Hash.String() != res.Commit || !strings.Contains(got, "newTag: 6.7.0") {
		t.Errorf("main at %s (revert %s):\n%s", tip.Hash, res.Commit, got)
	}
	parent, err := tip.Parent(0)
	if err != nil || parent.Message != "Add notes" {
		t.Errorf("the revert is not on top of the moved branch: parent %v", parent)
	}
	if len(f.host.prs) != 0 {
		t.Errorf("mode Push opened %d pull requests", len(f.host.prs))
	}

	again, err := g.Revert(ctx, f.request(v1alpha1.PushRevert))
	if err != nil {
		t.Fatal(err)
	}
	if again.State != StatePushed || again.Commit != res.Commit {
		t.Errorf("second push revert = %+v, want commit %s", again, res.Commit)
	}
	if _, tip2 := f.file("main", "apps/podinfo/kustomization.yaml"); tip2.Hash != tip.Hash {
		t.Errorf("the second call moved main to %s", tip2.Hash)
	}
}

// A revert that cannot be verified pushes nothing and says why.
func TestGitReverter_UnverifiablePushesNothing(t *testing.T) {
	f := newGitFixture(t)
	f.pushToMain("apps/podinfo/kustomization.yaml", strings.Replace(mustRead(t, "testdata/image-bump-kustomization/original/apps/podinfo/kustomization.yaml"),
		"6.8.0-rc.1 # try the release candidate", "6.8.0-rc.2", 1), "Try rc.2")
	before := f.branches()
	_, err := f.reverter().Revert(context.Background(), f.request(v1alpha1.PullRequestRevert))
	if !errors.Is(err, ErrUnverifiable) || !strings.Contains(err.Error(), "changed again") {
		t.Fatalf("revert over a newer change: err = %v", err)
	}
	if after := f.branches(); len(after) != len(before) || len(f.host.prs) != 0 {
		t.Errorf("branches %v (before %v), %d pull requests", after, before, len(f.host.prs))
	}
}

// Without a promoted revision, the target's previous definition is good.
func TestGitReverter_WithoutPromotedRevision(t *testing.T) {
	f := newGitFixture(t)
	req := f.request(v1alpha1.PullRequestRevert)
	req.GoodRevision = ""
	res, err := f.reverter().Revert(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	got, commit := f.file(res.Branch, "apps/podinfo/kustomization.yaml")
	if !strings.Contains(got, "newTag: 6.7.0") || !strings.Contains(commit.Message, "No promoted revision is recorded") {
		t.Errorf("revert without a promoted revision:\n%s\n%s", got, commit.Message)
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	return string(readTree(t, filepath.Dir(p))[filepath.Base(p)])
}

// A bad revision recorded before kustomize-controller updated its status
// (the good one) is replaced by the revision the Kustomization applied.
func TestGitReverter_StaleBadRevision(t *testing.T) {
	f := newGitFixture(t)
	req := f.request(v1alpha1.PullRequestRevert)
	req.BadRevision = req.GoodRevision
	res, err := f.reverter().Revert(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	got, commit := f.file(res.Branch, "apps/podinfo/kustomization.yaml")
	if res.Branch != "serin/revert/apps/podinfo/"+f.good.Hash.String()[:8] || !strings.Contains(got, "newTag: 6.7.0") ||
		!strings.Contains(commit.Message, "which the Kustomization applied after it, is reverted") ||
		!strings.Contains(commit.Message, "Serin-Reverts: "+f.good.Hash.String()) {
		t.Errorf("revert of a stale revision on %s:\n%s\n%s", res.Branch, got, commit.Message)
	}
}

// A group's release whose member web is applied from another repository:
// the revert of this repository is opened all the same (before, the whole
// revert failed as unverifiable and was never retried, losing this
// member's own), covers this repository's members only, and its message
// names web, its repository and the branch of its own revert there (web
// opens it once it sees this one does not cover it: wantsRevert).
func TestGitReverter_GroupMemberOfAnotherRepository(t *testing.T) {
	f := newGitFixture(t)
	web, other := webOfAnotherRepository(t, f)
	req := f.request(v1alpha1.PullRequestRevert)
	req.Group = "shop"
	req.Members = []*v1alpha1.Canary{web}
	res, err := f.reverter().Revert(context.Background(), req)
	if err != nil || res.State != StateOpened {
		t.Fatalf("revert = %+v, %v", res, err)
	}
	if len(res.Covered) != 1 || res.Covered[0] != "podinfo" {
		t.Errorf("covered = %v, want [podinfo]: web reverts its own", res.Covered)
	}
	_, commit := f.file(res.Branch, "apps/podinfo/kustomization.yaml")
	want := "member web of the release is applied from " + other + " (branch main): it is reverted there, on serin/revert/apps/groups/shop/01234567"
	if !strings.Contains(commit.Message, want) {
		t.Errorf("the revert's message does not name web's own revert (%q):\n%s", want, commit.Message)
	}
}

// webOfAnotherRepository adds to f's cluster the Canary web of a Deployment
// applied by the Kustomization "web" from the GitRepository "other", of
// another repository, and returns it and that repository's URL.
func webOfAnotherRepository(t *testing.T, f *gitFixture) (*v1alpha1.Canary, string) {
	t.Helper()
	other := f.server.HTTPAddress() + "/fleet/web.git"
	web := &v1alpha1.Canary{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps"},
		Spec:       v1alpha1.CanarySpec{TargetRef: v1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
		Status:     v1alpha1.CanaryStatus{LastAttemptedRevision: "main@sha1:0123456789abcdef0123456789abcdef01234567"},
	}
	for _, obj := range []client.Object{
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps", Labels: map[string]string{
			"kustomize.toolkit.fluxcd.io/name": "web", "kustomize.toolkit.fluxcd.io/namespace": "flux-system",
		}}},
		&kustomizev1.Kustomization{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "flux-system"},
			Spec: kustomizev1.KustomizationSpec{Path: "./apps/web",
				SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "other"}},
			Status: kustomizev1.KustomizationStatus{LastAppliedRevision: web.Status.LastAttemptedRevision,
				Inventory: &kustomizev1.ResourceInventory{Entries: []kustomizev1.ResourceRef{{ID: "apps_web_apps_Deployment", Version: "v1"}}}},
		},
		&sourcev1.GitRepository{
			ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "flux-system"},
			Spec: sourcev1.GitRepositorySpec{URL: other, Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
				SecretRef: &meta.LocalObjectReference{Name: "git-auth"}},
		},
	} {
		if err := f.k8s.Create(context.Background(), obj); err != nil {
			t.Fatal(err)
		}
	}
	return web, other
}
