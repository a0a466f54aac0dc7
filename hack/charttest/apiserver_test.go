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

package charttest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"helm.sh/helm/v4/pkg/action"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/kube"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// startAPIServer starts an API server and etcd of the test's own (envtest,
// no controller, no CRD), stopped when the test ends, or skips the test
// when it cannot run here. Helm installs on it; nothing runs the pods.
func startAPIServer(t *testing.T) (*testbed.Testbed, client.Client) {
	t.Helper()
	if testing.Short() {
		t.Skip("installs the chart on an API server (skipped in -short mode)")
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("no testbed binaries: KUBEBUILDER_ASSETS=$(hack/testbed/assets.sh) runs this test (make test sets it)")
	}
	tb, err := testbed.Start(context.Background(), testbed.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("API server: %v", err)
	}
	t.Cleanup(func() { _ = tb.Stop() })
	return tb, newClient(t, tb.Config)
}

// newClient is a client of serin's and Kubernetes' kinds and CRDs.
func newClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = apiextensionsv1.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// as is a client that impersonates user, as the API server's RBAC judges
// a person with that name and no group but system:authenticated.
func as(t *testing.T, tb *testbed.Testbed, user string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(tb.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return newClient(t, cfg)
}

// helmInstall installs ch as `helm install` without --wait does (no pod
// runs here), into a new namespace.
func helmInstall(t *testing.T, g Gomega, tb *testbed.Testbed, cluster client.Client, ch *chart.Chart, release, namespace, values string) *action.Configuration {
	t.Helper()
	ctx := context.Background()
	g.Expect(cluster.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})).To(Succeed())
	cfg := helmConfig(t, tb, namespace)
	install := action.NewInstall(cfg)
	install.ReleaseName = release
	install.Namespace = namespace
	install.WaitStrategy = kube.HookOnlyStrategy
	_, err := install.RunWithContext(ctx, ch, parseValues(t, values))
	g.Expect(err).NotTo(HaveOccurred())
	return cfg
}

// hasControllerManager tells whether the testbed's binaries include
// kube-controller-manager (hack/testbed/assets.sh gathers it; a bare
// envtest directory has only etcd and kube-apiserver).
func hasControllerManager() bool {
	_, err := os.Stat(filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kube-controller-manager"))
	return err == nil
}
