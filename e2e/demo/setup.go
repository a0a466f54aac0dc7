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

package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/serin-dev/serin/e2e/demo/scenario"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// demoComponents are the testbed components the demo's acts start
// (helm-controller and Flagger are not among them), and how long each took
// to build cold on 2 cores, module downloads included, rounded up
// (CONTRIBUTING.md, timings).
var demoComponents = []struct {
	name string
	cold time.Duration
}{
	{"etcd", 1 * time.Minute}, {"kube-apiserver", 7 * time.Minute}, {"kube-controller-manager", 3 * time.Minute},
	{"kube-scheduler", 1 * time.Minute}, {"kwok", 3 * time.Minute}, {"notification-controller", 4 * time.Minute},
	{"source-controller", 4 * time.Minute}, {"kustomize-controller", 3 * time.Minute}, {"gitea", 4 * time.Minute},
	{"traefik", 8 * time.Minute},
}

// testbedBinaries returns the directory of the testbed binaries: the one
// $KUBEBUILDER_ASSETS names when it holds them all, or else the output of
// hack/testbed/assets.sh for the demo's components only, which builds the
// missing ones (cached in ~/.cache/serin-testbed after). Before a build it
// says how many components it builds and about how long that takes here.
func testbedBinaries(ctx context.Context, screen *scenario.Screen) (string, error) {
	var needed []string
	for _, c := range demoComponents {
		needed = append(needed, c.name)
	}
	static := []string{"source-controller-static", "kustomize-controller-static", "gitea-static"}
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" && hasAll(dir, append(needed, static...)) {
		return dir, nil
	}
	if missing, err := missingComponents(ctx, needed); err == nil && len(missing) > 0 {
		screen.Step("%s", buildPlan(missing, runtime.NumCPU()))
	} else {
		screen.Step("checking the testbed binaries (hack/testbed/assets.sh)")
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, "hack/testbed/assets.sh", needed...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", err
	}
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			screen.Line("build", "%s", lines.Text())
		}
	}()
	err = withHeartbeat(screen, "building", func() error {
		<-logged
		return cmd.Wait()
	})
	if err != nil {
		return "", fmt.Errorf("hack/testbed/assets.sh: %w", err)
	}
	dir := strings.TrimSpace(out.String())
	screen.Done("%d testbed binaries ready in %s (%s)", len(needed), dir, time.Since(start).Round(time.Second))
	return dir, nil
}

// missingComponents asks hack/testbed/build.sh which of components are not
// cached yet, without building them.
func missingComponents(ctx context.Context, components []string) ([]string, error) {
	cmd := exec.CommandContext(ctx, "hack/testbed/build.sh", components...)
	cmd.Env = append(os.Environ(), "SERIN_TESTBED_DRY_RUN=1")
	b, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, line := range strings.Split(string(b), "\n") {
		if name, ok := strings.CutPrefix(line, "missing "); ok {
			missing = append(missing, strings.TrimSpace(name))
		}
	}
	return missing, nil
}

// buildPlan says how many of the demo's components are built and about
// how long that takes on cores (builds run one at a time, each on every
// core; the estimates are for 2 cores).
func buildPlan(missing []string, cores int) string {
	var total time.Duration
	for _, c := range demoComponents {
		if slices.Contains(missing, c.name) {
			total += c.cold
		}
	}
	total = total * 2 / time.Duration(max(cores, 1))
	return fmt.Sprintf("building %d of the demo's %d testbed components, once (%s): about %d minutes on this machine's %d cores, cached in ~/.cache/serin-testbed after",
		len(missing), len(demoComponents), strings.Join(missing, ", "), int(total.Round(time.Minute).Minutes()), cores)
}

func hasAll(dir string, names []string) bool {
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			return false
		}
	}
	return true
}

// withHeartbeat runs f and says every 15 seconds that it is still running,
// so that a long build or start is never a silent minute.
func withHeartbeat(screen *scenario.Screen, what string, f func() error) error {
	done := make(chan struct{})
	defer close(done)
	start := time.Now()
	go func() {
		tick := time.NewTicker(15 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				screen.Note("… still %s (%s)", what, time.Since(start).Round(time.Second))
			}
		}
	}()
	return f()
}

// bed is the running testbed of the demo.
type bed struct {
	env      scenario.Env
	tb       *testbed.Testbed
	keepLogs bool
}

// startTestbed starts every component the scenario needs, one line each.
// On error the returned bed (if any) holds what was started.
func startTestbed(ctx context.Context, screen *scenario.Screen, assets string) (*bed, error) {
	screen.Step("starting the testbed on 127.0.0.1")
	gatewayCRDs, err := testbed.GatewayAPICRDs(ctx, ".")
	if err != nil {
		return nil, err
	}
	start := time.Now()
	tb, err := testbed.Start(ctx, testbed.Options{Full: true, AssetsDir: assets,
		CRDDirs: []string{"config/crd/bases", gatewayCRDs}})
	if err != nil {
		return nil, err
	}
	b := &bed{tb: tb, env: scenario.Env{Config: tb.Config, Kubeconfig: tb.Kubeconfig, Screen: screen}}
	screen.Note("✔ control plane: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, a kwok node (%s)", since(start))
	for _, c := range b.components(assets) {
		start := time.Now()
		if err := withHeartbeat(screen, c.doing, func() error { return c.start(ctx) }); err != nil {
			b.keepLogs = true
			return b, fmt.Errorf("%s: %w", c.name, err)
		}
		screen.Note("✔ %s (%s)", c.name, since(start))
	}
	screen.Done("testbed up in %s; kubeconfig %s", since(start), tb.Kubeconfig)
	return b, nil
}

// component is a part of the testbed started after the control plane.
type component struct {
	name, doing string
	start       func(ctx context.Context) error
}

func (b *bed) components(assets string) []component {
	var prom *testbed.Prometheus
	var traefik *testbed.Traefik
	var nc *testbed.NotificationController
	return []component{
		{"Traefik, the Gateway API data plane (Gateway gateways/public; every pod a real HTTP server on loopback)", "starting Traefik", func(ctx context.Context) (err error) {
			traefik, err = b.tb.StartTraefik(ctx, assets)
			if err == nil {
				b.env.GatewayURL = traefik.URL
			}
			return err
		}},
		{"Prometheus, scraping Traefik's per-backend request metrics every 500ms", "starting Prometheus", func(ctx context.Context) (err error) {
			prom, err = b.tb.StartPrometheus(ctx, 500*time.Millisecond, traefik.MetricsAddr)
			return err
		}},
		{"Gitea, the Git host with pull requests", "starting Gitea", func(ctx context.Context) (err error) {
			b.env.Gitea, err = b.tb.StartGitea(ctx, testbed.GiteaOptions{AssetsDir: assets})
			return err
		}},
		{"Flux source-controller and kustomize-controller", "starting Flux", func(ctx context.Context) error {
			_, err := b.tb.StartFlux(ctx, testbed.FluxOptions{AssetsDir: assets})
			return err
		}},
		{"Flux notification-controller", "starting notification-controller", func(ctx context.Context) (err error) {
			nc, err = b.tb.StartNotificationController(ctx, ".")
			return err
		}},
		{"serin agent, built from this tree (built-in checks on Prometheus, GitOps revert to Gitea, events to notification-controller)",
			"building the serin agent (the first time takes a few minutes)", func(ctx context.Context) error {
				_, err := b.tb.StartAgent(ctx, ".", "--metrics-server="+prom.URL, "--data-plane=traefik",
					"--git-provider=gitea", "--git-author-name=serin",
					"--git-author-email=serin@demo.serin.dev", "--events-addr="+nc.EventsURL)
				return err
			}},
	}
}

// stop tears everything down; the logs are removed too unless something
// failed, in which case the directory is kept and named.
func (b *bed) stop(screen *scenario.Screen) {
	screen.Step("tearing everything down")
	if err := b.tb.Stop(); err != nil {
		screen.Fail("stopping the testbed: %v", err)
	}
	if b.keepLogs {
		screen.Done("every process stopped; logs kept in %s", b.tb.Dir)
		return
	}
	_ = os.RemoveAll(b.tb.Dir)
	screen.Done("every process stopped, %s removed", b.tb.Dir)
}

func since(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }
