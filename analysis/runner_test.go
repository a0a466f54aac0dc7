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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// The runner's tests use fake webhooks and Prometheus servers that hang or
// wait for each other; they assert what the servers saw (calls in flight
// at once, calls made), never how long something took. safety only keeps
// a broken runner from hanging the test.
const safety = 30 * time.Second

// passingQuery is a Prometheus answer within the threshold of successRateCheck.
const passingQuery = `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000,"99.5"]}]}}`

var successRateCheck = v1alpha1.CanaryMetric{Name: v1alpha1.RequestSuccessRateCheck, ThresholdRange: &v1alpha1.ThresholdRange{Min: ptr.To(99.0)}}

// newTestRunner returns a Runner whose built-in checks query prom, and the
// channel OnDone writes to.
func newTestRunner(t *testing.T, prom string, opts RunnerOptions) (*Runner, <-chan types.NamespacedName) {
	t.Helper()
	r := NewRunner(&Webhooks{}, &Metrics{MetricsServer: prom}, opts)
	done := make(chan types.NamespacedName, 100)
	r.OnDone(func(c types.NamespacedName) { done <- c })
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = r.Start(ctx) }()
	t.Cleanup(cancel)
	return r, done
}

// await reads OnDone until the Outcome of key is there.
func await(t *testing.T, r *Runner, done <-chan types.NamespacedName, canary types.NamespacedName, key string) Outcome {
	t.Helper()
	for {
		select {
		case <-done:
			if out, state := r.Result(canary, key, Work{}); state == Done {
				return out
			}
		case <-time.After(safety):
			t.Fatalf("no outcome for %s %s", canary, key)
		}
	}
}

// hangingServer answers nothing until the client gives up or the test ends;
// arrived gets a value per request.
func hangingServer(t *testing.T) (srv *httptest.Server, arrived <-chan string) {
	t.Helper()
	release := make(chan struct{})
	ch := make(chan string, 100)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		ch <- r.URL.Path
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	return srv, ch
}

func hooks(n int, typ v1alpha1.HookType, url string, mutate ...func(*v1alpha1.CanaryWebhook)) []v1alpha1.CanaryWebhook {
	out := make([]v1alpha1.CanaryWebhook, n)
	for i := range out {
		out[i] = v1alpha1.CanaryWebhook{Name: fmt.Sprintf("%s-%d", typ, i), Type: typ, URL: url}
		for _, m := range mutate {
			m(&out[i])
		}
	}
	return out
}

var podinfo = types.NamespacedName{Namespace: "apps", Name: "podinfo"}

// Every hook and metric check of a step is in flight at the same time: the
// server answers none of the 40 calls (20 rollout hooks, 20 metric checks)
// before all 40 have arrived. Called one after another, the first would
// wait for the others until its timeout, and fail.
func TestRunner_StepCallsRunAtOnce(t *testing.T) {
	const calls = 40
	var arrived, peak atomic.Int32
	var inFlight atomic.Int32
	all := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // then the server notices a client that gives up
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		if arrived.Add(1) == calls {
			close(all)
		}
		select {
		case <-all:
		case <-r.Context().Done():
			return
		}
		if r.Method == http.MethodGet {
			_, _ = w.Write([]byte(passingQuery))
		}
	}))
	t.Cleanup(srv.Close) // after the runner stopped
	r, done := newTestRunner(t, srv.URL, RunnerOptions{StepTimeout: safety})

	c := canary()
	slowest := func(h *v1alpha1.CanaryWebhook) { h.Timeout = &metav1.Duration{Duration: 5 * time.Second} }
	w := Work{Canary: c, Hooks: hooks(20, v1alpha1.RolloutHook, srv.URL, slowest)}
	for range 20 {
		w.Metrics = append(w.Metrics, successRateCheck)
	}
	if _, state := r.Result(podinfo, "step-1", w); state != Queued {
		t.Fatalf("state = %v, want Queued", state)
	}
	if _, state := r.Result(podinfo, "step-1", w); state != Running && state != Done {
		t.Fatalf("a second ask for the same step: state = %v, want Running or Done", state)
	}
	out := await(t, r, done, podinfo, "step-1")
	if out.HookErr != nil || out.MetricFailure != "" || len(out.Passed) != 20 {
		t.Fatalf("outcome: hook %v, metric %q, %d passed", out.HookErr, out.MetricFailure, len(out.Passed))
	}
	if got := peak.Load(); got != calls {
		t.Errorf("%d calls in flight at once, want %d", got, calls)
	}
}

// A call that hangs fails its check with a message naming it and the
// deadline it missed: the step's when it comes first, else its own.
func TestRunner_StepDeadline(t *testing.T) {
	hang, _ := hangingServer(t)
	quick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer quick.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(300 * time.Millisecond) }))
	defer slow.Close()
	tests := map[string]struct {
		stepTimeout time.Duration
		work        Work
		check       func(t *testing.T, out Outcome)
	}{
		"a hanging rollout hook fails the check at the step deadline": {
			stepTimeout: 50 * time.Millisecond,
			work:        Work{Hooks: []v1alpha1.CanaryWebhook{{Name: "smoke-test", URL: hang.URL}}},
			check: func(t *testing.T, out Outcome) {
				if !errors.Is(out.HookErr, context.DeadlineExceeded) || out.HookErr.Error() != "webhook smoke-test: no answer within 50ms: analysis step deadline exceeded" {
					t.Errorf("hook error = %v", out.HookErr)
				}
			},
		},
		"a hanging metric fails the check at the step deadline": {
			stepTimeout: 50 * time.Millisecond,
			work:        Work{Metrics: []v1alpha1.CanaryMetric{successRateCheck}},
			check: func(t *testing.T, out Outcome) {
				if want := "metric request-success-rate: no answer within 50ms: analysis step deadline exceeded"; out.MetricFailure != want {
					t.Errorf("metric failure = %q, want %q", out.MetricFailure, want)
				}
			},
		},
		"a hook's own timeout comes first": {
			stepTimeout: safety,
			work:        Work{Hooks: []v1alpha1.CanaryWebhook{{Name: "smoke-test", URL: hang.URL, Retries: 1, Timeout: &metav1.Duration{Duration: 20 * time.Millisecond}}}},
			check: func(t *testing.T, out Outcome) {
				if out.HookErr == nil || out.HookErr.Error() != "webhook smoke-test: no answer within 20ms: call deadline exceeded" {
					t.Errorf("hook error = %v", out.HookErr)
				}
			},
		},
		"a load test longer than the step deadline runs to its own timeout": {
			stepTimeout: 50 * time.Millisecond,
			work: Work{Hooks: []v1alpha1.CanaryWebhook{{Name: "k6", Type: v1alpha1.PreRolloutHook, URL: slow.URL,
				Timeout: &metav1.Duration{Duration: safety}}}},
			check: func(t *testing.T, out Outcome) {
				if out.HookErr != nil {
					t.Errorf("a pre-rollout hook of %s answering in 300ms, the step deadline 50ms: %v", safety, out.HookErr)
				}
			},
		},
		"a hanging gate stays closed": {
			stepTimeout: 50 * time.Millisecond,
			work:        Work{Hooks: hooks(1, v1alpha1.RolloutHook, quick.URL), Gate: []v1alpha1.CanaryWebhook{{Name: "approval", URL: hang.URL}}},
			check: func(t *testing.T, out Outcome) {
				if want := "webhook approval: no answer within 50ms: analysis step deadline exceeded"; out.HookErr != nil || out.GateClosed != want {
					t.Errorf("hook error %v, gate closed %q, want %q", out.HookErr, out.GateClosed, want)
				}
			},
		},
		"a hanging rollback hook requests nothing": {
			stepTimeout: 50 * time.Millisecond,
			work:        Work{Rollback: []v1alpha1.CanaryWebhook{{Name: "abort", URL: hang.URL}}, Hooks: hooks(1, v1alpha1.RolloutHook, quick.URL)},
			check: func(t *testing.T, out Outcome) {
				if out.RollbackBy != "" || out.HookErr != nil {
					t.Errorf("rollback by %q, hook error %v", out.RollbackBy, out.HookErr)
				}
			},
		},
		"the first failure in spec order, the gate not asked": {
			stepTimeout: safety,
			work: Work{
				Hooks: []v1alpha1.CanaryWebhook{
					{Name: "quick", URL: quick.URL},
					{Name: "hanging-1", URL: hang.URL, Timeout: &metav1.Duration{Duration: 20 * time.Millisecond}},
					{Name: "hanging-2", URL: hang.URL, Timeout: &metav1.Duration{Duration: 10 * time.Millisecond}},
				},
				Gate: []v1alpha1.CanaryWebhook{{Name: "approval", URL: hang.URL}},
			},
			check: func(t *testing.T, out Outcome) {
				if out.HookErr == nil || out.HookErr.Error() != "webhook hanging-1: no answer within 20ms: call deadline exceeded" || out.GateClosed != "" {
					t.Errorf("hook error %v, gate closed %q", out.HookErr, out.GateClosed)
				}
			},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r, done := newTestRunner(t, hang.URL, RunnerOptions{StepTimeout: tt.stepTimeout})
			tt.work.Canary = canary()
			r.Result(podinfo, "step", tt.work)
			tt.check(t, await(t, r, done, podinfo, "step"))
		})
	}
}

// Asking for another step of a Canary cancels the step that runs: its
// outcome is dropped, nobody is told, and the new step's is kept.
func TestRunner_StaleResultDropped(t *testing.T) {
	hang, arrived := hangingServer(t)
	quick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer quick.Close()
	// One worker: the new step runs once the stale one has ended.
	r, done := newTestRunner(t, "", RunnerOptions{Workers: 1})

	r.Result(podinfo, "weight-10", Work{Canary: canary(), Hooks: hooks(1, v1alpha1.RolloutHook, hang.URL)})
	<-arrived
	if _, state := r.Result(podinfo, "weight-20", Work{Canary: canary(), Hooks: hooks(1, v1alpha1.RolloutHook, quick.URL)}); state != Queued {
		t.Fatalf("the new step: state %v, want Queued", state)
	}
	out := await(t, r, done, podinfo, "weight-20")
	if out.HookErr != nil {
		t.Errorf("the new step's outcome: %v", out.HookErr)
	}
	if len(done) != 0 {
		t.Errorf("%d more notifications: the stale step's outcome was reported", len(done))
	}
	// Asked again, the stale step would run anew: nothing of it was kept.
	if _, state := r.Result(podinfo, "weight-10", Work{Canary: canary(), Hooks: hooks(1, v1alpha1.RolloutHook, quick.URL)}); state != Queued {
		t.Errorf("the stale step: state %v, want Queued", state)
	}
}

// With N workers, N steps run and the others wait while every worker is
// held by a call that does not answer (and no step turns slow); once the
// calls answer, every queued step runs, never more than N at once.
func TestRunner_PoolBound(t *testing.T) {
	const workers, steps = 3, 10
	var inFlight, peak, arrived atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		arrived.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	r, done := newTestRunner(t, "", RunnerOptions{Workers: workers, SlowAfter: safety, StepTimeout: safety})
	for i := range steps {
		c := canary()
		c.Name = fmt.Sprintf("app-%d", i)
		r.Result(types.NamespacedName{Namespace: c.Namespace, Name: c.Name}, "step", Work{Canary: c, Hooks: hooks(1, v1alpha1.RolloutHook, srv.URL)})
	}
	// Every worker holds a call: the state the bound must reach, and stay in.
	eventually(t, "every worker holding a call, the other steps queued", func() bool {
		queued, running := r.Stats()
		return arrived.Load() == workers && running == workers && queued == steps-workers
	})
	close(release)
	finished := map[types.NamespacedName]bool{}
	for len(finished) < steps {
		select {
		case c := <-done:
			finished[c] = true
		case <-time.After(safety):
			t.Fatalf("%d of %d steps finished", len(finished), steps)
		}
	}
	if got := peak.Load(); got != workers {
		t.Errorf("%d steps ran at once, want %d", got, workers)
	}
}

// A step that hangs gives its worker back once it is slow: a quick step
// queued behind more hanging steps than there are workers still runs while
// they hang; and no more than MaxInFlight steps are ever in flight.
func TestRunner_SlowStepsStepAside(t *testing.T) {
	hang, arrived := hangingServer(t)
	quick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(quick.Close)
	r, done := newTestRunner(t, "", RunnerOptions{Workers: 2, SlowAfter: 10 * time.Millisecond, MaxInFlight: 4, MaxInFlightPerNamespace: 4, StepTimeout: safety})
	step := func(name, url string) types.NamespacedName {
		c := canary()
		c.Name = name
		key := types.NamespacedName{Namespace: c.Namespace, Name: c.Name}
		r.Result(key, "step", Work{Canary: c, Hooks: hooks(1, v1alpha1.RolloutHook, url)})
		return key
	}
	for i := range 3 {
		step(fmt.Sprintf("hanging-%d", i), hang.URL)
	}
	for range 3 {
		<-arrived // three hanging steps in flight with two workers
	}
	quickStep := step("quick", quick.URL)
	if got := await(t, r, done, quickStep, "step"); got.HookErr != nil {
		t.Errorf("the quick step: %v", got.HookErr)
	}
	if len(arrived) != 0 {
		t.Fatal("a hanging step answered")
	}
	for i := range 3 {
		step(fmt.Sprintf("hanging-%d", 3+i), hang.URL)
	}
	eventually(t, "four hanging steps in flight, two waiting", func() bool {
		queued, running := r.Stats()
		return running == 4 && queued == 2 && len(arrived) == 1
	})
}

// A namespace whose steps hang holds its share of the steps in flight and
// no more, and its queue never stands in front of another namespace: with
// 300 hanging steps of tenant b queued first, tenant a's steps all run and
// end while b's hang, and b never has more than its share in flight.
func TestRunner_NamespacesShareThePool(t *testing.T) {
	hang, arrived := hangingServer(t)
	quick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(quick.Close)
	const share = 8
	r, done := newTestRunner(t, "", RunnerOptions{Workers: 4, SlowAfter: 10 * time.Millisecond, MaxInFlight: 32, MaxInFlightPerNamespace: share, StepTimeout: safety})
	step := func(ns, name, url string) types.NamespacedName {
		c := canary()
		c.Namespace, c.Name = ns, name
		key := types.NamespacedName{Namespace: ns, Name: name}
		r.Result(key, "step", Work{Canary: c, Hooks: hooks(1, v1alpha1.RolloutHook, url)})
		return key
	}
	for i := range 300 {
		step("tenant-b", fmt.Sprintf("hanging-%d", i), hang.URL)
	}
	for range share {
		<-arrived
	}
	want := map[types.NamespacedName]bool{}
	for i := range 20 {
		want[step("tenant-a", fmt.Sprintf("app-%d", i), quick.URL)] = true
	}
	for len(want) > 0 {
		select {
		case c := <-done:
			if c.Namespace != "tenant-a" {
				t.Fatalf("%s ended: a hanging step answered", c)
			}
			delete(want, c)
		case <-time.After(safety):
			t.Fatalf("%d of tenant a's steps never ended behind tenant b's", len(want))
		}
	}
	queued, running := r.Stats()
	if running != share || queued != 300-share || len(arrived) != 0 {
		t.Errorf("tenant b: %d running, %d queued, %d more calls arrived; want its share %d running and the rest queued", running, queued, len(arrived), share)
	}
}

// eventually waits until cond holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(safety); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("never %s", what)
		}
	}
}

// Event and post-rollout calls go through a bounded queue: when it is
// full, the oldest waiting call is dropped and counted, and the rest are
// made in order.
func TestRunner_FireDropsOldest(t *testing.T) {
	var mu sync.Mutex
	var got []string
	first, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p Payload
		_ = json.NewDecoder(r.Body).Decode(&p)
		mu.Lock()
		got = append(got, p.Metadata["eventMessage"])
		mu.Unlock()
		once.Do(func() { close(first); <-release })
	}))
	defer srv.Close()
	r, _ := newTestRunner(t, "", RunnerOptions{HookWorkers: 1, HookQueueSize: 2})
	calls := make(chan error, 10)
	fire := func(msg string) {
		r.Fire(canary(), v1alpha1.CanaryWebhook{Name: "events", Type: v1alpha1.EventHook, URL: srv.URL, Metadata: map[string]string{"eventMessage": msg}},
			func(err error) { calls <- err })
	}
	fire("1")
	<-first // the worker holds call 1
	for _, msg := range []string{"2", "3", "4", "5"} {
		fire(msg)
	}
	if n := r.Dropped(); n != 2 {
		t.Errorf("dropped %d calls, want 2", n)
	}
	close(release)
	for range 3 {
		if err := <-calls; err != nil {
			t.Errorf("call failed: %v", err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(got) != "[1 4 5]" {
		t.Errorf("calls made: %v, want [1 4 5]", got)
	}
}

// A post-rollout hook may run longer than the step deadline (a load
// test's report), to its own timeout, and holds no hook worker meanwhile:
// with one worker, an event fired after it is delivered first.
func TestRunner_LongPostRolloutHookHoldsNoWorker(t *testing.T) {
	report := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(300 * time.Millisecond) }))
	defer report.Close()
	events := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer events.Close()
	r, _ := newTestRunner(t, "", RunnerOptions{HookWorkers: 1, StepTimeout: 50 * time.Millisecond})
	type result struct {
		name string
		err  error
	}
	results := make(chan result, 2)
	r.Fire(canary(), v1alpha1.CanaryWebhook{Name: "report", Type: v1alpha1.PostRolloutHook, URL: report.URL, Timeout: &metav1.Duration{Duration: safety}},
		func(err error) { results <- result{"report", err} })
	r.Fire(canary(), v1alpha1.CanaryWebhook{Name: "events", Type: v1alpha1.EventHook, URL: events.URL},
		func(err error) { results <- result{"events", err} })
	var order []string
	for range 2 {
		select {
		case res := <-results:
			if res.err != nil {
				t.Errorf("%s: %v", res.name, res.err)
			}
			order = append(order, res.name)
		case <-time.After(safety):
			t.Fatalf("calls made: %v, want both", order)
		}
	}
	if fmt.Sprint(order) != "[events report]" {
		t.Errorf("calls ended in the order %v, want the event first", order)
	}
}

// Work with nothing to call is done at once, without a worker: a gate
// without webhooks is open.
func TestRunner_EmptyWorkIsDone(t *testing.T) {
	r := NewRunner(&Webhooks{}, &Metrics{}, RunnerOptions{})
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	out, state := r.Result(podinfo, "confirm-rollout", Work{Canary: canary(), At: at})
	if state != Done || out.GateClosed != "" || !out.At.Equal(at) {
		t.Errorf("state %v, outcome %+v", state, out)
	}
}
