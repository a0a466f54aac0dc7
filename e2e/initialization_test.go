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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// A Canary for a Deployment reaches Initialized: the primary runs the
// target's pods and is Available, the Services select them, and the target
// is scaled to zero only after the primary serves.
func TestTestbed_CanaryInitializes(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)

	target := testobj.MakeDeployment("podinfo", ns).Replicas(2).
		Label("kustomize.toolkit.fluxcd.io/name", "apps").Obj()
	g.Expect(k8s.Create(ctx, target)).To(Succeed())
	canary := testobj.MakeCanary("podinfo", ns).Obj()
	g.Expect(k8s.Create(ctx, canary)).To(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)).To(Succeed())
		g.Expect(canary.Status.Phase).To(Equal(v1alpha1.PhaseInitialized))
	}, 60*time.Second, 100*time.Millisecond).Should(Succeed())

	g.Expect(conditions.IsReady(canary)).To(BeTrue())
	g.Expect(conditions.IsTrue(canary, v1alpha1.PromotedCondition)).To(BeTrue())
	g.Expect(conditions.Has(canary, meta.StalledCondition)).To(BeFalse())
	g.Expect(canary.Status.LastPromotedSpec).NotTo(BeEmpty())
	g.Expect(canary.Status.ObservedGeneration).To(Equal(canary.Generation))

	primary := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo-primary"}, primary)).To(Succeed())
	g.Expect(primary.Status.AvailableReplicas).To(Equal(int32(2)))
	g.Expect(primary.Spec.Template.Labels).To(HaveKeyWithValue("app", "podinfo-primary"))
	g.Expect(primary.Labels).NotTo(HaveKey("kustomize.toolkit.fluxcd.io/name"), "Flux labels are not copied")
	g.Expect(primary.Annotations).To(HaveKeyWithValue("kustomize.toolkit.fluxcd.io/reconcile", "disabled"))

	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(target), target)).To(Succeed())
		g.Expect(*target.Spec.Replicas).To(BeZero())
		g.Expect(target.Status.Replicas).To(BeZero())
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())

	for name, app := range map[string]string{"podinfo": "podinfo-primary", "podinfo-primary": "podinfo-primary", "podinfo-canary": "podinfo"} {
		svc := &corev1.Service{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, svc)).To(Succeed())
		g.Expect(svc.Spec.Selector).To(Equal(map[string]string{"app": app}), name)
		g.Expect(svc.Spec.Ports[0].Port).To(Equal(int32(9898)))
	}

	var events corev1.EventList
	g.Expect(k8s.List(ctx, &events, client.InNamespace(ns), client.MatchingFields{"involvedObject.name": "podinfo", "involvedObject.kind": "Canary"})).To(Succeed())
	reasons := []string{}
	for _, e := range events.Items {
		reasons = append(reasons, e.Reason)
	}
	g.Expect(reasons).To(ContainElement(string(v1alpha1.PhaseInitialized)))
}

// A Canary whose target does not exist is Stalled with a message that says
// what to fix, and recovers once the target is created.
func TestTestbed_CanaryMissingTargetStalls(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)

	canary := testobj.MakeCanary("ghost", ns).Obj()
	g.Expect(k8s.Create(ctx, canary)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)).To(Succeed())
		g.Expect(conditions.IsStalled(canary)).To(BeTrue())
		g.Expect(conditions.GetReason(canary, meta.StalledCondition)).To(Equal(v1alpha1.TargetNotFoundReason))
		g.Expect(conditions.GetMessage(canary, meta.StalledCondition)).To(ContainSubstring("Deployment " + ns + "/ghost named by spec.targetRef not found"))
		g.Expect(conditions.IsReady(canary)).To(BeFalse())
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())

	g.Expect(k8s.Create(ctx, testobj.MakeDeployment("ghost", ns).Obj())).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)).To(Succeed())
		g.Expect(canary.Status.Phase).To(Equal(v1alpha1.PhaseInitialized))
		g.Expect(conditions.Has(canary, meta.StalledCondition)).To(BeFalse())
	}, 60*time.Second, 100*time.Millisecond).Should(Succeed())
}
