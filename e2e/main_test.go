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

// Package e2e proves serin's behaviour on the local testbed: a real
// kube-apiserver, etcd, kube-controller-manager, kube-scheduler and kwok,
// with the serin agent built from this tree and run as a process.
package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/go-logr/logr"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

var (
	// env is the testbed shared by the tests of this package; each test
	// works in a namespace of its own.
	env *testbed.Testbed
	// k8s is an admin client of the testbed.
	k8s client.Client
	// agent is the serin agent under test.
	agent *testbed.Agent
	// gateway is the data plane (Traefik): every request a test counts
	// goes through the HTTPRoute weights and Services serin writes.
	gateway *testbed.Traefik
	// prom is a real Prometheus scraping the data plane's per-backend
	// request metrics: what the analysis judges.
	prom *testbed.Prometheus
	// gitopsFlags are the agent flags of GitOps revert on the testbed.
	gitopsFlags []string
)

func TestMain(m *testing.M) {
	flag.Parse()
	if err := setParallel(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(2)
	}
	// envtest.InstallCRDs (notification-controller's, Flagger's) logs
	// through controller-runtime's logger.
	ctrllog.SetLogger(logr.Discard())
	os.Exit(run(m))
}

// controlPlaneGOGC is the GOGC of the testbed's etcd and kube-apiserver:
// 400 for the tests, where the API server's garbage collection is CPU the
// tests beside each other need; Go's default for the benchmarks, which
// measure an API server as clusters run it.
func controlPlaneGOGC() int {
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		return 0
	}
	return 400
}

func run(m *testing.M) int {
	if testing.Short() {
		fmt.Println("e2e: skipped in -short mode (the tests need the local testbed)")
		return 0
	}
	ctx := context.Background()
	gatewayCRDs, err := testbed.GatewayAPICRDs(ctx, "..")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	// KEDA's ScaledObject CRD, as a cluster with KEDA has it (its operator
	// does not run here).
	kedaCRD, err := testbed.KEDAScaledObjectCRD(ctx, "..")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	env, err = testbed.Start(ctx, testbed.Options{
		Full:             true,
		CRDDirs:          []string{filepath.Join("..", "config", "crd", "bases"), gatewayCRDs, kedaCRD},
		ControlPlaneGOGC: controlPlaneGOGC(),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: testbed:", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: stopping the testbed:", err)
		}
	}()

	if k8s, err = adminClient(env); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: client:", err)
		return 1
	}

	if gateway, err = env.StartTraefik(ctx, os.Getenv("KUBEBUILDER_ASSETS")); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: traefik:", err)
		return 1
	}
	// Traefik's per-backend series, and the apps' own
	// http_request_duration_seconds (built-in checks of data plane
	// application).
	if prom, err = env.StartPrometheus(ctx, 500*time.Millisecond, gateway.MetricsAddr, env.Backends.MetricsAddr); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: prometheus:", err)
		return 1
	}

	gitopsFlags, err = startGitOps(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	// Flux's notification-controller receives the agent's events (--events-addr).
	if notificationController, err = env.StartNotificationController(ctx, ".."); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: notification-controller:", err)
		return 1
	}
	// The built-in checks query the testbed's Prometheus, which scrapes
	// the data plane (Traefik).
	agentFlags := append(gitopsFlags, "--events-addr="+notificationController.EventsURL,
		"--metrics-server="+prom.URL, "--data-plane=traefik",
		// Canaries of the chaos test belong to agents of their own.
		"--watch-label-selector=!"+shardLabel)
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		// Benchmarks measure the agent as users run it: at info level, with
		// its defaults unless SERIN_BENCH_AGENT_FLAGS says otherwise
		// (SERIN_BENCH_AGENT_FLAGS="--concurrent=64" make bench).
		agentFlags = append(agentFlags, "--log-level=info")
		agentFlags = append(agentFlags, strings.Fields(os.Getenv("SERIN_BENCH_AGENT_FLAGS"))...)
	}
	agent, err = env.StartAgent(ctx, "..", agentFlags...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: agent:", err)
		return 1
	}
	code := m.Run()
	if code != 0 {
		fmt.Println("e2e: testbed logs kept in", env.Dir)
	}
	stopSecondCluster(code != 0)
	return code
}

// adminClient is an admin client of a testbed's cluster that knows
// serin's and the Gateway API's types.
func adminClient(tb *testbed.Testbed) (client.WithWatch, error) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	_ = gatewayv1.Install(scheme)
	cfg := rest.CopyConfig(tb.Config)
	// The tests' own reads must not be throttled: four tests side by side
	// sample phases and weights every 20 ms.
	cfg.QPS, cfg.Burst = 1000, 2000
	return client.NewWithWatch(cfg, client.Options{Scheme: scheme})
}
