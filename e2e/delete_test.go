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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

func initializedCanary(t *testing.T, g Gomega, ns string, revertOnDeletion bool) *v1alpha1.Canary {
	t.Helper()
	ctx := context.Background()
	g.Expect(k8s.Create(ctx, testobj.MakeDeployment("podinfo", ns).Replicas(2).Obj())).To(Succeed())
	c := testobj.MakeCanary("podinfo", ns).Obj()
	c.Spec.RevertOnDeletion = revertOnDeletion
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseInitialized, 30*time.Second)
	g.Eventually(func() int { return readyEndpoints(ns, "podinfo") }, 10*time.Second, 50*time.Millisecond).Should(Equal(2),
		"the apex Service serves the primary's pods")
	return c
}

// Deleting a Canary without revertOnDeletion leaves the primary and its
// Services serving (orphaned), instead of garbage collecting them with the
// target still at zero replicas.
func TestEngine_DeleteKeepsServing(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := initializedCanary(t, g, ns, false)

	g.Expect(k8s.Delete(ctx, c)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(c), c))
	}, 20*time.Second, 100*time.Millisecond).Should(BeTrue())

	g.Consistently(func(g Gomega) {
		primary := &appsv1.Deployment{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo-primary"}, primary)).To(Succeed())
		g.Expect(primary.OwnerReferences).To(BeEmpty())
		g.Expect(primary.Status.AvailableReplicas).To(Equal(int32(2)))
		g.Expect(readyEndpoints(ns, "podinfo")).To(Equal(2), "the apex Service keeps serving")
	}, 3*time.Second, 250*time.Millisecond).Should(Succeed())
}

// Deleting a Canary with revertOnDeletion scales the target back up, points
// the apex Service at it once ready, and removes the generated objects.
func TestEngine_RevertOnDeletion(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := initializedCanary(t, g, ns, true)
	watchInvariantsApex(t, ns)

	g.Expect(k8s.Delete(ctx, c)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(c), c))
	}, 30*time.Second, 100*time.Millisecond).Should(BeTrue())

	target, apex := &appsv1.Deployment{}, &corev1.Service{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, target)).To(Succeed())
	g.Expect(*target.Spec.Replicas).To(Equal(int32(2)))
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, apex)).To(Succeed())
	g.Expect(apex.Spec.Selector).To(Equal(map[string]string{"app": "podinfo"}))
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo-primary"}, &appsv1.Deployment{}))
	}, 30*time.Second, 200*time.Millisecond).Should(BeTrue(), "the primary is garbage collected with the Canary")
}

// watchInvariantsApex checks every 100 ms that the apex Service has a ready
// endpoint.
func watchInvariantsApex(t *testing.T, ns string) {
	t.Helper()
	stop, done := make(chan struct{}), make(chan struct{})
	var misses []string
	go func() {
		defer close(done)
		for {
			if readyEndpoints(ns, "podinfo") == 0 {
				misses = append(misses, time.Now().Format("15:04:05.000"))
			}
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		<-done
		if len(misses) > 0 {
			t.Errorf("the apex Service had no ready endpoint at %v", misses)
		}
	})
}
