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
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/internal/testing/testbed"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// BenchmarkHaltLatency measures how fast serin halts a promotion whose
// primary fails: from the moment the deployment controller declares the
// primary's ProgressDeadlineExceeded to the moment the Canary is Halted, both
// seen by the same watcher. The Canary's own deadline (600 s) is far longer
// than the primary Deployment's (3 s), so the halt is the event-driven
// reaction to the Deployment's status, not serin's backstop timer.
//
//	make bench   (go test -run '^$' -bench . -benchtime 1x ./e2e/...)
func BenchmarkHaltLatency(b *testing.B) {
	reactions, err := failureRuns(context.Background(), serinContender(), 20, time.Second)
	if err != nil {
		b.Fatal(err)
	}
	lat := latencies(reactions)
	fmt.Printf("\n%-28s %8s %8s %8s %6s\n", "HALT LATENCY", "p50", "p99", "max", "runs")
	fmt.Printf("%-28s %6.0fms %6.0fms %6.0fms %6d\n", "deadline exceeded → Halted", quantileMs(lat, 0.5), quantileMs(lat, 0.99), quantileMs(lat, 1), len(lat))
	fmt.Printf("halt_latency_p50_ms=%.0f halt_latency_p99_ms=%.0f halt_latency_max_ms=%.0f runs=%d\n", quantileMs(lat, 0.5), quantileMs(lat, 0.99), quantileMs(lat, 1), len(lat))
	b.ReportMetric(quantileMs(lat, 0.99), "p99-ms")
}

// BenchmarkFailureDetection runs the same broken promotion with serin and
// with Flagger, both with a 10 s analysis interval (Flagger's minimum): the
// new revision passes its analysis, then the primary's pods never become
// ready. It prints how long each took to react after the primary's
// ProgressDeadlineExceeded, what it did (serin: Halted; Flagger: Failed,
// after scaling the canary to zero) and how many ready endpoints were left
// behind the Service users call, five seconds later.
//
//	SERIN_BENCH_FLAGGER=false skips it.
func BenchmarkFailureDetection(b *testing.B) {
	if os.Getenv("SERIN_BENCH_FLAGGER") == "false" {
		b.Skip("SERIN_BENCH_FLAGGER=false: the side-by-side runs are off")
	}
	const runs, interval = 5, 10 * time.Second
	ctx := context.Background()
	serin, err := failureRuns(ctx, serinContender(), runs, interval)
	if err != nil {
		b.Fatal(err)
	}
	f, err := env.StartFlagger(ctx, "..", testbed.FlaggerOptions{QPS: 500, Burst: 1000})
	if err != nil {
		b.Fatal(err)
	}
	flagger, err := failureRuns(ctx, flaggerContender(f), runs, interval)
	f.Stop()
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("\nFAILURE DETECTION (primary fails during promotion; interval 10 s; %d runs each)\n", runs)
	fmt.Printf("%-8s %-8s %10s %10s %16s %16s\n", "", "ENDS", "p50", "max", "APEX ENDPOINTS", "CANARY PODS")
	for _, r := range []struct {
		name      string
		reactions []reaction
	}{{"serin", serin}, {"Flagger", flagger}} {
		lat := latencies(r.reactions)
		fmt.Printf("%-8s %-8s %8.0fms %8.0fms %16s %16s\n", r.name, r.reactions[0].phase, quantileMs(lat, 0.5), quantileMs(lat, 1),
			span(r.reactions, func(r reaction) int { return r.endpoints }), span(r.reactions, func(r reaction) int { return r.canaryReady }))
	}
	sl, fl := latencies(serin), latencies(flagger)
	fmt.Printf("%-8s %-8s %10s %10s\n", "ratio", "", ratio(quantileMs(sl, 0.5), quantileMs(fl, 0.5)), ratio(quantileMs(sl, 1), quantileMs(fl, 1)))
	canary := func(r reaction) int { return r.canaryReady }
	apex := func(r reaction) int { return r.endpoints }
	fmt.Printf("failure_detection serin_p50_ms=%.0f serin_max_ms=%.0f serin_apex_endpoints_min=%d serin_canary_pods_min=%d flagger_p50_ms=%.0f flagger_max_ms=%.0f flagger_apex_endpoints_min=%d flagger_canary_pods_min=%d ratio_p50=%s\n",
		quantileMs(sl, 0.5), quantileMs(sl, 1), minOf(serin, apex), minOf(serin, canary),
		quantileMs(fl, 0.5), quantileMs(fl, 1), minOf(flagger, apex), minOf(flagger, canary),
		ratio(quantileMs(sl, 0.5), quantileMs(fl, 0.5)))
}

// reaction is how a contender reacted to one broken promotion.
type reaction struct {
	latency time.Duration
	phase   string
	// endpoints are the ready endpoints behind the apex Service, and
	// canaryReady the ready pods of the canary (the target Deployment),
	// five seconds after the reaction.
	endpoints, canaryReady int
}

// failureRuns runs broken promotions at once, each in its own Deployment.
func failureRuns(ctx context.Context, c contender, runs int, interval time.Duration) ([]reaction, error) {
	ns := fmt.Sprintf("bench-fail-%s-%d", strings.ToLower(c.name), time.Now().UnixNano()%100000)
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return nil, err
	}
	defer func() { _ = k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}) }()

	var (
		mu   sync.Mutex
		out  []reaction
		errs []error
		wg   sync.WaitGroup
	)
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := breakOnce(ctx, c, ns, fmt.Sprintf("app%02d", i), interval)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			out = append(out, r)
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: %d of %d runs failed, first: %w", c.name, len(errs), runs, errs[0])
	}
	return out, nil
}

// breakOnce rolls one canary to a promotion that breaks and returns the time
// from the primary's ProgressDeadlineExceeded to the contender's reaction.
func breakOnce(ctx context.Context, c contender, ns, name string, interval time.Duration) (reaction, error) {
	target := testobj.MakeDeployment(name, ns).Replicas(1).ProgressDeadlineSeconds(3).Obj()
	if err := k8s.Create(ctx, target); err != nil {
		return reaction{}, err
	}
	if err := c.canary(ctx, ns, name, interval, 1); err != nil {
		return reaction{}, err
	}
	if _, err := waitPhase(ctx, c, ns, name, 2*time.Minute, "Initialized"); err != nil {
		return reaction{}, err
	}

	w, err := k8s.(client.WithWatch).Watch(ctx, &appsv1.DeploymentList{}, client.InNamespace(ns))
	if err != nil {
		return reaction{}, err
	}
	defer w.Stop()
	exceeded := make(chan time.Time, 1)
	go func() {
		for ev := range w.ResultChan() {
			d, ok := ev.Object.(*appsv1.Deployment)
			if !ok || d.Name != name+"-primary" {
				continue
			}
			for _, cond := range d.Status.Conditions {
				if cond.Type == appsv1.DeploymentProgressing && cond.Reason == "ProgressDeadlineExceeded" {
					exceeded <- time.Now()
					return
				}
			}
		}
	}()
	if err := rollBrokenPrimary(ctx, ns, name, "podinfo:broken"); err != nil {
		return reaction{}, err
	}
	reactedAt, err := waitPhase(ctx, c, ns, name, 3*time.Minute, c.haltedPhase)
	if err != nil {
		return reaction{}, err
	}
	var at time.Time
	select {
	case at = <-exceeded:
	case <-time.After(5 * time.Second):
		return reaction{}, fmt.Errorf("%s reached %s without the deployment controller declaring ProgressDeadlineExceeded on %s-primary", c.name, c.haltedPhase, name)
	}
	time.Sleep(5 * time.Second)
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(target), target); err != nil {
		return reaction{}, err
	}
	return reaction{latency: reactedAt.Sub(at), phase: c.haltedPhase, endpoints: readyEndpoints(ns, name),
		canaryReady: int(target.Status.ReadyReplicas)}, nil
}

// waitPhase watches a contender's Canary until it is in phase and returns
// when the watch saw it get there.
func waitPhase(ctx context.Context, c contender, ns, name string, timeout time.Duration, phase string) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(c.gvk.GroupVersion().WithKind(c.gvk.Kind + "List"))
	w, err := k8s.(client.WithWatch).Watch(ctx, list, client.InNamespace(ns), client.MatchingFields{"metadata.name": name})
	if err != nil {
		return time.Time{}, err
	}
	defer w.Stop()
	last := ""
	for ev := range w.ResultChan() {
		if u, ok := ev.Object.(*unstructured.Unstructured); ok {
			if last = readState(u).phase; last == phase {
				return time.Now(), nil
			}
		}
	}
	return time.Time{}, fmt.Errorf("%s canary %s/%s: not %s after %s (phase %q)", c.name, ns, name, phase, timeout, last)
}

func latencies(rs []reaction) []time.Duration {
	out := make([]time.Duration, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.latency)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// minOf is the least of a figure over the runs.
func minOf(rs []reaction, f func(reaction) int) int {
	m := -1
	for _, r := range rs {
		if v := f(r); m < 0 || v < m {
			m = v
		}
	}
	return m
}

// span formats the range of a figure over the runs.
func span(rs []reaction, f func(reaction) int) string {
	lo, hi := minOf(rs, f), 0
	for _, r := range rs {
		hi = max(hi, f(r))
	}
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}
