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
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// fakeStatuses is an in-memory commit status API.
type fakeStatuses struct {
	mu    sync.Mutex
	bySHA map[string][]CommitStatus
	reads []string
}

func (s *fakeStatuses) factory(context.Context, HostAPI) (StatusReader, error) {
	return s, nil
}

func (s *fakeStatuses) Statuses(_ context.Context, sha string) ([]CommitStatus, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads = append(s.reads, sha)
	return s.bySHA[sha], nil
}

func (f *gitFixture) promotion(mode v1alpha1.RevertMode) PromotionRequest {
	c := f.canary(mode)
	c.Status.Phase = v1alpha1.PhaseSucceeded
	rev := "main@sha1:" + f.good.Hash.String()
	c.Status.Analyses = []v1alpha1.AnalysisRecord{{Revision: rev, Spec: "good", Result: v1alpha1.PhaseSucceeded, Steps: []v1alpha1.AnalysisStep{
		{Weight: 50, Verdict: v1alpha1.VerdictPassed, Checks: []v1alpha1.CheckResult{{Name: "request-success-rate", Value: "99.9", Min: "99", Verdict: v1alpha1.VerdictPassed}}},
	}}}
	// The stage is written with a GitRepository of the Canary's
	// namespace: the fleet's, with the tenant's own secret.
	ctx := context.Background()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "apps-git", Namespace: "apps"},
		Data: map[string][]byte{"username": []byte(gitUser), "password": []byte(gitPassword)}}
	repo := &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "apps"},
		Spec: sourcev1.GitRepositorySpec{URL: f.url, Reference: &sourcev1.GitRepositoryRef{Branch: "main"}, SecretRef: &meta.LocalObjectReference{Name: "apps-git"}}}
	for _, o := range []client.Object{secret, repo} {
		if err := f.k8s.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			f.t.Fatal(err)
		}
	}
	return PromotionRequest{
		Canary:   c,
		Stage:    v1alpha1.PromotionTarget{Stage: "production", Path: "./apps/podinfo", Mode: mode, SourceRef: &meta.LocalObjectReference{Name: "fleet"}},
		Revision: rev,
		Images:   []string{"ghcr.io/stefanprodan/podinfo:6.9.0"},
	}
}

// A promotion opens one pull request from a branch named after the stage
// and the promoted commit, with the images in the stage's
// kustomization, the analysis and the trailers in its message; asked
// again it opens nothing more. Merged with a merge commit, the stage's
// verdict is read from the commit status its Canary posts on that merge
// (or, while it has none, on a later commit).
func TestGitPromoter_PullRequestAndVerdict(t *testing.T) {
	f := newGitFixture(t)
	statuses := &fakeStatuses{bySHA: map[string][]CommitStatus{}}
	g := f.promoter(WithStatusReaderFactory(statuses.factory))
	ctx := context.Background()
	req := f.promotion(v1alpha1.PullRequestRevert)

	res, err := g.Promote(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	wantBranch := "serin/promote/production/apps/podinfo/" + f.good.Hash.String()[:8]
	if res.State != PromotionOpened || res.Branch != wantBranch || len(f.host.prs) != 1 {
		t.Fatalf("promotion = %+v, pull requests %d", res, len(f.host.prs))
	}
	got, commit := f.file(wantBranch, "apps/podinfo/kustomization.yaml")
	if !strings.Contains(got, "newTag: 6.9.0 # try the release candidate") {
		t.Errorf("kustomization.yaml on the promotion branch:\n%s", got)
	}
	for _, want := range []string{
		"serin: promote Deployment/podinfo to production",
		"- ghcr.io/stefanprodan/podinfo:6.9.0",
		"request-success-rate",
		"Serin-Canary: apps/podinfo\nSerin-Stage: production\nSerin-Promotes: " + f.good.Hash.String(),
	} {
		if !strings.Contains(commit.Message, want) {
			t.Errorf("promotion commit message lacks %q:\n%s", want, commit.Message)
		}
	}
	if pr := f.host.prs[0]; pr.base != "main" || !strings.Contains(pr.body, "Serin-Promotes: ") {
		t.Errorf("pull request into %s with body %q", pr.base, pr.body)
	}
	again, err := g.Promote(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if again.State != PromotionOpened || again.Commit != res.Commit || len(f.host.prs) != 1 {
		t.Errorf("second promotion = %+v with %d pull requests", again, len(f.host.prs))
	}

	// Not merged: no verdict, no status read.
	v, err := g.Verdict(ctx, req, res.Commit)
	if err != nil {
		t.Fatal(err)
	}
	if v.Merged || len(statuses.reads) != 0 {
		t.Fatalf("verdict before the merge = %+v, %d status reads", v, len(statuses.reads))
	}

	// A person merges it with a merge commit, and commits once more.
	merge := f.mergeIntoMain(res.Commit)
	later := f.pushToMain("README.md", "later", "docs")
	v, err = g.Verdict(ctx, req, res.Commit)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Merged || v.State != "" || v.StageCommit != merge.String() {
		t.Errorf("verdict without statuses = %+v, want merged at %s", v, merge)
	}

	// The stage's Canary reports on the later commit (Flux applied both
	// at once): pending there, then success.
	ctxName := "serin/apps/podinfo"
	statuses.bySHA[later.Hash.String()] = []CommitStatus{{Context: "kustomization/apps/abc", State: CommitSuccess, Updated: testEpoch}, {ID: 8, Context: ctxName, State: CommitPending, Updated: testEpoch}}
	if v, _ = g.Verdict(ctx, req, res.Commit); v.State != CommitPending || v.StageCommit != later.Hash.String() {
		t.Errorf("verdict = %+v, want pending on %s", v, later.Hash)
	}
	// Recorded in the same second as the pending one (hosts keep
	// seconds): the larger id is the newer.
	statuses.bySHA[later.Hash.String()] = append([]CommitStatus{{ID: 9, Context: ctxName, State: CommitSuccess, Description: "promoted", TargetURL: "https://dash/podinfo", Updated: testEpoch}},
		statuses.bySHA[later.Hash.String()]...)
	if v, _ = g.Verdict(ctx, req, res.Commit); v.State != CommitSuccess || v.URL != "https://dash/podinfo" {
		t.Errorf("verdict = %+v, want success", v)
	}
	// A failure on the merge itself, the first commit that brought it in,
	// decides over the later success.
	statuses.bySHA[merge.String()] = []CommitStatus{{Context: ctxName, State: CommitFailure, Description: "rolled back", Updated: testEpoch}}
	if v, _ = g.Verdict(ctx, req, res.Commit); v.State != CommitFailure || v.StageCommit != merge.String() {
		t.Errorf("verdict = %+v, want the merge's failure", v)
	}
}

// Mode Push commits the promotion on the stage's branch; a second call
// finds it by its trailers and pushes nothing.
func TestGitPromoter_PushIsIdempotent(t *testing.T) {
	f := newGitFixture(t)
	g := f.promoter(WithStatusReaderFactory((&fakeStatuses{}).factory))
	ctx := context.Background()
	req := f.promotion(v1alpha1.PushRevert)
	res, err := g.Promote(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.State != PromotionPushed || f.branches()["main"].String() != res.Commit {
		t.Fatalf("push promotion = %+v, main at %s", res, f.branches()["main"])
	}
	f.pushToMain("README.md", "meanwhile", "docs")
	again, err := g.Promote(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if again.State != PromotionPushed || again.Commit != res.Commit {
		t.Errorf("second push promotion = %+v, want the first commit %s", again, res.Commit)
	}
	v, err := g.Verdict(ctx, req, res.Commit)
	if err != nil || !v.Merged || v.StageCommit != res.Commit {
		t.Errorf("verdict of a pushed promotion = %+v, %v", v, err)
	}
	// The stage already runs the images: nothing to write.
	req.Stage.Mode = v1alpha1.PullRequestRevert
	req.Stage.Stage = "qa"
	there, err := g.Promote(ctx, req)
	if err != nil || there.State != PromotionUpToDate {
		t.Errorf("promotion of images the stage runs = %+v, %v", there, err)
	}
}

// mergeIntoMain merges commit into main on the server with a merge
// commit, as a Git host's merge button does.
func (f *gitFixture) mergeIntoMain(commit string) plumbing.Hash {
	f.t.Helper()
	repo, err := gogit.Clone(memory.NewStorage(), nil, &gogit.CloneOptions{URL: f.url, Auth: f.auth(), ReferenceName: "refs/heads/main", NoCheckout: true})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := repo.Fetch(&gogit.FetchOptions{Auth: f.auth(), RefSpecs: []config.RefSpec{"+refs/heads/*:refs/remotes/origin/*"}}); err != nil && err != gogit.NoErrAlreadyUpToDate {
		f.t.Fatal(err)
	}
	head, _ := repo.Head()
	main, _ := repo.CommitObject(head.Hash())
	pr, err := repo.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		f.t.Fatal(err)
	}
	sig := object.Signature{Name: "Reviewer", Email: "reviewer@example.com", When: testEpoch.Add(3 * time.Hour)}
	m := &object.Commit{Author: sig, Committer: sig, Message: "Merge pull request 'serin: promote'", TreeHash: pr.TreeHash, ParentHashes: []plumbing.Hash{main.Hash, pr.Hash}}
	obj := repo.Storer.NewEncodedObject()
	if err := m.Encode(obj); err != nil {
		f.t.Fatal(err)
	}
	h, err := repo.Storer.SetEncodedObject(obj)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := repo.Storer.SetReference(plumbing.NewHashReference("refs/heads/main", h)); err != nil {
		f.t.Fatal(err)
	}
	if err := repo.Push(&gogit.PushOptions{Auth: f.auth(), RefSpecs: []config.RefSpec{"refs/heads/main:refs/heads/main"}}); err != nil {
		f.t.Fatal(err)
	}
	return h
}

// The commit statuses of GitHub, GitLab and Gitea are read from their
// REST APIs. GitHub and GitLab cannot run here: an HTTP server checks the
// requests' paths and authentication, and answers as they document
// (Gitea's answer is the real one in the end-to-end tests).
func TestHTTPStatusReader_WireFormat(t *testing.T) {
	sha := strings.Repeat("ab", 20)
	cases := []struct {
		provider, host, path, header, value, body string
		want                                      CommitStatus
	}{
		{ProviderGitHub, "", "/api/v3/repos/fleet/podinfo/commits/" + sha + "/statuses", "Authorization", "Bearer tok",
			`[{"id":7,"state":"success","context":"serin/apps/podinfo","description":"promoted","target_url":"https://x","updated_at":"2026-11-27T01:00:00Z"}]`,
			CommitStatus{ID: 7, Context: "serin/apps/podinfo", State: CommitSuccess, Description: "promoted", TargetURL: "https://x"}},
		{ProviderGitea, "", "/api/v1/repos/fleet/podinfo/commits/" + sha + "/statuses", "Authorization", "token tok",
			`[{"status":"pending","context":"serin/apps/podinfo","description":"rolling out","created_at":"2026-11-27T01:00:00Z"}]`,
			CommitStatus{Context: "serin/apps/podinfo", State: CommitPending, Description: "rolling out"}},
		{ProviderGitLab, "", "/api/v4/projects/fleet%2Fpodinfo/repository/commits/" + sha + "/statuses", "PRIVATE-TOKEN", "tok",
			`[{"status":"failed","name":"serin/apps/podinfo","description":"rolled back","created_at":"2026-11-27T01:00:00Z"}]`,
			CommitStatus{Context: "serin/apps/podinfo", State: CommitFailure, Description: "rolled back"}},
	}
	for _, tc := range cases {
		t.Run(tc.provider, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodGet || r.URL.EscapedPath() != tc.path || r.Header.Get(tc.header) != tc.value {
					t.Errorf("%s %s with %s=%q", r.Method, r.URL.EscapedPath(), tc.header, r.Header.Get(tc.header))
					http.Error(w, "no", http.StatusBadRequest)
					return
				}
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			u, _ := ParseRepositoryURL(srv.URL + "/fleet/podinfo.git")
			r, err := NewHTTPStatusReader(context.Background(), HostAPI{Repo: u, Provider: tc.provider, Token: "tok"})
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.Statuses(context.Background(), sha)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("statuses = %+v", got)
			}
			got[0].Updated = time.Time{}
			if b1, _ := json.Marshal(got[0]); string(b1) != mustJSON(tc.want) {
				t.Errorf("status = %s, want %s", b1, mustJSON(tc.want))
			}
		})
	}
	// A 5xx is a transient error, to be retried.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "down", http.StatusBadGateway) }))
	defer srv.Close()
	u, _ := ParseRepositoryURL(srv.URL + "/fleet/podinfo.git")
	r, _ := NewHTTPStatusReader(context.Background(), HostAPI{Repo: u, Provider: ProviderGitea, Token: "tok"})
	if _, err := r.Statuses(context.Background(), sha); err == nil || !IsTransient(err) {
		t.Errorf("a 502 gives %v, want a transient error", err)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// A tired operator's typos: a path with no kustomization, a target name
// the stage does not render. Each is an error that names what to fix,
// not a transient one (it is not retried), and nothing is pushed.
func TestGitPromoter_Typos(t *testing.T) {
	f := newGitFixture(t)
	g := f.promoter(WithStatusReaderFactory((&fakeStatuses{}).factory))
	before := f.branches()
	for name, tc := range map[string]struct {
		mutate func(*PromotionRequest)
		want   string
	}{
		"path":   {func(r *PromotionRequest) { r.Stage.Path = "./apps/podinf" }, "apps/podinf"},
		"target": {func(r *PromotionRequest) { r.Stage.TargetName = "podinfo-api" }, "podinfo-api"},
	} {
		t.Run(name, func(t *testing.T) {
			req := f.promotion(v1alpha1.PullRequestRevert)
			tc.mutate(&req)
			_, err := g.Promote(context.Background(), req)
			if err == nil || !strings.Contains(err.Error(), tc.want) || IsTransient(err) {
				t.Errorf("Promote = %v, want a permanent error naming %q", err, tc.want)
			}
		})
	}
	if after := f.branches(); len(after) != len(before) {
		t.Errorf("branches %v after refused promotions, want %v", after, before)
	}
}

// A promotion writes where its path says, so it never borrows a
// GitRepository of another namespace (the platform's, whose secret other
// tenants' manifests are written with), and sends the agent's own
// --git-provider-token-file token to no host the agent does not list
// (--git-provider-hosts): here, only its namespace's secret.
func TestGitPromoter_CredentialsStayInTheNamespace(t *testing.T) {
	f := newGitFixture(t)
	host := f.host
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("agent-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := f.promoter(WithStatusReaderFactory((&fakeStatuses{}).factory), WithProviderTokenFile(tokenFile))
	req := f.promotion(v1alpha1.PullRequestRevert)
	borrowed := req
	borrowed.Stage.SourceRef = nil // the Kustomization's GitRepository, in flux-system
	if _, err := g.Promote(context.Background(), borrowed); err == nil || !strings.Contains(err.Error(), "sourceRef") || IsTransient(err) {
		t.Errorf("a promotion through flux-system/fleet = %v, want a permanent error asking for sourceRef", err)
	}
	if _, err := g.Promote(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if len(host.tokens) == 0 || slices.Contains(host.tokens, "agent-token") {
		t.Errorf("host tokens %v: the agent's token file was sent for a promotion", host.tokens)
	}
}

// What a Git host answers is bounded before it goes into a status: a
// huge description is cut, a link that is no http(s) URL is dropped, a
// state serin does not know (GitLab's skipped) is ignored.
func TestHTTPStatusReader_HostileAnswers(t *testing.T) {
	sha := strings.Repeat("cd", 20)
	huge := strings.Repeat("é", 100000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode([]map[string]any{
			{"id": 1, "status": "skipped", "name": "serin/apps/podinfo"},
			{"id": 2, "status": "success", "name": "serin/apps/podinfo", "description": huge, "target_url": "javascript:alert(1)"},
		})
	}))
	defer srv.Close()
	u, _ := ParseRepositoryURL(srv.URL + "/fleet/podinfo.git")
	r, _ := NewHTTPStatusReader(context.Background(), HostAPI{Repo: u, Provider: ProviderGitLab, Token: "tok"})
	got, err := r.Statuses(context.Background(), sha)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].State != CommitSuccess || got[0].TargetURL != "" || len(got[0].Description) > maxStatusText+len("…") || !utf8.ValidString(got[0].Description) {
		t.Errorf("statuses = %d, first %q %q (%d bytes)", len(got), got[0].State, got[0].TargetURL, len(got[0].Description))
	}
}

// The commit that brings a promotion in is found however the host merged
// it: a merge of the branch brought up to date first ("update branch":
// its second parent is the branch's new tip), or a squash whose message
// kept the trailers without a final newline.
func TestPromotionMatch(t *testing.T) {
	commit, tip := strings.Repeat("1", 40), strings.Repeat("2", 40)
	m := promotionMatch{commit: commit, tip: tip, branch: "serin/promote/production/apps/podinfo/abcdef12", canary: "apps/podinfo", stage: "production", source: "abc"}
	main := plumbing.NewHash(strings.Repeat("3", 40))
	for name, tc := range map[string]struct {
		c    *object.Commit
		want bool
	}{
		"the promotion commit":      {&object.Commit{Hash: plumbing.NewHash(commit)}, true},
		"a merge of the tip":        {&object.Commit{Hash: main, ParentHashes: []plumbing.Hash{main, plumbing.NewHash(tip)}}, true},
		"a merge naming the branch": {&object.Commit{Hash: main, ParentHashes: []plumbing.Hash{main, main}, Message: "Merge pull request 'x' (#2) from serin/promote/production/apps/podinfo/abcdef12 into main"}, true},
		"a squash keeping the trailers": {&object.Commit{Hash: main, ParentHashes: []plumbing.Hash{main},
			Message: "serin: promote (#2)\n\n* Serin-Canary: apps/podinfo\n  Serin-Stage: production\nSerin-Promotes: abc"}, true},
		"another stage's promotion": {&object.Commit{Hash: main, ParentHashes: []plumbing.Hash{main},
			Message: "Serin-Canary: apps/podinfo\nSerin-Stage: qa\nSerin-Promotes: abc\n"}, false},
		"a commit that names the branch, no merge": {&object.Commit{Hash: main, ParentHashes: []plumbing.Hash{main}, Message: "see serin/promote/production/apps/podinfo/abcdef12"}, false},
	} {
		if got := m.brings(tc.c); got != tc.want {
			t.Errorf("%s: brings = %v, want %v", name, got, tc.want)
		}
	}
}

// spec.gitops.promote[].branch: the stage lives on another branch than
// the source's; the promotion is planned on that branch's head and its
// pull request goes into it.
func TestGitPromoter_ToAnotherBranch(t *testing.T) {
	f := newGitFixture(t)
	f.pushBranchTo(f.branches()["main"].String(), "production")
	g := f.promoter(WithStatusReaderFactory((&fakeStatuses{}).factory))
	req := f.promotion(v1alpha1.PullRequestRevert)
	req.Stage.Branch = "production"
	res, err := g.Promote(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.host.prs) != 1 || f.host.prs[0].base != "production" || res.State != PromotionOpened {
		t.Fatalf("promotion %+v, pull requests %+v", res, f.host.prs)
	}
	if got, _ := f.file(res.Branch, "apps/podinfo/kustomization.yaml"); !strings.Contains(got, "newTag: 6.9.0") {
		t.Errorf("kustomization.yaml on the promotion branch:\n%s", got)
	}
}

// webMember adds apps/web (a Deployment of ghcr.io/acme/web:1.0.0 whose
// kustomization sets its image) to main, and returns the member web of
// the shop's release that promotes it to production from the fleet.
func (f *gitFixture) webMember() PromotionMember {
	f.t.Helper()
	f.pushOnMain("main", map[string]string{
		"apps/web/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: apps\nresources:\n  - deployment.yaml\nimages:\n  - name: ghcr.io/acme/web\n    newTag: 1.0.0\n",
		"apps/web/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
        - name: web
          image: ghcr.io/acme/web:1.0.0
`,
	}, Signature{Name: "Dev", Email: "dev@example.com"}, testEpoch.Add(2*time.Hour), "Add web")
	web := &v1alpha1.Canary{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps"},
		Spec:       v1alpha1.CanarySpec{TargetRef: v1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
	}
	return PromotionMember{Canary: web, Images: []string{"ghcr.io/acme/web:2.0.0"},
		Stage: v1alpha1.PromotionTarget{Stage: "production", Path: "./apps/web", SourceRef: &meta.LocalObjectReference{Name: "fleet"}}}
}

// A group's release is promoted as one: one branch named after the
// group, one commit that sets both members' images in their paths, one
// pull request, found again when asked again; its verdict is each
// member's stage Canary's commit status on the merge.
func TestGitPromoter_ReleaseOfTwoMembers(t *testing.T) {
	f := newGitFixture(t)
	statuses := &fakeStatuses{bySHA: map[string][]CommitStatus{}}
	g := f.promoter(WithStatusReaderFactory(statuses.factory))
	ctx := context.Background()
	req := f.promotion(v1alpha1.PullRequestRevert)
	req.Group, req.Members = "shop", []PromotionMember{f.webMember()}

	res, err := g.Promote(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	wantBranch := "serin/promote/production/apps/groups/shop/" + f.good.Hash.String()[:8]
	if res.State != PromotionOpened || res.Branch != wantBranch || len(f.host.prs) != 1 {
		t.Fatalf("release promotion = %+v, pull requests %d", res, len(f.host.prs))
	}
	podinfo, commit := f.file(wantBranch, "apps/podinfo/kustomization.yaml")
	web, _ := f.file(wantBranch, "apps/web/kustomization.yaml")
	if !strings.Contains(podinfo, "newTag: 6.9.0 # try the release candidate") || !strings.Contains(web, "newTag: 2.0.0") {
		t.Errorf("the release's commit sets podinfo:\n%s\nand web:\n%s", podinfo, web)
	}
	if len(commit.ParentHashes) != 1 || commit.ParentHashes[0] != f.branches()["main"] {
		t.Errorf("the release's promotion is one commit on main, parents %v", commit.ParentHashes)
	}
	for _, want := range []string{
		"serin: promote release " + f.good.Hash.String()[:8] + " of CanaryGroup shop to production",
		"- Deployment/apps/podinfo (Canary podinfo): ghcr.io/stefanprodan/podinfo:6.9.0",
		"- Deployment/apps/web (Canary web): ghcr.io/acme/web:2.0.0",
		"Serin-Group: apps/shop\nSerin-Stage: production\nSerin-Promotes: " + f.good.Hash.String(),
	} {
		if !strings.Contains(commit.Message, want) {
			t.Errorf("release promotion message lacks %q:\n%s", want, commit.Message)
		}
	}
	again, err := g.Promote(ctx, req)
	if err != nil || again.Commit != res.Commit || len(f.host.prs) != 1 {
		t.Errorf("second release promotion = %+v, %v, with %d pull requests", again, err, len(f.host.prs))
	}

	merge := f.mergeIntoMain(res.Commit)
	statuses.bySHA[merge.String()] = []CommitStatus{{Context: "serin/apps/podinfo", State: CommitSuccess, Updated: testEpoch}}
	v, err := g.Verdict(ctx, req, res.Commit)
	if err != nil {
		t.Fatal(err)
	}
	want := []MemberVerdict{
		{StageCanary: "apps/podinfo", State: CommitSuccess, StageCommit: merge.String()},
		{StageCanary: "apps/web", StageCommit: merge.String()},
	}
	if !v.Merged || !slices.Equal(v.Members, want) || !slices.Equal(res.Covers, []string{"web"}) {
		t.Errorf("verdict = %+v, want merged with members %+v", v, want)
	}
	statuses.bySHA[merge.String()] = append(statuses.bySHA[merge.String()], CommitStatus{Context: "serin/apps/web", State: CommitFailure, Description: "rolled back", Updated: testEpoch})
	if v, _ = g.Verdict(ctx, req, res.Commit); len(v.Members) != 2 || v.Members[1].State != CommitFailure || v.Members[1].Description != "rolled back" {
		t.Errorf("verdict = %+v, want web's failure", v)
	}
}

// A member whose stage is in another repository is not written into this
// one: the release's promotion carries the members of this repository
// only, and its message names where the other is promoted.
func TestGitPromoter_ReleaseMemberOfAnotherRepository(t *testing.T) {
	f := newGitFixture(t)
	g := f.promoter(WithStatusReaderFactory((&fakeStatuses{}).factory))
	req := f.promotion(v1alpha1.PullRequestRevert)
	other := &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "apps"},
		Spec: sourcev1.GitRepositorySpec{URL: f.server.HTTPAddress() + "/fleet/web.git", Reference: &sourcev1.GitRepositoryRef{Branch: "main"}, SecretRef: &meta.LocalObjectReference{Name: "apps-git"}}}
	if err := f.k8s.Create(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	web := PromotionMember{Canary: &v1alpha1.Canary{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps"},
		Status: v1alpha1.CanaryStatus{LastPromotedRevision: "main@sha1:0123456789abcdef0123456789abcdef01234567"}},
		Stage: v1alpha1.PromotionTarget{Stage: "production", Path: "./apps/web", SourceRef: &meta.LocalObjectReference{Name: "other"}}, Images: []string{"web:2"}}
	req.Group, req.Members = "shop", []PromotionMember{web}
	res, err := g.Promote(context.Background(), req)
	if err != nil || res.State != PromotionOpened || len(res.Covers) != 0 || len(f.host.prs) != 1 {
		t.Fatalf("promotion of a release across repositories = %+v, %v, %d pull requests", res, err, len(f.host.prs))
	}
	_, commit := f.file(res.Branch, "apps/podinfo/kustomization.yaml")
	want := "Member web of the release is promoted to production in " + other.Spec.URL + " (branch main), on serin/promote/production/apps/groups/shop/01234567."
	if !strings.Contains(commit.Message, want) {
		t.Errorf("the release's promotion does not say where web is promoted (%q):\n%s", want, commit.Message)
	}
}

// Of a Canary's statuses on a commit, the newest is its word; within one
// second a verdict is, whatever the order the host recorded them in: the
// testbed saw web's last pending report (sent best effort as it routed
// traffic back) recorded after its success, in the same second.
func TestLatestStatus(t *testing.T) {
	second := testEpoch.Add(time.Second)
	for name, tc := range map[string]struct {
		statuses []CommitStatus
		want     int64
	}{
		"the latest second wins":                    {[]CommitStatus{{ID: 2, State: CommitSuccess, Updated: testEpoch}, {ID: 1, State: CommitPending, Updated: second}}, 1},
		"in one second, the larger id":              {[]CommitStatus{{ID: 1, State: CommitPending, Updated: testEpoch}, {ID: 2, State: CommitSuccess, Updated: testEpoch}}, 2},
		"in one second, a verdict over pending":     {[]CommitStatus{{ID: 7, State: CommitSuccess, Updated: testEpoch}, {ID: 8, State: CommitPending, Updated: testEpoch}}, 7},
		"in one second, of two verdicts the larger": {[]CommitStatus{{ID: 4, State: CommitFailure, Updated: testEpoch}, {ID: 3, State: CommitSuccess, Updated: testEpoch}}, 4},
		"another context is not read":               {[]CommitStatus{{ID: 5, State: CommitSuccess, Updated: second, Context: "other"}, {ID: 1, State: CommitPending, Updated: testEpoch}}, 1},
	} {
		t.Run(name, func(t *testing.T) {
			for i := range tc.statuses {
				if tc.statuses[i].Context == "" {
					tc.statuses[i].Context = "serin/apps/web"
				}
			}
			if got, ok := latestStatus(tc.statuses, "serin/apps/web"); !ok || got.ID != tc.want {
				t.Errorf("latestStatus = %+v, want id %d", got, tc.want)
			}
		})
	}
}
