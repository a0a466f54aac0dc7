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
	"hash/fnv"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/outbound"
	"github.com/serin-dev/serin/internal/tenancy"
)

// Options configure a Bridge.
type Options struct {
	// Mode is the default mode; a Canary overrides it with the
	// serin.dev/notification-mode annotation. Empty means ModeOwner.
	Mode Mode
	// EventsAddr is notification-controller's event receiver
	// (http://notification-controller.flux-system.svc.cluster.local./);
	// empty sends nothing to it.
	EventsAddr string
	// Reader reads the Canaries' targets; the manager's cached client.
	// Without it, owner mode cannot find owners and falls back to canary.
	Reader client.Reader
	// APIReader reads what the cache does not hold: the Flux objects that
	// applied targets, Providers and their Secrets. Defaults to Reader.
	APIReader client.Reader
	// ReportingController names the sender in events (gotk-component,
	// Slack username); defaults to "serin".
	ReportingController string
	// ReportingInstance identifies this replica; defaults to the hostname.
	ReportingInstance string
	// Workers is the number of delivery goroutines; defaults to 2. The
	// events of one Canary always go through the same worker, in order.
	Workers int
	// QueueSize bounds each worker's queue; defaults to 100. When a queue
	// is full, its oldest progress event is dropped with a log line, or
	// the new event when the queue holds no progress event.
	QueueSize int
	// Retry is the retry policy of each delivery; zero means DefaultRetryPolicy.
	Retry RetryPolicy
	// MaxProviderTimeout caps a Provider's spec.timeout: one delivery to a
	// Provider, retries included, takes at most this long; defaults to
	// DefaultMaxProviderTimeout (15 s).
	MaxProviderTimeout time.Duration
	// EventsTimeout bounds each attempt to post to notification-controller;
	// defaults to 5 s, as Flux's own event recorder.
	EventsTimeout time.Duration
	// ClusterName is the agent's --cluster-name: commit statuses are set
	// under serin/CLUSTER/NAMESPACE/NAME when it is not empty.
	ClusterName string
	// Logger logs deliveries and failures.
	Logger logr.Logger
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Tenancy refuses Providers in other namespaces
	// (--no-cross-namespace-refs) and reads Providers and their Secrets as
	// the Canary's service account; nil reads them with APIReader.
	Tenancy *tenancy.Tenancy
}

// Bridge is the Notifier of the agent: Notify queues the event and returns
// at once; workers deliver it to notification-controller (owner or canary
// mode) and to the Providers of spec.alerts, with retries. It is a
// manager.Runnable: add it to the manager, whose context stops it.
type Bridge struct {
	opts   Options
	queues []*jobQueue

	mu           sync.Mutex
	destinations map[types.NamespacedName]*destination
	// statuses keeps each commit status in the order of its events.
	statuses *statusOrder

	dropped   atomic.Int64
	delivered atomic.Int64
	failed    atomic.Int64
	started   sync.Once
}

// job is one event of one Canary, waiting for a worker.
type job struct {
	canary *v1alpha1.Canary
	event  Event
	at     time.Time
	// provider is the destination of a job in a Provider's queue.
	provider types.NamespacedName
}

var _ Notifier = (*Bridge)(nil)

// New returns a Bridge; call Start (or add it to a manager) to deliver.
func New(opts Options) *Bridge {
	if opts.Mode == "" {
		opts.Mode = ModeOwner
	}
	if opts.APIReader == nil {
		opts.APIReader = opts.Reader
	}
	if opts.ReportingController == "" {
		opts.ReportingController = "serin"
	}
	if opts.ReportingInstance == "" {
		opts.ReportingInstance, _ = os.Hostname()
	}
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 100
	}
	if opts.Retry == (RetryPolicy{}) {
		opts.Retry = DefaultRetryPolicy
	}
	if opts.MaxProviderTimeout <= 0 {
		opts.MaxProviderTimeout = DefaultMaxProviderTimeout
	}
	if opts.EventsTimeout <= 0 {
		opts.EventsTimeout = 5 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	registerBridgeMetrics()
	b := &Bridge{opts: opts, queues: make([]*jobQueue, opts.Workers), destinations: map[types.NamespacedName]*destination{}, statuses: newStatusOrder()}
	for i := range b.queues {
		b.queues[i] = newJobQueue(opts.QueueSize)
	}
	return b
}

// Notify queues the event; it never blocks. A full queue drops its oldest
// progress event, or else the new one, with a log line (see jobQueue).
// The message is redacted (outbound.RedactText) before it goes anywhere:
// Flux events, Providers and logs.
func (b *Bridge) Notify(_ context.Context, canary *v1alpha1.Canary, e Event) {
	e.Message = outbound.RedactText(e.Message)
	j := job{canary: canary.DeepCopy(), event: e, at: b.opts.Now()}
	d := b.queues[b.shard(canary)].push(j)
	if d == nil {
		bridgeMetrics.queued.Inc()
		return
	}
	// Either the new event was dropped, or an older one gave way to it:
	// the queue's length is the same.
	b.count(resultDropped)
	b.opts.Logger.Info("notification queue full: dropping event",
		"canary", client.ObjectKeyFromObject(d.canary).String(), "reason", d.event.Reason, "message", d.event.Message)
}

// shard picks the worker of a Canary, so that its events stay in order.
func (b *Bridge) shard(c *v1alpha1.Canary) int {
	h := fnv.New32a()
	h.Write([]byte(c.Namespace + "/" + c.Name))
	return int(h.Sum32() % uint32(len(b.queues)))
}

// Start runs the workers until ctx ends; events still queued then are dropped.
func (b *Bridge) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	b.started.Do(func() {
		for _, q := range b.queues {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b.work(ctx, q)
			}()
		}
	})
	<-ctx.Done()
	wg.Wait()
	return nil
}

// NeedLeaderElection is false: workers only deliver what the reconciler,
// which runs on the leader, queues.
func (b *Bridge) NeedLeaderElection() bool { return false }

// Stats counts events delivered to every destination, events with at least
// one failed destination, and events dropped because a queue was full.
func (b *Bridge) Stats() (delivered, failed, dropped int64) {
	return b.delivered.Load(), b.failed.Load(), b.dropped.Load()
}

func (b *Bridge) work(ctx context.Context, q *jobQueue) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-q.ready:
		}
		for ctx.Err() == nil {
			j, ok := q.pop()
			if !ok {
				break
			}
			bridgeMetrics.queued.Dec()
			ok = b.deliverToNotificationController(ctx, j)
			// Each Provider in its own queue: one that hangs holds
			// nobody else's events.
			if !b.toDestinations(logr.NewContext(ctx, b.opts.Logger), j) {
				ok = false
			}
			if ok {
				b.count(resultDelivered)
			} else {
				b.count(resultFailed)
			}
		}
	}
}

// deliver sends one event everywhere it goes, the Providers one after the
// other, and reports whether every destination took it; failures are
// logged, never retried beyond the policy. The workers send to
// notification-controller this way, and queue the Providers' deliveries
// (toDestinations).
func (b *Bridge) deliver(ctx context.Context, j job) bool {
	ok := b.deliverToNotificationController(ctx, j)
	log := b.opts.Logger.WithValues("canary", client.ObjectKeyFromObject(j.canary).String(), "reason", j.event.Reason)
	if !b.sendToProviders(logr.NewContext(ctx, log), j) {
		ok = false
	}
	return ok
}

// deliverToNotificationController sends the event to notification-controller
// unless the Canary's mode is direct, and reports whether it took it.
func (b *Bridge) deliverToNotificationController(ctx context.Context, j job) bool {
	log := b.opts.Logger.WithValues("canary", client.ObjectKeyFromObject(j.canary).String(), "reason", j.event.Reason)
	ctx = logr.NewContext(ctx, log)
	mode, err := modeOf(j.canary, b.opts.Mode)
	if err != nil {
		log.Error(err, "using the default notification mode", "mode", mode)
	}
	if mode == ModeDirect || b.opts.EventsAddr == "" {
		return true
	}
	if err := b.sendToNotificationController(ctx, j, mode); err != nil {
		log.Error(err, "failed to send event to notification-controller", "mode", mode)
		return false
	}
	return true
}

// The results counted by serin_notification_events_total.
const (
	resultDelivered = "delivered"
	resultFailed    = "failed"
	resultDropped   = "dropped"
)

// count records one result in Stats and the metric.
func (b *Bridge) count(result string) {
	switch result {
	case resultDelivered:
		b.delivered.Add(1)
	case resultFailed:
		b.failed.Add(1)
	case resultDropped:
		b.dropped.Add(1)
	}
	bridgeMetrics.events.WithLabelValues(result).Inc()
}

// bridgeMetrics are the Bridge's Prometheus metrics, registered once per
// process with controller-runtime's: what a platform team alerts on when
// notifications fall behind or go missing.
var bridgeMetrics struct {
	once   sync.Once
	events *prometheus.CounterVec
	queued prometheus.Gauge
}

func registerBridgeMetrics() {
	bridgeMetrics.once.Do(func() {
		bridgeMetrics.events = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "serin_notification_events_total",
			Help: "Canary event deliveries, by result: to notification-controller (with the references of spec.alerts checked) and to each Provider of spec.alerts in its own queue; delivered, failed after the retries, or dropped because a queue was full.",
		}, []string{"result"})
		for _, r := range []string{"delivered", "failed", "dropped"} {
			bridgeMetrics.events.WithLabelValues(r)
		}
		bridgeMetrics.queued = prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "serin_notification_events_queued",
			Help: "Canary events waiting for a delivery worker.",
		})
		ctrlmetrics.Registry.MustRegister(bridgeMetrics.events, bridgeMetrics.queued)
	})
}
