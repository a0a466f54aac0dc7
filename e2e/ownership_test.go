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
	"maps"
	"slices"
	"strings"
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
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// The tired operator and the careless tenant of #33, each with the users'
// load running: what serin owns is repaired, what it does not own is
// never written, and Ready says what the users get. Each test logs the
// time from the fault to Ready=False and to the users' next answer as
// key=value lines (go test -v).

// readyReasons samples the Canary's Ready condition as "status/reason".
func readyReasons(t *testing.T, c *v1alpha1.Canary) *sampler {
	return sample(t, func() string {
		cur := &v1alpha1.Canary{}
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(c), cur); err != nil {
			return "none"
		}
		r := conditions.Get(cur, meta.ReadyCondition)
		if r == nil {
			return "none"
		}
		return string(r.Status) + "/" + r.Reason
	})
}

// servedAgain waits until the users of ns got only answers for a second
// after since, and returns when their last failed request after since was
// sent (since itself when none failed) and how many failed.
func servedAgain(g Gomega, ns string, since time.Time, within time.Duration) (time.Time, int) {
	g.Eventually(func(g Gomega) {
		recent := usersIn(ns).Counts(time.Now().Add(-1500*time.Millisecond), time.Now().Add(-500*time.Millisecond))
		g.Expect(recent.Total).To(BeNumerically(">", 0), "the users send requests")
		g.Expect(recent.Errors).To(BeZero(), "the users get answers again")
	}, within, 200*time.Millisecond).Should(Succeed())
	last, failed := since, 0
	for _, s := range usersIn(ns).Samples(since, time.Time{}) {
		if !s.OK() {
			last, failed = s.Sent, failed+1
		}
	}
	return last, failed
}

// whenTrue polls cond every 20 ms until it holds, and returns when.
func whenTrue(g Gomega, cond func() bool, within time.Duration, what string) time.Time {
	var at time.Time
	g.Eventually(func() bool {
		if cond() {
			at = time.Now()
			return true
		}
		return false
	}, within, 20*time.Millisecond).Should(BeTrue(), what)
	return at
}

// canaryEvent waits for a Kubernetes Event of the Canary whose message
// contains text, and returns when it was first recorded.
func canaryEvent(g Gomega, c *v1alpha1.Canary, text string) time.Time {
	var at time.Time
	g.Eventually(func(g Gomega) {
		var events corev1.EventList
		g.Expect(k8s.List(context.Background(), &events, client.InNamespace(c.Namespace))).To(Succeed())
		for _, e := range events.Items {
			if e.InvolvedObject.Name == c.Name && e.InvolvedObject.Kind == v1alpha1.CanaryKind && strings.Contains(e.Message, text) {
				at = e.FirstTimestamp.Time
				if at.IsZero() {
					at = e.EventTime.Time
				}
				return
			}
		}
		g.Expect(at).NotTo(BeZero(), "an event saying %q", text)
	}, 20*time.Second, 200*time.Millisecond).Should(Succeed())
	return at
}

// An operator scales podinfo-primary to zero: serin scales it back to its
// 2 replicas and says Ready False (PrimaryUnavailable) until it serves;
// the users get answers again within seconds. Before #33 the Canary stayed
// Ready True with the apex at 0 endpoints for as long as anyone watched.
func TestOwnership_PrimaryScaledToZeroIsRestored(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := gatewayCanary(t, g, ns)
	ready := readyReasons(t, c)

	primary := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo-primary"}, primary)).To(Succeed())
	patch := client.MergeFrom(primary.DeepCopy())
	primary.Spec.Replicas = ptr.To(int32(0))
	g.Expect(k8s.Patch(ctx, primary, patch)).To(Succeed())
	fault := time.Now()

	repaired := whenTrue(g, func() bool {
		d := &appsv1.Deployment{}
		return k8s.Get(ctx, client.ObjectKeyFromObject(primary), d) == nil && *d.Spec.Replicas == 2
	}, 30*time.Second, "podinfo-primary scaled back to 2")
	canaryEvent(g, c, "podinfo-primary was scaled to 0 outside serin: restoring 2 replicas")
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(primary), primary)).To(Succeed())
		g.Expect(primary.Status.ReadyReplicas).To(Equal(int32(2)))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	served, failed := servedAgain(g, ns, fault, 30*time.Second)
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(conditions.IsReady(c)).To(BeTrue())
	}, 20*time.Second).Should(Succeed())
	g.Expect(ready.seen()).To(ContainElement("False/"+v1alpha1.PrimaryUnavailableReason), "Ready was False while the primary was down")
	t.Logf("fault=primary-scaled-to-zero repair_after=%s last_user_error_after=%s user_errors=%d ready=%v",
		repaired.Sub(fault).Round(10*time.Millisecond), served.Sub(fault).Round(10*time.Millisecond), failed, ready.seen())
}

// An operator evicts every pod of the primary: the ReplicaSet brings them
// back, and Ready is never True while no pod of the primary is ready.
func TestOwnership_PrimaryPodsEvicted(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := gatewayCanary(t, g, ns)
	ready := readyReasons(t, c)
	serving := sample(t, func() string {
		d := &appsv1.Deployment{}
		if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo-primary"}, d); err != nil {
			return "none"
		}
		return map[bool]string{true: "serving", false: "dark"}[d.Status.ReadyReplicas > 0]
	})

	var pods corev1.PodList
	g.Expect(k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": "podinfo-primary"})).To(Succeed())
	g.Expect(pods.Items).NotTo(BeEmpty())
	for i := range pods.Items {
		g.Expect(client.IgnoreNotFound(k8s.Delete(ctx, &pods.Items[i], client.GracePeriodSeconds(0)))).To(Succeed())
	}
	fault := time.Now()
	served, failed := servedAgain(g, ns, fault, 30*time.Second)
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(conditions.IsReady(c)).To(BeTrue())
	}, 20*time.Second).Should(Succeed())
	if slices.Contains(serving.seen(), "dark") {
		g.Expect(ready.seen()).To(ContainElement("False/"+v1alpha1.PrimaryUnavailableReason), "the primary went dark: Ready said so")
	}
	t.Logf("fault=primary-pods-evicted last_user_error_after=%s user_errors=%d primary=%v ready=%v",
		served.Sub(fault).Round(10*time.Millisecond), failed, serving.seen(), ready.seen())
}

// An operator points the apex Service of a blue/green Canary at pods of
// neither side: serin puts the primary's selector back (the router owns
// that selector, and kept whatever it found before #33).
func TestOwnership_ApexSelectorEditedIsRestored(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	g.Expect(k8s.Create(ctx, testobj.MakeDeployment("podinfo", ns).Replicas(2).Image("podinfo:v1").Obj())).To(Succeed())
	c := testobj.MakeCanary("podinfo", ns).Analysis(v1alpha1.CanaryAnalysis{
		Interval: &metav1.Duration{Duration: interval}, Threshold: 2, Iterations: 3,
	}).Obj()
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseInitialized, 30*time.Second)
	startBlueGreenTraffic(t, g, ns)

	apex := &corev1.Service{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, apex)).To(Succeed())
	want := apex.Spec.Selector
	patch := client.MergeFrom(apex.DeepCopy())
	apex.Spec.Selector = map[string]string{"app": "legacy"}
	g.Expect(k8s.Patch(ctx, apex, patch)).To(Succeed())
	fault := time.Now()

	repaired := whenTrue(g, func() bool {
		svc := &corev1.Service{}
		return k8s.Get(ctx, client.ObjectKeyFromObject(apex), svc) == nil && maps.Equal(svc.Spec.Selector, want)
	}, 20*time.Second, "the apex Service selects the primary again")
	served, failed := servedAgain(g, ns, fault, 30*time.Second)
	t.Logf("fault=apex-selector-edited repair_after=%s last_user_error_after=%s user_errors=%d",
		repaired.Sub(fault).Round(10*time.Millisecond), served.Sub(fault).Round(10*time.Millisecond), failed)
}

// A newcomer names podinfo-primary, which kubectl get deploy shows, as the
// target of a second Canary: it stalls (InvalidTarget) naming the Canary
// that generated it, writes nothing, and podinfo keeps serving. Before #33
// it went Ready and scaled podinfo-primary to zero.
func TestOwnership_CanaryNamingAnotherPrimaryStalls(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := gatewayCanary(t, g, ns)

	hijack := testobj.MakeCanary("hijack", ns).Target("apps/v1", "Deployment", "podinfo-primary").Routing(gatewayRouting(ns)).
		Analysis(v1alpha1.CanaryAnalysis{Interval: &metav1.Duration{Duration: interval}, Threshold: 2, StepWeight: 20, MaxWeight: 60}).Obj()
	hijackReady := readyReasons(t, hijack)
	g.Expect(k8s.Create(ctx, hijack)).To(Succeed())
	created := time.Now()
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(hijack), hijack)).To(Succeed())
		g.Expect(conditions.IsStalled(hijack)).To(BeTrue())
		g.Expect(conditions.GetReason(hijack, meta.StalledCondition)).To(Equal(v1alpha1.InvalidTargetReason))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	stalled := time.Now()
	g.Expect(conditions.GetMessage(hijack, meta.StalledCondition)).To(ContainSubstring("Canary podinfo"))
	g.Expect(conditions.GetMessage(hijack, meta.StalledCondition)).To(ContainSubstring("name podinfo in spec.targetRef"))
	g.Expect(conditions.IsReady(hijack)).To(BeFalse())

	// Nothing of podinfo's changes, and the users never notice.
	g.Consistently(func(g Gomega) {
		primary := &appsv1.Deployment{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo-primary"}, primary)).To(Succeed())
		g.Expect(*primary.Spec.Replicas).To(Equal(int32(2)))
		g.Expect(apierrors.IsNotFound(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo-primary-primary"}, &appsv1.Deployment{}))).To(BeTrue())
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(conditions.IsReady(c)).To(BeTrue())
	}, 5*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(hijackReady.seen()).NotTo(ContainElement(HavePrefix("True/")), "the hijacking Canary was never Ready")
	expectNoUserErrors(t, g, ns)
	t.Logf("fault=canary-names-another-primary stalled_after=%s ready=%v", stalled.Sub(created).Round(100*time.Millisecond), hijackReady.seen())
}

// Two Canaries name one target: the later stalls (TargetClaimed) before
// any write, the HTTPRoute walks exactly the first one's steps through a
// rollout, and once the first is deleted the second takes the target over.
// Before #33 the second wrote its own weights into the first one's route.
func TestOwnership_TwoCanariesOneTarget(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := gatewayCanary(t, g, ns)
	routes := sample(t, routeWeights(ns, "podinfo"))

	second := testobj.MakeCanary("second", ns).Target("apps/v1", "Deployment", "podinfo").Routing(gatewayRouting(ns)).ProgressDeadlineSeconds(30).
		Analysis(v1alpha1.CanaryAnalysis{Interval: &metav1.Duration{Duration: interval}, Threshold: 2, StepWeight: 30, MaxWeight: 60}).Obj()
	secondReady := readyReasons(t, second)
	g.Expect(k8s.Create(ctx, second)).To(Succeed())
	created := time.Now()
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(second), second)).To(Succeed())
		g.Expect(conditions.GetReason(second, meta.StalledCondition)).To(Equal(v1alpha1.TargetClaimedReason))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	stalled := time.Now()
	g.Expect(conditions.GetMessage(second, meta.StalledCondition)).To(ContainSubstring("rolled out by Canary podinfo, created earlier"))

	setImage(g, ns, "podinfo", "podinfo:v2")
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 120*time.Second)
	g.Eventually(routes.seen).Should(Equal([]string{"100/0", "80/20", "60/40", "40/60", "100/0"}), "the first Canary's steps only, primary/canary")
	g.Expect(stepWeights(c)).To(Equal("[0:Passed 20:Passed 40:Passed 60:Passed]"))
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(second), second)).To(Succeed())
	g.Expect(second.Status.Phase).To(BeEmpty(), "the second Canary never started")
	g.Expect(secondReady.seen()).NotTo(ContainElement(HavePrefix("True/")), "the second Canary was never Ready")
	expectNoUserErrors(t, g, ns)

	// The first goes (its generated objects orphaned, serving); the second
	// takes the target over.
	g.Expect(k8s.Delete(ctx, c)).To(Succeed())
	deleted := time.Now()
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(second), second)).To(Succeed())
		g.Expect(second.Status.Phase).To(Equal(v1alpha1.PhaseInitialized))
		g.Expect(conditions.IsReady(second)).To(BeTrue())
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	primary := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo-primary"}, primary)).To(Succeed())
	g.Expect(metav1.IsControlledBy(primary, second)).To(BeTrue(), "the second Canary controls the primary")
	t.Logf("fault=two-canaries-one-target stalled_after=%s taken_over_after_delete=%s routes=%v",
		stalled.Sub(created).Round(100*time.Millisecond), time.Since(deleted).Round(100*time.Millisecond), routes.seen())
}

// An operator edits spec.targetRef of an initialized Canary: the API
// server refuses it with a message saying what to do, and nothing moves.
func TestOwnership_TargetRefEditRefused(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := gatewayCanary(t, g, ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &v1alpha1.Canary{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), cur)).To(Succeed())
		cur.Spec.TargetRef.Name = "web"
		return k8s.Update(ctx, cur)
	})
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("spec.targetRef cannot change"))
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
	g.Expect(c.Spec.TargetRef.Name).To(Equal("podinfo"))
	g.Expect(conditions.IsReady(c)).To(BeTrue())
	g.Eventually(func() int { return usersIn(ns).Counts(firstAnswer(usersIn(ns)), time.Now().Add(-time.Second)).Total }, 10*time.Second).
		Should(BeNumerically(">", 0))
	expectNoUserErrors(t, g, ns)
}
