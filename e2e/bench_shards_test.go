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
	"testing"
	"time"

	"github.com/serin-dev/serin/internal/testing/testbed"
)

// BenchmarkShards runs N canaries progressing every 10 s on one agent,
// then the same N on two shard agents (N/2 each, --watch-label-selector
// sharding.fluxcd.io/key=bench-shard-a or -b), as BenchmarkScale measures
// them: tick lag, steps, API requests per step, RSS of each agent and CPU
// (issue #19: 1 × 2,000 against 2 × 1,000).
//
//	SERIN_BENCH_SHARDS_CANARIES=2000 (the default)
//	SERIN_BENCH_SHARDS_ONE=false            # the two shards only (the one-agent row left empty)
func BenchmarkShards(b *testing.B) {
	n := benchEnvInt(b, "SERIN_BENCH_SHARDS_CANARIES", 2000)
	ctx := context.Background()
	var one scaleResult
	if os.Getenv("SERIN_BENCH_SHARDS_ONE") != "false" {
		var err error
		if one, err = scaleRun(ctx, serinContender(), n); err != nil {
			b.Fatalf("one agent, %d canaries: %v", n, err)
		}

		// The two shards start on a cluster without the first run's
		// canaries: their deletion (finalizers, garbage collection)
		// would otherwise load the same API server while the shards
		// are measured.
		first := fmt.Sprintf("bench-scale-%s-%d", dnsLabel(serinContender().name), n)
		start := time.Now()
		if err := deleteNamespace(ctx, first, 45*time.Minute); err != nil {
			b.Fatal(err)
		}
		fmt.Printf("  the first run's %d canaries deleted in %s more\n", n, time.Since(start).Round(time.Second))
	}

	shards := []string{"bench-shard-a", "bench-shard-b"}
	var agents []*testbed.Agent
	for _, shard := range shards {
		a, err := env.StartAgentWith(ctx, "..", testbed.AgentOptions{
			Name:  "serin-agent-" + shard,
			Flags: []string{"--log-level=info", "--gitops-revert=false", "--watch-label-selector=" + shardLabel + "=" + shard},
		})
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = a.Kill() }()
		agents = append(agents, a)
	}
	two, err := scaleRun(ctx, shardedContender("serin-2-shards", agents, shards), n)
	if err != nil {
		b.Fatalf("two shards, %d canaries: %v", n, err)
	}

	fmt.Printf("\nSHARDS (%d canaries, 10 s interval; tick lag from the agents' histograms, summed)\n", n)
	fmt.Printf("%-16s %10s %10s %9s %10s %10s %14s %8s\n", "", "LAG p50", "LAG p99", "STEPS", "READS/STEP", "WRITES/ST", "RSS per agent", "CPU")
	for _, r := range []struct {
		name string
		res  scaleResult
	}{{fmt.Sprintf("1 × %d", n), one}, {fmt.Sprintf("2 × %d", n/2), two}} {
		fmt.Printf("%-16s %8.0fms %8.0fms %9.0f %10.3f %10.2f %14s %8.2f\n", r.name, r.res.lagP50, r.res.lagP99, r.res.steps,
			r.res.readsPerStep, r.res.writesPerStep, formatMiB(r.res.rssPerAgent)+" Mi", r.res.cpu)
	}
	fmt.Printf("shards canaries=%d one_lag_p99_ms=%.0f two_lag_p99_ms=%.0f one_steps=%.0f two_steps=%.0f one_requests_per_step=%.3f two_requests_per_step=%.3f one_rss_mib=%s two_rss_mib=%s one_cpu_cores=%.2f two_cpu_cores=%.2f\n",
		n, one.lagP99, two.lagP99, one.steps, two.steps, one.readsPerStep+one.writesPerStep, two.readsPerStep+two.writesPerStep,
		formatMiB(one.rssPerAgent), formatMiB(two.rssPerAgent), one.cpu, two.cpu)
}
