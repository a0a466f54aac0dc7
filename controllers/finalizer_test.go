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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// testHold is a finalizer of the tests' own, which keeps a deleted Canary
// visible after serin removed its finalizers.
const testHold = "test.serin.dev/hold"

// A live Canary that carries the legacy finalizer name gets the new one in
// its place, and nothing else of its finalizers changes.
func TestFinalizer_LegacyNameReplacedOnALiveCanary(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)

	canary := testobj.MakeCanary("podinfo", ns).Obj()
	canary.Finalizers = []string{v1alpha1.LegacyCanaryFinalizer, testHold}
	g.Expect(k8s.Create(ctx, canary)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)).To(Succeed())
		g.Expect(canary.Finalizers).To(ConsistOf(testHold, v1alpha1.CanaryFinalizer))
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())

	deletedCleanly(g, ctx, canary)
}

// A Canary created with the legacy finalizer name and deleted at once
// (before or after the agent renamed it) loses serin's finalizer under
// either name, and goes.
func TestFinalizer_DeletedWithTheLegacyName(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)

	canary := testobj.MakeCanary("podinfo", ns).Obj()
	canary.Finalizers = []string{v1alpha1.LegacyCanaryFinalizer, testHold}
	g.Expect(k8s.Create(ctx, canary)).To(Succeed())
	deletedCleanly(g, ctx, canary)
}

// deletedCleanly deletes canary, which carries testHold, waits until serin
// removed its own finalizers (testHold alone is left), then removes
// testHold and waits until the Canary is gone.
func deletedCleanly(g Gomega, ctx context.Context, canary *v1alpha1.Canary) {
	g.Expect(k8s.Delete(ctx, canary)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)).To(Succeed())
		g.Expect(canary.Finalizers).To(Equal([]string{testHold}))
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	patch := client.MergeFrom(canary.DeepCopy())
	canary.Finalizers = nil
	g.Expect(k8s.Patch(ctx, canary, patch)).To(Succeed())
	g.Eventually(func() bool {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(canary), &v1alpha1.Canary{})
		return err != nil && client.IgnoreNotFound(err) == nil
	}, 10*time.Second, 50*time.Millisecond).Should(BeTrue(), "the Canary is still there")
}
