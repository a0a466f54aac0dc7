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
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/git"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Deepening fetches the older commits into the clone it has, step by step,
// without fetching again what the clone holds: each step adds a pack of
// its own, and the shallow boundary moves back with it (go-git alone would
// keep the old boundary too).
func TestRepository_DeepenFetchesOnlyOlderCommits(t *testing.T) {
	f := newGitFixture(t)
	var commits []*object.Commit
	for i := range 6 {
		commits = append(commits, f.pushToMain(fmt.Sprintf("docs/%d.md", i), fmt.Sprintf("%d\n", i), fmt.Sprintf("Docs %d", i)))
	}
	// main: good, bad, then the 6 commits above.
	r := f.clone(2, 5, 0)
	ctx := t.Context()
	expect := func(step string, depth, packs int, shallow []*object.Commit) {
		t.Helper()
		if r.depth != depth {
			t.Errorf("%s: depth %d, want %d", step, r.depth, depth)
		}
		if got := countPacks(t, r.dir); got != packs {
			t.Errorf("%s: %d packs, want %d", step, got, packs)
		}
		got, err := r.storage.Shallow()
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, c := range shallow {
			want = append(want, c.Hash.String())
		}
		if fmt.Sprint(got) != "["+strings.Join(want, " ")+"]" {
			t.Errorf("%s: shallow commits %v, want %v", step, got, want)
		}
	}
	expect("clone", 2, 1, []*object.Commit{commits[4]})
	if _, err := r.Commit(commits[1].Hash.String()); err == nil {
		t.Errorf("commit 4 of 8 is in a clone of depth 2")
	}

	if deeper, err := r.Deepen(ctx); !deeper || err != nil {
		t.Fatalf("Deepen = %v, %v", deeper, err)
	}
	expect("depth 5", 5, 2, []*object.Commit{commits[1]})
	head, err := r.Head("main")
	if err != nil {
		t.Fatal(err)
	}
	got, err := commitsSince(ctx, head, map[plumbing.Hash]bool{commits[1].Hash: true})
	if err != nil || len(got) != 4 {
		t.Errorf("the 4 commits after commit 4, across the old boundary: %d, %v", len(got), err)
	}

	if deeper, err := r.Deepen(ctx); !deeper || err != nil {
		t.Fatalf("Deepen = %v, %v", deeper, err)
	}
	expect("whole branch", 0, 3, nil)
	if _, err := r.Commit(f.good.Hash.String()); err != nil {
		t.Errorf("the root commit in the whole branch: %v", err)
	}
	if deeper, err := r.Deepen(ctx); deeper || err != nil {
		t.Errorf("Deepen of the whole branch = %v, %v; want false", deeper, err)
	}
}

func countPacks(t *testing.T, dir string) int {
	t.Helper()
	packs, err := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.pack"))
	if err != nil {
		t.Fatal(err)
	}
	return len(packs)
}

// clone clones the fixture's main branch with the depth steps, removed
// when the test ends.
func (f *gitFixture) clone(depths ...int) *Repository {
	f.t.Helper()
	auth := &git.AuthOptions{Transport: git.HTTP, Username: gitUser, Password: gitPassword}
	r, err := OpenRepository(f.url, "main", WithAuth(auth), withClone(cloneOptions{parent: f.t.TempDir(), depthSteps: depths}))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = r.Close() })
	if err := r.Clone(context.Background()); err != nil {
		f.t.Fatal(err)
	}
	return r
}
