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
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/internal/workload"
)

// A DaemonSet target on the testbed: kube-controller-manager's daemonset
// controller runs one pod of the target and one of the primary on the kwok
// node, each backed by a real HTTP server once Ready. Blue/green through
// the apex Service: a good revision runs its iterations with the users on
// v1 only, is promoted, and the users move to v2 without an error; the
// canary is scaled to zero (no pod left). A bad revision fails the
// error-rate check on the canary's own traffic and is rolled back without
// a user ever reaching it.
func TestDaemonSet_BlueGreenPromotesThenRollsBack(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	g.Expect(k8s.Create(ctx, testobj.MakeDaemonSet("podinfo", ns).Image("podinfo:v1").Obj())).To(Succeed())
	c := testobj.MakeCanary("podinfo", ns).Target("apps/v1", "DaemonSet", "podinfo").ProgressDeadlineSeconds(30).
		Analysis(v1alpha1.CanaryAnalysis{
			Interval:   &metav1.Duration{Duration: interval},
			Threshold:  2,
			Iterations: 3,
			Metrics:    []v1alpha1.CanaryMetric{errorRateTemplate(t, ns)},
		}).Obj()
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseInitialized, 30*time.Second)
	g.Eventually(canaryPods(ns), 10*time.Second).Should(BeZero(), "initialized: the target DaemonSet scaled to zero")
	primary := &appsv1.DaemonSet{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo-primary"}, primary)).To(Succeed())
	g.Expect(primary.Status.NumberReady).To(BeNumerically(">=", 1), "the primary DaemonSet runs on the kwok node")

	startBlueGreenTraffic(t, g, ns)

	releaseDaemonSetRevision(g, ns, "podinfo", "podinfo:v2", nil)
	waitForPhase(g, c, v1alpha1.PhaseProgressing, 30*time.Second)
	analysing := time.Now()
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(c.Status.Iterations).To(BeNumerically(">=", 2))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(canaryPods(ns)()).To(Equal(1), "the canary DaemonSet runs its pod during the analysis")
	during := usersIn(ns).Counts(analysing, time.Now())
	g.Expect(during.ByVersion).To(HaveLen(1), "during the analysis the users see v1 only: %v", during.ByVersion)
	g.Expect(during.ByVersion).To(HaveKey("v1"))

	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 60*time.Second)
	g.Eventually(func() string { return lastVersion(usersIn(ns)) }, 5*time.Second).Should(Equal("v2"))
	g.Eventually(canaryPods(ns), 10*time.Second).Should(BeZero(), "promoted: the canary scaled to zero")
	g.Eventually(func() int { return usersIn(ns).Counts(analysing, time.Now().Add(-time.Second)).ByVersion["v2"] }, 5*time.Second).
		Should(BeNumerically(">=", 50), "the users are served by the promoted primary (v2)")
	expectNoUserErrors(t, g, ns)

	failedAt := time.Now()
	releaseDaemonSetRevision(g, ns, "podinfo", "podinfo:v3", erroring(100))
	waitForPhase(g, c, v1alpha1.PhaseFailed, 90*time.Second)
	g.Expect(c.Status.LastPromotedSpec).NotTo(Equal(c.Status.LastAppliedSpec))
	g.Eventually(canaryPods(ns), 10*time.Second).Should(BeZero(), "rolled back: the canary scaled to zero")
	after := usersIn(ns).Counts(failedAt, time.Now())
	g.Expect(after.ByVersion).To(HaveLen(1), "the users never reach v3: %v", after.ByVersion)
	g.Expect(after.ByVersion).To(HaveKey("v2"))
	expectNoUserErrors(t, g, ns)
}

// canaryPods counts the pods of the target DaemonSet (app=podinfo, not the
// primary's app=podinfo-primary) that are not being deleted.
func canaryPods(ns string) func() int {
	return func() int {
		var pods corev1.PodList
		if err := k8s.List(context.Background(), &pods, client.InNamespace(ns), client.MatchingLabels{"app": "podinfo"}); err != nil {
			return -1
		}
		n := 0
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil {
				n++
			}
		}
		return n
	}
}

// releaseDaemonSetRevision rolls a new revision of a DaemonSet, as a Git
// commit would (see releaseRevision); it keeps the node selector serin
// owns, as a server-side apply by Flux would.
func releaseDaemonSetRevision(g Gomega, ns, name, image string, annotations map[string]string) {
	d := &appsv1.DaemonSet{}
	g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, d)).To(Succeed())
	g.Expect(workload.DaemonSetScaledToZero(d)).To(BeTrue(), "serin scaled the target to zero")
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Template.Spec.Containers[0].Image = image
	if annotations != nil {
		d.Spec.Template.Annotations = annotations
	}
	g.Expect(k8s.Patch(context.Background(), d, patch)).To(Succeed())
}
