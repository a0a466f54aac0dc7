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
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/kube"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/serin-dev/serin/api/v1alpha1"
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
	g.Expect(cluster.Create(ctx, canary)).To(Succeed())

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
