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
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/internal/workload"
)

// The agent caches the objects of its Canaries, not the cluster's: its
// Deployment and Service informers hold the objects carrying its watch
// label, and the unrelated workloads of the cluster stay out. A Canary
// applied before its target finds it when it is created (no watch sees an
// unlabelled object: the Canary looks again), and a label an operator
// removes from the target or from the primary is put back, with nothing
// recreated, while a rollout still goes through.
func TestCache_HoldsTheCanariesObjectsOnly(t *testing.T) {
	alone(t, "compares the shared agent's cache gauges with every labelled object of the cluster")
	g := NewWithT(t)
	ctx := context.Background()
	label := workload.WatchLabel("!" + shardLabel)

	unrelated := newNamespace(t)
	for i := range 20 {
		name := fmt.Sprintf("unrelated-%d", i)
		g.Expect(k8s.Create(ctx, testobj.MakeDeployment(name, unrelated).Replicas(0).Obj())).To(Succeed())
		g.Expect(k8s.Create(ctx, testobj.MakeService(name, unrelated).Obj())).To(Succeed())
	}

	// The Canary first, as a Kustomization may apply it: its target does
	// not exist yet.
	ns := newNamespace(t)
	c := testobj.MakeCanary("podinfo", ns).Analysis(v1alpha1.CanaryAnalysis{
		Interval: &metav1.Duration{Duration: time.Second}, Threshold: 1, Iterations: 2,
	}).Obj()
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(conditions.GetReason(c, meta.StalledCondition)).To(Equal(v1alpha1.TargetNotFoundReason))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	created := time.Now()
	g.Expect(k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "podinfo-config", Namespace: ns},
		Data: map[string]string{"GREETING": "v1"}})).To(Succeed())
	g.Expect(k8s.Create(ctx, testobj.MakeDeployment("podinfo", ns).Replicas(2).EnvFromConfigMap("podinfo-config").Obj())).To(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseInitialized, 30*time.Second)
	t.Logf("initialized %v after its target was created", time.Since(created).Round(100*time.Millisecond))

	target := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, target)).To(Succeed())
	g.Expect(target.Labels).To(HaveKeyWithValue(label, workload.WatchLabelValue), "the target is labelled for the agent's cache")
	for _, name := range []string{"podinfo-primary"} {
		d := &appsv1.Deployment{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, d)).To(Succeed())
		g.Expect(d.Labels).To(HaveKeyWithValue(label, workload.WatchLabelValue), "%s is labelled", name)
	}
	for _, name := range []string{"podinfo-config", "podinfo-config-primary"} {
		cm := &corev1.ConfigMap{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, cm)).To(Succeed())
		g.Expect(cm.Labels).To(HaveKeyWithValue(label, workload.WatchLabelValue), "ConfigMap %s is labelled", name)
	}
	for _, name := range []string{"podinfo", "podinfo-primary", "podinfo-canary"} {
		svc := &corev1.Service{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, svc)).To(Succeed())
		g.Expect(svc.Labels).To(HaveKeyWithValue(label, workload.WatchLabelValue), "Service %s is labelled", name)
	}

	// The informers hold exactly the labelled objects, and none of the
	// unrelated ones.
	for _, kind := range []struct {
		name     string
		labelled client.ObjectList
		count    func(client.ObjectList) int
	}{
		{"Deployment", &appsv1.DeploymentList{}, func(l client.ObjectList) int { return len(l.(*appsv1.DeploymentList).Items) }},
		{"Service", &corev1.ServiceList{}, func(l client.ObjectList) int { return len(l.(*corev1.ServiceList).Items) }},
	} {
		g.Eventually(func(g Gomega) {
			g.Expect(k8s.List(ctx, kind.labelled, client.HasLabels{label})).To(Succeed())
			metrics, err := scrape(agent.MetricsURL)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(metrics[`serin_cache_objects{kind="`+kind.name+`"}`]).To(BeEquivalentTo(kind.count(kind.labelled)))
		}, 10*time.Second, 200*time.Millisecond).Should(Succeed(), "the agent caches the %ss labelled %s", kind.name, label)
	}
	var others appsv1.DeploymentList
	g.Expect(k8s.List(ctx, &others, client.InNamespace(unrelated))).To(Succeed())
	for _, d := range others.Items {
		g.Expect(d.Labels).NotTo(HaveKey(label), "unrelated Deployment %s", d.Name)
	}

	// An operator (or kubectl replace) drops the label from the target and
	// from the primary: both are labelled again, neither recreated.
	primary := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo-primary"}, primary)).To(Succeed())
	for _, d := range []*appsv1.Deployment{target, primary} {
		patch := client.MergeFrom(d.DeepCopy())
		delete(d.Labels, label)
		g.Expect(k8s.Patch(ctx, d, patch)).To(Succeed())
	}
	for _, d := range []*appsv1.Deployment{target, primary} {
		uid := d.UID
		g.Eventually(func(g Gomega) {
			got := &appsv1.Deployment{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(d), got)).To(Succeed())
			g.Expect(got.UID).To(Equal(uid))
			g.Expect(got.Labels).To(HaveKeyWithValue(label, workload.WatchLabelValue))
		}, 20*time.Second, 100*time.Millisecond).Should(Succeed(), "%s is labelled again", d.Name)
	}

	// And the Canary still rolls a revision out.
	setImage(g, ns, "podinfo", "podinfo:v2")
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 60*time.Second)
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(primary), primary)).To(Succeed())
	g.Expect(primary.Spec.Template.Spec.Containers[0].Image).To(Equal("podinfo:v2"))
}
