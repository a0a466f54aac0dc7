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

package controllers

import (
	"crypto/sha256"
	"encoding/json"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// expectationTimeout bounds how long a reconcile waits for a cache that
// holds neither the status serin wrote nor the one its write replaced:
// past it, something else changed the status and the cached object wins.
const expectationTimeout = 10 * time.Second

// staleCacheLimit bounds how long a reconcile waits for a cache that still
// holds the very status serin's last write replaced: that cache is behind,
// and acting on it would take the step again (on an API server answering
// a status patch in hundreds of milliseconds, a watch can lag more than
// expectationTimeout). The limit only keeps a lost watch event from
// holding a Canary for ever.
const staleCacheLimit = 2 * time.Minute

// writeExpectations remembers the status serin last wrote for each Canary.
// A reconcile triggered by serin's own writes to the objects it owns (an
// HTTPRoute weight, a Deployment scale) can start before the informer cache
// has the Canary's new status; acting on the stale status would take a step
// twice. Reconcile waits for the cache to catch up instead, as the
// ReplicaSet controller's expectations do.
type writeExpectations struct {
	mu      sync.Mutex
	written map[types.NamespacedName]expectation
}

type expectation struct {
	// fingerprint is the status written; replaced the one it replaced
	// (empty when the write changed nothing the rollout schedules by).
	fingerprint, replaced string
	at                    time.Time
}

func newWriteExpectations() *writeExpectations {
	return &writeExpectations{written: map[types.NamespacedName]expectation{}}
}

// fingerprint hashes the status fields that schedule the rollout, as they
// are serialized (so in-memory precision the API drops does not matter).
func fingerprint(st *v1alpha1.CanaryStatus) string {
	b, _ := json.Marshal(struct {
		Phase              v1alpha1.CanaryPhase
		Weight             int
		FailedChecks       int
		Iterations         int
		Applied            string
		LastTransitionTime any
	}{st.Phase, st.CanaryWeight, st.FailedChecks, st.Iterations, st.LastAppliedSpec, st.LastTransitionTime})
	sum := sha256.Sum256(b)
	return string(sum[:])
}

// wrote records the status of a successful status patch, and the status
// read from the cache that it replaced.
func (e *writeExpectations) wrote(key types.NamespacedName, read, written *v1alpha1.CanaryStatus, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	exp := expectation{fingerprint: fingerprint(written), at: now}
	if r := fingerprint(read); r != exp.fingerprint {
		exp.replaced = r
	}
	e.written[key] = exp
}

// stale reports whether a cached status is not yet the one serin wrote last.
func (e *writeExpectations) stale(key types.NamespacedName, st *v1alpha1.CanaryStatus, now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	exp, ok := e.written[key]
	if !ok {
		return false
	}
	cached, waited := fingerprint(st), now.Sub(exp.at)
	switch {
	case cached == exp.fingerprint:
		// Caught up.
	case cached == exp.replaced && waited <= staleCacheLimit:
		// The write is not in the cache yet, however long it takes.
		return true
	case cached != exp.replaced && waited <= expectationTimeout:
		return true
	}
	delete(e.written, key)
	return false
}

// forget drops a deleted Canary.
func (e *writeExpectations) forget(key types.NamespacedName) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.written, key)
}
