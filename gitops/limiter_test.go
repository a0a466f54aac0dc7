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
	"net"
	"strings"
	"testing"
	"time"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// At most n reverts run at once, one at a time per repository branch; a
// waiting revert gives up when its context is done and leaves nothing
// behind.
func TestRevertLimiter(t *testing.T) {
	const repoA, repoB, repoC = "https://git.example/fleet/a.git", "https://git.example/fleet/b", "ssh://git@git.example/fleet/c"
	l := newRevertLimiter(2)
	acquire := func(url, branch string) func() {
		t.Helper()
		release, err := l.acquire(t.Context(), "apps", url, branch)
		if err != nil {
			t.Fatal(err)
		}
		return release
	}
	waits := func(url, branch string) error {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		release, err := l.acquire(ctx, "apps", url, branch)
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
		release, _ := l.acquire(t.Context(), "apps", repoA, "main")
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

	if l.held != 0 || len(l.branches) != 0 || len(l.running) != 0 || len(l.queues) != 0 || len(l.turns) != 0 {
		t.Errorf("after all reverts: %d slots held, %d repository turns, %d namespaces running, %d queued left",
			l.held, len(l.branches), len(l.running), len(l.queues))
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
	if n := g.limiter.size; n != 5 {
		t.Errorf("%d reverts at once, want 5", n)
	}
}

// A namespace with 20 jobs queued, and both slots, does not keep another
// namespace's one job waiting more than one slot turn: the next slot to
// free is the other's; then the noisy namespace's jobs run, in order.
func TestRevertLimiter_FairAmongNamespaces(t *testing.T) {
	l := newRevertLimiter(2)
	ctx := t.Context()
	repo := func(i int) string { return fmt.Sprintf("https://git.example/noisy/%d.git", i) }
	var running []func()
	for i := range 2 {
		release, err := l.acquire(ctx, "noisy", repo(i), "main")
		if err != nil {
			t.Fatal(err)
		}
		running = append(running, release)
	}
	started := make(chan string, 32)
	start := func(namespace, url string) {
		release, err := l.acquire(ctx, namespace, url, "main")
		if err != nil {
			return
		}
		_ = release // held until the test ends
		started <- namespace + " " + url
	}
	for i := 2; i < 22; i++ {
		go start("noisy", repo(i))
		waitFor(t, func() bool { return queued(l, "noisy") == i-1 })
	}
	go start("quiet", "https://git.example/quiet/app.git")
	waitFor(t, func() bool { return queued(l, "quiet") == 1 })

	running[0]() // one slot turn
	select {
	case got := <-started:
		if got != "quiet https://git.example/quiet/app.git" {
			t.Fatalf("the freed slot went to %s, want the quiet namespace's job that waited", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the quiet namespace's job did not start when a slot was freed")
	}
	running[1]()
	select {
	case got := <-started:
		if got != "noisy "+repo(2) {
			t.Errorf("then %s started, want the noisy namespace's first job waiting", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the noisy namespace's next job did not start")
	}
}

// queued is how many jobs of namespace wait for a slot.
func queued(l *revertLimiter, namespace string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.queues[namespace])
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

// tarpit is a Git host that accepts connections and answers nothing.
func tarpit(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = conn.Close() })
		}
	}()
	return "http://" + ln.Addr().String() + "/fleet/podinfo.git"
}

// A host that accepts the connection and answers nothing fails the
// clone, and the branch listing, at the connect timeout, not the job's 2
// minutes, with a transient error that names it; the job's slot is free
// again.
func TestGitReverter_TarpitHostGivesItsSlotBack(t *testing.T) {
	url := tarpit(t)
	r, err := OpenRepository(url, "main", withClone(cloneOptions{parent: t.TempDir(), connectTimeout: 300 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for name, call := range map[string]func() error{
		"clone":       func() error { return r.Clone(ctx) },
		"branch list": func() error { _, err := r.RemoteBranch(ctx, "main"); return err },
	} {
		began := time.Now()
		err := call()
		took := time.Since(began)
		if err == nil || !IsTransient(err) || !strings.Contains(err.Error(), "did not answer within 300ms (--gitops-connect-timeout)") {
			t.Errorf("%s from a tarpit: %v, want a transient error saying the host did not answer", name, err)
		}
		if took > 3*time.Second {
			t.Errorf("%s from a tarpit took %s, want about the connect timeout (300ms)", name, took)
		}
	}

	f := newGitFixture(t)
	f.k8s = fleetClient(url, f.bad.Hash)
	g := f.reverter(WithConnectTimeout(300 * time.Millisecond))
	if _, err := g.Revert(ctx, f.request(v1alpha1.PullRequestRevert)); !IsTransient(err) {
		t.Errorf("revert through a tarpit: %v, want a transient error (retried with backoff)", err)
	}
	if g.limiter.held != 0 {
		t.Errorf("%d slots held after the revert ended", g.limiter.held)
	}
}
