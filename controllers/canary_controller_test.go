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

package controllers

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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

var nsCounter int

// newNamespace creates a namespace on the envtest API server; every envtest
// test starts with it, and skips when envtest is not running (-short).
func newNamespace(t *testing.T) string {
	t.Helper()
	if k8s == nil {
		t.Skip("needs the envtest API server, which -short does not start")
	}
	nsCounter++
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("envtest-%d-%d", time.Now().UnixNano()%100000, nsCounter)}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// markAvailable plays the deployment controller: it reports every replica of
// the current generation updated and available.
func markAvailable(g Gomega, ctx context.Context, key types.NamespacedName) {
	d := &appsv1.Deployment{}
	g.Eventually(func() error { return k8s.Get(ctx, key, d) }, 10*time.Second).Should(Succeed())
	n := *d.Spec.Replicas
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
	g.Expect(k8s.Status().Update(ctx, d)).To(Succeed())
}

// createInitializing creates the target podinfo with replicas and its
// Canary in ns, and waits until the Canary is Initializing: its Services
// and primary created, the primary not ready (envtest runs no
// controller-manager).
func createInitializing(g Gomega, ctx context.Context, ns string, replicas int32) (*appsv1.Deployment, *v1alpha1.Canary) {
	target := testobj.MakeDeployment("podinfo", ns).Replicas(replicas).Obj()
	g.Expect(k8s.Create(ctx, target)).To(Succeed())
	canary := testobj.MakeCanary("podinfo", ns).PortDiscovery().Obj()
	g.Expect(k8s.Create(ctx, canary)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)).To(Succeed())
		g.Expect(canary.Status.Phase).To(Equal(v1alpha1.PhaseInitializing))
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	return target, canary
}

func TestInitialize_CreatesServicesAndPrimaryThenScalesTargetDown(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)

	// The services and the primary come first; the target keeps its replicas
	// while the primary is not ready.
	target, canary := createInitializing(g, ctx, ns, 3)
	primaryKey := types.NamespacedName{Namespace: ns, Name: "podinfo-primary"}
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)).To(Succeed())
		g.Expect(conditions.IsReconciling(canary)).To(BeTrue())
		g.Expect(conditions.GetReason(canary, meta.ReadyCondition)).To(Equal(v1alpha1.WaitingForPrimaryReason))
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	primary := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, primaryKey, primary)).To(Succeed())
	g.Expect(*primary.Spec.Replicas).To(Equal(int32(3)))
	g.Expect(metav1.IsControlledBy(primary, canary)).To(BeTrue())
	for _, name := range []string{"podinfo", "podinfo-primary", "podinfo-canary"} {
		svc := &corev1.Service{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, svc)).To(Succeed())
		g.Expect(svc.CreationTimestamp.Time).NotTo(BeTemporally(">", primary.CreationTimestamp.Time), "services are created before the primary")
	}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(target), target)).To(Succeed())
	g.Expect(*target.Spec.Replicas).To(Equal(int32(3)), "the target serves until the primary is ready")

	markAvailable(g, ctx, primaryKey)
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)).To(Succeed())
		g.Expect(canary.Status.Phase).To(Equal(v1alpha1.PhaseInitialized))
		g.Expect(conditions.IsReady(canary)).To(BeTrue())
		g.Expect(conditions.IsReconciling(canary)).To(BeFalse())
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(target), target)).To(Succeed())
	g.Expect(*target.Spec.Replicas).To(BeZero())
	g.Expect(canary.Status.LastPromotedSpec).To(Equal(canary.Status.LastAppliedSpec))
}

func TestInitialize_PrimaryFailureStallsAndKeepsTarget(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)

	target := testobj.MakeDeployment("podinfo", ns).Replicas(2).Obj()
	g.Expect(k8s.Create(ctx, target)).To(Succeed())
	canary := testobj.MakeCanary("podinfo", ns).Obj()
	g.Expect(k8s.Create(ctx, canary)).To(Succeed())

	primary := &appsv1.Deployment{}
	g.Eventually(func() error {
		return k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo-primary"}, primary)
	}, 10*time.Second).Should(Succeed())
	primary.Status = appsv1.DeploymentStatus{ObservedGeneration: primary.Generation, Replicas: 2, UpdatedReplicas: 2,
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
			Reason: "ProgressDeadlineExceeded", Message: "timed out"}}}
	g.Expect(k8s.Status().Update(ctx, primary)).To(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)).To(Succeed())
		g.Expect(conditions.IsStalled(canary)).To(BeTrue())
		g.Expect(conditions.GetMessage(canary, meta.StalledCondition)).To(ContainSubstring("exceeded its progress deadline"))
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(target), target)).To(Succeed())
	g.Expect(*target.Spec.Replicas).To(Equal(int32(2)), "a broken primary never takes the target's pods away")
}

func TestInitialize_InvalidTargetStalls(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)

	target := testobj.MakeDeployment("podinfo", ns).Obj()
	target.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"podinfo"}}}}
	g.Expect(k8s.Create(ctx, target)).To(Succeed())
	canary := testobj.MakeCanary("podinfo", ns).Obj()
	g.Expect(k8s.Create(ctx, canary)).To(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)).To(Succeed())
		g.Expect(conditions.GetReason(canary, meta.StalledCondition)).To(Equal(v1alpha1.InvalidTargetReason))
		g.Expect(conditions.GetMessage(canary, meta.StalledCondition)).To(ContainSubstring("matchExpressions"))
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
}

func TestDelete_RemovesFinalizer(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)

	canary := testobj.MakeCanary("podinfo", ns).Obj()
	g.Expect(k8s.Create(ctx, canary)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)).To(Succeed())
		g.Expect(canary.Finalizers).To(ContainElement(v1alpha1.CanaryFinalizer))
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	g.Expect(k8s.Delete(ctx, canary)).To(Succeed())
	g.Eventually(func() bool {
		return client.IgnoreNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)) == nil &&
			k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary) != nil
	}, 10*time.Second, 50*time.Millisecond).Should(BeTrue())
}

// A namespace being deleted (envtest runs no namespace controller, so it
// stays Terminating): the API server refuses the apex Service the
// Canary would re-create, with the NamespaceTerminating cause, and the
// Canary records no failure for it; deleting the Canary then removes its
// finalizer at once.
func TestDelete_InATerminatingNamespace(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)

	_, canary := createInitializing(g, ctx, ns, 1)

	g.Expect(k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	apex := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "podinfo"}}
	g.Expect(k8s.Delete(ctx, apex)).To(Succeed())
	// What the agent meets: a create refused with the cause.
	err := k8s.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}})
	g.Expect(apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)).To(BeTrue(), "create in a terminating namespace: %v", err)

	g.Consistently(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)).To(Succeed())
		for _, c := range canary.Status.Conditions {
			g.Expect(c.Message).NotTo(ContainSubstring("being terminated"), "condition %s", c.Type)
		}
	}, 2*time.Second, 100*time.Millisecond).Should(Succeed())

	g.Expect(k8s.Delete(ctx, canary)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary))
	}, 10*time.Second, 50*time.Millisecond).Should(BeTrue())
}
