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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/workload"
)

// spec.autoscalerRef of kind ScaledObject, on the testbed's API server with
// KEDA's own ScaledObject CRD (KEDA_VERSION, from its module; KEDA's
// operator, which would act on them, is not run here: what is checked is
// what serin writes). serin keeps podinfo-so-primary, a copy of the
// target's ScaledObject scaling the primary, with Flagger's query rewrite
// and the primary's bounds; pauses the target's ScaledObject
// (autoscaling.keda.sh/paused-replicas: "0") while the canary is idle,
// resumes it during an analysis and pauses it again after the promotion;
// and repairs the copy an operator deletes or edits.
func TestAutoscaler_KEDAScaledObject(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	target := workload.NewScaledObject(ns, "podinfo-so")
	target.Object["spec"] = map[string]any{
		"scaleTargetRef":  map[string]any{"name": "podinfo"},
		"minReplicaCount": int64(1),
		"maxReplicaCount": int64(3),
		"triggers": []any{map[string]any{
			"name": "requests", "type": "prometheus",
			"metadata": map[string]any{"serverAddress": prom.URL, "threshold": "5",
				"query": `sum(rate(http_requests_total{app="podinfo"}[2m]))`},
		}},
	}
	g.Expect(k8s.Create(ctx, target)).To(Succeed())
	c := gatewayCanary(t, g, ns, func(c *v1alpha1.Canary) {
		c.Spec.AutoscalerRef = &v1alpha1.AutoscalerReference{APIVersion: "keda.sh/v1alpha1", Kind: "ScaledObject", Name: "podinfo-so",
			PrimaryScalerReplicas: &v1alpha1.ScalerReplicas{MinReplicas: ptr.To[int32](2), MaxReplicas: ptr.To[int32](4)}}
	})

	key := types.NamespacedName{Namespace: ns, Name: "podinfo-so-primary"}
	primary := workload.NewScaledObject(ns, key.Name)
	g.Expect(k8s.Get(ctx, key, primary)).To(Succeed())
	g.Expect(nested(primary, "spec", "scaleTargetRef", "name")).To(Equal("podinfo-primary"))
	g.Expect(nested(primary, "spec", "minReplicaCount")).To(Equal(int64(2)))
	g.Expect(nested(primary, "spec", "maxReplicaCount")).To(Equal(int64(4)))
	triggers, _, _ := unstructured.NestedSlice(primary.Object, "spec", "triggers")
	g.Expect(triggers).To(HaveLen(1))
	g.Expect(triggers[0].(map[string]any)["metadata"].(map[string]any)["query"]).To(Equal(`sum(rate(http_requests_total{app="podinfo-primary"}[2m]))`))
	g.Expect(metav1.IsControlledBy(primary, c)).To(BeTrue(), "the copy goes with the Canary")
	targetPaused := func() bool {
		so := workload.NewScaledObject(ns, "podinfo-so")
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(so), so)).To(Succeed())
		return workload.ScaledObjectPaused(so)
	}
	g.Expect(targetPaused()).To(BeTrue(), "initialized: the canary is idle, its ScaledObject paused at zero")

	// A rollout: the target's ScaledObject runs during the analysis.
	setImage(g, ns, "podinfo", "podinfo:v2")
	waitForPhase(g, c, v1alpha1.PhaseProgressing, 30*time.Second)
	g.Eventually(targetPaused, 10*time.Second, 100*time.Millisecond).Should(BeFalse(), "the analysis resumes the target's ScaledObject")
	canary := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, canary)).To(Succeed())
	g.Expect(*canary.Spec.Replicas).To(BeNumerically(">", 0))
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 90*time.Second)
	g.Eventually(targetPaused, 10*time.Second, 100*time.Millisecond).Should(BeTrue(), "promoted: the canary is idle again, paused")

	// An operator edits the copy, then deletes it: serin repairs it.
	g.Expect(k8s.Get(ctx, key, primary)).To(Succeed())
	patch := client.MergeFrom(primary.DeepCopy())
	g.Expect(unstructured.SetNestedField(primary.Object, int64(50), "spec", "maxReplicaCount")).To(Succeed())
	g.Expect(k8s.Patch(ctx, primary, patch)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, key, primary)).To(Succeed())
		g.Expect(nested(primary, "spec", "maxReplicaCount")).To(Equal(int64(4)))
	}, 15*time.Second, 100*time.Millisecond).Should(Succeed(), "an edit of the copy is undone")
	uid := primary.GetUID()
	g.Expect(k8s.Delete(ctx, primary)).To(Succeed())
	g.Eventually(func(g Gomega) {
		fresh := workload.NewScaledObject(ns, key.Name)
		g.Expect(k8s.Get(ctx, key, fresh)).To(Succeed())
		g.Expect(fresh.GetUID()).NotTo(Equal(uid))
	}, 15*time.Second, 100*time.Millisecond).Should(Succeed(), "a deleted copy is made again")

	// A change of the target's ScaledObject reaches the copy.
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(target), target)).To(Succeed())
	patch = client.MergeFrom(target.DeepCopy())
	triggers, _, _ = unstructured.NestedSlice(target.Object, "spec", "triggers")
	triggers[0].(map[string]any)["metadata"].(map[string]any)["threshold"] = "10"
	g.Expect(unstructured.SetNestedSlice(target.Object, triggers, "spec", "triggers")).To(Succeed())
	g.Expect(k8s.Patch(ctx, target, patch)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, key, primary)).To(Succeed())
		triggers, _, _ := unstructured.NestedSlice(primary.Object, "spec", "triggers")
		g.Expect(triggers[0].(map[string]any)["metadata"].(map[string]any)["threshold"]).To(Equal("10"))
	}, 15*time.Second, 100*time.Millisecond).Should(Succeed(), "the target's change reaches the copy")
	expectNoUserErrors(t, g, ns)
}

// nested is the field of an unstructured object at path, nil when absent.
func nested(u *unstructured.Unstructured, path ...string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
	return v
}
