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
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/kube"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// helm upgrade updates the CRDs, which are the chart's templates (Helm
// never upgrades those of a crds/ directory): a chart whose Canary CRD
// lacks the printer columns, upgraded to the tree's, leaves the CRD with
// them, and the Canaries as they were. helm uninstall keeps the CRDs
// (helm.sh/resource-policy: keep), and so the Canaries.
func TestUpgrade_UpdatesTheCRDs(t *testing.T) {
	tb, cluster := startAPIServer(t)
	g := NewWithT(t)
	ctx := context.Background()

	current := loadChart(t)
	cfg := helmInstall(t, g, tb, cluster, olderChart(t, current), testRelease, testNamespace, `eventsAddr: ""`)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(cluster.Get(ctx, client.ObjectKey{Name: "canaries.serin.dev"}, crd)).To(Succeed())
	g.Expect(crd.Spec.Versions[0].AdditionalPrinterColumns).To(BeEmpty())
	g.Expect(crd.Annotations).To(HaveKeyWithValue("helm.sh/resource-policy", "keep"))
	canary := testobj.MakeCanary("podinfo", testNamespace).Obj()
	// The CRD is served once the API server established it and the
	// client's discovery saw it: the install does not wait for that.
	g.Eventually(func() error { return cluster.Create(ctx, canary) }, 10*time.Second, 100*time.Millisecond).Should(Succeed())

	upgrade := action.NewUpgrade(cfg)
	upgrade.Namespace = testNamespace
	upgrade.WaitStrategy = kube.HookOnlyStrategy
	_, err := upgrade.RunWithContext(ctx, testRelease, current, parseValues(t, `eventsAddr: ""`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		g.Expect(cluster.Get(ctx, client.ObjectKey{Name: "canaries.serin.dev"}, crd)).To(Succeed())
		g.Expect(crd.Spec.Versions[0].AdditionalPrinterColumns).NotTo(BeEmpty(), "helm upgrade did not update the CRD")
		g.Expect(crd.Labels).To(HaveKeyWithValue("helm.sh/chart", "serin-"+current.Metadata.Version))
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(cluster.Get(ctx, client.ObjectKeyFromObject(canary), &v1alpha1.Canary{})).To(Succeed())

	uninstall := action.NewUninstall(cfg)
	uninstall.WaitStrategy = kube.HookOnlyStrategy
	_, err = uninstall.Run(testRelease)
	g.Expect(err).NotTo(HaveOccurred())
	for _, name := range []string{"canaries.serin.dev", "canarygroups.serin.dev", "metrictemplates.serin.dev"} {
		g.Expect(cluster.Get(ctx, client.ObjectKey{Name: name}, &apiextensionsv1.CustomResourceDefinition{})).To(Succeed(),
			"helm uninstall deleted %s", name)
	}
	g.Expect(cluster.Get(ctx, client.ObjectKeyFromObject(canary), &v1alpha1.Canary{})).To(Succeed(), "the Canary is gone after helm uninstall")
}

// olderChart is a copy of ch as an older version: 0.0.1, its Canary CRD
// without printer columns.
func olderChart(t *testing.T, ch *chart.Chart) *chart.Chart {
	t.Helper()
	older := *ch
	meta := *ch.Metadata
	meta.Version = "0.0.1"
	older.Metadata = &meta
	older.Files = nil
	for _, f := range ch.Files {
		if strings.HasSuffix(f.Name, "serin.dev_canaries.yaml") {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.Unmarshal(f.Data, crd); err != nil {
				t.Fatal(err)
			}
			for i := range crd.Spec.Versions {
				crd.Spec.Versions[i].AdditionalPrinterColumns = nil
			}
			b, err := yaml.Marshal(crd)
			if err != nil {
				t.Fatal(err)
			}
			f = &common.File{Name: f.Name, ModTime: f.ModTime, Data: b}
		}
		older.Files = append(older.Files, f)
	}
	return &older
}

// An upgrade of the chart while a Canary is in the middle of its analysis
// loses nothing: the older chart is installed and its agent (run with
// the Deployment's arguments as the chart's ServiceAccount) is analysing
// a new revision when `helm upgrade --wait` replaces the CRDs and the
// agent's Deployment; the agent is then replaced as the kubelet replaces
// a pod (the new one started, the old one sent SIGTERM). Watched every
// 50ms throughout, the Canary never goes back: the revision under
// analysis stays the same, the analysis steps only grow, no
// AnalysisRestarted event is recorded, and it is promoted with every
// step taken once.
func TestUpgrade_MidAnalysis(t *testing.T) {
	if testing.Short() {
		t.Skip("upgrades the chart on the local testbed (skipped in -short mode)")
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" || !hasControllerManager() {
		t.Skip("no full testbed: KUBEBUILDER_ASSETS=$(hack/testbed/assets.sh) runs this test (make test sets it)")
	}
	g := NewWithT(t)
	ctx := context.Background()
	// A testbed of its own: the CRDs the other tests install and keep
	// would be another release's.
	tb, err := testbed.Start(ctx, testbed.Options{Full: true, Dir: t.TempDir()})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = tb.Stop() })
	cluster := newClient(t, tb.Config)
	const namespace, release, apps, steps = "serin-upgrade", "serin", "shop", 12

	current := loadChart(t)
	cfg := installChartOf(t, g, tb, cluster, olderChart(t, current), release, namespace, `eventsAddr: ""`)
	old := serviceAccountAgent(t, g, tb, cluster, namespace, "serin-agent")

	var calls atomic.Int32
	smoke := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls.Add(1) }))
	defer smoke.Close()
	g.Expect(cluster.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: apps}})).To(Succeed())
	canaryInitializesWith(g, cluster, apps, func(c *v1alpha1.Canary) {
		c.Spec.Analysis = &v1alpha1.CanaryAnalysis{Interval: &metav1.Duration{Duration: time.Second}, Iterations: steps, Threshold: 2,
			Webhooks: []v1alpha1.CanaryWebhook{{Name: "smoke", Type: v1alpha1.RolloutHook, URL: smoke.URL}}}
	})
	canary := &v1alpha1.Canary{}
	key := client.ObjectKey{Namespace: apps, Name: "podinfo"}
	// The release, as a user's apply: the agent writes the Deployment
	// too (it scales the target once initialized), so a conflict is
	// retried on the object read again.
	g.Eventually(func() error {
		app := &appsv1.Deployment{}
		if err := cluster.Get(ctx, key, app); err != nil {
			return err
		}
		app.Spec.Template.Spec.Containers[0].Image = "podinfo:v2"
		return cluster.Update(ctx, app)
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())

	// The watch: what the Canary shows, every 50ms, until it is done.
	type seen struct {
		phase    v1alpha1.CanaryPhase
		steps    int
		revision string
	}
	var history []seen
	watchErr := make(chan error, 1)
	stopWatch := make(chan struct{})
	go func() {
		defer close(watchErr)
		for {
			select {
			case <-stopWatch:
				return
			case <-time.After(50 * time.Millisecond):
			}
			c := &v1alpha1.Canary{}
			if err := cluster.Get(ctx, key, c); err != nil {
				watchErr <- err
				return
			}
			now := seen{c.Status.Phase, c.Status.Iterations, c.Status.LastAppliedSpec}
			if len(history) == 0 || history[len(history)-1] != now {
				history = append(history, now)
			}
		}
	}()

	g.Eventually(func(g Gomega) {
		g.Expect(cluster.Get(ctx, key, canary)).To(Succeed())
		g.Expect(canary.Status.Phase).To(Equal(v1alpha1.PhaseProgressing))
		g.Expect(canary.Status.Iterations).To(BeNumerically(">=", 3))
	}, time.Minute, 50*time.Millisecond).Should(Succeed())
	analysed := canary.Status.LastAppliedSpec
	before := canary.Status.Iterations

	upgrade := action.NewUpgrade(cfg)
	upgrade.Namespace = namespace
	upgrade.WaitStrategy = kube.StatusWatcherStrategy
	upgrade.Timeout = 2 * time.Minute
	_, err = upgrade.RunWithContext(ctx, release, current, parseValues(t, `eventsAddr: ""`))
	g.Expect(err).NotTo(HaveOccurred())
	crd := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(cluster.Get(ctx, client.ObjectKey{Name: "canaries.serin.dev"}, crd)).To(Succeed())
	g.Expect(crd.Labels).To(HaveKeyWithValue("helm.sh/chart", "serin-"+current.Metadata.Version), "helm upgrade did not update the CRD")
	g.Expect(crd.Spec.Versions[0].AdditionalPrinterColumns).NotTo(BeEmpty())

	// The rolling update of the agent's pod: the new one starts (and
	// waits for the Lease), the old one stops.
	g.Expect(old.Terminate(30 * time.Second)).To(Succeed())
	serviceAccountAgent(t, g, tb, cluster, namespace, "serin-agent")

	g.Eventually(func(g Gomega) {
		g.Expect(cluster.Get(ctx, key, canary)).To(Succeed())
		g.Expect(canary.Status.Phase).To(Equal(v1alpha1.PhaseSucceeded))
	}, 2*time.Minute, 100*time.Millisecond).Should(Succeed())
	close(stopWatch)
	g.Expect(<-watchErr).NotTo(HaveOccurred())

	t.Logf("steps %d before the upgrade; the Canary showed %d states: %v; webhook calls %d", before, len(history), history, calls.Load())
	last := seen{}
	for _, s := range history {
		if s.revision == analysed {
			g.Expect(s.steps).To(BeNumerically(">=", last.steps), "the analysis went back from step %d to %d: %v", last.steps, s.steps, history)
			last = s
		} else if s.phase == v1alpha1.PhaseProgressing {
			t.Fatalf("the Canary analysed another revision (%s, not %s): %v", s.revision, analysed, history)
		}
	}
	g.Expect(canary.Status.LastAppliedSpec).To(Equal(analysed))
	events := &corev1.EventList{}
	g.Expect(cluster.List(ctx, events, client.InNamespace(apps))).To(Succeed())
	for _, e := range events.Items {
		g.Expect(e.Reason).NotTo(Equal(v1alpha1.AnalysisRestartedReason), "the upgrade restarted the analysis: %s", e.Message)
	}
	// Every step but the first (which calls the pre-rollout hooks) called
	// the rollout webhook once: a step lost would call it less, a
	// restarted analysis more.
	g.Expect(int(calls.Load())).To(Equal(steps-1), "rollout webhook calls for %d steps", steps)
	primary := &appsv1.Deployment{}
	g.Expect(cluster.Get(ctx, client.ObjectKey{Namespace: apps, Name: "podinfo-primary"}, primary)).To(Succeed())
	g.Expect(primary.Spec.Template.Spec.Containers[0].Image).To(Equal("podinfo:v2"))
}
