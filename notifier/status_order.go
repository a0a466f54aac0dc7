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

package notifier

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// A commit status is the last word of a Canary on a commit, so the
// statuses of one Provider, commit and context are posted in the order of
// their events, whichever path they take: a progress event's pending goes
// through the Provider's queue, a verdict is posted by the Canary itself
// (DeliverCommitStatus). A pending queued before the verdict but sent
// after it would otherwise hide the verdict from a wave reading it back
// and from the people on the pull request.

// statusKey is what a commit status overwrites: one Provider's status of
// one context on one commit.
type statusKey struct {
	provider     types.NamespacedName
	sha, context string
}

// statusOrder serializes the posts of each statusKey and remembers the
// time of the newest event posted, so that an older one is not sent
// after it.
type statusOrder struct {
	mu     sync.Mutex
	newest map[statusKey]time.Time
	locks  map[statusKey]*keyLock
}

// keyLock is the lock of one statusKey, with the number of posts holding
// or waiting for it (the lock is forgotten at zero).
type keyLock struct {
	held  chan struct{}
	users int
}

// statusMemory is how long the time of a posted event is kept: events
// reorder within the queues' delays, seconds to a few minutes (a
// Provider's retries).
const statusMemory = 30 * time.Minute

// maxStatusKeys bounds the remembered keys; past it the entries older
// than statusMemory are forgotten.
const maxStatusKeys = 4096

func newStatusOrder() *statusOrder {
	return &statusOrder{newest: map[statusKey]time.Time{}, locks: map[statusKey]*keyLock{}}
}

// acquire waits until no other post of k is under way, or ctx ends; the
// release func must be called once.
func (o *statusOrder) acquire(ctx context.Context, k statusKey) (release func(), err error) {
	o.mu.Lock()
	l, ok := o.locks[k]
	if !ok {
		l = &keyLock{held: make(chan struct{}, 1)}
		o.locks[k] = l
	}
	l.users++
	o.mu.Unlock()
	done := func() {
		o.mu.Lock()
		if l.users--; l.users == 0 {
			delete(o.locks, k)
		}
		o.mu.Unlock()
	}
	release = func() { <-l.held; done() }
	select {
	case l.held <- struct{}{}: // free: taken even when ctx has ended
		return release, nil
	default:
	}
	select {
	case l.held <- struct{}{}:
		return release, nil
	case <-ctx.Done():
		done()
		return nil, context.Cause(ctx)
	}
}

// stale reports whether an event of time at is older than the newest
// event already posted for k. Hold k's lock.
func (o *statusOrder) stale(k statusKey, at time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	newest, ok := o.newest[k]
	return ok && at.Before(newest)
}

// posted records that the event of time at was posted for k. Hold k's
// lock.
func (o *statusOrder) posted(k statusKey, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.newest) >= maxStatusKeys {
		for key, t := range o.newest {
			if at.Sub(t) > statusMemory {
				delete(o.newest, key)
			}
		}
	}
	if at.After(o.newest[k]) {
		o.newest[k] = at
	}
}
