package e2e

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testobj"
)

// BenchmarkScale runs N canaries all progressing with a 10 s interval on
// one agent and measures, over a window of ticks: the step lag (when a step
// ran minus when it was due, from the agent's histogram), the agent's API
// requests per step by verb (from its client metrics: any GET or LIST is a
// read outside the cache), its writes per step, and its RSS and CPU.
//
//	SERIN_BENCH_CANARIES=100,500,2000 make bench
func BenchmarkScale(b *testing.B) {
	sizes := []int{100, 500}
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
	var rows []string
	for _, n := range sizes {
		row, err := scaleRun(b, n)
		if err != nil {
			b.Fatalf("%d canaries: %v", n, err)
		}
		rows = append(rows, row)
	}
	fmt.Printf("\n%-9s %10s %10s %9s %9s %9s %8s %8s\n", "CANARIES", "LAG p50", "LAG p99", "READS/TK", "WRITES/TK", "STEPS", "RSS", "CPU")
	for _, r := range rows {
		fmt.Println(r)
	}
}

// scaleRun measures one size and returns its table row; it prints the
// machine-readable line.
func scaleRun(b *testing.B, n int) (string, error) {
	ctx := context.Background()
	ns := fmt.Sprintf("bench-scale-%d", n)
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return "", err
	}
	defer k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})

	start := time.Now()
	if err := forEach(n, func(i int) error {
		name := fmt.Sprintf("app-%04d", i)
		if err := k8s.Create(ctx, testobj.MakeDeployment(name, ns).Replicas(1).Obj()); err != nil {
			return err
		}
		c := testobj.MakeCanary(name, ns).Analysis(v1alpha1.CanaryAnalysis{
			Interval: &metav1.Duration{Duration: 10 * time.Second}, Iterations: 1000,
		}).Obj()
		return k8s.Create(ctx, c)
	}); err != nil {
		return "", err
	}
	if err := waitAll(ctx, ns, n, v1alpha1.PhaseInitialized, 10*time.Minute); err != nil {
		return "", err
	}
	fmt.Printf("  %d canaries Initialized in %s\n", n, time.Since(start).Round(time.Second))
	if err := forEach(n, func(i int) error { return setImageErr(ctx, ns, fmt.Sprintf("app-%04d", i), "podinfo:v2") }); err != nil {
		return "", err
	}
	if err := waitAllIterated(ctx, ns, n, 10*time.Minute); err != nil {
		return "", err
	}

	const window = 40 * time.Second
	before, err := scrape(agent.MetricsURL)
	if err != nil {
		return "", err
	}
	cpuBefore := procCPU(agent.PID())
	time.Sleep(window)
	after, err := scrape(agent.MetricsURL)
	if err != nil {
		return "", err
	}
	cpu := (procCPU(agent.PID()) - cpuBefore) / window.Seconds()
	rss := procRSSMiB(agent.PID())

	steps := after.sum("serin_canary_step_lag_seconds_count") - before.sum("serin_canary_step_lag_seconds_count")
	if steps == 0 {
		return "", fmt.Errorf("no step ran in the window")
	}
	reads := after.sumLabel("rest_client_requests_total", `method="GET"`) + after.sumLabel("rest_client_requests_total", `method="LIST"`) -
		before.sumLabel("rest_client_requests_total", `method="GET"`) - before.sumLabel("rest_client_requests_total", `method="LIST"`)
	writes := 0.0
	for _, m := range []string{"PATCH", "PUT", "POST"} {
		writes += after.sumLabel("rest_client_requests_total", `method="`+m+`"`) - before.sumLabel("rest_client_requests_total", `method="`+m+`"`)
	}
	p50 := histogramQuantile(0.5, before, after, "serin_canary_step_lag_seconds")
	p99 := histogramQuantile(0.99, before, after, "serin_canary_step_lag_seconds")
	fmt.Printf("canaries=%d tick_lag_p50_ms=%.0f tick_lag_p99_ms=%.0f rss_mib=%.0f cpu_cores=%.2f api_reads_per_tick=%.3f writes_per_transition=%.2f steps=%.0f\n",
		n, p50*1000, p99*1000, rss, cpu, reads/steps, writes/steps, steps)
	return fmt.Sprintf("%-9d %8.0fms %8.0fms %9.3f %9.2f %9.0f %6.0fMi %8.2f", n, p50*1000, p99*1000, reads/steps, writes/steps, steps, rss, cpu), nil
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

// waitAll waits until n canaries of the namespace are in phase.
func waitAll(ctx context.Context, ns string, n int, phase v1alpha1.CanaryPhase, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		var list v1alpha1.CanaryList
		if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		count := 0
		for _, c := range list.Items {
			if c.Status.Phase == phase {
				count++
			}
		}
		if count == n {
			return nil
		}
		time.Sleep(time.Second)
	}
	return fmt.Errorf("not all %d canaries reached %s in %s", n, phase, timeout)
}

// metricsText is a scrape of a Prometheus text endpoint: series → value.
type metricsText map[string]float64

func scrape(url string) (metricsText, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := metricsText{}
	sc := bufio.NewScanner(resp.Body)
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

// sum adds the values of every series of a metric name.
func (m metricsText) sum(name string) float64 { return m.sumLabel(name, "") }

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
func procRSSMiB(pid int) float64 {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

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

// waitAllIterated waits until every canary of the namespace took its first
// analysis step: from then on, steps wait only for the clock.
func waitAllIterated(ctx context.Context, ns string, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		var list v1alpha1.CanaryList
		if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		count := 0
		for _, c := range list.Items {
			if c.Status.Phase == v1alpha1.PhaseProgressing && c.Status.Iterations >= 1 {
				count++
			}
		}
		if count == n {
			return nil
		}
		time.Sleep(time.Second)
	}
	return fmt.Errorf("not all %d canaries took a first step in %s", n, timeout)
}
