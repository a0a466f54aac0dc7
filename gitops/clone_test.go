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
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/git"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// openHost calls onOpen when a pull request is opened: after the push,
// while the clone is still there.
type openHost struct {
	PullRequestHost
	onOpen func()
}

func (h openHost) Open(ctx context.Context, branch, base, title, body string) (*PullRequest, error) {
	h.onOpen()
	return h.PullRequestHost.Open(ctx, branch, base, title, body)
}

// A revert clones into a directory of its own under the clone directory,
// and removes it when it ends.
func TestGitReverter_ClonesOnDiskAndRemovesTheClone(t *testing.T) {
	f := newGitFixture(t)
	dir := t.TempDir()
	var during []os.DirEntry
	g := f.reverter(WithCloneDir(dir), WithHostFactory(func(ctx context.Context, api HostAPI) (PullRequestHost, error) {
		h, err := f.host.factory(ctx, api)
		return openHost{PullRequestHost: h, onOpen: func() { during, _ = os.ReadDir(dir) }}, err
	}))
	if _, err := g.Revert(t.Context(), f.request(v1alpha1.PullRequestRevert)); err != nil {
		t.Fatal(err)
	}
	if len(during) != 1 || !strings.HasPrefix(during[0].Name(), "serin-clone-") {
		t.Errorf("clone directory during the revert: %v, want one serin-clone-*", during)
	}
	if after, err := os.ReadDir(dir); err != nil || len(after) != 0 {
		t.Errorf("clone directory after the revert: %v, %v; want it empty", after, err)
	}
}

// A clone larger than its bound stops the revert with ErrCloneTooLarge and
// leaves nothing on disk.
func TestGitReverter_CloneSizeBound(t *testing.T) {
	f := newGitFixture(t)
	dir := t.TempDir()
	_, err := f.reverter(WithCloneDir(dir), WithMaxCloneSize(1<<10)).Revert(t.Context(), f.request(v1alpha1.PullRequestRevert))
	if !errors.Is(err, ErrCloneTooLarge) || !strings.Contains(err.Error(), "more than --gitops-max-clone-size (1.0 KiB)") {
		t.Errorf("revert with a 1 KiB bound: %v, want ErrCloneTooLarge", err)
	}
	if after, _ := os.ReadDir(dir); len(after) != 0 {
		t.Errorf("clone directory after the revert: %v, want it empty", after)
	}
	if len(f.host.prs) != 0 {
		t.Errorf("%d pull requests opened", len(f.host.prs))
	}
}

func TestRepository_Deepen(t *testing.T) {
	f := newGitFixture(t)
	later := f.pushToMain("docs/NOTES.md", "later\n", "Notes")
	auth := &git.AuthOptions{Transport: git.HTTP, Username: gitUser, Password: gitPassword}
	r, err := OpenRepository(f.url, "main", WithAuth(auth), withClone(cloneOptions{parent: t.TempDir(), depthSteps: []int{1, 0}}))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := t.Context()
	if err := r.Clone(ctx); err != nil {
		t.Fatal(err)
	}
	head, err := r.Head("main")
	if err != nil || head.Hash != later.Hash {
		t.Fatalf("head of a clone of depth 1: %v, %v; want %s", head, err, later.Hash)
	}
	if _, err := r.Commit(f.bad.Hash.String()); !errors.Is(err, ErrShallowHistory) {
		t.Errorf("a commit older than the clone: %v, want ErrShallowHistory", err)
	}
	if _, err := isAncestor(ctx, head, head); err != nil {
		t.Error(err)
	}
	if _, err := commitsSince(ctx, head, nil); !errors.Is(err, ErrShallowHistory) {
		t.Errorf("walking past the clone: %v, want ErrShallowHistory", err)
	}
	if deeper, err := r.Deepen(ctx); !deeper || err != nil {
		t.Fatalf("Deepen = %v, %v", deeper, err)
	}
	bad, err := r.Commit(f.bad.Hash.String())
	if err != nil {
		t.Fatal(err)
	}
	head, _ = r.Head("main")
	if ok, err := isAncestor(ctx, bad, head); !ok || err != nil {
		t.Errorf("isAncestor(bad, head) in the whole branch = %v, %v", ok, err)
	}
	if deeper, err := r.Deepen(ctx); deeper || err != nil {
		t.Errorf("Deepen of the whole branch = %v, %v; want false", deeper, err)
	}
}

// shallowFixture is a fixture whose main branch has, after the bad commit
// of the fixture, two unrelated commits, the good image again (good) and
// the release candidate again (bad), then one more unrelated commit: a
// clone of depth 3 holds the good and the bad commits, and its boundary is
// the good one.
func shallowFixture(t *testing.T) *gitFixture {
	f := newGitFixture(t)
	read := func(dir string) string {
		return mustRead(t, "testdata/image-bump-kustomization/"+dir+"/apps/podinfo/kustomization.yaml")
	}
	f.pushToMain("docs/a.md", "a\n", "Docs a")
	f.pushToMain("docs/b.md", "b\n", "Docs b")
	f.good = f.pushToMain("apps/podinfo/kustomization.yaml", read("good"), "Back to podinfo 6.7.0")
	f.bad = f.pushToMain("apps/podinfo/kustomization.yaml", read("original"), "Try podinfo 6.8.0-rc.1 again")
	f.pushToMain("docs/c.md", "c\n", "Docs c")
	return f
}

// Reverts work in shallow clones: as deep as the plan needs, deeper when
// it needs older history, and a push to a branch that moved meanwhile is
// a non-fast-forward (planned again), not an object missing from the clone.
func TestGitReverter_ShallowClones(t *testing.T) {
	tests := map[string]struct {
		depths []int
		mode   v1alpha1.RevertMode
		moves  bool
	}{
		"pull request from a clone of depth 3":                {depths: []int{3}, mode: v1alpha1.PullRequestRevert},
		"pull request after deepening from depth 1":           {depths: []int{1, 2, 3}, mode: v1alpha1.PullRequestRevert},
		"push from a clone of depth 3 to a branch that moved": {depths: []int{3}, mode: v1alpha1.PushRevert, moves: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			f := shallowFixture(t)
			var moved *object.Commit
			g := f.reverter(WithClock(func() time.Time {
				if tt.moves && moved == nil { // someone pushes while serin commits
					moved = f.pushToMain("docs/NOTES.md", "unrelated\n", "Add notes")
				}
				return testEpoch.Add(time.Hour)
			}))
			g.clone.depthSteps = tt.depths
			res, err := g.Revert(t.Context(), f.request(tt.mode))
			if err != nil {
				t.Fatal(err)
			}
			got, tip := f.file(res.Branch, "apps/podinfo/kustomization.yaml")
			if tip.Hash.String() != res.Commit || !strings.Contains(got, "newTag: 6.7.0") {
				t.Errorf("%s at %s (revert %s):\n%s", res.Branch, tip.Hash, res.Commit, got)
			}
			if !strings.Contains(tip.Message, "This reverts commit "+f.bad.Hash.String()) {
				t.Errorf("revert message:\n%s", tip.Message)
			}
			if parent, _ := tip.Parent(0); tt.moves && (parent == nil || parent.Hash != moved.Hash) {
				t.Errorf("the revert is not on top of the moved branch: parent %v", parent)
			}
		})
	}
}

// A branch shorter than the clone's depth is all there: nothing to deepen.
func TestRepository_ShortBranchIsWhole(t *testing.T) {
	f := newGitFixture(t)
	auth := &git.AuthOptions{Transport: git.HTTP, Username: gitUser, Password: gitPassword}
	r, err := OpenRepository(f.url, "main", WithAuth(auth), withClone(cloneOptions{parent: t.TempDir()}))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Clone(t.Context()); err != nil {
		t.Fatal(err)
	}
	if deeper, err := r.Deepen(t.Context()); deeper || err != nil {
		t.Errorf("Deepen of a 2-commit branch cloned 64 deep = %v, %v; want false", deeper, err)
	}
	if _, err := r.Commit("0123456789abcdef0123456789abcdef01234567"); err == nil || errors.Is(err, ErrShallowHistory) {
		t.Errorf("a commit not in the branch: %v, want not found, not ErrShallowHistory", err)
	}
}

// incompressible is n bytes that no pack compresses.
func incompressible(n int, seed uint64) string {
	b := make([]byte, n)
	_, _ = rand.NewChaCha8([32]byte{byte(seed)}).Read(b)
	return string(b)
}

// A repository larger than the budget of all clones fails its revert
// permanently, with a message naming the repository and the budget, when
// its clone reaches the budget (each write is counted before it is made):
// nothing is left on disk, nothing of the budget held.
func TestGitReverter_CloneDiskBudget(t *testing.T) {
	f := newGitFixture(t)
	f.pushToMain("apps/podinfo/blob.bin", incompressible(3<<20, 1), "Add a blob")
	dir := t.TempDir()
	g := f.reverter(WithCloneDir(dir), WithMaxFileSize(8<<20), WithCloneDiskBudget(1<<20))
	_, err := g.Revert(t.Context(), f.request(v1alpha1.PullRequestRevert))
	want := "branch main of " + f.url + " needs more than --gitops-clone-disk-budget (1.0 MiB)"
	if !errors.Is(err, ErrCloneTooLarge) || !strings.Contains(err.Error(), want) {
		t.Fatalf("revert of a 3 MiB repository with a 1 MiB budget: %v, want ErrCloneTooLarge saying %q", err, want)
	}
	if IsTransient(err) {
		t.Errorf("%v is transient: it would be retried forever", err)
	}
	if after, _ := os.ReadDir(dir); len(after) != 0 {
		t.Errorf("clone directory after the revert: %v, want it empty", after)
	}
	if used := g.clone.disk.inUse(); used != 0 {
		t.Errorf("%d bytes of the budget held after the revert", used)
	}
}

// Two clones that together would pass the budget: the second stops, with
// a transient ErrCloneDiskBusy, before it writes past what the first
// leaves, and leaves nothing on disk; once the first is removed, it is
// made.
func TestRepository_CloneDiskBudgetShared(t *testing.T) {
	f := newGitFixture(t)
	f.pushToMain("apps/podinfo/blob.bin", incompressible(3<<20, 2), "Add a blob")
	auth := &git.AuthOptions{Transport: git.HTTP, Username: gitUser, Password: gitPassword}
	parent := t.TempDir()
	budget := newDiskBudget(5 << 20)
	open := func() *Repository {
		r, err := OpenRepository(f.url, "main", WithAuth(auth), withClone(cloneOptions{parent: parent, maxSize: 4 << 20, disk: budget}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		return r
	}
	first, second := open(), open()
	if err := first.Clone(t.Context()); err != nil {
		t.Fatal(err)
	}
	held := budget.inUse()
	if held < 3<<20 || held > 4<<20 {
		t.Errorf("the first clone holds %d bytes of the budget, want its size, 3 to 4 MiB", held)
	}
	err := second.Clone(t.Context())
	if !errors.Is(err, ErrCloneDiskBusy) || !IsTransient(err) || !strings.Contains(err.Error(), "--gitops-clone-disk-budget (5.0 MiB)") {
		t.Fatalf("a second clone past the budget: %v, want a transient ErrCloneDiskBusy", err)
	}
	if budget.inUse() != held {
		t.Errorf("after the second clone stopped, %d bytes of the budget are held, want the first's %d", budget.inUse(), held)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("clone directories: %v, want the first's only", entries)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if err := second.Clone(t.Context()); err != nil {
		t.Errorf("the second clone once the first was removed: %v", err)
	}
	_ = second.Close()
	if used := budget.inUse(); used != 0 {
		t.Errorf("%d bytes of the budget held after both clones were removed", used)
	}
}
