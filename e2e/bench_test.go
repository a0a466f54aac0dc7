package e2e

import (
	"context"
	"fmt"
	"sort"
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

// BenchmarkHaltLatency measures how fast serin halts a promotion whose
// primary fails: from the moment the deployment controller declares the
// primary's ProgressDeadlineExceeded to the moment the Canary is Halted, both
// seen by the same watcher. The Canary's own deadline (60 s) is far longer
// than the primary Deployment's (3 s), so the halt is the event-driven
// reaction to the Deployment's status, not serin's backstop timer.
//
//	make bench   (go test -run '^$' -bench . -benchtime 1x ./e2e/...)
func BenchmarkHaltLatency(b *testing.B) {
	const runs = 20
	ctx := context.Background()
	ns := fmt.Sprintf("bench-halt-%d", time.Now().UnixNano()%100000)
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	defer k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})

	latencies := make([]time.Duration, 0, runs)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := haltOnce(ctx, ns, fmt.Sprintf("app%02d", i))
			if err != nil {
				b.Error(err)
				return
			}
			mu.Lock()
			latencies = append(latencies, d)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(latencies) == 0 {
		b.Fatal("no run halted")
	}
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	p := func(q float64) int64 { return latencies[int(q*float64(len(latencies)-1))].Milliseconds() }
	fmt.Printf("\n%-28s %8s %8s %8s %6s\n", "HALT LATENCY", "p50", "p99", "max", "runs")
	fmt.Printf("%-28s %6dms %6dms %6dms %6d\n", "deadline exceeded → Halted", p(0.5), p(0.99), p(1), len(latencies))
	fmt.Printf("halt_latency_p50_ms=%d halt_latency_p99_ms=%d halt_latency_max_ms=%d runs=%d\n", p(0.5), p(0.99), p(1), len(latencies))
	b.ReportMetric(float64(p(0.99)), "p99-ms")
}

// haltOnce rolls one canary to a promotion that breaks and returns the time
// from the primary's ProgressDeadlineExceeded to the Canary's Halted.
func haltOnce(ctx context.Context, ns, name string) (time.Duration, error) {
	target := testobj.MakeDeployment(name, ns).Replicas(1).ProgressDeadlineSeconds(3).Obj()
	if err := k8s.Create(ctx, target); err != nil {
		return 0, err
	}
	c := testobj.MakeCanary(name, ns).ProgressDeadlineSeconds(60).
		Analysis(v1alpha1.CanaryAnalysis{Interval: &metav1.Duration{Duration: time.Second}, Iterations: 1}).Obj()
	if err := k8s.Create(ctx, c); err != nil {
		return 0, err
	}
	if err := pollCanary(ctx, c, 60*time.Second, func(c *v1alpha1.Canary) bool { return c.Status.Phase == v1alpha1.PhaseInitialized }); err != nil {
		return 0, err
	}

	w, err := k8s.(client.WithWatch).Watch(ctx, &appsv1.DeploymentList{}, client.InNamespace(ns))
	if err != nil {
		return 0, err
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
		return 0, err
	}
	var haltedAt time.Time
	if err := pollCanary(ctx, c, 90*time.Second, func(c *v1alpha1.Canary) bool {
		if c.Status.Phase == v1alpha1.PhaseHalted {
			haltedAt = time.Now()
			return true
		}
		return false
	}); err != nil {
		return 0, err
	}
	select {
	case at := <-exceeded:
		return haltedAt.Sub(at), nil
	case <-time.After(5 * time.Second):
		return 0, fmt.Errorf("%s halted without the deployment controller declaring ProgressDeadlineExceeded", name)
	}
}

// pollCanary watches the Canary until done returns true.
func pollCanary(ctx context.Context, c *v1alpha1.Canary, timeout time.Duration, done func(*v1alpha1.Canary) bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), c); err == nil && done(c) {
		return nil
	}
	w, err := k8s.(client.WithWatch).Watch(ctx, &v1alpha1.CanaryList{}, client.InNamespace(c.Namespace),
		client.MatchingFields{"metadata.name": c.Name})
	if err != nil {
		return err
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if obj, ok := ev.Object.(*v1alpha1.Canary); ok && done(obj) {
			obj.DeepCopyInto(c)
			return nil
		}
	}
	return fmt.Errorf("canary %s: timed out in phase %q", c.Name, c.Status.Phase)
}
