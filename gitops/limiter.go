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
	"strings"
	"sync"
	"time"
)

// DefaultMaxConcurrentReverts is how many reverts an agent runs at once
// unless WithMaxConcurrentReverts says otherwise.
const DefaultMaxConcurrentReverts = 2

// RevertTimeout bounds one revert once it runs: clone, render, commit,
// push, pull request.
const RevertTimeout = 2 * time.Minute

// turnWait is how long a revert waits for its turn before it reports
// ErrBusy, so that its caller (a reconcile worker) is not held.
const turnWait = 200 * time.Millisecond

// ErrBusy means the revert did not start: another revert of the same
// branch runs, or as many reverts as the agent allows. Ask again later.
var ErrBusy = errors.New("another revert runs")

// revertLimiter bounds the reverts of an agent: at most cap(slots) at
// once, and one at a time per repository branch, so that a bad commit to
// a base that many Canaries share clones the repository once at a time
// rather than once per Canary at the same moment.
type revertLimiter struct {
	slots chan struct{}

	mu    sync.Mutex
	turns map[string]*repositoryTurn
}

// repositoryTurn serializes the reverts of one repository branch.
type repositoryTurn struct {
	held  chan struct{} // capacity 1: full while a revert of the branch runs
	users int           // reverts running or waiting, guarded by the limiter's mu
}

func newRevertLimiter(n int) *revertLimiter {
	return &revertLimiter{slots: make(chan struct{}, n), turns: map[string]*repositoryTurn{}}
}

// acquire waits for the turn of the repository branch, then for a slot,
// or until ctx is done. The revert runs until release is called.
func (l *revertLimiter) acquire(ctx context.Context, url, branch string) (release func(), err error) {
	key := repositoryKey(url, branch)
	turn := l.join(key)
	select {
	case turn.held <- struct{}{}:
	case <-ctx.Done():
		l.leave(key, turn)
		return nil, fmt.Errorf("waiting for the running revert of branch %s of %s: %w", branch, url, ctx.Err())
	}
	select {
	case l.slots <- struct{}{}:
	case <-ctx.Done():
		<-turn.held
		l.leave(key, turn)
		return nil, fmt.Errorf("waiting for one of the %d reverts running at once (--gitops-max-concurrent-reverts): %w", cap(l.slots), ctx.Err())
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-l.slots
			<-turn.held
			l.leave(key, turn)
		})
	}, nil
}

func (l *revertLimiter) join(key string) *repositoryTurn {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.turns[key]
	if t == nil {
		t = &repositoryTurn{held: make(chan struct{}, 1)}
		l.turns[key] = t
	}
	t.users++
	return t
}

func (l *revertLimiter) leave(key string, t *repositoryTurn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t.users--; t.users == 0 {
		delete(l.turns, key)
	}
}

// repositoryKey names a repository branch: the URL without a trailing
// slash or .git, and the branch.
func repositoryKey(url, branch string) string {
	u := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(url), "/"), ".git")
	return u + "#" + branch
}
