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

package analysis

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// The runner's defaults: the agent's --analysis-workers and
// --analysis-step-timeout, and the bounded queue of the calls nobody waits for.
const (
	// DefaultWorkers is the number of analysis steps started at once.
	DefaultWorkers = 32
	// DefaultSlowAfter is how long a step runs before it is slow: it then
	// stops counting toward the workers, so that steps waiting on a slow
	// or hanging dependency never hold up the others.
	DefaultSlowAfter = time.Second
	// inFlightPerWorker bounds the steps in flight, slow ones included:
	// inFlightPerWorker × Workers.
	inFlightPerWorker = 8
	// DefaultStepTimeout bounds all the calls of one analysis step.
	DefaultStepTimeout = 30 * time.Second
	// DefaultHookWorkers is the number of event and post-rollout webhook
	// calls made at once.
	DefaultHookWorkers = 4
	// DefaultHookQueueSize bounds the event and post-rollout webhook calls
	// waiting for a worker; past it the oldest is dropped.
	DefaultHookQueueSize = 1000
)

// DeadlineError is the failure of a call that got no answer in time: Of
// names the deadline, "call" (a webhook's timeout, a MetricTemplate's
// provider.timeout) or "analysis step" (the runner's step timeout).
type DeadlineError struct {
	Of    string
	After time.Duration
}

func (e *DeadlineError) Error() string {
	return fmt.Sprintf("no answer within %s: %s deadline exceeded", e.After, e.Of)
}

// Unwrap makes errors.Is(err, context.DeadlineExceeded) true.
func (e *DeadlineError) Unwrap() error { return context.DeadlineExceeded }

// Work is what one analysis step, or one gate, calls. Rollback, Hooks and
// Metrics are called all at once; Gate once none of them failed or
// requested a rollback.
type Work struct {
	// Canary is a snapshot, not modified afterwards: the payload's name,
	// namespace, phase and checksum, and the queries' variables.
	Canary *v1alpha1.Canary
	// At is the time the work stands for, returned in its Outcome: when the
	// reconcile that found the step due asked for it.
	At time.Time
	// Rollback are rollback webhooks: a 2xx from any requests a rollback.
	Rollback []v1alpha1.CanaryWebhook
	// Hooks are pre-rollout or rollout webhooks: a failure fails the check.
	Hooks []v1alpha1.CanaryWebhook
	// Metrics are metric checks: a failure fails the check.
	Metrics []v1alpha1.CanaryMetric
	// Gate are the webhooks of a confirm-* gate: a failure holds.
	Gate []v1alpha1.CanaryWebhook
	// Primary makes the metric checks judge the primary instead of the
	// canary: a soak after the promotion.
	Primary bool
}

// Empty reports whether the work calls nothing: its outcome is known at once.
func (w Work) Empty() bool {
	return len(w.Rollback)+len(w.Hooks)+len(w.Metrics)+len(w.Gate) == 0
}

// Outcome is the result of a Work. Failures are reported in the order of
// the Canary's spec, as when the calls ran one after another.
type Outcome struct {
	// At is the Work's At.
	At time.Time
	// RollbackBy names the first rollback webhook that answered 2xx.
	RollbackBy string
	// HookErr is the first failed hook.
	HookErr error
	// MetricFailure is the message of the first failed metric check, the
	// judge's verdict counted as the last check.
	MetricFailure string
	// Passed are the messages of the metric checks when all passed.
	Passed []string
	// GateClosed is the error of the first gate webhook that did not
	// answer 2xx; empty when the gate is open or was not asked.
	GateClosed string
	// Metrics are the results of every metric check, in the Canary's
	// order, then, when metrics have a judge block (and the Work is not
	// a soak), the judge's verdict as a check named JudgeCheck.
	Metrics []MetricResult
	// Hooks are the answers of every webhook called: rollback, then
	// pre-rollout or rollout, then the gate's, each in the Canary's order.
	Hooks []HookResult
}

// HookResult is the answer of one webhook of a Work.
type HookResult struct {
	// Name and Type of the webhook.
	Name string
	Type v1alpha1.HookType
	// Err is nil when it answered 2xx.
	Err error
}

// State is where the Work asked for with Runner.Result is.
type State int

const (
	// Queued means this call queued the work.
	Queued State = iota
	// Running means the work waits for a worker or runs.
	Running
	// Done means the Outcome is there.
	Done
)

// RunnerOptions configure a Runner; zero values mean the defaults.
type RunnerOptions struct {
	// Workers is the number of steps started at once (--analysis-workers):
	// a step holds a worker until it ends or SlowAfter has passed.
	Workers int
	// SlowAfter is how long a step holds its worker.
	SlowAfter time.Duration
	// MaxInFlight bounds the steps in flight, slow ones included; zero
	// means 8 × Workers.
	MaxInFlight int
	// MaxInFlightPerNamespace bounds the steps of one namespace in flight
	// (--analysis-max-in-flight-per-namespace), so that a tenant whose
	// steps hang holds that share and no more; zero means MaxInFlight / 4.
	MaxInFlightPerNamespace int
	// StepTimeout bounds each step, whatever its calls' own timeouts
	// (--analysis-step-timeout), and each event or post-rollout call.
	StepTimeout time.Duration
	// HookWorkers is the number of event and post-rollout calls made at once.
	HookWorkers int
	// HookQueueSize bounds the event and post-rollout calls waiting.
	HookQueueSize int
}

// Runner runs the analysis off the reconcile workers. A reconcile that finds
// a step due asks for its Outcome by a key naming the step; the first ask
// queues the Work and returns. The Work calls every hook and metric at once
// under the step deadline, stores its Outcome and tells OnDone's function,
// whose reconcile reads it. A Canary has one Work at most: asking for
// another key cancels the previous one, whose result is dropped. Outcomes
// live in memory: after a restart the step runs again.
//
// The pool: at most Workers steps start at once, the namespaces served in
// turn, each in the order its Works were asked for, and each namespace with
// at most MaxInFlightPerNamespace steps in flight. A step that still runs after SlowAfter (it waits on a slow or
// hanging dependency) gives its worker back and counts only toward
// MaxInFlight, so that a hanging dependency costs the others at most
// SlowAfter of waiting, not the step deadline. Past MaxInFlight steps in
// flight, the next ones wait.
//
// Event and post-rollout webhooks, whose answer the rollout does not wait
// for, go through Fire: a bounded queue that drops its oldest call when
// full, served by HookWorkers goroutines.
//
// A Runner is a manager.Runnable: the manager's context stops its workers.
// Workers start with the first Work, so that a Runner works without one.
type Runner struct {
	webhooks *Webhooks
	metrics  *Metrics
	opts     RunnerOptions

	ctx    context.Context
	cancel context.CancelFunc
	start  sync.Once

	// starts holds a token per step started less than SlowAfter ago,
	// inFlight one per step in flight.
	starts   chan struct{}
	inFlight chan struct{}

	mu      sync.Mutex
	wake    *sync.Cond
	runs    map[types.NamespacedName]*run
	queue   *fairQueue
	running int
	stopped bool
	notify  func(types.NamespacedName)

	calls   chan call
	dropped atomic.Int64
	// longCalls are the post-rollout calls that may take longer than a
	// step (a load test's report), made by workers of their own so that
	// they delay no event hook.
	longCalls chan call
}

// run is one Work of one Canary.
type run struct {
	canary  types.NamespacedName
	key     string
	work    Work
	ctx     context.Context
	cancel  context.CancelFunc
	started bool
	done    bool
	out     Outcome
}

// call is one webhook call nobody waits for.
type call struct {
	canary *v1alpha1.Canary
	hook   v1alpha1.CanaryWebhook
	done   func(error)
}

// NewRunner returns a Runner calling webhooks and metrics.
func NewRunner(webhooks *Webhooks, metrics *Metrics, opts RunnerOptions) *Runner {
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.SlowAfter <= 0 {
		opts.SlowAfter = DefaultSlowAfter
	}
	if opts.MaxInFlight < opts.Workers {
		opts.MaxInFlight = inFlightPerWorker * opts.Workers
	}
	if opts.MaxInFlightPerNamespace <= 0 || opts.MaxInFlightPerNamespace > opts.MaxInFlight {
		opts.MaxInFlightPerNamespace = max(opts.MaxInFlight/4, 1)
	}
	if opts.StepTimeout <= 0 {
		opts.StepTimeout = DefaultStepTimeout
	}
	if opts.HookWorkers <= 0 {
		opts.HookWorkers = DefaultHookWorkers
	}
	if opts.HookQueueSize <= 0 {
		opts.HookQueueSize = DefaultHookQueueSize
	}
	r := &Runner{
		webhooks:  webhooks,
		metrics:   metrics,
		opts:      opts,
		runs:      map[types.NamespacedName]*run{},
		queue:     newFairQueue(),
		starts:    make(chan struct{}, opts.Workers),
		inFlight:  make(chan struct{}, opts.MaxInFlight),
		calls:     make(chan call, opts.HookQueueSize),
		longCalls: make(chan call, opts.HookQueueSize),
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.wake = sync.NewCond(&r.mu)
	registerRunnerMetrics()
	return r
}

// StepTimeout is the deadline of one step, unless one of its hooks may
// take longer (see deadline).
func (r *Runner) StepTimeout() time.Duration { return r.opts.StepTimeout }

// longCallWorkersPerHookWorker is how many long post-rollout calls are
// made at once, per hook worker.
const longCallWorkersPerHookWorker = 8

// deadline bounds the calls of a step or a fired hook: the step deadline,
// or the longest timeout of its pre-rollout, rollout or post-rollout hooks
// when that is longer (a load test runs for minutes; the API bounds it to
// MaxLongHookTimeout). A long step gives its worker back after SlowAfter
// as any slow one, and holds only its place in flight, in its namespace's
// share.
func (r *Runner) deadline(hooks []v1alpha1.CanaryWebhook) time.Duration {
	d := r.opts.StepTimeout
	for _, h := range hooks {
		if h.Type.IsLong() && h.Timeout != nil {
			d = max(d, min(h.Timeout.Duration, v1alpha1.MaxLongHookTimeout))
		}
	}
	return d
}

// OnDone sets the function told the Canary whose Work has an Outcome.
func (r *Runner) OnDone(notify func(types.NamespacedName)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notify = notify
}

// Result returns the Outcome of the Work named key for a Canary. The first
// ask for a key queues the Work (Queued) and drops the Canary's Work of any
// other key, cancelled if it runs; until the Outcome is there the state is
// Running. An empty Work is Done at once. The Outcome stays until the
// Canary asks for another key or is forgotten, so that a reconcile that
// failed after reading it reads it again.
func (r *Runner) Result(canary types.NamespacedName, key string, work Work) (Outcome, State) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur := r.runs[canary]; cur != nil {
		if cur.key == key {
			if cur.done {
				return cur.out, Done
			}
			return Outcome{}, Running
		}
		r.drop(cur)
	}
	if work.Empty() {
		return Outcome{At: work.At}, Done
	}
	r.startWorkers()
	ctx, cancel := context.WithCancel(r.ctx)
	next := &run{canary: canary, key: key, work: work, ctx: ctx, cancel: cancel}
	r.runs[canary] = next
	r.queue.push(next)
	runnerMetrics.queued.Inc()
	r.wake.Signal()
	return Outcome{}, Queued
}

// Forget drops the Work of a deleted Canary.
func (r *Runner) Forget(canary types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur := r.runs[canary]; cur != nil {
		r.drop(cur)
	}
}

// drop cancels a Work and forgets it; r.mu is held.
func (r *Runner) drop(stale *run) {
	stale.cancel()
	delete(r.runs, stale.canary)
	if stale.started {
		return
	}
	if r.queue.remove(stale) {
		runnerMetrics.queued.Dec()
	}
}

// Start runs until ctx ends, then stops the workers and cancels what runs.
func (r *Runner) Start(ctx context.Context) error {
	<-ctx.Done()
	r.mu.Lock()
	r.stopped = true
	r.wake.Broadcast()
	r.mu.Unlock()
	r.cancel()
	return nil
}

// NeedLeaderElection is false: only the leader's reconciles queue work.
func (r *Runner) NeedLeaderElection() bool { return false }

func (r *Runner) startWorkers() {
	r.start.Do(func() {
		go r.dispatch()
		for range r.opts.HookWorkers {
			go r.fire()
		}
		for range longCallWorkersPerHookWorker * r.opts.HookWorkers {
			go r.fireLong()
		}
	})
}

// dispatch starts the queued Works, namespace by namespace in turn (see
// fairQueue), each once a worker and a place in flight are free and its
// namespace is under its share, until the Runner stops.
func (r *Runner) dispatch() {
	for {
		r.mu.Lock()
		for r.queue.len() == 0 && !r.stopped {
			r.wake.Wait()
		}
		stopped := r.stopped
		r.mu.Unlock()
		if stopped || !r.acquire(r.starts) {
			return
		}
		if !r.acquire(r.inFlight) {
			return
		}
		r.mu.Lock()
		next := r.queue.pop(r.opts.MaxInFlightPerNamespace)
		if next == nil {
			// Dropped meanwhile, or every namespace waiting has its share
			// in flight: give the places back until a step ends or a Work
			// comes (both wake this loop).
			<-r.inFlight
			<-r.starts
			if r.queue.len() > 0 && !r.stopped {
				r.wake.Wait()
			}
			r.mu.Unlock()
			continue
		}
		next.started = true
		r.running++
		runnerMetrics.queued.Dec()
		r.mu.Unlock()
		go r.execute(next)
	}
}

// acquire takes a token of a pool; false when the Runner stopped.
func (r *Runner) acquire(pool chan struct{}) bool {
	select {
	case pool <- struct{}{}:
		return true
	case <-r.ctx.Done():
		return false
	}
}

// Stats counts the Works waiting to start and those in flight.
func (r *Runner) Stats() (queued, running int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.queue.len(), r.running
}

// execute runs one Work under the step deadline, gives its worker back
// when it ends or turns slow, and keeps its Outcome if the Work is still
// its Canary's.
func (r *Runner) execute(w *run) {
	runnerMetrics.running.Inc()
	began := time.Now()
	var slow atomic.Bool
	turnSlow := time.AfterFunc(r.opts.SlowAfter, func() {
		if slow.CompareAndSwap(false, true) {
			runnerMetrics.slow.Inc()
			<-r.starts
		}
	})
	deadline := r.deadline(w.work.Hooks)
	ctx, cancel := context.WithTimeoutCause(w.ctx, deadline, &DeadlineError{Of: "analysis step", After: deadline})
	out := r.runStep(ctx, w.work)
	cancel()
	turnSlow.Stop()
	if slow.CompareAndSwap(false, true) {
		<-r.starts
	} else {
		runnerMetrics.slow.Dec()
	}
	<-r.inFlight
	runnerMetrics.running.Dec()
	runnerMetrics.duration.Observe(time.Since(began).Seconds())

	r.mu.Lock()
	r.running--
	r.queue.ended(w.canary.Namespace)
	r.wake.Broadcast() // a namespace at its share may start its next step
	current := r.runs[w.canary] == w
	if current {
		w.out, w.done = out, true
	}
	notify := r.notify
	r.mu.Unlock()
	if current && notify != nil {
		notify(w.canary)
	}
}

// runStep makes every call of a Work at once, then asks the gate when
// nothing failed.
func (r *Runner) runStep(ctx context.Context, w Work) Outcome {
	rollback := make([]error, len(w.Rollback))
	hooks := make([]error, len(w.Hooks))
	metrics := make([]MetricResult, len(w.Metrics))
	var wg sync.WaitGroup
	r.callEach(ctx, &wg, w.Canary, w.Rollback, rollback)
	r.callEach(ctx, &wg, w.Canary, w.Hooks, hooks)
	s := canarySide
	if w.Primary {
		s = primarySide
	}
	for i, m := range w.Metrics {
		wg.Go(func() { metrics[i] = r.metrics.check(ctx, w.Canary, m, s) })
	}
	wg.Wait()
	if !w.Primary {
		if verdict, ok := judgeStep(w.Canary, metrics); ok {
			metrics = append(metrics, verdict)
		}
	}

	out := Outcome{At: w.At, HookErr: firstError(hooks), Metrics: metrics}
	out.Hooks = appendHooks(out.Hooks, w.Rollback, rollback)
	out.Hooks = appendHooks(out.Hooks, w.Hooks, hooks)
	for i, err := range rollback {
		if err == nil {
			out.RollbackBy = w.Rollback[i].Name
			break
		}
	}
	for _, m := range metrics {
		if !m.Passed {
			out.MetricFailure, out.Passed = m.Message, nil
			break
		}
		out.Passed = append(out.Passed, m.Message)
	}
	if out.RollbackBy != "" || out.HookErr != nil || out.MetricFailure != "" {
		return out
	}
	gate := make([]error, len(w.Gate))
	r.callEach(ctx, &wg, w.Canary, w.Gate, gate)
	wg.Wait()
	if err := firstError(gate); err != nil {
		out.GateClosed = err.Error()
	}
	out.Hooks = appendHooks(out.Hooks, w.Gate, gate)
	return out
}

// appendHooks appends the answers of hooks, errs in the same order.
func appendHooks(out []HookResult, hooks []v1alpha1.CanaryWebhook, errs []error) []HookResult {
	for i, h := range hooks {
		t := h.Type
		if t == "" {
			t = v1alpha1.RolloutHook
		}
		out = append(out, HookResult{Name: h.Name, Type: t, Err: errs[i]})
	}
	return out
}

// callEach calls every hook at once in wg, each error in errs.
func (r *Runner) callEach(ctx context.Context, wg *sync.WaitGroup, canary *v1alpha1.Canary, hooks []v1alpha1.CanaryWebhook, errs []error) {
	for i, h := range hooks {
		wg.Go(func() { errs[i] = r.webhooks.Call(ctx, canary, h, canary.Status.Phase) })
	}
}

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Fire queues a webhook call whose answer the rollout does not wait for
// (event and post-rollout webhooks); done, when not nil, gets its error
// from a worker. canary is not modified afterwards. It never blocks: when
// the queue is full, the oldest call waiting is dropped and counted.
func (r *Runner) Fire(canary *v1alpha1.Canary, hook v1alpha1.CanaryWebhook, done func(error)) {
	r.startWorkers()
	r.enqueue(r.calls, call{canary: canary, hook: hook, done: done})
}

// enqueue queues a call without blocking: when the queue is full, the
// oldest call waiting is dropped and counted.
func (r *Runner) enqueue(queue chan call, c call) {
	for {
		select {
		case queue <- c:
			return
		default:
		}
		select {
		case <-queue:
			r.dropped.Add(1)
			runnerMetrics.dropped.Inc()
		default:
		}
	}
}

// Dropped counts the calls Fire dropped because its queue was full.
func (r *Runner) Dropped() int64 { return r.dropped.Load() }

// fire makes the queued calls until the Runner stops; each is bounded by
// its webhook's timeout and by the step deadline. A call that may take
// longer than the step deadline (a long post-rollout hook) goes to the
// long calls' own queue and workers.
func (r *Runner) fire() {
	for {
		select {
		case <-r.ctx.Done():
			return
		case c := <-r.calls:
			deadline := r.deadline([]v1alpha1.CanaryWebhook{c.hook})
			if deadline > r.opts.StepTimeout {
				r.enqueue(r.longCalls, c)
				continue
			}
			r.call(c, deadline)
		}
	}
}

// fireLong makes the queued long calls until the Runner stops, each
// bounded by its own timeout.
func (r *Runner) fireLong() {
	for {
		select {
		case <-r.ctx.Done():
			return
		case c := <-r.longCalls:
			r.call(c, r.deadline([]v1alpha1.CanaryWebhook{c.hook}))
		}
	}
}

// call makes one fired call within deadline.
func (r *Runner) call(c call, deadline time.Duration) {
	ctx, cancel := context.WithTimeoutCause(r.ctx, deadline, &DeadlineError{Of: "webhook call", After: deadline})
	err := r.webhooks.Call(ctx, c.canary, c.hook, c.canary.Status.Phase)
	cancel()
	if c.done != nil {
		c.done(err)
	}
}

// runnerMetrics are the runner's Prometheus metrics, registered once per
// process with controller-runtime's.
var runnerMetrics struct {
	once     sync.Once
	queued   prometheus.Gauge
	running  prometheus.Gauge
	slow     prometheus.Gauge
	duration prometheus.Histogram
	dropped  prometheus.Counter
}

func registerRunnerMetrics() {
	runnerMetrics.once.Do(func() {
		runnerMetrics.queued = prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "serin_analysis_steps_queued",
			Help: "Analysis steps (and gates) waiting for an analysis worker.",
		})
		runnerMetrics.running = prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "serin_analysis_steps_running",
			Help: "Analysis steps (and gates) in flight, slow ones included; at most 8 × --analysis-workers.",
		})
		runnerMetrics.slow = prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "serin_analysis_steps_slow",
			Help: "Analysis steps running for more than a second: waiting on a slow or hanging dependency, until the step deadline.",
		})
		runnerMetrics.duration = prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "serin_analysis_step_duration_seconds",
			Help:    "Duration of an analysis step's calls (webhooks and metric checks, all at once), bounded by --analysis-step-timeout.",
			Buckets: []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60},
		})
		runnerMetrics.dropped = prometheus.NewCounter(prometheus.CounterOpts{
			Name: "serin_webhook_calls_dropped_total",
			Help: "Event and post-rollout webhook calls dropped because their queue was full.",
		})
		ctrlmetrics.Registry.MustRegister(runnerMetrics.queued, runnerMetrics.running, runnerMetrics.slow, runnerMetrics.duration, runnerMetrics.dropped)
	})
}
