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

package providers_test

import (
	"context"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/serin-dev/serin/analysis"
	"github.com/serin-dev/serin/analysis/providers"
	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/tenancy"
)

// fakeReader is a fake client holding objs.
func fakeReader(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
}

// A MetricTemplate's Secret is read on the Canary's behalf, through the
// tenancy's reader, as the other providers' are; the query is rendered
// with the Canary's variables.
func TestStackdriver_Check(t *testing.T) {
	address, key := providers.StartFakeGoogle(t, `[1795435200, "0.25"]`)
	tpl := &v1alpha1.MetricTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "latency"}}
	tpl.Spec.Provider = v1alpha1.MetricProvider{Type: v1alpha1.StackdriverProvider, Address: address,
		SecretRef: &meta.LocalObjectReference{Name: "gcp"}}
	tpl.Spec.Query = `histogram_quantile(0.99, sum by (le) (rate(istio_io:service_server_response_latencies_bucket{` +
		`monitored_resource="k8s_container",destination_service_namespace="{{ namespace }}",destination_service_name="{{ service }}-canary"}[{{ interval }}])))`
	cached := fakeReader(t, tpl)
	secrets := fakeReader(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "gcp"},
		Data: map[string][]byte{"project": []byte(providers.GoogleTestProject), "serviceAccountKey": []byte(key)}})
	metric := v1alpha1.CanaryMetric{Name: "latency", TemplateRef: &v1alpha1.TemplateReference{Name: "latency"},
		Interval: &metav1.Duration{Duration: time.Minute}}
	c := &v1alpha1.Canary{ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: "apps"}}
	c.Spec.TargetRef = v1alpha1.TargetReference{Kind: v1alpha1.DeploymentKind, Name: "podinfo"}
	c.Spec.Analysis = &v1alpha1.CanaryAnalysis{Interval: &metav1.Duration{Duration: 30 * time.Second}}
	c.Status.LastAppliedSpec = "abc123"
	c.Status.Phase = v1alpha1.PhaseProgressing
	c.Spec.Analysis.Metrics = []v1alpha1.CanaryMetric{metric}
	for name, m := range map[string]*analysis.Metrics{
		"through the tenancy":    {Reader: cached, Tenancy: tenancy.Static(cached, secrets, tenancy.Options{})},
		"not the cache's Secret": {Reader: cached},
	} {
		t.Run(name, func(t *testing.T) {
			res := m.Check(context.Background(), c, metric)
			want := "metric latency: 0.25"
			if m.Tenancy == nil {
				want = `metric latency: failed to get the provider secret apps/gcp: secrets "gcp" not found`
			}
			if res.Message != want {
				t.Errorf("Check = %q, want %q", res.Message, want)
			}
		})
	}
}
