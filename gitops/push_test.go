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
	"errors"
	"testing"
	"time"
)

// Push creates a branch or fast-forwards one, sending only what the commit
// adds (the server, which checks what it receives, takes it); a branch
// that moved, or a branch to create that exists with another commit, is a
// non-fast-forward and stays as it is: never forced.
func TestRepository_PushCreatesOrFastForwards(t *testing.T) {
	f := newGitFixture(t)
	r := f.clone(1)
	ctx := t.Context()
	head, err := r.Head("main")
	if err != nil {
		t.Fatal(err)
	}
	author := Signature{Name: "serin", Email: "serin@example.com"}
	file := func(name string) []FileChange {
		return []FileChange{{Path: "docs/" + name + ".md", Content: []byte(name + "\n")}}
	}
	first, err := r.CommitFiles(head, file("first"), author, testEpoch, "First")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Push(ctx, first.Hash, "serin/revert/apps/podinfo/x"); err != nil {
		t.Fatalf("creating a branch: %v", err)
	}
	if err := r.Push(ctx, first.Hash, "main"); err != nil {
		t.Fatalf("fast-forwarding main: %v", err)
	}
	if got, tip := f.file("main", "docs/first.md"); got != "first\n" || tip.Hash != first.Hash {
		t.Errorf("main at %s has docs/first.md %q", tip.Hash, got)
	}

	moved := f.pushToMain("docs/NOTES.md", "someone else's\n", "Notes")
	second, err := r.CommitFiles(first, file("second"), author, testEpoch.Add(time.Minute), "Second")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Push(ctx, second.Hash, "main"); !errors.Is(err, ErrNonFastForward) {
		t.Errorf("pushing over a branch that moved: %v, want ErrNonFastForward", err)
	}
	if err := r.Push(ctx, second.Hash, "serin/revert/apps/podinfo/x"); err != nil {
		t.Errorf("fast-forwarding the branch serin created: %v", err)
	}
	other, err := r.CommitFiles(head, file("other"), author, testEpoch, "Other")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Push(ctx, other.Hash, "serin/revert/apps/podinfo/x"); !errors.Is(err, ErrNonFastForward) {
		t.Errorf("pushing another history to an existing branch: %v, want ErrNonFastForward", err)
	}
	branches := f.branches()
	if branches["main"] != moved.Hash || branches["serin/revert/apps/podinfo/x"] != second.Hash {
		t.Errorf("branches after the refused pushes: %v; want main %s, the revert branch %s", branches, moved.Hash, second.Hash)
	}
}
