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
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// One of the canary's two pods stops being ready in the middle of the
// analysis (its Ready condition set False, as a kubelet would after a
// failed readiness probe; the EndpointSlice drops it and the ReplicaSet
// counts one available pod). With canaryReadyThreshold 50 the one ready
// pod is enough: the rollout goes on and is promoted, the users served by
// the ready pod only, without error. With the default (every replica), the
// same canary is not ready and is rolled back at its progress deadline.
func TestReadyThreshold_CanaryWithHalfItsPodsReady(t *testing.T) {
	alone(t, "8 s progress deadline and a pod fault timed against 2 s steps")
	g := NewWithT(t)
	lenient := newNamespace(t)
	strict := newNamespace(t)
	setup := func(ns string, threshold *int) *v1alpha1.Canary {
		return gatewayCanary(t, g, ns, func(c *v1alpha1.Canary) {
			c.Spec.ProgressDeadlineSeconds = ptrInt32(8)
			c.Spec.Analysis.CanaryReadyThreshold = threshold
		})
	}
	half := 50
	cl, cs := setup(lenient, &half), setup(strict, nil)

	for _, c := range []*v1alpha1.Canary{cl, cs} {
		setImage(g, c.Namespace, "podinfo", "podinfo:v2")
	}
	for _, c := range []*v1alpha1.Canary{cl, cs} {
		g.Eventually(func(g Gomega) {
			g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(c), c)).To(Succeed())
			g.Expect(c.Status.Phase).To(Equal(v1alpha1.PhaseProgressing))
			g.Expect(c.Status.CanaryWeight).To(BeNumerically(">=", 20))
		}, 60*time.Second, 100*time.Millisecond).Should(Succeed(), "%s: the analysis shifts traffic", c.Namespace)
		unready := markOneCanaryPodUnready(g, c.Namespace)
		t.Logf("%s: pod %s not ready from now on", c.Namespace, unready)
	}

	waitForPhase(g, cl, v1alpha1.PhaseSucceeded, 90*time.Second)
	waitForPhase(g, cs, v1alpha1.PhaseFailed, 60*time.Second)
	g.Expect(cs.Status.Analyses).NotTo(BeEmpty())
	g.Expect(cs.Status.Analyses[0].Message).To(ContainSubstring("canary not ready within the progress deadline"))
	expectNoUserErrors(t, g, lenient)
	expectNoUserErrors(t, g, strict)
}

// markOneCanaryPodUnready sets the Ready condition of one ready pod of the
// target (the canary) False, and returns its name.
func markOneCanaryPodUnready(g Gomega, ns string) string {
	ctx := context.Background()
	var name string
	g.Eventually(func(g Gomega) {
		pods := &corev1.PodList{}
		g.Expect(k8s.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"app": "podinfo"})).To(Succeed())
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.DeletionTimestamp != nil || !podReady(p) || p.Spec.Containers[0].Image != "podinfo:v2" {
				continue
			}
			patch := client.MergeFrom(p.DeepCopy())
			for j := range p.Status.Conditions {
				if t := p.Status.Conditions[j].Type; t == corev1.PodReady || t == corev1.ContainersReady {
					p.Status.Conditions[j].Status = corev1.ConditionFalse
					p.Status.Conditions[j].Reason = "ReadinessProbeFailed"
				}
			}
			g.Expect(k8s.Status().Patch(ctx, p, patch)).To(Succeed())
			name = p.Name
			return
		}
		g.Expect(false).To(BeTrue(), "no ready canary pod in %s", ns)
	}, 20*time.Second, 200*time.Millisecond).Should(Succeed())
	return name
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
