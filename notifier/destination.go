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

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Each Provider that spec.alerts name is a destination with a queue and a
// goroutine of its own: a Provider that hangs (a tenant's black hole, a
// chat service down) delays the events bound for it, each at most
// Options.MaxProviderTimeout, and no event of another destination. The events of
// one Canary reach one destination in order; a full queue gives up its
// oldest progress event first (jobQueue).

// destination is one Provider's delivery queue.
type destination struct {
	key   types.NamespacedName
	queue *jobQueue
}

// toDestinations queues the event for each Provider of spec.alerts whose
// severity admits it; false when a reference was refused.
func (b *Bridge) toDestinations(ctx context.Context, j job) bool {
	keys, ok := b.providersOf(ctx, j)
	for _, key := range keys {
		d := b.destination(ctx, key)
		dj := j
		dj.provider = key
		if dropped := d.queue.push(dj); dropped != nil {
			b.count(resultDropped)
			b.opts.Logger.Info("notification queue full: dropping event", "provider", key.String(),
				"canary", client.ObjectKeyFromObject(dropped.canary).String(), "reason", dropped.event.Reason, "message", dropped.event.Message)
			continue
		}
		bridgeMetrics.queued.Inc()
	}
	return ok
}

// destination returns the queue of a Provider, starting its goroutine the
// first time; it lives until ctx (the Bridge's) ends.
func (b *Bridge) destination(ctx context.Context, key types.NamespacedName) *destination {
	b.mu.Lock()
	defer b.mu.Unlock()
	if d, ok := b.destinations[key]; ok {
		return d
	}
	d := &destination{key: key, queue: newJobQueue(b.opts.QueueSize)}
	b.destinations[key] = d
	go b.serve(ctx, d)
	return d
}

// serve delivers a destination's events, one at a time, until ctx ends.
func (b *Bridge) serve(ctx context.Context, d *destination) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.queue.ready:
		}
		for ctx.Err() == nil {
			j, ok := d.queue.pop()
			if !ok {
				break
			}
			bridgeMetrics.queued.Dec()
			log := b.opts.Logger.WithValues("canary", client.ObjectKeyFromObject(j.canary).String(), "reason", j.event.Reason)
			if b.sendToDestination(logr.NewContext(ctx, log), j, d.key) {
				b.count(resultDelivered)
			} else {
				b.count(resultFailed)
			}
		}
	}
}
