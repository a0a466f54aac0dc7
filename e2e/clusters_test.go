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
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/internal/testing/testbed"
)

// cluster is a Kubernetes cluster of the tests as a stage sees it: its API
// server, the data plane its users go through, and the Gitea user whose
// token its Flux and serin hold.
type cluster struct {
	// name is its serin's --cluster-name ("" for the testbed's own).
	name string
	k8s  client.Client
	// gateway is its data plane (Traefik).
	gateway *testbed.Traefik
	// git is its Gitea user.
	git *testbed.Gitea
	// env and agent are the second cluster's (nil for the testbed's own,
	// which TestMain starts and stops).
	env   *testbed.Testbed
	agent *testbed.Agent
}

// testbedCluster is the testbed every test runs on.
func testbedCluster() *cluster {
	return &cluster{k8s: k8s, gateway: gateway, git: gitea}
}

// productionClusterName is the second cluster's --cluster-name.
const productionClusterName = "prod-eu"

// secondCluster is a second control plane, started by the first test that
// needs it (the others do not pay for it) and stopped after the last.
var secondCluster struct {
	once sync.Once
	c    *cluster
	err  error
	// stopped is set when the shared tests start: the second cluster is
	// for tests that run alone, and its processes would only take the
	// cores from the shared ones.
	stopped atomic.Bool
}

// needSecondCluster starts the second cluster once for the package: its
// own etcd, kube-apiserver, controller-manager, scheduler, kwok and pod
// backends, its own Traefik and Prometheus, its own source-, kustomize- and
// notification-controller, and its own serin agent, which authenticates to
// Gitea as a Gitea user of its own. It shares the Gitea server with the
// testbed and nothing else.
func needSecondCluster(t *testing.T) *cluster {
	t.Helper()
	secondCluster.once.Do(func() {
		start := time.Now()
		secondCluster.c, secondCluster.err = startSecondCluster(context.Background())
		t.Logf("second cluster ready in %s", time.Since(start).Round(time.Millisecond))
	})
	if secondCluster.err != nil {
		t.Fatalf("second cluster: %v", secondCluster.err)
	}
	if secondCluster.stopped.Load() {
		t.Fatal("the second cluster is stopped once the shared tests start: a test that uses it runs alone(t, why)")
	}
	return secondCluster.c
}

func startSecondCluster(ctx context.Context) (_ *cluster, err error) {
	gatewayCRDs, err := testbed.GatewayAPICRDs(ctx, "..")
	if err != nil {
		return nil, err
	}
	c := &cluster{name: productionClusterName}
	c.env, err = testbed.Start(ctx, testbed.Options{
		Full:             true,
		CRDDirs:          []string{filepath.Join("..", "config", "crd", "bases"), gatewayCRDs},
		ControlPlaneGOGC: controlPlaneGOGC(),
	})
	if err != nil {
		return nil, fmt.Errorf("testbed: %w", err)
	}
	defer func() {
		if err != nil {
			_ = c.env.Stop()
		}
	}()
	if c.k8s, err = adminClient(c.env); err != nil {
		return nil, err
	}
	if c.gateway, err = c.env.StartTraefik(ctx, os.Getenv("KUBEBUILDER_ASSETS")); err != nil {
		return nil, fmt.Errorf("traefik: %w", err)
	}
	prom, err := c.env.StartPrometheus(ctx, 500*time.Millisecond, c.gateway.MetricsAddr, c.env.Backends.MetricsAddr)
	if err != nil {
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	if _, err := c.env.StartFlux(ctx, testbed.FluxOptions{}); err != nil {
		return nil, fmt.Errorf("flux: %w", err)
	}
	nc, err := c.env.StartNotificationController(ctx, "..")
	if err != nil {
		return nil, fmt.Errorf("notification-controller: %w", err)
	}
	if c.git, err = gitea.CreateUser(ctx, productionClusterName); err != nil {
		return nil, fmt.Errorf("gitea user: %w", err)
	}
	// Its serin holds no Git token of its own: as the testbed's, it uses
	// the secret of the GitRepository it reverts or promotes, here the
	// second cluster's Gitea user's.
	c.agent, err = c.env.StartAgentWith(ctx, "..", testbed.AgentOptions{
		Name: "serin-agent-" + productionClusterName,
		Flags: append([]string{"--events-addr=" + nc.EventsURL, "--metrics-server=" + prom.URL,
			"--data-plane=traefik", "--cluster-name=" + productionClusterName}, gitopsFlags...),
	})
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	return c, nil
}

// stopSecondCluster stops the second cluster if a test started it; kept
// says where its logs are kept (a test failed).
func stopSecondCluster(kept bool) {
	if secondCluster.c == nil {
		return
	}
	if kept {
		fmt.Println("e2e: second cluster's logs kept in", secondCluster.c.env.Dir)
	}
	if secondCluster.stopped.Swap(true) {
		return
	}
	if err := secondCluster.c.env.Stop(); err != nil {
		fmt.Println("e2e: stopping the second cluster:", err)
	}
}
