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

// hub keeps the Canaries and CanaryGroups the dashboard shows, from one
// list and watch of each kind shared by every open page: a page that
// connects reads the hub and is told of each change, so browsers never
// make the dashboard poll the API server.
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
	// groups are followed apart: a user the CanaryGroups are refused to
	// still sees the Canaries, and groupsProblem says why no group shows.
	groups        map[types.NamespacedName]*v1alpha1.CanaryGroup
	groupsProblem error
	subs          map[chan struct{}]struct{}
}

// snapshot is the hub's state at one moment. Its Canaries are never
// changed afterwards: the hub replaces an object, it does not modify it.
type snapshot struct {
	canaries      []*v1alpha1.Canary // by namespace, then name
	synced        bool
	problem       error
	groups        []*v1alpha1.CanaryGroup // by namespace, then name
	groupsProblem error
}

func newHub(kube client.WithWatch, namespace string, retryDelay time.Duration) *hub {
	return &hub{
		kube:       kube,
		namespace:  namespace,
		retryDelay: retryDelay,
		canaries:   map[types.NamespacedName]*v1alpha1.Canary{},
		groups:     map[types.NamespacedName]*v1alpha1.CanaryGroup{},
		subs:       map[chan struct{}]struct{}{},
	}
}

// run lists and watches the Canaries and the CanaryGroups until ctx ends.
func (h *hub) run(ctx context.Context) {
	go h.follow(ctx, func(ctx context.Context) error {
		return canarywatch.FollowGroups(ctx, h.kube, h.listOptions(), canarywatch.Funcs[v1alpha1.CanaryGroup]{Listed: h.replaceGroups, Changed: h.updateGroup})
	}, h.setGroupsProblem)
	h.follow(ctx, func(ctx context.Context) error {
		return canarywatch.Follow(ctx, h.kube, h.listOptions(), canarywatch.Funcs[v1alpha1.Canary]{Listed: h.replace, Changed: h.update})
	}, h.setProblem)
}

// follow runs one kind's list and watch until ctx ends. A watch the server
// closes or expires is started again from a new list; a refused or failed
// one after retryDelay, the problem shown to the pages meanwhile.
func (h *hub) follow(ctx context.Context, follow func(context.Context) error, setProblem func(error)) {
	for {
		err := follow(ctx)
		if ctx.Err() != nil {
			return
		}
		delay := canarywatch.RestartDelay
		if !canarywatch.Restartable(err) {
			setProblem(err)
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
	h.canaries = keyed(items)
	h.synced, h.problem = true, nil
	h.notifyLocked()
	return nil
}

// update records a Canary the watch saw.
func (h *hub) update(canary *v1alpha1.Canary, deleted bool) error {
	return h.record(canary, func() { change(h.canaries, canary, deleted) })
}

// replaceGroups sets the CanaryGroups of a new list.
func (h *hub) replaceGroups(items []v1alpha1.CanaryGroup) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.groups = keyed(items)
	h.groupsProblem = nil
	h.notifyLocked()
	return nil
}

// updateGroup records a CanaryGroup the watch saw.
func (h *hub) updateGroup(group *v1alpha1.CanaryGroup, deleted bool) error {
	return h.record(group, func() { change(h.groups, group, deleted) })
}

// record applies a change a watch saw of object, unless it is another
// namespace's (a fake client's watch ignores the namespace).
func (h *hub) record(object client.Object, apply func()) error {
	if h.namespace != "" && object.GetNamespace() != h.namespace {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	apply()
	h.notifyLocked()
	return nil
}

// keyed indexes a list's items by namespace and name.
func keyed[T any, P interface {
	*T
	client.Object
}](items []T) map[types.NamespacedName]P {
	objects := make(map[types.NamespacedName]P, len(items))
	for i := range items {
		objects[client.ObjectKeyFromObject(P(&items[i]))] = &items[i]
	}
	return objects
}

// change records an object a watch saw changed, or deleted.
func change[P client.Object](objects map[types.NamespacedName]P, object P, deleted bool) {
	key := client.ObjectKeyFromObject(object)
	if deleted {
		delete(objects, key)
	} else {
		objects[key] = object
	}
}

func (h *hub) setGroupsProblem(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.groupsProblem = err
	h.notifyLocked()
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
	s := snapshot{synced: h.synced, problem: h.problem, groupsProblem: h.groupsProblem}
	for _, canary := range h.canaries {
		s.canaries = append(s.canaries, canary)
	}
	for _, group := range h.groups {
		s.groups = append(s.groups, group)
	}
	sortByKey(s.canaries)
	sortByKey(s.groups)
	return s
}

// sortByKey orders objects by namespace, then name.
func sortByKey[O client.Object](objects []O) {
	sort.Slice(objects, func(i, j int) bool {
		a, b := objects[i], objects[j]
		if a.GetNamespace() != b.GetNamespace() {
			return a.GetNamespace() < b.GetNamespace()
		}
		return a.GetName() < b.GetName()
	})
}
