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

package testbed

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Flagger is Flagger (github.com/fluxcd/flagger) running against the
// testbed as a process, for the side-by-side benchmarks: the same scenarios
// run with serin and with Flagger on the same control plane.
type Flagger struct {
	// Version is the release running; "" for the latest.
	Version string
	// MetricsURL serves Flagger's Prometheus metrics.
	MetricsURL string
	// API counts Flagger's requests to the API server: Flagger does not
	// export client-go's request metrics, so it talks to the API server
	// through this proxy.
	API *APIProxy

	tb  *Testbed
	cmd *exec.Cmd
}

// FlaggerOptions configure StartFlagger.
type FlaggerOptions struct {
	// Version is the Flagger release to run: FLAGGER_VERSION (the latest)
	// or FLAGGER_PREVIOUS_VERSION of hack/testbed/versions.env; the latest
	// when empty.
	Version string
	// Provider is Flagger's -mesh-provider; kubernetes when empty.
	Provider string
	// MetricsServer is Flagger's -metrics-server (its built-in checks'
	// Prometheus); an unreachable address when empty.
	MetricsServer string
	// QPS and Burst are Flagger's client limits (-kubeconfig-qps,
	// -kubeconfig-burst); Flagger's defaults (100, 250) when zero.
	QPS, Burst int
}

// StartFlagger builds Flagger when the cache lacks it (root's
// hack/testbed/build.sh flagger; root is the serin module's directory),
// installs its CRDs and starts it with the kubernetes provider, watching
// all namespaces, at info log level. It stops with the testbed, or earlier
// with Stop.
func (tb *Testbed) StartFlagger(ctx context.Context, root string, opts FlaggerOptions) (*Flagger, error) {
	component := "flagger"
	if opts.Version != "" {
		component = "flagger-" + opts.Version
	}
	build := exec.CommandContext(ctx, filepath.Join(root, "hack", "testbed", "build.sh"), component)
	out, err := build.Output()
	if err != nil {
		return nil, fmt.Errorf("failed to build Flagger (hack/testbed/build.sh %s): %w", component, err)
	}
	dir := strings.TrimSpace(string(out))
	crds := filepath.Join(dir, "flagger-static", "flagger", "crd.yaml")
	if _, err := envtest.InstallCRDs(tb.Config, envtest.CRDInstallOptions{Paths: []string{crds}, ErrorIfPathMissing: true}); err != nil {
		return nil, fmt.Errorf("failed to install Flagger's CRDs: %w", err)
	}
	proxy, err := tb.StartAPIProxy("flagger")
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(1)
	if err != nil {
		proxy.Close()
		return nil, err
	}
	if opts.Provider == "" {
		opts.Provider = "kubernetes"
	}
	if opts.MetricsServer == "" {
		// Flagger only logs when Prometheus is unreachable; the scenarios
		// have no metric checks.
		opts.MetricsServer = "http://127.0.0.1:1"
	}
	args := []string{
		"-kubeconfig=" + proxy.Kubeconfig,
		"-mesh-provider=" + opts.Provider,
		"-metrics-server=" + opts.MetricsServer,
		"-port=" + strconv.Itoa(ports[0]),
		"-log-level=info",
	}
	if opts.QPS > 0 {
		args = append(args, "-kubeconfig-qps="+strconv.Itoa(opts.QPS), "-kubeconfig-burst="+strconv.Itoa(opts.Burst))
	}
	cmd, err := tb.startCmd(filepath.Join(dir, "flagger"), nil, args...)
	if err != nil {
		proxy.Close()
		return nil, err
	}
	f := &Flagger{Version: opts.Version, MetricsURL: "http://127.0.0.1:" + strconv.Itoa(ports[0]) + "/metrics", API: proxy, tb: tb, cmd: cmd}
	if err := tb.waitReady(ctx, "http://127.0.0.1:"+strconv.Itoa(ports[0])+"/healthz"); err != nil {
		f.Stop()
		return nil, fmt.Errorf("flagger: %w", err)
	}
	return f, nil
}

// PID is Flagger's process id, to read its RSS and CPU from /proc.
func (f *Flagger) PID() int { return f.cmd.Process.Pid }

// Stop stops Flagger and its proxy.
func (f *Flagger) Stop() {
	f.tb.stop(f.cmd)
	f.API.Close()
}
