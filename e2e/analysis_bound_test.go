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

package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// 100 Canaries start a rollout at once on the agent as users run it (32
// reconcile workers, 32 analysis workers). 40 of them depend on a black
// hole, a TCP listener that accepts and never answers: 20 check a
// MetricTemplate whose Prometheus is the black hole (its 10 s query
// timeout is the deadline they miss), 20 call a rollout webhook there with
// a 20 s timeout and 3 retries (the 30 s step deadline cuts the retries
// short). The other 60 call a webhook that answers at once. The 60 step at
// their interval all along; the 40 count failed checks whose messages name
// the deadline, and roll back. Before the analysis left the reconcile,
// the 40 held most reconcile workers: the 60 missed steps and ran up to
// 6.7 s late, and the webhook ones took 185 s to roll back (retries
// unbounded by a step deadline).
//
// It prints the step lag seen by a watch (when a step's result showed in
// the status, minus when the step was due) of the 60 and of the 40, as
// key=value lines.
func TestEngine_HangingDependencyHoldsNoOtherCanary(t *testing.T) {
	alone(t, "starts 100 Canaries at once on the shared agent and judges every healthy step's lag")
	const (
		healthy, hanging = 60, 40
		stepInterval     = 5 * time.Second
		window           = time.Minute
		// minSteps is what a healthy Canary must take in the window: 12
		// are due, one may fall outside it. heldLag is the shortest hang
		// of the black hole (the Prometheus query timeout): a healthy step
		// that waited behind a hanging one lags at least that much. The
		// agent before the analysis left the reconcile measured 10 steps
		// and 6.7 s, after it 12 steps and 78 ms; how small the lag is on
		// a given machine is a figure (printed below, and in make bench),
		// not a pass mark, so the test judges only that no healthy step
		// was held.
		minSteps = 11
		heldLag  = 10 * time.Second
	)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	t.Cleanup(func() {
		if err := deleteNamespace(ctx, ns, 3*time.Minute); err != nil {
			t.Log(err)
		}
	})
	blackHole := startBlackHole(t)
	var quickCalls atomic.Int64
	quick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		quickCalls.Add(1)
	}))
	t.Cleanup(quick.Close)
	g.Expect(k8s.Create(ctx, &v1alpha1.MetricTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "black-hole", Namespace: ns},
		Spec: v1alpha1.MetricTemplateSpec{
			Provider: v1alpha1.MetricProvider{Type: v1alpha1.PrometheusProvider, Address: "http://" + blackHole},
			Query:    "vector(1)",
		},
	})).To(Succeed())

	name := func(i int) string {
		if i < healthy {
			return fmt.Sprintf("healthy-%02d", i)
		}
		return fmt.Sprintf("hanging-%02d", i-healthy)
	}
	g.Expect(forEach(healthy+hanging, func(i int) error {
		a := v1alpha1.CanaryAnalysis{Interval: &metav1.Duration{Duration: stepInterval}, Iterations: 1000, Threshold: 2}
		switch {
		case i < healthy:
			a.Webhooks = []v1alpha1.CanaryWebhook{{Name: "smoke-test", Type: v1alpha1.RolloutHook, URL: quick.URL}}
		case i < healthy+hanging/2:
			a.Metrics = []v1alpha1.CanaryMetric{{Name: "black-hole", TemplateRef: &v1alpha1.TemplateReference{Name: "black-hole"}, ThresholdRange: &v1alpha1.ThresholdRange{Max: ptrFloat(1)}}}
		default:
			a.Webhooks = []v1alpha1.CanaryWebhook{{Name: "black-hole", Type: v1alpha1.RolloutHook, URL: "http://" + blackHole + "/",
				Timeout: &metav1.Duration{Duration: 20 * time.Second}, Retries: 3}}
		}
		if err := k8s.Create(ctx, testobj.MakeDeployment(name(i), ns).Replicas(1).Obj()); err != nil {
			return err
		}
		return k8s.Create(ctx, testobj.MakeCanary(name(i), ns).ProgressDeadlineSeconds(600).Analysis(a).Obj())
	})).To(Succeed())
	g.Expect(waitCount(ctx, v1alpha1.GroupVersion.WithKind("Canary"), ns, healthy+hanging, 2*time.Minute, "Initialized",
		func(s canaryState) bool { return s.phase == string(v1alpha1.PhaseInitialized) })).To(Succeed())

	steps := watchSteps(t, ns, stepInterval)
	started := time.Now()
	g.Expect(forEach(healthy+hanging, func(i int) error { return setImageErr(ctx, ns, name(i), "podinfo:v2") })).To(Succeed())
	// The window opens once every Canary took its first step (which sends
	// no traffic and calls no rollout hook or check).
	g.Expect(waitCount(ctx, v1alpha1.GroupVersion.WithKind("Canary"), ns, healthy+hanging, time.Minute, "took a first step",
		func(s canaryState) bool { return s.iterations >= 1 })).To(Succeed())
	opened := time.Now()
	time.Sleep(window)
	closed := time.Now()

	// The hanging Canaries roll back once they failed two checks.
	var list v1alpha1.CanaryList
	allFailed := func() bool {
		g.Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
		for _, c := range list.Items {
			if strings.HasPrefix(c.Name, "hanging-") && c.Status.Phase != v1alpha1.PhaseFailed {
				return false
			}
		}
		return true
	}
	for end := time.Now().Add(2 * time.Minute); !allFailed() && time.Now().Before(end); {
		time.Sleep(time.Second)
	}
	rolledBack := time.Since(started)

	// Measure, print, then judge.
	counts := steps.countBetween(opened, closed)
	fewest := -1
	for _, c := range list.Items {
		if n := counts[c.Name]; strings.HasPrefix(c.Name, "healthy-") && (fewest < 0 || n < fewest) {
			fewest = n
		}
	}
	var events corev1.EventList
	g.Expect(k8s.List(ctx, &events, client.InNamespace(ns), client.MatchingFields{"involvedObject.kind": "Canary", "reason": "CheckFailed"})).To(Succeed())
	deadlines := map[string]string{}
	for _, e := range events.Items {
		if strings.Contains(e.Message, "deadline exceeded") {
			deadlines[e.InvolvedObject.Name] = e.Message
		}
	}
	lagHealthy, lagHanging := steps.lags("healthy-"), steps.lags("hanging-")
	fmt.Printf("analysis_bound canaries=%d hanging=%d interval_s=%.0f window_s=%.0f healthy_steps_due=%d healthy_steps_min=%d "+
		"healthy_step_lag_p50_ms=%.0f healthy_step_lag_p99_ms=%.0f healthy_step_lag_max_ms=%.0f healthy_steps_timed=%d "+
		"hanging_step_lag_p50_ms=%.0f hanging_step_lag_p99_ms=%.0f hanging_steps_timed=%d hanging_rolled_back_s=%.0f quick_webhook_calls=%d\n",
		healthy+hanging, hanging, stepInterval.Seconds(), window.Seconds(), int(window/stepInterval), fewest,
		quantileMs(lagHealthy, 0.5), quantileMs(lagHealthy, 0.99), quantileMs(lagHealthy, 1), len(lagHealthy),
		quantileMs(lagHanging, 0.5), quantileMs(lagHanging, 0.99), len(lagHanging), rolledBack.Seconds(), quickCalls.Load())

	for _, c := range list.Items {
		switch {
		case strings.HasPrefix(c.Name, "healthy-"):
			g.Expect(c.Status.FailedChecks).To(BeZero(), "%s failed no check", c.Name)
			g.Expect(counts[c.Name]).To(BeNumerically(">=", minSteps), "%s steps in the %s window (%d due)", c.Name, window, int(window/stepInterval))
		default:
			g.Expect(c.Status.Phase).To(Equal(v1alpha1.PhaseFailed), "%s rolled back", c.Name)
			g.Expect(c.Status.FailedChecks).To(Equal(2), "%s failed checks", c.Name)
		}
	}
	g.Expect(quantileMs(lagHealthy, 1)).To(BeNumerically("<", float64(heldLag.Milliseconds())), "the longest step lag of a healthy Canary (ms): none waited for a hang")
	g.Expect(deadlines).To(HaveLen(hanging), "every hanging Canary failed its checks on a deadline")
	g.Expect(deadlines).To(HaveKeyWithValue("hanging-00", HavePrefix("halting advancement: metric black-hole: no answer within 10s: call deadline exceeded")))
	g.Expect(deadlines).To(HaveKeyWithValue(name(healthy+hanging-1), HavePrefix("rollout check failed: webhook black-hole: no answer within 30s: analysis step deadline exceeded")))
}

// startBlackHole listens on loopback, accepts every connection and never
// answers, as a dependency that hangs; it returns host:port.
func startBlackHole(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}

// stepWatch times every analysis step of the Canaries of a namespace from
// a watch: a step is an iteration or a failed check more in the status.
// Its lag is when the watch saw it minus when it was due (the previous
// transition plus the interval); the first step of a rollout, which waits
// for the canary to be ready and not for the clock, is not timed.
type stepWatch struct {
	mu   sync.Mutex
	last map[string]v1alpha1.CanaryStatus
	at   map[string][]time.Time
	lag  map[string][]time.Duration
}

func watchSteps(t *testing.T, ns string, interval time.Duration) *stepWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	start := func() watch.Interface {
		w, err := k8s.(client.WithWatch).Watch(ctx, &v1alpha1.CanaryList{}, client.InNamespace(ns))
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	w := start()
	s := &stepWatch{last: map[string]v1alpha1.CanaryStatus{}, at: map[string][]time.Time{}, lag: map[string][]time.Duration{}}
	go func() {
		// The API server may end a watch (or send an error event) under
		// load: watch again, so that no step goes uncounted. A new watch
		// replays the current objects, whose steps record() already saw.
		for ctx.Err() == nil {
			for ev := range w.ResultChan() {
				if c, ok := ev.Object.(*v1alpha1.Canary); ok {
					s.record(time.Now(), c.Name, c.Status, interval)
				}
			}
			w.Stop()
			if ctx.Err() != nil {
				return
			}
			next, err := k8s.(client.WithWatch).Watch(ctx, &v1alpha1.CanaryList{}, client.InNamespace(ns))
			if err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			w = next
		}
	}()
	return s
}

func (s *stepWatch) record(now time.Time, name string, st v1alpha1.CanaryStatus, interval time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev, seen := s.last[name]
	s.last[name] = st
	if !seen || prev.LastTransitionTime == nil || (st.Iterations <= prev.Iterations && st.FailedChecks <= prev.FailedChecks) {
		return
	}
	s.at[name] = append(s.at[name], now)
	if prev.Iterations > 0 || prev.FailedChecks > 0 {
		s.lag[name] = append(s.lag[name], now.Sub(prev.LastTransitionTime.Add(interval)))
	}
}

// countBetween counts each Canary's steps seen in [from, to).
func (s *stepWatch) countBetween(from, to time.Time) map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for name, times := range s.at {
		for _, at := range times {
			if !at.Before(from) && at.Before(to) {
				out[name]++
			}
		}
	}
	return out
}

// lags returns the step lags of the Canaries whose name has prefix, sorted.
func (s *stepWatch) lags(prefix string) []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []time.Duration
	for name, l := range s.lag {
		if strings.HasPrefix(name, prefix) {
			out = append(out, l...)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
