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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// A Service target: the revision is the Service's selector. serin mirrors it
// into podinfo-canary, analyses it through the HTTPRoute weights, copies it
// to podinfo-primary, and never touches the Deployments.
func TestEngine_ServiceTargetPromotes(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	for _, v := range []string{"v1", "v2"} {
		d := testobj.MakeDeployment("podinfo-"+v, ns).Replicas(2).Image("podinfo:" + v).Obj()
		d.Spec.Selector.MatchLabels = map[string]string{"app": "podinfo", "version": v}
		d.Spec.Template.Labels = map[string]string{"app": "podinfo", "version": v}
		g.Expect(k8s.Create(ctx, d)).To(Succeed())
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: ns},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "podinfo", "version": "v1"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 9898, TargetPort: intstr.FromInt32(9898)}},
		},
	}
	g.Expect(k8s.Create(ctx, svc)).To(Succeed())

	c := testobj.MakeCanary("podinfo", ns).Target("v1", "Service", "podinfo").
		Routing(gatewayRouting(ns)).
		Analysis(v1alpha1.CanaryAnalysis{
			Interval: &metav1.Duration{Duration: interval}, Threshold: 2, StepWeights: []int{25, 50},
			Metrics: []v1alpha1.CanaryMetric{errorRateTemplate(t, ns)},
		}).Obj()
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseInitialized, 30*time.Second)
	selectorOf := func(name string) string {
		s := &corev1.Service{}
		if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, s); err != nil {
			return "none"
		}
		return s.Spec.Selector["version"]
	}
	g.Expect(selectorOf("podinfo-primary")).To(Equal("v1"))
	g.Expect(selectorOf("podinfo-canary")).To(Equal("v1"))
	routes := sample(t, routeWeights(ns, "podinfo"))
	users := startUsers(t, appHost(ns))
	g.Eventually(func() string { return lastVersion(users) }, 10*time.Second).Should(Equal("v1"), "the app answers through the Gateway")
	start := time.Now()

	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
	svc.Spec.Selector["version"] = "v2"
	g.Expect(k8s.Update(ctx, svc)).To(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 60*time.Second)

	g.Expect(selectorOf("podinfo-primary")).To(Equal("v2"))
	g.Expect(selectorOf("podinfo-canary")).To(Equal("v2"))
	g.Eventually(routes.seen).Should(Equal([]string{"100/0", "75/25", "50/50", "100/0"}))
	g.Eventually(func() string { return lastVersion(users) }, 5*time.Second).Should(Equal("v2"), "the users are served by v2")
	seen := users.Counts(start, time.Time{})
	t.Logf("users during the rollout: %d requests, by version %v, by code %v", seen.Total, seen.ByVersion, seen.ByCode)
	g.Expect(seen.Errors).To(BeZero(), "no user saw an error")
	g.Expect(seen.ByVersion).To(HaveKey("v2"))
	for _, v := range []string{"v1", "v2"} {
		d := &appsv1.Deployment{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo-" + v}, d)).To(Succeed())
		g.Expect(*d.Spec.Replicas).To(Equal(int32(2)), "serin never touches the workloads of a Service target")
	}
}
