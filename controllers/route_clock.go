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
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/serin-dev/serin/routing"
)

// routeClocks remembers, for each Canary, the generation of its routing
// objects the agent last observed and since when it has been programmed. A
// gateway reports new weights accepted a moment (or, when it rejected them
// first, much) after serin wrote them; the next analysis step is due one
// interval after they came into force, so that the analysis judges only
// traffic the data plane applied.
//
// It is a memory of observations, not state: lost on a restart, it only
// means the agent did not see the weights come into force, and the step is
// scheduled from status.lastTransitionTime as before. (A wait Ready showed
// survives a restart: its end restarts the transition time itself.)
type routeClocks struct {
	mu   sync.Mutex
	seen map[types.NamespacedName]routeClock
}

type routeClock struct {
	generation int64
	programmed bool
	since      time.Time
}

func newRouteClocks() *routeClocks {
	return &routeClocks{seen: map[types.NamespacedName]routeClock{}}
}

// programmedSince records an observation of a Canary's routes and returns
// when their current generation came into force: the first observation of
// it programmed after one of another generation or of it not programmed.
// Zero when the agent did not see that happen, or they are not programmed.
func (c *routeClocks) programmedSince(key types.NamespacedName, st routing.RouteStatus, now time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	last, known := c.seen[key]
	next := routeClock{generation: st.Generation, programmed: st.Programmed}
	switch {
	case !st.Programmed:
	case known && last.programmed && last.generation == st.Generation:
		next.since = last.since
	case known:
		next.since = now
	}
	c.seen[key] = next
	return next.since
}

// forget drops a deleted Canary.
func (c *routeClocks) forget(key types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.seen, key)
}

// endpointClocks remembers, for each Canary, the primary's endpoints the
// agent last observed during a promotion and since when they have been
// so. A data plane applies a change of the endpoints a moment after it:
// until then it may still send requests to a pod that left them, so a
// promotion waits --data-plane-settle-time from the change before it
// moves traffic or completes. Like routeClocks, a memory of observations:
// lost on a restart, the next change is timed again.
type endpointClocks struct {
	mu   sync.Mutex
	seen map[types.NamespacedName]endpointClock
}

type endpointClock struct {
	endpoints string
	since     time.Time
}

func newEndpointClocks() *endpointClocks {
	return &endpointClocks{seen: map[types.NamespacedName]endpointClock{}}
}

// changedAt records an observation of a Canary's primary endpoints (a
// canonical list of them) and returns when they last changed: the first
// observation of this list after another one. Zero when the agent did not
// see them change.
func (c *endpointClocks) changedAt(key types.NamespacedName, endpoints string, now time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	last, known := c.seen[key]
	next := endpointClock{endpoints: endpoints}
	switch {
	case known && last.endpoints == endpoints:
		next.since = last.since
	case known:
		next.since = now
	}
	c.seen[key] = next
	return next.since
}

// forget drops a deleted Canary.
func (c *endpointClocks) forget(key types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.seen, key)
}
