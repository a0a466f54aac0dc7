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
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serin-dev/serin/internal/testing/testobj"
)

// BenchmarkCacheUnrelatedObjects measures what the cluster's unrelated
// workloads cost the agent: N initialized canaries alone, then with U
// Deployments and U Services (with their EndpointSlices) in other
// namespaces, none of them a target (issue #19: RSS grows < 10%). It
// prints the agent's RSS and Go heap in use, each after a garbage
// collection has had time to run, and what its informers hold.
//
//	SERIN_BENCH_CACHE_CANARIES=2000 SERIN_BENCH_CACHE_UNRELATED=20000 (the defaults)
func BenchmarkCacheUnrelatedObjects(b *testing.B) {
	n := benchEnvInt(b, "SERIN_BENCH_CACHE_CANARIES", 2000)
	unrelated := benchEnvInt(b, "SERIN_BENCH_CACHE_UNRELATED", 20000)
	ctx := context.Background()
	const interval = 10 * time.Second

	ns := fmt.Sprintf("bench-cache-%d", n)
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = deleteNamespace(ctx, ns, 15*time.Minute) }()
	if err := initializeCanaries(ctx, serinContender(), ns, n, interval, 20*time.Minute); err != nil {
		b.Fatal(err)
	}
	alone := settledMemory(b)

	// The unrelated workloads: a thousand Deployments (no pods) and
	// Services a namespace.
	const perNamespace = 1000
	var namespaces []string
	for i := 0; i*perNamespace < unrelated; i++ {
		name := fmt.Sprintf("bench-unrelated-%02d", i)
		if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			b.Fatal(err)
		}
		namespaces = append(namespaces, name)
	}
	defer func() {
		for _, name := range namespaces {
			_ = deleteNamespace(ctx, name, 15*time.Minute)
		}
	}()
	start := time.Now()
	if err := forEach(unrelated, func(i int) error {
		ns, name := namespaces[i/perNamespace], fmt.Sprintf("other-%05d", i)
		if err := k8s.Create(ctx, testobj.MakeDeployment(name, ns).Replicas(0).Obj()); err != nil {
			return err
		}
		return k8s.Create(ctx, testobj.MakeService(name, ns).Obj())
	}); err != nil {
		b.Fatal(err)
	}
	fmt.Printf("  %d unrelated Deployments and Services created in %s\n", unrelated, time.Since(start).Round(time.Second))
	with := settledMemory(b)

	growth := func(a, b float64) float64 { return 100 * (b - a) / a }
	fmt.Printf("\nMEMORY WITH UNRELATED OBJECTS (%d initialized canaries; %d Deployments and %d Services elsewhere, none a target)\n", n, unrelated, unrelated)
	fmt.Printf("%-24s %9s %9s %11s %12s %14s\n", "", "RSS", "HEAP", "CACHED DEPL", "CACHED SVC", "CACHED SLICES")
	for _, row := range []struct {
		name string
		m    agentMemory
	}{{"canaries alone", alone}, {"+ unrelated objects", with}} {
		fmt.Printf("%-24s %7.0fMi %7.0fMi %11.0f %12.0f %14.0f\n", row.name, row.m.rss, row.m.heap, row.m.deployments, row.m.services, row.m.slices)
	}
	fmt.Printf("%-24s %8.1f%% %8.1f%%\n", "growth", growth(alone.rss, with.rss), growth(alone.heap, with.heap))
	fmt.Printf("cache_unrelated canaries=%d unrelated_deployments=%d unrelated_services=%d rss_alone_mib=%.0f rss_with_mib=%.0f rss_growth_pct=%.1f heap_alone_mib=%.0f heap_with_mib=%.0f heap_growth_pct=%.1f cached_deployments=%.0f cached_services=%.0f cached_endpointslices=%.0f machine_cores=%d\n",
		n, unrelated, unrelated, alone.rss, with.rss, growth(alone.rss, with.rss), alone.heap, with.heap, growth(alone.heap, with.heap),
		with.deployments, with.services, with.slices, runtime.NumCPU())
}

// agentMemory is the agent's memory and what its informers hold.
type agentMemory struct {
	rss, heap                     float64
	deployments, services, slices float64
}

// settledMemory waits for the agent to settle (a minute: its informers
// have the objects), has it collect its garbage (pprof's heap?gc=1) and
// reads its memory.
func settledMemory(b *testing.B) agentMemory {
	b.Helper()
	time.Sleep(time.Minute)
	resp, err := http.Get(strings.TrimSuffix(agent.MetricsURL, "/metrics") + "/debug/pprof/heap?gc=1")
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	m, err := scrape(agent.MetricsURL)
	if err != nil {
		b.Fatal(err)
	}
	return agentMemory{
		rss:         procRSSMiB(agent.PID()),
		heap:        m["go_memstats_heap_inuse_bytes"] / (1 << 20),
		deployments: m[`serin_cache_objects{kind="Deployment"}`],
		services:    m[`serin_cache_objects{kind="Service"}`],
		slices:      m[`serin_cache_objects{kind="EndpointSlice"}`],
	}
}

// benchEnvInt reads a positive number from the environment, or def.
func benchEnvInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: a positive number", name, v)
	}
	return n
}
