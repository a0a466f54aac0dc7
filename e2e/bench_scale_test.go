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
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/internal/testing/testbed"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// BenchmarkScale runs N canaries all progressing with a 10 s interval, first
// on serin, then on Flagger's latest and the one before it (the same
// scenario on the same testbed, one after the other), and measures over a
// one-minute window:
//   - serin's tick lag: when a step ran minus when it was due, from the
//     agent's histogram;
//   - for both, the step excess: the time between two steps of a Canary, seen
//     by a watch, minus the interval;
//   - API requests per step by verb: serin's from its client metrics, where
//     any GET is a read outside the cache; Flagger's (which exports no client
//     metrics) from a counting proxy in front of the API server;
//   - writes per step, and the controller's RSS and CPU.
//
// The sizes and whether Flagger runs are set from the environment:
//
//	make bench                              # 100, 500 and 2,000 canaries
//	SERIN_BENCH_CANARIES=100,500 make bench # a quicker table
//	SERIN_BENCH_FLAGGER=false make bench    # serin only
//	SERIN_BENCH_FLAGGER_VERSIONS=v1.44.0 make bench # one Flagger (default: v1.44.0 and v1.36.1)
//	SERIN_BENCH_PROFILE=/tmp/prof make bench # CPU profiles of the agent and kube-apiserver
//
// For serin it also prints what kube-apiserver's own metrics say of the
// window (a line starting with "apiserver"): a status patch's latency,
// etcd's update latency and the size of a Canary watch event; and, for
// the initialization and the window, the CPU of every command on the
// machine (cpu_by_command) and the API server's writes by resource and
// verb (apiserver_writes): who uses the machine, the agent, the control
// plane or the testbed.
func BenchmarkScale(b *testing.B) {
	sizes := []int{100, 500, 2000}
	if v := os.Getenv("SERIN_BENCH_CANARIES"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				b.Fatalf("SERIN_BENCH_CANARIES: %v", err)
			}
			sizes = append(sizes, n)
		}
	}
	// Flagger's latest and the one before (FLAGGER_VERSION,
	// FLAGGER_PREVIOUS_VERSION), or those SERIN_BENCH_FLAGGER_VERSIONS
	// names (v1.44.0,v1.36.1); none with SERIN_BENCH_FLAGGER=false.
	var flaggerVersions []string
	if os.Getenv("SERIN_BENCH_FLAGGER") != "false" {
		if v := os.Getenv("SERIN_BENCH_FLAGGER_VERSIONS"); v != "" {
			for _, f := range strings.Split(v, ",") {
				flaggerVersions = append(flaggerVersions, strings.TrimSpace(f))
			}
		} else {
			for _, key := range []string{"FLAGGER_VERSION", "FLAGGER_PREVIOUS_VERSION"} {
				version, err := testbed.Version("..", key)
				if err != nil {
					b.Fatal(err)
				}
				flaggerVersions = append(flaggerVersions, version)
			}
		}
	}
	ctx := context.Background()
	var serin []scaleResult
	flagger := make([][]scaleResult, len(flaggerVersions)) // by version, then size
	for _, n := range sizes {
		r, err := scaleRun(ctx, serinContender(), n)
		if err != nil {
			b.Fatalf("serin, %d canaries: %v", n, err)
		}
		serin = append(serin, r)
		for i, version := range flaggerVersions {
			f, err := env.StartFlagger(ctx, "..", testbed.FlaggerOptions{Version: version, QPS: 500, Burst: 1000})
			if err != nil {
				b.Fatal(err)
			}
			c := flaggerContender(f)
			c.name = "Flagger " + version
			r, err = scaleRun(ctx, c, n)
			f.Stop()
			if err != nil {
				// What Flagger could not reach is a result too: the row says
				// so, and the other sizes still run.
				fmt.Printf("contender=flagger-%s canaries=%d not_reached=%q\n", version, n, err.Error())
				r = scaleResult{contender: c.name, n: n, err: err}
			}
			flagger[i] = append(flagger[i], r)
		}
	}

	fmt.Printf("\nSCALE (serin)\n%-9s %10s %10s %9s %9s %9s %8s %8s\n", "CANARIES", "LAG p50", "LAG p99", "READS/TK", "WRITES/TK", "STEPS", "RSS", "CPU")
	for _, r := range serin {
		fmt.Printf("%-9d %8.0fms %8.0fms %9.3f %9.2f %9.0f %6.0fMi %8.2f\n", r.n, r.lagP50, r.lagP99, r.readsPerStep, r.writesPerStep, r.steps, r.rss, r.cpu)
	}
	if len(flagger) == 0 {
		return
	}
	fmt.Printf("\nSIDE BY SIDE (same testbed, same client limits: 500 QPS, burst 1000; step excess seen by a watch)\n")
	fmt.Printf("%-9s %-16s %10s %10s %10s %10s %9s %8s %8s\n", "CANARIES", "", "EXCESS p50", "EXCESS p99", "READS/STEP", "WRITES/ST", "STEPS", "RSS", "CPU")
	for i, s := range serin {
		printSideBySideRow(s)
		for _, byVersion := range flagger {
			f := byVersion[i]
			if f.err != nil {
				fmt.Printf("%-9d %-16s not reached: %v\n", f.n, f.contender, f.err)
				fmt.Printf("side_by_side canaries=%d flagger=%s serin_step_excess_p99_ms=%.0f serin_requests_per_step=%.2f serin_rss_mib=%.0f flagger_not_reached=%q\n",
					s.n, versionOf(f.contender), s.excessP99, s.readsPerStep+s.writesPerStep, s.rss, f.err.Error())
				continue
			}
			printSideBySideRow(f)
			fmt.Printf("%-9d %-16s %10s %10s %10s %10s %9s %8s %8s\n", s.n, "serin / "+versionOf(f.contender), ratio(s.excessP50, f.excessP50), ratio(s.excessP99, f.excessP99),
				ratio(s.readsPerStep+s.writesPerStep, f.readsPerStep+f.writesPerStep), "", "", ratio(s.rss, f.rss), ratio(s.cpu, f.cpu))
			fmt.Printf("side_by_side canaries=%d flagger=%s serin_step_excess_p99_ms=%.0f flagger_step_excess_p99_ms=%.0f serin_requests_per_step=%.2f flagger_requests_per_step=%.2f serin_rss_mib=%.0f flagger_rss_mib=%.0f ratio_step_excess_p99=%s ratio_requests=%s ratio_rss=%s\n",
				s.n, versionOf(f.contender), s.excessP99, f.excessP99, s.readsPerStep+s.writesPerStep, f.readsPerStep+f.writesPerStep, s.rss, f.rss,
				ratio(s.excessP99, f.excessP99), ratio(s.readsPerStep+s.writesPerStep, f.readsPerStep+f.writesPerStep), ratio(s.rss, f.rss))
		}
	}
}

// versionOf is the version in a contender's name ("Flagger v1.44.0").
func versionOf(name string) string {
	fields := strings.Fields(name)
	return fields[len(fields)-1]
}

// printSideBySideRow prints one contender's row of the side-by-side table.
func printSideBySideRow(r scaleResult) {
	fmt.Printf("%-9d %-16s %8.0fms %8.0fms %10.2f %10.2f %9.0f %6.0fMi %8.2f\n",
		r.n, r.contender, r.excessP50, r.excessP99, r.readsPerStep, r.writesPerStep, r.steps, r.rss, r.cpu)
}

// scaleResult is one contender's figures at one size.
type scaleResult struct {
	contender string
	n         int
	// lagP50, lagP99: serin's own tick lag (ms), from its histogram.
	lagP50, lagP99 float64
	// excessP50, excessP99: step excess (ms) seen by a watch.
	excessP50, excessP99 float64
	steps                float64
	readsPerStep         float64
	writesPerStep        float64
	byVerb               map[string]float64
	rss, cpu             float64
	// rssPerAgent is each process's RSS (a shard each).
	rssPerAgent []float64
	// machineBusy is the share of the machine's CPU time in use during the
	// window, by everything: the control plane, kwok and the contender.
	machineBusy float64
	// err says why a size was not reached.
	err error
}

// scaleRun measures one contender at one size; it prints the
// machine-readable line.
func scaleRun(ctx context.Context, c contender, n int) (scaleResult, error) {
	const interval, window = 10 * time.Second, time.Minute
	res := scaleResult{contender: c.name, n: n}
	ns := fmt.Sprintf("bench-scale-%s-%d", dnsLabel(c.name), n)
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return res, err
	}
	defer func() {
		start := time.Now()
		// The next contender starts on a testbed that is done deleting
		// this one's objects: 2,000 canaries take the API server's
		// garbage collector 10 minutes or more on 2 cores.
		if err := deleteNamespace(ctx, ns, max(10*time.Minute, time.Duration(n)*600*time.Millisecond)); err != nil {
			fmt.Println("  warning:", err)
			return
		}
		fmt.Printf("  %s: the namespace of %d canaries deleted in %s\n", c.name, n, time.Since(start).Round(time.Second))
	}()

	if err := initializeCanaries(ctx, c, ns, n, interval, 15*time.Minute); err != nil {
		return res, err
	}
	start := time.Now()
	if err := forEach(n, func(i int) error { return setImageErr(ctx, ns, fmt.Sprintf("app-%04d", i), "podinfo:v2") }); err != nil {
		return res, err
	}
	if err := waitCount(ctx, c.gvk, ns, n, 15*time.Minute, "took a first step", func(s canaryState) bool {
		return s.phase == "Progressing" && s.iterations >= 1
	}); err != nil {
		return res, err
	}
	fmt.Printf("  %s: %d canaries took their first step in %s\n", c.name, n, time.Since(start).Round(time.Second))

	// One interval more, so that the window holds no step taken while the
	// last canaries of the batch were still starting theirs.
	time.Sleep(interval)
	obs, err := observeSteps(ctx, c.gvk, ns, interval)
	if err != nil {
		return res, err
	}
	// The counters are read around the window in mirrored order (the API
	// server's, the contender's, then the steps seen; after it the steps,
	// the contender's, the API server's), so that each counter's interval
	// holds the steps' one and exceeds it only by the scrapes in between:
	// a per-step figure is then not inflated by the writes of the seconds
	// after the window (runs 18–20 read the agents after listing Events).
	serin := len(c.agents) > 0
	var (
		apiBefore, apiAfter   metricsText
		before, after         metricsText
		eachBefore, eachAfter []metricsText
		reqBefore, reqAfter   map[string]float64
	)
	profiled := func() {}
	if serin && len(c.agents) == 1 {
		profiled = profileWindow(fmt.Sprintf("scale-%d", n), window/2)
	}
	cpuBefore := 0.0
	for _, pid := range c.pids() {
		cpuBefore += procCPU(pid)
	}
	busyBefore, totalBefore := machineCPU()
	byCommandBefore := cpuByCommand()
	if apiBefore, err = apiserverMetrics(); err != nil {
		return res, err
	}
	if serin {
		if eachBefore, err = scrapeEach(c.agents); err != nil {
			return res, err
		}
		before = sumTexts(eachBefore)
	}
	if reqBefore, err = c.requests(before); err != nil {
		return res, err
	}
	stepsBefore, byShardBefore := obs.count()
	windowStart := time.Now()
	time.Sleep(window)
	windowEnd := time.Now()
	stepsAfter, byShardAfter := obs.count()
	if serin {
		if eachAfter, err = scrapeEach(c.agents); err != nil {
			return res, err
		}
		after = sumTexts(eachAfter)
	}
	if reqAfter, err = c.requests(after); err != nil {
		return res, err
	}
	if apiAfter, err = apiserverMetrics(); err != nil {
		return res, err
	}
	profiled()
	for _, pid := range c.pids() {
		res.cpu += procCPU(pid)
		rss := procRSSMiB(pid)
		res.rss += rss
		res.rssPerAgent = append(res.rssPerAgent, rss)
	}
	res.cpu = (res.cpu - cpuBefore) / window.Seconds()
	busy, total := machineCPU()
	byCommandAfter := cpuByCommand()
	printCPUByCommand(c.label(), "window", n, byCommandBefore, byCommandAfter, window.Seconds())
	res.machineBusy = (busy - busyBefore) / max(total-totalBefore, 1)
	excess := obs.stop()
	if obs.restarts > 0 || obs.skipped > 0 {
		fmt.Printf("  %s: the step watch was restarted %d times (%v); %d changes of more than one step not timed\n",
			c.name, obs.restarts, obs.errors, obs.skipped)
	}
	res.excessP50, res.excessP99 = quantileMs(excess, 0.5), quantileMs(excess, 0.99)
	res.steps = float64(stepsAfter - stepsBefore)
	if res.steps == 0 {
		return res, fmt.Errorf("no step seen in the window")
	}
	// What the API server costs with this contender: its CPU per step and
	// the writes it took, serin's or Flagger's alike.
	apiserverCost(c.label(), n, res.steps, (byCommandAfter["kube-apiserver"]-byCommandBefore["kube-apiserver"])/window.Seconds(), window.Seconds(), apiBefore, apiAfter)
	printAPIServerWrites(c.label(), "window", n, "step", res.steps, apiBefore, apiAfter)
	printWindowEvents(ctx, c.label(), n, ns, windowStart, windowEnd, res.steps)
	res.byVerb = map[string]float64{}
	for verb := range reqAfter {
		res.byVerb[verb] = (reqAfter[verb] - reqBefore[verb]) / res.steps
	}
	res.readsPerStep = res.byVerb["read"]
	res.writesPerStep = res.byVerb["create"] + res.byVerb["update"] + res.byVerb["patch"] + res.byVerb["delete"]

	if serin {
		printStatusWrites("window", n, "step", res.steps, before, after)
		printNotifications("window", n, "step", res.steps, before, after)
		// Since the agents started: the rollouts' start, when every
		// Canary announces its new revision at once, included.
		printNotifications("since_start", n, "canary", float64(n), metricsText{}, after)
		if len(c.shards) > 1 {
			// Each shard's status writes against the steps of its own
			// Canaries: whether one agent writes more than the other.
			for i, shard := range c.shards {
				writes := eachAfter[i].sumLabel("serin_canary_status_writes_total", "") - eachBefore[i].sumLabel("serin_canary_status_writes_total", "")
				steps := byShardAfter[shard] - byShardBefore[shard]
				fmt.Printf("status_writes_by_shard canaries=%d shard=%s steps=%d status_writes=%.0f per_step=%.2f\n", n, shard, steps, writes, writes/float64(max(steps, 1)))
			}
		}
		res.lagP50 = 1000 * histogramQuantile(0.5, before, after, "serin_canary_step_lag_seconds")
		res.lagP99 = 1000 * histogramQuantile(0.99, before, after, "serin_canary_step_lag_seconds")
		// Where the lag goes: waiting in the work queue for a worker, or
		// in the reconcile (mostly the API server's answer to a write).
		avg := func(name string) float64 {
			sel := `controller="canary"`
			n := after.sumLabel(name+"_count", sel) - before.sumLabel(name+"_count", sel)
			return 1000 * (after.sumLabel(name+"_sum", sel) - before.sumLabel(name+"_sum", sel)) / max(n, 1)
		}
		fmt.Printf("canaries=%d tick_lag_p50_ms=%.0f tick_lag_p99_ms=%.0f rss_mib=%.0f cpu_cores=%.2f api_reads_per_tick=%.3f writes_per_transition=%.2f steps=%.0f step_excess_p50_ms=%.0f step_excess_p99_ms=%.0f queue_wait_avg_ms=%.0f reconcile_avg_ms=%.0f machine_cpu_busy=%.2f get=%.3f create=%.2f update=%.2f patch=%.2f delete=%.2f agents=%d rss_per_agent_mib=%s\n",
			n, res.lagP50, res.lagP99, res.rss, res.cpu, res.readsPerStep, res.writesPerStep, res.steps, res.excessP50, res.excessP99,
			avg("workqueue_queue_duration_seconds"), avg("workqueue_work_duration_seconds"), res.machineBusy,
			res.byVerb["read"], res.byVerb["create"], res.byVerb["update"], res.byVerb["patch"], res.byVerb["delete"],
			len(c.agents), formatMiB(res.rssPerAgent))
	} else {
		fmt.Printf("contender=%s canaries=%d step_excess_p50_ms=%.0f step_excess_p99_ms=%.0f rss_mib=%.0f cpu_cores=%.2f api_reads_per_step=%.3f writes_per_step=%.2f steps=%.0f machine_cpu_busy=%.2f %s\n",
			dnsLabel(c.name), n, res.excessP50, res.excessP99, res.rss, res.cpu, res.readsPerStep, res.writesPerStep, res.steps, res.machineBusy,
			testbed.FormatCounts(res.byVerb))
	}
	return res, nil
}

// dnsLabel makes a contender's name part of a namespace's:
// "Flagger v1.44.0" is flagger-v1-44-0.
func dnsLabel(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, name)
}

// formatMiB lists sizes in MiB: 141,139.
func formatMiB(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.0f", x)
	}
	return strings.Join(parts, ",")
}

// initializeCanaries creates n Deployments app-0000… of one replica in ns
// and a Canary of c for each, and waits until all are Initialized.
func initializeCanaries(ctx context.Context, c contender, ns string, n int, interval, timeout time.Duration) error {
	start := time.Now()
	cpuBefore := cpuByCommand()
	apiBefore, err := apiserverMetrics()
	if err != nil {
		return err
	}
	var agentsBefore metricsText
	if len(c.agents) > 0 {
		if agentsBefore, err = scrapeAgents(c.agents); err != nil {
			return err
		}
	}
	if err := forEach(n, func(i int) error {
		name := fmt.Sprintf("app-%04d", i)
		if err := k8s.Create(ctx, testobj.MakeDeployment(name, ns).Replicas(1).Obj()); err != nil {
			return err
		}
		return c.canary(ctx, ns, name, interval, 1000)
	}); err != nil {
		return err
	}
	waitErr := waitCount(ctx, c.gvk, ns, n, timeout, "Initialized", func(s canaryState) bool { return s.phase == "Initialized" })
	took := time.Since(start)
	phase := "init"
	if waitErr != nil {
		// What the machine and the API server did while the contender
		// did not get there is a result too.
		phase = "init_not_reached"
	} else {
		fmt.Printf("  %s: %d canaries Initialized in %s\n", c.name, n, took.Round(time.Second))
	}
	printCPUByCommand(c.label(), phase, n, cpuBefore, cpuByCommand(), took.Seconds())
	apiAfter, err := apiserverMetrics()
	if err != nil {
		return errors.Join(waitErr, err)
	}
	printAPIServerWrites(c.label(), phase, n, "canary", float64(n), apiBefore, apiAfter)
	if waitErr != nil {
		return waitErr
	}
	if len(c.agents) > 0 {
		agentsAfter, err := scrapeAgents(c.agents)
		if err != nil {
			return err
		}
		printStatusWrites("init", n, "canary", float64(n), agentsBefore, agentsAfter)
		printNotifications("init", n, "canary", float64(n), agentsBefore, agentsAfter)
	}
	return nil
}

// forEach runs fn for 0..n-1 on 16 workers.
func forEach(n int, fn func(i int) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	work := make(chan int)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := fn(i); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs
}

func setImageErr(ctx context.Context, ns, name, image string) error {
	d := &appsv1.Deployment{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
		return err
	}
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Template.Spec.Containers[0].Image = image
	return k8s.Patch(ctx, d, patch)
}

// metricsText is a scrape of a Prometheus text endpoint: series → value.
type metricsText map[string]float64

func scrape(url string) (metricsText, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return parseMetrics(resp.Body)
}

// parseMetrics reads the Prometheus text format.
func parseMetrics(r io.Reader) (metricsText, error) {
	out := metricsText{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			out[line[:i]] = v
		}
	}
	return out, sc.Err()
}

// sumLabel adds the values of the series of a metric with a label matcher.
func (m metricsText) sumLabel(name, label string) float64 {
	total := 0.0
	for series, v := range m {
		base, _, _ := strings.Cut(series, "{")
		if base == name && strings.Contains(series, label) {
			total += v
		}
	}
	return total
}

// sumLabels adds the values of the series of a metric that carry every one
// of the comma-separated label matchers, in any order.
func (m metricsText) sumLabels(name, matchers string) float64 {
	total := 0.0
	for series, v := range m {
		base, labels, _ := strings.Cut(series, "{")
		if base != name {
			continue
		}
		all := true
		for _, l := range strings.Split(matchers, ",") {
			all = all && strings.Contains(labels, l)
		}
		if all {
			total += v
		}
	}
	return total
}

// histogramQuantile estimates a quantile of the observations between two
// scrapes of a histogram, as PromQL's histogram_quantile does.
func histogramQuantile(q float64, before, after metricsText, name string) float64 {
	type bucket struct{ le, count float64 }
	var buckets []bucket
	for series, v := range after {
		if !strings.HasPrefix(series, name+"_bucket{") {
			continue
		}
		le := series[strings.Index(series, `le="`)+4 : strings.LastIndex(series, `"`)]
		bound := math.Inf(1)
		if le != "+Inf" {
			bound, _ = strconv.ParseFloat(le, 64)
		}
		buckets = append(buckets, bucket{bound, v - before[series]})
	}
	for i := range buckets {
		for j := i + 1; j < len(buckets); j++ {
			if buckets[j].le < buckets[i].le {
				buckets[i], buckets[j] = buckets[j], buckets[i]
			}
		}
	}
	if len(buckets) == 0 || buckets[len(buckets)-1].count == 0 {
		return 0
	}
	rank := q * buckets[len(buckets)-1].count
	prevLe, prevCount := 0.0, 0.0
	for _, bk := range buckets {
		if bk.count >= rank {
			if math.IsInf(bk.le, 1) {
				return prevLe
			}
			return prevLe + (bk.le-prevLe)*(rank-prevCount)/math.Max(bk.count-prevCount, 1e-9)
		}
		prevLe, prevCount = bk.le, bk.count
	}
	return prevLe
}

// procRSSMiB reads a process's resident memory.
func procRSSMiB(pid int) float64 { return procMemMiB(pid, "VmRSS") }

// procCPU reads a process's user+system CPU seconds.
func procCPU(pid int) float64 {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100 // clock ticks (USER_HZ = 100)
}

// machineCPU reads the machine's busy and total CPU time (all cores, clock
// ticks) from /proc/stat.
func machineCPU() (busy, total float64) {
	data, _ := os.ReadFile("/proc/stat")
	line, _, _ := strings.Cut(string(data), "\n")
	for i, f := range strings.Fields(line)[1:] {
		v, _ := strconv.ParseFloat(f, 64)
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, total
}

// cpuByCommand reads every process's user+system CPU seconds from /proc,
// summed by command name (kube-apiserver, etcd, kwok, serin…): who uses the
// machine, the agent or the control plane beside it.
func cpuByCommand() map[string]float64 {
	out := map[string]float64{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(data)
		open, shut := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || shut < open {
			continue
		}
		out[s[open+1:shut]] += procCPU(pid)
	}
	return out
}

// printCPUByCommand prints the cores each command used between two
// readings, the busiest first, those under 0.01 cores left out:
// cpu_by_command phase=window contender=serin canaries=2000 kube-apiserver=0.92 etcd=0.31 ….
func printCPUByCommand(who, phase string, n int, before, after map[string]float64, seconds float64) {
	type use struct {
		name  string
		cores float64
	}
	var uses []use
	for name, v := range after {
		if c := (v - before[name]) / seconds; c >= 0.01 {
			uses = append(uses, use{name, c})
		}
	}
	sort.Slice(uses, func(i, j int) bool { return uses[i].cores > uses[j].cores })
	var b strings.Builder
	fmt.Fprintf(&b, "cpu_by_command phase=%s contender=%s canaries=%d", phase, who, n)
	for _, u := range uses {
		fmt.Fprintf(&b, " %s=%.2f", strings.ReplaceAll(u.name, " ", "_"), u.cores)
	}
	fmt.Println(b.String())
}
