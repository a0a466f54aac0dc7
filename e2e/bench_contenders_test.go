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
	"maps"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// The side-by-side benchmarks run one scenario with serin and with Flagger
// on the same testbed, one after the other: a contender is what differs.
// Both read their Canaries the same way (phase, status.iterations), so the
// observer that times their steps from the outside is the same for both.
type contender struct {
	name string
	gvk  schema.GroupVersionKind
	// canary creates the contender's Canary for the Deployment name, a
	// blue/green analysis of iterations steps every interval.
	canary func(ctx context.Context, ns, name string, interval time.Duration, iterations int) error
	// pid is the controller's process, for RSS and CPU.
	pid func() int
	// requests returns the controller's API requests so far by verb: read,
	// create, update, patch, delete, and where known get, list and watch.
	// serin's come from its agents' client metrics, in agents (their
	// summed scrape, taken by the caller once for every figure); Flagger's
	// from the counting proxy, and agents is nil.
	requests func(agents metricsText) (map[string]float64, error)
	// haltedPhase is the phase in which the contender ends a promotion
	// whose primary never becomes ready.
	haltedPhase string
	// agents are serin's agents (one, or a shard each), whose /metrics
	// are read and summed; none for Flagger.
	agents []*testbed.Agent
	// shards are the agents' shard keys (shardLabel's value), in the
	// agents' order; none for a single agent.
	shards []string
}

// label is the contender's name as a key=value line's value:
// serin, serin-2-shards, flagger-v1-44-0.
func (c contender) label() string { return dnsLabel(c.name) }

// pids are the contender's processes: one, or a shard each.
func (c contender) pids() []int {
	if len(c.agents) > 1 {
		out := make([]int, 0, len(c.agents))
		for _, a := range c.agents {
			out = append(out, a.PID())
		}
		return out
	}
	return []int{c.pid()}
}

// scrapeAgents reads every agent's /metrics and sums each series: counters
// and histograms merge.
func scrapeAgents(agents []*testbed.Agent) (metricsText, error) {
	each, err := scrapeEach(agents)
	if err != nil {
		return nil, err
	}
	return sumTexts(each), nil
}

// sumTexts adds up the series of several agents' scrapes.
func sumTexts(each []metricsText) metricsText {
	sum := metricsText{}
	for _, m := range each {
		for k, v := range m {
			sum[k] += v
		}
	}
	return sum
}

// scrapeEach reads the /metrics of each agent, in their order.
func scrapeEach(agents []*testbed.Agent) ([]metricsText, error) {
	out := make([]metricsText, 0, len(agents))
	for _, a := range agents {
		m, err := scrape(a.MetricsURL)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// serinContender is the agent the e2e suite runs.
func serinContender() contender {
	return shardedContender("serin", []*testbed.Agent{agent}, nil)
}

// shardedContender is serin with a Canary to each agent in turn: the i-th
// Canary labelled shardLabel=shards[i % len(shards)] (no label without
// shards).
func shardedContender(name string, agents []*testbed.Agent, shards []string) contender {
	var created atomic.Int64
	return contender{
		name:   name,
		gvk:    v1alpha1.GroupVersion.WithKind("Canary"),
		agents: agents,
		shards: shards,
		canary: func(ctx context.Context, ns, name string, interval time.Duration, iterations int) error {
			c := testobj.MakeCanary(name, ns).ProgressDeadlineSeconds(600).Analysis(v1alpha1.CanaryAnalysis{
				Interval: &metav1.Duration{Duration: interval}, Iterations: iterations,
			}).Obj()
			if len(shards) > 0 {
				c.Labels = map[string]string{shardLabel: shards[int(created.Add(1))%len(shards)]}
			}
			return k8s.Create(ctx, c)
		},
		pid: agents[0].PID,
		requests: func(m metricsText) (map[string]float64, error) {
			out := map[string]float64{}
			for method, verb := range map[string]string{"GET": "read", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"} {
				out[verb] = m.sumLabel("rest_client_requests_total", `method="`+method+`"`)
			}
			return out, nil
		},
		haltedPhase: string(v1alpha1.PhaseHalted),
	}
}

// flaggerGVK is Flagger's Canary.
var flaggerGVK = schema.GroupVersionKind{Group: "flagger.app", Version: "v1beta1", Kind: "Canary"}

// flaggerContender is Flagger v1.36.1 (hack/testbed/versions.env) with the
// kubernetes provider, with serin's client limits so that neither is held
// back by its own rate limiter more than the other.
func flaggerContender(f *testbed.Flagger) contender {
	return contender{
		name: "Flagger",
		gvk:  flaggerGVK,
		canary: func(ctx context.Context, ns, name string, interval time.Duration, iterations int) error {
			c := &unstructured.Unstructured{Object: map[string]any{
				"metadata": map[string]any{"name": name, "namespace": ns},
				"spec": map[string]any{
					"provider":                "kubernetes",
					"progressDeadlineSeconds": int64(600),
					"targetRef":               map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
					"service":                 map[string]any{"port": int64(9898)},
					"analysis": map[string]any{
						"interval":   fmt.Sprintf("%ds", int(interval.Seconds())),
						"iterations": int64(iterations),
						"threshold":  int64(5),
					},
				},
			}}
			c.SetGroupVersionKind(flaggerGVK)
			return k8s.Create(ctx, c)
		},
		pid: f.PID,
		requests: func(metricsText) (map[string]float64, error) {
			c := f.API.Counts()
			c["read"] = c["get"] + c["list"] + c["watch"]
			return c, nil
		},
		haltedPhase: "Failed",
	}
}

// canaryState is what the benchmarks read of either contender's Canary.
type canaryState struct {
	name       string
	phase      string
	iterations int64
	// shard is the Canary's shard key (shardLabel), if any.
	shard string
}

func readState(u *unstructured.Unstructured) canaryState {
	phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	it, _, _ := unstructured.NestedInt64(u.Object, "status", "iterations")
	return canaryState{name: u.GetName(), phase: phase, iterations: it, shard: u.GetLabels()[shardLabel]}
}

// listStates reads every Canary of a contender in a namespace.
func listStates(ctx context.Context, gvk schema.GroupVersionKind, ns string) ([]canaryState, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	out := make([]canaryState, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, readState(&list.Items[i]))
	}
	return out, nil
}

// waitCount waits until n Canaries of the namespace satisfy ok. It lists
// them every second, or less often at scale (every 5 s at a thousand): each
// list decodes them all, on the same two cores as the control plane.
func waitCount(ctx context.Context, gvk schema.GroupVersionKind, ns string, n int, timeout time.Duration, what string, ok func(canaryState) bool) error {
	poll := max(time.Second, time.Duration(n)*5*time.Millisecond)
	deadline := time.Now().Add(timeout)
	count := 0
	for time.Now().Before(deadline) {
		states, err := listStates(ctx, gvk, ns)
		if err != nil {
			return err
		}
		count = 0
		for _, s := range states {
			if ok(s) {
				count++
			}
		}
		if count == n {
			return nil
		}
		time.Sleep(poll)
	}
	return fmt.Errorf("%d of %d canaries %s after %s", count, n, what, timeout)
}

// stepObserver times every step of every Canary of a namespace from the
// outside: a watch sees status.iterations go up by one. The excess of a step
// is the time since the previous step minus the analysis interval: how much
// later than the configured cadence the analysis moved on. It is measured
// the same way for every contender, whatever it exports.
type stepObserver struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	last   map[string]canaryState
	lastAt map[string]time.Time
	excess []time.Duration
	steps  int
	// stepsByShard counts the steps by the Canaries' shard key.
	stepsByShard map[string]int
	skipped      int
	// restarts counts the watches the API server ended, errors what it
	// said when it did.
	restarts int
	errors   []string
}

func observeSteps(ctx context.Context, gvk schema.GroupVersionKind, ns string, interval time.Duration) (*stepObserver, error) {
	ctx, cancel := context.WithCancel(ctx)
	start := func(rv string) (watch.Interface, error) {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		return k8s.(client.WithWatch).Watch(ctx, list, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
	}
	w, err := start("")
	if err != nil {
		cancel()
		return nil, err
	}
	o := &stepObserver{cancel: cancel, done: make(chan struct{}), last: map[string]canaryState{}, lastAt: map[string]time.Time{}, stepsByShard: map[string]int{}}
	go func() {
		defer close(o.done)
		rv := ""
		for {
			for ev := range w.ResultChan() {
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					o.mu.Lock()
					o.errors = append(o.errors, fmt.Sprintf("%s %v", ev.Type, ev.Object))
					o.mu.Unlock()
					continue
				}
				rv = u.GetResourceVersion()
				o.record(time.Now(), readState(u), interval)
			}
			w.Stop()
			if ctx.Err() != nil {
				return
			}
			// The API server ended the watch: go on from the last object
			// seen, as an informer would.
			o.mu.Lock()
			o.restarts++
			o.mu.Unlock()
			for w, err = start(rv); err != nil && ctx.Err() == nil; w, err = start(rv) {
				rv = "" // too old: start over; the next change of each canary restarts its clock
				time.Sleep(100 * time.Millisecond)
			}
			if ctx.Err() != nil {
				return
			}
		}
	}()
	return o, nil
}

// record takes one observed state of a Canary.
func (o *stepObserver) record(now time.Time, s canaryState, interval time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	prev, seen := o.last[s.name]
	if seen && s.iterations != prev.iterations {
		// The first change seen only starts the clock: the watch began at
		// an arbitrary point of the interval.
		switch {
		case s.iterations != prev.iterations+1:
			o.skipped++
			o.lastAt[s.name] = time.Time{}
		case o.lastAt[s.name].IsZero():
			o.steps++
			o.stepsByShard[s.shard]++
			o.lastAt[s.name] = now
		default:
			o.steps++
			o.stepsByShard[s.shard]++
			o.excess = append(o.excess, now.Sub(o.lastAt[s.name])-interval)
			o.lastAt[s.name] = now
		}
	}
	o.last[s.name] = s
}

// count returns the steps seen so far, in all and by shard key.
func (o *stepObserver) count() (int, map[string]int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.steps, maps.Clone(o.stepsByShard)
}

// stop ends the observation and returns the step excesses, sorted.
func (o *stepObserver) stop() []time.Duration {
	o.cancel()
	<-o.done
	o.mu.Lock()
	defer o.mu.Unlock()
	sort.Slice(o.excess, func(i, j int) bool { return o.excess[i] < o.excess[j] })
	return o.excess
}

// quantile of sorted durations, in milliseconds.
func quantileMs(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return float64(sorted[int(q*float64(len(sorted)-1))].Microseconds()) / 1000
}

// deleteNamespace deletes a namespace and waits until it is gone, so that
// the next run starts on a quiet control plane.
func deleteNamespace(ctx context.Context, ns string, timeout time.Duration) error {
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if err := k8s.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj); apierrors.IsNotFound(err) {
			return nil
		}
		time.Sleep(time.Second)
	}
	return fmt.Errorf("namespace %s not gone after %s", ns, timeout)
}

// ratio formats a/b to three significant digits, or "—" when it means
// nothing: b zero, or either negative (a step excess can be below zero when
// a ticker fires early to catch up).
func ratio(a, b float64) string {
	if b <= 0 || a < 0 {
		return "—"
	}
	return fmt.Sprintf("%.3g", a/b)
}
