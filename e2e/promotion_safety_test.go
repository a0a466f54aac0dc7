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
	"math"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// invariants checks, on every change of the namespace's route,
// EndpointSlices and target Deployment and at least every 100 ms, for the
// whole test, the two promises of promotion safety and records every
// violation:
//   - every backend with weight > 0 has ready endpoints;
//   - the canary is never scaled to zero while it is the only ready copy.
type invariants struct {
	mu         sync.Mutex
	violations []string
	samples    int
	// stopped ends the sampling before the test does (Stop).
	stopped chan struct{}
	once    sync.Once
}

// Stop ends the sampling; the violations so far are reported at the end
// of the test.
func (inv *invariants) Stop() { inv.once.Do(func() { close(inv.stopped) }) }

func watchInvariants(t *testing.T, ns string) *invariants {
	t.Helper()
	inv := &invariants{stopped: make(chan struct{})}
	changed := make(chan struct{}, 1)
	cached := watchNamespace(t, ns, changed, &gatewayv1.HTTPRoute{}, &discoveryv1.EndpointSlice{}, &appsv1.Deployment{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			inv.check(cached, ns)
			select {
			case <-inv.stopped:
				return
			case <-changed:
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() {
		inv.Stop()
		<-done
		inv.mu.Lock()
		defer inv.mu.Unlock()
		if len(inv.violations) > 0 {
			t.Errorf("traffic invariants violated (%d of %d samples):\n%v", len(inv.violations), inv.samples, inv.violations)
		}
		t.Logf("traffic invariants held over %d samples", inv.samples)
	})
	return inv
}

// check takes one sample of the watch cache. What it finds there is a
// suspicion only (the cache's watches of three kinds may each lag the
// others by a few milliseconds): a violation counts when the API server
// confirms it at once.
func (inv *invariants) check(cached client.Reader, ns string) {
	found := violations(cached, ns)
	if len(found) > 0 {
		found = violations(k8s, ns)
	}
	inv.mu.Lock()
	defer inv.mu.Unlock()
	inv.samples++
	for _, f := range found {
		inv.violations = append(inv.violations, time.Now().Format("15:04:05.000")+" "+f)
	}
}

// violations reads the route (or the target), then the endpoints, then the
// route again: a violation counts only when the route did not change in
// between, so that a legitimate step taken during the read is not mistaken
// for one.
func violations(r client.Reader, ns string) []string {
	ctx := context.Background()
	var found []string
	route, ok := getRoute(r, ns)
	if ok {
		for _, b := range route.Spec.Rules[0].BackendRefs {
			if b.Weight != nil && *b.Weight > 0 && readyEndpointsIn(r, ns, string(b.Name)) == 0 {
				if again, ok := getRoute(r, ns); ok && again.ResourceVersion == route.ResourceVersion {
					found = append(found, fmt.Sprintf("%s has weight %d and no ready endpoint", b.Name, *b.Weight))
				}
			}
		}
	}
	target := &appsv1.Deployment{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, target); err == nil &&
		target.Spec.Replicas != nil && *target.Spec.Replicas == 0 && readyEndpointsIn(r, ns, "podinfo-primary") == 0 {
		again := &appsv1.Deployment{}
		if err := r.Get(ctx, client.ObjectKeyFromObject(target), again); err == nil && again.ResourceVersion == target.ResourceVersion {
			found = append(found, "the canary was scaled to zero while the primary has no ready endpoint")
		}
	}
	return found
}

func getRoute(r client.Reader, ns string) (*gatewayv1.HTTPRoute, bool) {
	route := &gatewayv1.HTTPRoute{}
	if err := r.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "podinfo"}, route); err != nil || len(route.Spec.Rules) == 0 {
		return nil, false
	}
	return route, true
}

// readyEndpoints counts the ready endpoints of a Service, as the real
// endpointslice controller publishes them.
func readyEndpoints(ns, service string) int { return readyEndpointsIn(k8s, ns, service) }

// readyEndpointsIn is readyEndpoints read from r.
func readyEndpointsIn(r client.Reader, ns, service string) int {
	var slices discoveryv1.EndpointSliceList
	if err := r.List(context.Background(), &slices, client.InNamespace(ns),
		client.MatchingLabels{discoveryv1.LabelServiceName: service}); err != nil {
		return 0
	}
	n := 0
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				n++
			}
		}
	}
	return n
}

// breakPromotion rolls a revision of podinfo that passes its canary
// analysis but whose pods never become ready once the primary runs them.
func breakPromotion(g Gomega, ns, image string) {
	g.Expect(rollBrokenPrimary(context.Background(), ns, "podinfo", image)).To(Succeed())
}

func rollBrokenPrimary(ctx context.Context, ns, name, image string) error {
	d := &appsv1.Deployment{}
	if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, d); err != nil {
		return err
	}
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Template.Spec.Containers[0].Image = image
	if d.Spec.Template.Annotations == nil {
		d.Spec.Template.Annotations = map[string]string{}
	}
	d.Spec.Template.Annotations[testbed.NeverReadyAsPrimaryAnnotation] = "true"
	return k8s.Patch(ctx, d, patch)
}

// setTemplate sets the image and drops the marker: a Git commit with a fix.
func fixTemplate(g Gomega, ns, image string) {
	d := &appsv1.Deployment{}
	g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "podinfo"}, d)).To(Succeed())
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Template.Spec.Containers[0].Image = image
	delete(d.Spec.Template.Annotations, testbed.NeverReadyAsPrimaryAnnotation)
	g.Expect(k8s.Patch(context.Background(), d, patch)).To(Succeed())
}

func safetyCanary(t *testing.T, g Gomega, ns string, mutate ...func(*v1alpha1.Canary)) *v1alpha1.Canary {
	return gatewayCanary(t, g, ns, append([]func(*v1alpha1.Canary){func(c *v1alpha1.Canary) {
		c.Spec.ProgressDeadlineSeconds = ptrInt32(5)
	}}, mutate...)...)
}

func ptrInt32(i int32) *int32 { return &i }

// loadedSafetyCanary is safetyCanary with a deadline that a loaded
// machine's canary pods meet (the whole suite runs beside the tests that
// repeat promotions): a halt or rollback is the test's, not the clock's.
func loadedSafetyCanary(t *testing.T, g Gomega, ns string) *v1alpha1.Canary {
	return safetyCanary(t, g, ns, func(c *v1alpha1.Canary) { c.Spec.ProgressDeadlineSeconds = ptrInt32(15) })
}

// inNamespaces runs body in n new namespaces at once, and waits for all.
func inNamespaces(t *testing.T, n int, body func(g Gomega, ns string)) {
	var wg sync.WaitGroup
	for range n {
		ns := newNamespace(t)
		wg.Go(func() { body(NewWithT(t), ns) })
	}
	wg.Wait()
}

// expectHaltedAndServing checks the halted state: Stalled with the reason,
// routing frozen at the promotion's weights, the canary still running.
func expectHaltedAndServing(g Gomega, c *v1alpha1.Canary, reason string) {
	g.Expect(conditions.IsStalled(c)).To(BeTrue())
	g.Expect(conditions.GetReason(c, meta.StalledCondition)).To(Equal(v1alpha1.HaltedReason))
	g.Expect(conditions.GetMessage(c, meta.StalledCondition)).To(ContainSubstring(reason))
	g.Expect(routeWeights(c.Namespace, "podinfo")()).To(Equal("40/60"), "routing frozen as it was when the promotion started")
	target := &appsv1.Deployment{}
	g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: c.Namespace, Name: "podinfo"}, target)).To(Succeed())
	g.Expect(*target.Spec.Replicas).To(Equal(int32(2)), "the canary keeps running")
	g.Expect(readyEndpoints(c.Namespace, "podinfo-canary")).To(Equal(2))
}

// A ResourceQuota refuses the primary's new pods during the promotion: the
// canary halts, routing stays, the canary keeps serving.
func TestPromotionSafety_QuotaRefusesPrimaryHalts(t *testing.T) {
	alone(t, "5 s progress deadline that a loaded testbed misses")
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := safetyCanary(t, g, ns)
	watchInvariants(t, ns)

	// 2 primary + 2 canary pods fit; the primary's surge pod does not.
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "pods", Namespace: ns},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("4")}},
	}
	g.Expect(k8s.Create(ctx, quota)).To(Succeed())
	// The target's pods that the initialization scaled down may still be
	// counted: the canary's must fit.
	onlyThePrimaryCounts(g, ns, quota)
	setImage(g, ns, "podinfo", "podinfo:v4")
	waitForPhase(g, c, v1alpha1.PhaseHalted, 90*time.Second)
	expectHaltedAndServing(g, c, "cannot create pods")

	// The primary recovers by itself once the quota allows it: the
	// promotion finishes.
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(quota), quota)).To(Succeed())
	quota.Spec.Hard[corev1.ResourcePods] = resource.MustParse("10")
	g.Expect(k8s.Update(ctx, quota)).To(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 90*time.Second)
	g.Expect(routeWeights(ns, "podinfo")()).To(Equal("100/0"))
	expectNoUserErrors(t, g, ns)
}

// Primary pods that never become ready halt the promotion at the progress
// deadline; with the default policy nothing else moves.
func TestPromotionSafety_PrimaryNeverReadyHalts(t *testing.T) {
	alone(t, "5 s progress deadline that a loaded testbed misses")
	g := NewWithT(t)
	ns := newNamespace(t)
	c := safetyCanary(t, g, ns)
	watchInvariants(t, ns)

	breakPromotion(g, ns, "podinfo:v4")
	waitForPhase(g, c, v1alpha1.PhaseHalted, 90*time.Second)
	expectHaltedAndServing(g, c, "progress deadline")

	g.Consistently(func(g Gomega) {
		g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(c.Status.Phase).To(Equal(v1alpha1.PhaseHalted))
		g.Expect(routeWeights(ns, "podinfo")()).To(Equal("40/60"))
	}, 3*time.Second, 200*time.Millisecond).Should(Succeed())
	expectNoUserErrors(t, g, ns)
}

// With failurePolicy RestorePrimary the primary goes back to its last good
// template while the canary serves, then traffic returns to it and the
// canary scales down: Failed, PromotionFailed.
func TestPromotionSafety_RestorePrimaryPolicy(t *testing.T) {
	alone(t, "5 s progress deadline that a loaded testbed misses")
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := safetyCanary(t, g, ns, func(c *v1alpha1.Canary) {
		c.Spec.Promotion = &v1alpha1.PromotionPolicy{FailurePolicy: v1alpha1.RestorePrimaryPolicy}
	})
	watchInvariants(t, ns)

	breakPromotion(g, ns, "podinfo:v4")
	waitForPhase(g, c, v1alpha1.PhaseFailed, 90*time.Second)
	g.Expect(conditions.GetReason(c, meta.StalledCondition)).To(Equal(v1alpha1.PromotionFailedReason))

	primary := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo-primary"}, primary)).To(Succeed())
	g.Expect(primary.Spec.Template.Spec.Containers[0].Image).To(Equal("podinfo:v1"))
	g.Expect(primary.Status.AvailableReplicas).To(Equal(int32(2)))
	g.Expect(routeWeights(ns, "podinfo")()).To(Equal("100/0"))
	g.Eventually(func() int32 {
		target := &appsv1.Deployment{}
		_ = k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, target)
		return *target.Spec.Replicas
	}, 10*time.Second).Should(BeZero())
	expectNoUserErrors(t, g, ns)
}

// Path (a): Git reverts the target to the last promoted spec. The primary is
// restored while the canary serves, then traffic returns: Succeeded, Reverted.
func TestPromotionSafety_GitRevertRestoresPrimary(t *testing.T) {
	alone(t, "5 s progress deadline that a loaded testbed misses")
	g := NewWithT(t)
	ns := newNamespace(t)
	c := safetyCanary(t, g, ns)
	watchInvariants(t, ns)

	breakPromotion(g, ns, "podinfo:v4")
	waitForPhase(g, c, v1alpha1.PhaseHalted, 90*time.Second)

	fixTemplate(g, ns, "podinfo:v1")
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 90*time.Second)
	g.Expect(conditions.GetReason(c, meta.ReadyCondition)).To(Equal(v1alpha1.RevertedReason))
	g.Expect(c.Status.LastAppliedSpec).To(Equal(c.Status.LastPromotedSpec))
	g.Expect(routeWeights(ns, "podinfo")()).To(Equal("100/0"))
	primary := &appsv1.Deployment{}
	g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "podinfo-primary"}, primary)).To(Succeed())
	g.Expect(primary.Spec.Template.Spec.Containers[0].Image).To(Equal("podinfo:v1"))
	expectNoUserErrors(t, g, ns)
}

// Path (b): a corrected new revision. The primary is restored first, then
// the new revision is analysed and promoted from a ready primary.
func TestPromotionSafety_CorrectedRevisionIsAnalysed(t *testing.T) {
	alone(t, "5 s progress deadline that a loaded testbed misses")
	g := NewWithT(t)
	ns := newNamespace(t)
	c := safetyCanary(t, g, ns)
	watchInvariants(t, ns)

	breakPromotion(g, ns, "podinfo:v4")
	waitForPhase(g, c, v1alpha1.PhaseHalted, 90*time.Second)
	halted := c.Status.LastAppliedSpec

	fixTemplate(g, ns, "podinfo:v5")
	waitForPhase(g, c, v1alpha1.PhaseProgressing, 60*time.Second)
	g.Expect(c.Status.LastAppliedSpec).NotTo(Equal(halted))
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 90*time.Second)
	primary := &appsv1.Deployment{}
	g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "podinfo-primary"}, primary)).To(Succeed())
	g.Expect(primary.Spec.Template.Spec.Containers[0].Image).To(Equal("podinfo:v5"))
	g.Expect(routeWeights(ns, "podinfo")()).To(Equal("100/0"))
	expectNoUserErrors(t, g, ns)
}

// Promoted means no old pod answers. The quota case, 20 times: a
// ResourceQuota halts the promotion (the primary's surge pod is refused),
// the quota is raised, and the primary's rolling update finishes while
// its old pods terminate. The promotion completes only once no pod of the
// previous revision serves in the primary's endpoints, so that no user
// request sent after the Canary says Succeeded is answered by the old
// version (before: 1 of 250 requests in the next 5 s, in 2 of 3 runs).
// Five namespaces promote four revisions each, in parallel.
func TestPromotionSafety_NoOldPodAnswersAfterSucceeded(t *testing.T) {
	alone(t, "5 namespaces x 4 promotions under load; no stale answer after Succeeded")
	const namespaces, promotions = 5, 4
	var mu sync.Mutex
	late, checked := map[string]int{}, 0
	inNamespaces(t, namespaces, func(g Gomega, ns string) {
		ctx := context.Background()
		c := loadedSafetyCanary(t, g, ns)
		quota := &corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: "pods", Namespace: ns},
			Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("4")}},
		}
		g.Expect(k8s.Create(ctx, quota)).To(Succeed())
		old := "v1"
		for i := range promotions {
			version := fmt.Sprintf("v%d", i+2)
			// 4 pods fit the primary's 2 and the canary's 2, not the
			// primary's surge pod: the promotion halts. The quota counts
			// terminating pods too, and its admission counts from its
			// status: before each release only the primary's pods may
			// be left and counted (the first time, the target's pods
			// that the initialization scaled down may still be going;
			// then the previous release's), or the canary's pods are
			// refused and the canary ends Failed, not Halted.
			onlyThePrimaryCounts(g, ns, quota)
			setImage(g, ns, "podinfo", "podinfo:"+version)
			waitForPhase(g, c, v1alpha1.PhaseHalted, 90*time.Second)
			setQuota(g, quota, "10")
			waitForPhase(g, c, v1alpha1.PhaseSucceeded, 90*time.Second)
			succeeded := c.Status.LastTransitionTime.Time
			time.Sleep(time.Until(succeeded.Add(5 * time.Second)))
			n, last := 0, time.Duration(0)
			for _, s := range usersIn(ns).Samples(succeeded, time.Time{}) {
				if s.Version == old {
					n, last = n+1, s.Sent.Sub(succeeded)
				}
			}
			mu.Lock()
			checked++
			if n > 0 {
				late[fmt.Sprintf("%s %s→%s (last %s after)", ns, old, version, last.Round(time.Millisecond))] = n
			}
			mu.Unlock()
			old = version
		}
		expectNoUserErrors(t, g, ns)
	})
	total := 0
	for _, n := range late {
		total += n
	}
	t.Logf("promotion_no_old_pod promotions=%d answers_by_the_old_version_after_succeeded=%d %v", checked, total, late)
	if checked != namespaces*promotions || total != 0 {
		t.Errorf("%d of %d promotions checked; requests answered by the old version after Succeeded: %v", checked, namespaces*promotions, late)
	}
}

// onlyThePrimaryCounts waits until only the primary's two pods are left in
// ns, sets the quota back to 4 pods and waits until its status counts no
// more than those two.
func onlyThePrimaryCounts(g Gomega, ns string, quota *corev1.ResourceQuota) {
	ctx := context.Background()
	g.Eventually(func() int {
		pods := &corev1.PodList{}
		g.Expect(k8s.List(ctx, pods, client.InNamespace(ns))).To(Succeed())
		return len(pods.Items)
	}, 60*time.Second, 100*time.Millisecond).Should(BeNumerically("<=", 2), "only the primary's pods are left")
	setQuota(g, quota, "4")
	g.Eventually(func() int64 {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(quota), quota)).To(Succeed())
		if hard := quota.Status.Hard[corev1.ResourcePods]; hard.Value() != 4 {
			return math.MaxInt64 // the status does not count against 4 yet
		}
		used := quota.Status.Used[corev1.ResourcePods]
		return used.Value()
	}, 60*time.Second, 100*time.Millisecond).Should(BeNumerically("<=", 2), "the quota counts only the primary's pods")
}

// setQuota sets the ResourceQuota's hard limit on pods.
func setQuota(g Gomega, quota *corev1.ResourceQuota, pods string) {
	g.Eventually(func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(quota), quota); err != nil {
			return err
		}
		quota.Spec.Hard[corev1.ResourcePods] = resource.MustParse(pods)
		return k8s.Update(context.Background(), quota)
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
}

// A rollback takes every request off the canary before its pods go:
// 5 namespaces × 4 rollbacks of a healthy canary aborted at weight 20 or
// more, under the users' load. No request fails for the scale-down (the
// pods would otherwise terminate while the data plane still sends them
// requests), and none is answered by the canary once its scale-down began.
func TestPromotionSafety_RollbackScalesTheCanaryDownOnceUnrouted(t *testing.T) {
	alone(t, "5 namespaces x 4 rollbacks under load; no answer after the scale-down")
	const namespaces, rollbacks = 5, 4
	var mu sync.Mutex
	late, checked, afterFailed := map[string]int{}, 0, 0
	inNamespaces(t, namespaces, func(g Gomega, ns string) {
		ctx := context.Background()
		c := loadedSafetyCanary(t, g, ns)
		for i := range rollbacks {
			version := fmt.Sprintf("v%d", i+2)
			setImage(g, ns, "podinfo", "podinfo:"+version)
			g.Eventually(func() bool {
				for _, s := range usersIn(ns).Samples(time.Now().Add(-time.Second), time.Time{}) {
					if s.Version == version {
						return true
					}
				}
				return false
			}, 60*time.Second, 100*time.Millisecond).Should(BeTrue(), "the canary %s answers the users", version)
			g.Eventually(func() error {
				cur := &v1alpha1.Canary{}
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), cur); err != nil {
					return err
				}
				patch := client.MergeFrom(cur.DeepCopy())
				metav1.SetMetaDataAnnotation(&cur.ObjectMeta, v1alpha1.AbortRequestAnnotation, version)
				return k8s.Patch(ctx, cur, patch)
			}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
			waitForPhase(g, c, v1alpha1.PhaseFailed, 60*time.Second)
			failed := c.Status.LastTransitionTime.Time
			// The scale-down began after the last time the target was
			// seen with replicas.
			var scaledDown time.Time
			g.Eventually(func() int32 {
				read := time.Now()
				d := &appsv1.Deployment{}
				g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, d)).To(Succeed())
				if *d.Spec.Replicas > 0 {
					scaledDown = read
				}
				return *d.Spec.Replicas
			}, 60*time.Second, 20*time.Millisecond).Should(BeZero(), "the canary is scaled down")
			if scaledDown.Before(failed) {
				scaledDown = failed // scaled down with the rollback itself
			}
			time.Sleep(3 * time.Second)
			n, m := 0, 0
			for _, s := range usersIn(ns).Samples(failed, time.Time{}) {
				switch {
				case s.Version == version && s.Sent.After(scaledDown):
					n++
				case s.Version == version:
					m++
				}
			}
			mu.Lock()
			checked++
			afterFailed += m
			if n > 0 {
				late[fmt.Sprintf("%s %s", ns, version)] = n
			}
			mu.Unlock()
		}
		expectNoUserErrors(t, g, ns)
	})
	total := 0
	for _, n := range late {
		total += n
	}
	t.Logf("rollback_scale_down rollbacks=%d answers_by_the_canary_after_its_scale_down=%d answers_by_the_canary_between_failed_and_scale_down=%d %v", checked, total, afterFailed, late)
	if checked != namespaces*rollbacks || total != 0 {
		t.Errorf("%d of %d rollbacks checked; requests answered by the canary after its scale-down began: %v", checked, namespaces*rollbacks, late)
	}
}
