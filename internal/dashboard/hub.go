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

package dashboard

import (
	"context"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/canarywatch"
)

// hub keeps the Canaries the dashboard shows, from one list and watch of
// the API server shared by every open page: a page that connects reads the
// hub and is told of each change, so browsers never make the dashboard
// poll the API server.
type hub struct {
	kube      client.WithWatch
	namespace string // empty for all namespaces
	// retryDelay is the wait before listing again after the API server
	// refused or failed a list or watch.
	retryDelay time.Duration

	mu       sync.Mutex
	canaries map[types.NamespacedName]*v1alpha1.Canary
	synced   bool  // a list succeeded
	problem  error // why the last list or watch failed; nil once one works
	subs     map[chan struct{}]struct{}
}

// snapshot is the hub's state at one moment. Its Canaries are never
// changed afterwards: the hub replaces an object, it does not modify it.
type snapshot struct {
	canaries []*v1alpha1.Canary // by namespace, then name
	synced   bool
	problem  error
}

func newHub(kube client.WithWatch, namespace string, retryDelay time.Duration) *hub {
	return &hub{
		kube:       kube,
		namespace:  namespace,
		retryDelay: retryDelay,
		canaries:   map[types.NamespacedName]*v1alpha1.Canary{},
		subs:       map[chan struct{}]struct{}{},
	}
}

// run lists and watches the Canaries until ctx ends. A watch the server
// closes or expires is started again from a new list; a refused or failed
// one after retryDelay, the problem shown to the pages meanwhile.
func (h *hub) run(ctx context.Context) {
	funcs := canarywatch.Funcs{Listed: h.replace, Changed: h.update}
	for {
		err := canarywatch.Follow(ctx, h.kube, h.listOptions(), funcs)
		if ctx.Err() != nil {
			return
		}
		delay := canarywatch.RestartDelay
		if !canarywatch.Restartable(err) {
			h.setProblem(err)
			delay = h.retryDelay
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

func (h *hub) listOptions() []client.ListOption {
	if h.namespace == "" {
		return nil
	}
	return []client.ListOption{client.InNamespace(h.namespace)}
}

// replace sets the Canaries of a new list.
func (h *hub) replace(items []v1alpha1.Canary) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.canaries = make(map[types.NamespacedName]*v1alpha1.Canary, len(items))
	for i := range items {
		h.canaries[client.ObjectKeyFromObject(&items[i])] = &items[i]
	}
	h.synced, h.problem = true, nil
	h.notifyLocked()
	return nil
}

// update records a Canary the watch saw.
func (h *hub) update(canary *v1alpha1.Canary, deleted bool) error {
	if h.namespace != "" && canary.Namespace != h.namespace {
		return nil // a fake client's watch ignores the namespace
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	key := client.ObjectKeyFromObject(canary)
	if deleted {
		delete(h.canaries, key)
	} else {
		h.canaries[key] = canary
	}
	h.notifyLocked()
	return nil
}

func (h *hub) setProblem(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.problem = err
	h.notifyLocked()
}

// notifyLocked wakes every subscriber without waiting for any: a
// subscriber that has not read its last wake-up yet reads the newer state
// when it does.
func (h *hub) notifyLocked() {
	for ch := range h.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// subscribe returns a channel that receives after each change, and the
// function that ends the subscription.
func (h *hub) subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs, ch)
		h.mu.Unlock()
	}
}

func (h *hub) snapshot() snapshot {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := snapshot{synced: h.synced, problem: h.problem}
	for _, canary := range h.canaries {
		s.canaries = append(s.canaries, canary)
	}
	sort.Slice(s.canaries, func(i, j int) bool {
		a, b := s.canaries[i], s.canaries[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return s
}
