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
	"testing"
	"time"
)

// At most n reverts run at once, one at a time per repository branch; a
// waiting revert gives up when its context is done and leaves nothing
// behind.
func TestRevertLimiter(t *testing.T) {
	const repoA, repoB, repoC = "https://git.example/fleet/a.git", "https://git.example/fleet/b", "ssh://git@git.example/fleet/c"
	l := newRevertLimiter(2)
	acquire := func(url, branch string) func() {
		t.Helper()
		release, err := l.acquire(t.Context(), url, branch)
		if err != nil {
			t.Fatal(err)
		}
		return release
	}
	waits := func(url, branch string) error {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		release, err := l.acquire(ctx, url, branch)
		if err == nil {
			release()
			t.Fatalf("%s %s did not wait", url, branch)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("waiting for %s %s: %v, want context.DeadlineExceeded", url, branch, err)
		}
		return err
	}

	releaseA := acquire(repoA, "main")
	releaseB := acquire(repoB, "main")
	if err := waits(repoC, "main"); err.Error() != "waiting for one of the 2 reverts running at once (--gitops-max-concurrent-reverts): context deadline exceeded" {
		t.Errorf("third revert: %v", err)
	}
	releaseB()
	// The same repository branch (spelled with a trailing slash, without
	// .git) waits for the running revert even with a slot free.
	if err := waits("https://git.example/fleet/a/", "main"); err.Error() != "waiting for the running revert of branch main of https://git.example/fleet/a/: context deadline exceeded" {
		t.Errorf("second revert of a branch: %v", err)
	}
	// Another branch of it does not.
	releaseRelease := acquire(repoA, "release")

	got := make(chan func())
	go func() {
		release, _ := l.acquire(t.Context(), repoA, "main")
		got <- release
	}()
	select {
	case <-got:
		t.Fatal("a second revert of branch main ran with the first")
	case <-time.After(20 * time.Millisecond):
	}
	releaseA()
	releaseA() // a second release is a no-op
	select {
	case release := <-got:
		release()
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting revert did not run when the first ended")
	}
	releaseRelease()

	if len(l.slots) != 0 || len(l.turns) != 0 {
		t.Errorf("after all reverts: %d slots held, %d repository turns left", len(l.slots), len(l.turns))
	}
}

func TestWithMaxConcurrentReverts(t *testing.T) {
	if _, err := NewGitReverter(nil, WithMaxConcurrentReverts(0)); err == nil {
		t.Error("a bound of 0 reverts is accepted")
	}
	g, err := NewGitReverter(nil, WithMaxConcurrentReverts(5))
	if err != nil {
		t.Fatal(err)
	}
	if n := cap(g.limiter.slots); n != 5 {
		t.Errorf("%d reverts at once, want 5", n)
	}
}
