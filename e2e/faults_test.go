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

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// An operator deletes podinfo-primary of an initialized Canary: serin
// re-creates it with the promoted revision and its replicas, says Ready
// False meanwhile, and the users get answers again.
func TestFaults_DeletedPrimaryIsRecreated(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := gatewayCanary(t, g, ns)
	ready := sample(t, func() string {
		cur := &v1alpha1.Canary{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), cur); err != nil {
			return ""
		}
		return conditions.GetReason(cur, meta.ReadyCondition)
	})

	primary := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "podinfo-primary"}}
	g.Expect(k8s.Delete(ctx, primary, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
	deleted := time.Now()

	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(primary), primary)).To(Succeed())
		g.Expect(primary.CreationTimestamp.After(deleted.Add(-time.Second))).To(BeTrue(), "a new primary")
		g.Expect(primary.Status.ReadyReplicas).To(Equal(int32(2)))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(primary.Spec.Template.Spec.Containers[0].Image).To(Equal("podinfo:v1"))
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(conditions.IsReady(c)).To(BeTrue())
	}, 10*time.Second).Should(Succeed())
	g.Eventually(ready.seen).Should(ContainElement(v1alpha1.PrimaryUnavailableReason), "Ready was False while the primary served nothing")
	g.Eventually(func() string { return lastVersion(usersIn(ns)) }, 10*time.Second).Should(Equal("v1"), "the users get answers again")
	t.Logf("primary re-created and ready %s after the deletion; Ready reasons %v", time.Since(deleted).Round(100*time.Millisecond), ready.seen())
}

// An operator deletes the target mid-rollout, with the canary at weight
// 20: the HTTPRoute sends everything back to the primary at once, and the
// Canary stalls saying the target is missing.
func TestFaults_TargetDeletedMidRollout(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := gatewayCanary(t, g, ns)
	setImage(g, ns, "podinfo", "podinfo:v2")
	g.Eventually(routeWeights(ns, "podinfo"), 60*time.Second, 50*time.Millisecond).Should(Equal("80/20"))

	target := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "podinfo"}}
	g.Expect(k8s.Delete(ctx, target)).To(Succeed())
	deleted := time.Now()
	g.Eventually(routeWeights(ns, "podinfo"), 10*time.Second, 20*time.Millisecond).Should(Equal("100/0"))
	shielded := time.Since(deleted)
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(conditions.IsStalled(c)).To(BeTrue())
		g.Expect(conditions.GetReason(c, meta.StalledCondition)).To(Equal(v1alpha1.TargetNotFoundReason))
	}, 10*time.Second).Should(Succeed())
	g.Eventually(func() string { return lastVersion(usersIn(ns)) }, 5*time.Second).Should(Equal("v1"))
	t.Logf("route back on the primary %s after the target was deleted", shielded.Round(10*time.Millisecond))
}

// spec.autoscalerRef: serin keeps podinfo-primary, an HPA copied from the
// target's and scaling the primary; a change in Git reaches it, and so
// does a deletion by an operator.
func TestFaults_AutoscalerRefKeepsPrimaryHPA(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "podinfo"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "podinfo"},
			MinReplicas:    ptr.To(int32(2)), MaxReplicas: 4,
		},
	}
	g.Expect(k8s.Create(ctx, hpa)).To(Succeed())
	gatewayCanary(t, g, ns, func(c *v1alpha1.Canary) {
		c.Spec.AutoscalerRef = &v1alpha1.AutoscalerReference{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Name: "podinfo"}
	})
	primaryHPA := &autoscalingv2.HorizontalPodAutoscaler{}
	key := types.NamespacedName{Namespace: ns, Name: "podinfo-primary"}
	g.Expect(k8s.Get(ctx, key, primaryHPA)).To(Succeed())
	g.Expect(primaryHPA.Spec.ScaleTargetRef.Name).To(Equal("podinfo-primary"))
	g.Expect(primaryHPA.Spec.MaxReplicas).To(Equal(int32(4)))

	patch := client.MergeFrom(hpa.DeepCopy())
	hpa.Spec.MaxReplicas = 6
	g.Expect(k8s.Patch(ctx, hpa, patch)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, key, primaryHPA)).To(Succeed())
		g.Expect(primaryHPA.Spec.MaxReplicas).To(Equal(int32(6)))
	}, 10*time.Second).Should(Succeed(), "a change of the target's HPA reaches the primary's")

	g.Expect(k8s.Delete(ctx, primaryHPA)).To(Succeed())
	g.Eventually(func(g Gomega) {
		fresh := &autoscalingv2.HorizontalPodAutoscaler{}
		g.Expect(k8s.Get(ctx, key, fresh)).To(Succeed())
		g.Expect(fresh.UID).NotTo(Equal(primaryHPA.UID))
	}, 10*time.Second).Should(Succeed(), "a deleted primary HPA is re-created")
}
