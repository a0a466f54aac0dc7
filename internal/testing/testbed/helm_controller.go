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
	"os"
	"path/filepath"
	"strconv"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// HelmControllerOptions configure StartHelmController.
type HelmControllerOptions struct {
	// AssetsDir holds helm-controller and its CRDs
	// (helm-controller-static/crd/bases); defaults to $KUBEBUILDER_ASSETS.
	AssetsDir string
}

// StartHelmController installs the HelmRelease CRD and starts Flux's
// helm-controller, watching all namespaces, and waits until it is ready.
// It renders the charts source-controller builds (HelmChart artifacts from
// a GitRepository or a HelmRepository), so StartFlux must have run. Tests
// that need no HelmRelease do not start it.
func (tb *Testbed) StartHelmController(ctx context.Context, opts HelmControllerOptions) error {
	if opts.AssetsDir == "" {
		opts.AssetsDir = os.Getenv("KUBEBUILDER_ASSETS")
	}
	bin := filepath.Join(opts.AssetsDir, "helm-controller")
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("helm-controller not built: run hack/testbed/build.sh helm-controller (make testbed-binaries): %w", err)
	}
	crds := filepath.Join(opts.AssetsDir, "helm-controller-static", "crd", "bases")
	if _, err := envtest.InstallCRDs(tb.Config, envtest.CRDInstallOptions{Paths: []string{crds}, ErrorIfPathMissing: true}); err != nil {
		return fmt.Errorf("failed to install the HelmRelease CRD: %w", err)
	}
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	metrics, health := "127.0.0.1:"+strconv.Itoa(ports[0]), "127.0.0.1:"+strconv.Itoa(ports[1])
	env := []string{"KUBECONFIG=" + tb.Kubeconfig, "RUNTIME_NAMESPACE=flux-system"}
	if err := tb.startProcess(bin, env, "--metrics-addr="+metrics, "--health-addr="+health,
		"--watch-all-namespaces", "--log-level=debug", "--log-encoding=console"); err != nil {
		return err
	}
	return tb.waitReady(ctx, "http://"+health+"/readyz")
}
