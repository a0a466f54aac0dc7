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

package routing

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// Memory is a Router that keeps its routes in memory, for tests of the code
// that drives a router: it records every call that changed the weights and
// answers GetRoutes with what was set last. The zero value is ready to use.
type Memory struct {
	mu     sync.Mutex
	routes map[types.NamespacedName]Routes
	// writes are the weights each SetRoutes that changed them wrote.
	writes map[types.NamespacedName][]Weights
	// finalized are the Canaries whose routes were handed back.
	finalized map[types.NamespacedName]bool
	// Status is the status GetRoutes reports; the zero value means
	// Programmed.
	Status *RouteStatus
	// Err, when set, is returned by every call, as an unreachable API
	// server would.
	Err error
}

var _ Router = &Memory{}

// enter locks m for a call and returns Err, the error every call fails
// with when set; the caller unlocks.
func (m *Memory) enter() error {
	m.mu.Lock()
	m.init()
	return m.Err
}

func (m *Memory) init() {
	if m.routes == nil {
		m.routes = map[types.NamespacedName]Routes{}
		m.writes = map[types.NamespacedName][]Weights{}
		m.finalized = map[types.NamespacedName]bool{}
	}
}

func memoryKey(canary *v1alpha1.Canary, t Target) types.NamespacedName {
	return types.NamespacedName{Namespace: canary.Namespace, Name: t.ApexService}
}

// Reconcile creates the routes with all traffic on the primary when there
// are none, and keeps the weights otherwise.
func (m *Memory) Reconcile(_ context.Context, canary *v1alpha1.Canary, t Target) error {
	defer m.mu.Unlock()
	if err := m.enter(); err != nil {
		return err
	}
	key := memoryKey(canary, t)
	if _, ok := m.routes[key]; !ok {
		m.routes[key] = Routes{Found: true, Weights: AllPrimary}
	}
	return nil
}

// SetRoutes sets the weights of routes that exist, recording the write when
// they change, as the real routers write only then.
func (m *Memory) SetRoutes(_ context.Context, canary *v1alpha1.Canary, t Target, w Weights) error {
	defer m.mu.Unlock()
	if err := m.enter(); err != nil {
		return err
	}
	key := memoryKey(canary, t)
	routes, ok := m.routes[key]
	if !ok {
		return fmt.Errorf("routes %s not found", key)
	}
	baseline := t.routedBaseline()
	if routes.Weights == w && routes.Baseline == baseline {
		return nil
	}
	routes.Weights, routes.Baseline = w, baseline
	m.routes[key] = routes
	m.writes[key] = append(m.writes[key], w)
	return nil
}

// GetRoutes returns the weights set last, with Status (Programmed when nil).
func (m *Memory) GetRoutes(_ context.Context, canary *v1alpha1.Canary, t Target) (Routes, error) {
	defer m.mu.Unlock()
	if err := m.enter(); err != nil {
		return Routes{}, err
	}
	routes, ok := m.routes[memoryKey(canary, t)]
	if !ok {
		return Routes{}, nil
	}
	routes.Status = Programmed
	if m.Status != nil {
		routes.Status = *m.Status
	}
	return routes, nil
}

// Finalize records that the Canary's routes were handed back and drops
// them.
func (m *Memory) Finalize(_ context.Context, canary *v1alpha1.Canary, t Target) error {
	defer m.mu.Unlock()
	if err := m.enter(); err != nil {
		return err
	}
	key := memoryKey(canary, t)
	delete(m.routes, key)
	m.finalized[key] = true
	return nil
}

// SetWeights puts routes in place with weights w, as if a router had
// written them earlier, without recording a write.
func (m *Memory) SetWeights(namespace, apexService string, w Weights) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	m.routes[types.NamespacedName{Namespace: namespace, Name: apexService}] = Routes{Found: true, Weights: w}
}

// SetBaseline puts routes in place with weights w that name the baseline
// or not, as if a router had written them earlier, without recording a
// write.
func (m *Memory) SetBaseline(namespace, apexService string, w Weights, baseline bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	m.routes[types.NamespacedName{Namespace: namespace, Name: apexService}] = Routes{Found: true, Weights: w, Baseline: baseline}
}

// Writes returns the weights every changing SetRoutes wrote for the routes
// of apexService, in order.
func (m *Memory) Writes(namespace, apexService string) []Weights {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	return append([]Weights(nil), m.writes[types.NamespacedName{Namespace: namespace, Name: apexService}]...)
}

// Finalized reports whether Finalize handed back the routes of apexService.
func (m *Memory) Finalized(namespace, apexService string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	return m.finalized[types.NamespacedName{Namespace: namespace, Name: apexService}]
}
