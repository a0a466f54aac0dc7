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
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/util"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// testEpoch is the time of test commits, so that their hashes are stable.
var testEpoch = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// testRepo is an in-memory repository whose commits replace the whole tree
// with a directory of testdata.
type testRepo struct {
	t    *testing.T
	repo *git.Repository
	wt   *git.Worktree
	n    int
}

func newTestRepo(t *testing.T) *testRepo {
	t.Helper()
	repo, err := git.Init(memory.NewStorage(), memfs.New())
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	return &testRepo{t: t, repo: repo, wt: wt}
}

// commitDir makes the tree equal to dir's files and commits it.
func (r *testRepo) commitDir(dir, message string) *object.Commit {
	r.t.Helper()
	files := readTree(r.t, dir)
	entries, _ := r.wt.Filesystem.ReadDir("/")
	for _, e := range entries {
		if e.Name() != ".git" {
			if err := util.RemoveAll(r.wt.Filesystem, e.Name()); err != nil {
				r.t.Fatal(err)
			}
		}
	}
	for p, b := range files {
		if err := util.WriteFile(r.wt.Filesystem, p, b, 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	return r.commit(message)
}

// commitFiles writes (or, with nil content, deletes) files and commits.
func (r *testRepo) commitFiles(files map[string]string, message string) *object.Commit {
	r.t.Helper()
	for p, content := range files {
		if content == "" {
			_ = r.wt.Filesystem.Remove(p)
			continue
		}
		if err := util.WriteFile(r.wt.Filesystem, p, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	return r.commit(message)
}

func (r *testRepo) commit(message string) *object.Commit {
	r.t.Helper()
	if err := r.wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		r.t.Fatal(err)
	}
	r.n++
	sig := &object.Signature{Name: "Dev", Email: "dev@example.com", When: testEpoch.Add(time.Duration(r.n) * time.Minute)}
	h, err := r.wt.Commit(message, &git.CommitOptions{All: true, Author: sig, Committer: sig, AllowEmptyCommits: true})
	if err != nil {
		r.t.Fatal(err)
	}
	return r.object(h)
}

func (r *testRepo) object(h plumbing.Hash) *object.Commit {
	r.t.Helper()
	c, err := r.repo.CommitObject(h)
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

// commitFiles reads the files of a commit.
func commitFiles(t *testing.T, c *object.Commit) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	tree, err := c.Tree()
	if err != nil {
		t.Fatal(err)
	}
	err = tree.Files().ForEach(func(f *object.File) error {
		content, err := f.Contents()
		files[f.Name] = []byte(content)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// readTree reads the files under dir as slash-separated relative paths.
func readTree(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// writeTree replaces dir with files (UPDATE_GOLDEN).
func writeTree(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for p, b := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func indent(lines []string) string {
	if len(lines) == 0 {
		return "  (none)\n"
	}
	return "  " + strings.Join(lines, "\n  ") + "\n"
}
