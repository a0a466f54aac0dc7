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
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Flux is Flux's source-controller and kustomize-controller running
// against the testbed as processes: GitRepositories are fetched for real
// and Kustomizations applied for real.
type Flux struct {
	// StorageURL is where source-controller serves artifacts.
	StorageURL string
}

// FluxOptions configure StartFlux.
type FluxOptions struct {
	// AssetsDir holds source-controller, kustomize-controller and their
	// CRDs (NAME-static/crd/bases); defaults to $KUBEBUILDER_ASSETS.
	AssetsDir string
}

// StartFlux installs the CRDs of source-controller and kustomize-controller
// and starts both, watching all namespaces, and waits until they are ready.
func (tb *Testbed) StartFlux(ctx context.Context, opts FluxOptions) (*Flux, error) {
	if opts.AssetsDir == "" {
		opts.AssetsDir = os.Getenv("KUBEBUILDER_ASSETS")
	}
	controllers := []string{"source-controller", "kustomize-controller"}
	var crds []string
	for _, c := range controllers {
		if _, err := os.Stat(filepath.Join(opts.AssetsDir, c)); err != nil {
			return nil, fmt.Errorf("%s not built: run hack/testbed/build.sh %s (make testbed-binaries): %w", c, c, err)
		}
		crds = append(crds, filepath.Join(opts.AssetsDir, c+"-static", "crd", "bases"))
	}
	if _, err := envtest.InstallCRDs(tb.Config, envtest.CRDInstallOptions{Paths: crds, ErrorIfPathMissing: true}); err != nil {
		return nil, fmt.Errorf("failed to install the Flux CRDs: %w", err)
	}

	ports, err := freePorts(5)
	if err != nil {
		return nil, err
	}
	addr := func(i int) string { return "127.0.0.1:" + strconv.Itoa(ports[i]) }
	storage := filepath.Join(tb.Dir, "source-controller-storage")
	if err := os.MkdirAll(storage, 0o755); err != nil {
		return nil, err
	}
	env := []string{"KUBECONFIG=" + tb.Kubeconfig, "RUNTIME_NAMESPACE=flux-system"}
	common := []string{"--watch-all-namespaces", "--log-level=debug", "--log-encoding=console"}
	sc := append([]string{"--metrics-addr=" + addr(0), "--health-addr=" + addr(1),
		"--storage-path=" + storage, "--storage-addr=" + addr(2), "--storage-adv-addr=" + addr(2)}, common...)
	kc := append([]string{"--metrics-addr=" + addr(3), "--health-addr=" + addr(4)}, common...)
	for i, args := range [][]string{sc, kc} {
		if err := tb.startProcess(filepath.Join(opts.AssetsDir, controllers[i]), env, args...); err != nil {
			return nil, err
		}
	}
	for _, health := range []string{addr(1), addr(4)} {
		if err := tb.waitReady(ctx, "http://"+health+"/readyz"); err != nil {
			return nil, err
		}
	}
	return &Flux{StorageURL: "http://" + addr(2)}, nil
}

// waitReady polls a readiness URL for up to a minute.
func (tb *Testbed) waitReady(ctx context.Context, url string) error {
	return tb.poll(ctx, "200 from "+url, func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}
