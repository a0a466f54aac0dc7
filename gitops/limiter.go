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
	"net/http/httptrace"
	"net/url"
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

// DefaultConnectTimeout bounds, unless WithConnectTimeout says otherwise,
// how long a Git host may take to answer each request of a clone or a
// fetch: the connection, the TLS handshake and the first byte of its
// answer. A host that accepts connections and answers nothing (a tarpit)
// gives its job's slot back after it, not after RevertTimeout.
const DefaultConnectTimeout = 15 * time.Second

// turnWait is how long a job waits in its namespace's queue for its turn
// before it reports ErrBusy and is asked again. Jobs run off the
// reconcile workers (controllers' gitJobs), so waiting holds no worker;
// the wait is long enough for the jobs ahead of it, each bounded by
// RevertTimeout, to end, so that its place in turn counts.
const turnWait = 10 * time.Minute

// ErrBusy means the job did not start: it waited turnWait for its turn.
// Ask again later.
var ErrBusy = errors.New("another revert runs")

// revertLimiter bounds the Git jobs of an agent: at most size at once,
// shared fairly among namespaces (tenants), and one at a time per
// repository branch, so that a bad commit to a base that many Canaries
// share clones the repository once at a time rather than once per Canary
// at the same moment.
//
// Fairness works as the analysis runner's (analysis/fairqueue.go): each
// namespace has its own first-in first-out queue, and a free slot goes to
// the first job of the namespace that holds the fewest slots (the
// namespaces in turn among equals). A namespace holds every slot only
// while no other waits; once another does, the next slot to free is the
// other's, so that a tenant with 20 jobs against a host that never
// answers delays another tenant's revert by one slot turn at most
// (DefaultConnectTimeout against such a host), never by its whole queue.
type revertLimiter struct {
	size int

	mu sync.Mutex
	// branches serialize the jobs of one repository branch.
	branches map[string]*repositoryTurn
	// held counts the slots taken, running those of each namespace.
	held    int
	running map[string]int
	// queues are the jobs waiting for a slot, by namespace; turns the
	// namespaces with jobs waiting, in the order they are served among
	// equals, next the one whose turn it is.
	queues map[string][]*slotWaiter
	turns  []string
	next   int
}

// repositoryTurn serializes the jobs of one repository branch.
type repositoryTurn struct {
	held  chan struct{} // capacity 1: full while a job of the branch runs
	users int           // jobs running or waiting, guarded by the limiter's mu
}

// slotWaiter is a job waiting for a slot; granted is closed when it has
// one.
type slotWaiter struct {
	granted chan struct{}
}

func newRevertLimiter(n int) *revertLimiter {
	return &revertLimiter{size: n, branches: map[string]*repositoryTurn{}, running: map[string]int{}, queues: map[string][]*slotWaiter{}}
}

// acquire waits for the turn of the repository branch, then for a slot
// in namespace's queue, or until ctx is done. The job runs until release
// is called.
func (l *revertLimiter) acquire(ctx context.Context, namespace, url, branch string) (release func(), err error) {
	key := repositoryKey(url, branch)
	turn := l.join(key)
	select {
	case turn.held <- struct{}{}:
	case <-ctx.Done():
		l.leave(key, turn)
		return nil, fmt.Errorf("waiting for the running revert of branch %s of %s: %w", branch, url, ctx.Err())
	}
	if err := l.takeSlot(ctx, namespace); err != nil {
		<-turn.held
		l.leave(key, turn)
		return nil, fmt.Errorf("waiting for one of the %d reverts running at once (--gitops-max-concurrent-reverts): %w", l.size, err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			l.giveSlot(namespace)
			<-turn.held
			l.leave(key, turn)
		})
	}, nil
}

// takeSlot queues the job in its namespace's queue and waits for a slot.
func (l *revertLimiter) takeSlot(ctx context.Context, namespace string) error {
	w := &slotWaiter{granted: make(chan struct{})}
	l.mu.Lock()
	if len(l.queues[namespace]) == 0 {
		l.turns = append(l.turns, namespace)
	}
	l.queues[namespace] = append(l.queues[namespace], w)
	l.grant()
	l.mu.Unlock()
	select {
	case <-w.granted:
		return nil
	case <-ctx.Done():
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-w.granted:
		// Granted as ctx ended: give the slot to the next.
		l.held--
		l.countOut(namespace)
		l.grant()
	default:
		l.dequeue(namespace, w)
	}
	return ctx.Err()
}

// giveSlot ends a job's hold of its slot and grants it to the next.
func (l *revertLimiter) giveSlot(namespace string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held--
	l.countOut(namespace)
	l.grant()
}

// grant gives the free slots to the first jobs of the namespaces holding
// the fewest, in turn among equals. Called with mu held.
func (l *revertLimiter) grant() {
	for l.held < l.size && len(l.turns) > 0 {
		if l.next >= len(l.turns) {
			l.next = 0
		}
		pick := l.next
		for i := range l.turns {
			j := (l.next + i) % len(l.turns)
			if l.running[l.turns[j]] < l.running[l.turns[pick]] {
				pick = j
			}
		}
		ns := l.turns[pick]
		w := l.queues[ns][0]
		l.queues[ns] = l.queues[ns][1:]
		l.held++
		l.running[ns]++
		close(w.granted)
		if len(l.queues[ns]) == 0 {
			l.dropTurn(pick)
		} else {
			l.next = pick + 1
		}
	}
}

// dequeue takes a waiting job out of its namespace's queue.
func (l *revertLimiter) dequeue(namespace string, w *slotWaiter) {
	q := l.queues[namespace]
	for i := range q {
		if q[i] == w {
			l.queues[namespace] = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	if len(l.queues[namespace]) == 0 {
		for i, ns := range l.turns {
			if ns == namespace {
				l.dropTurn(i)
				break
			}
		}
	}
}

// dropTurn removes the namespace at i, with nothing waiting, from the
// turns.
func (l *revertLimiter) dropTurn(i int) {
	delete(l.queues, l.turns[i])
	l.turns = append(l.turns[:i:i], l.turns[i+1:]...)
	if i < l.next {
		l.next--
	}
}

func (l *revertLimiter) countOut(namespace string) {
	if l.running[namespace]--; l.running[namespace] <= 0 {
		delete(l.running, namespace)
	}
}

func (l *revertLimiter) join(key string) *repositoryTurn {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.branches[key]
	if t == nil {
		t = &repositoryTurn{held: make(chan struct{}, 1)}
		l.branches[key] = t
	}
	t.users++
	return t
}

func (l *revertLimiter) leave(key string, t *repositoryTurn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t.users--; t.users == 0 {
		delete(l.branches, key)
	}
}

// repositoryKey names a repository branch: the URL without a trailing
// slash or .git, and the branch.
func repositoryKey(url, branch string) string {
	u := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(url), "/"), ".git")
	return u + "#" + branch
}

// answering bounds how long the Git host of rawURL may take to answer
// each HTTP request made under ctx: from asking for a connection (dial,
// TLS handshake) to the first byte of the response, d at most; 0 for no
// bound. The returned function, given the result of the work done under
// ctx, ends the bound and turns the failure of a host that did not answer
// into a transient error (a context.DeadlineExceeded) that names it.
// Once the answer has begun, the job's own bound (RevertTimeout) applies.
func answering(ctx context.Context, d time.Duration, rawURL string) (context.Context, func(error) error) {
	if d <= 0 {
		return ctx, func(err error) error { return err }
	}
	host := rawURL
	if u, err := url.Parse(rawURL); err == nil && u.Host != "" {
		host = u.Host
	}
	ctx, cancel := context.WithCancelCause(ctx)
	silent := fmt.Errorf("the Git host %s did not answer within %s (--gitops-connect-timeout): %w", host, d, context.DeadlineExceeded)
	timer := time.AfterFunc(d, func() { cancel(silent) })
	timer.Stop()
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GetConn:              func(string) { timer.Reset(d) },
		GotFirstResponseByte: func() { timer.Stop() },
	})
	return ctx, func(err error) error {
		timer.Stop()
		defer cancel(nil)
		if err != nil && context.Cause(ctx) == silent {
			return silent
		}
		return err
	}
}
