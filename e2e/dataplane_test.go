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
	"strconv"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// What Traefik does with a filter it lacks, shown on its own route (no
// Canary): the CORS filter's rule answers every request with a 500 while
// the route stays Accepted. This is why serin refuses to write one there;
// the day Traefik implements it, this test fails and the guard can go.
func TestDataPlane_TraefikServes500ForACORSFilter(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	gatewayCanary(t, g, ns) // the app's pods and Services; its users call appHost
	host := "cors." + ns + ".serin.test"
	createRoute(t, g, ns, "cors", host, "podinfo-primary")
	route := &gatewayv1.HTTPRoute{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "cors"}, route)).To(Succeed())
	patch := client.MergeFrom(route.DeepCopy())
	route.Spec.Rules[0].Filters = []gatewayv1.HTTPRouteFilter{{
		Type: gatewayv1.HTTPRouteFilterCORS,
		CORS: &gatewayv1.HTTPCORSFilter{AllowOrigins: []gatewayv1.CORSOrigin{"https://example.com"}},
	}}
	g.Expect(k8s.Patch(ctx, route, patch)).To(Succeed())

	callers := startUsers(t, host)
	// Once Traefik applied the filter, every request of the rule fails.
	g.Eventually(func() map[int]int {
		return callers.Counts(time.Now().Add(-2*time.Second), time.Time{}).ByCode
	}, 30*time.Second, 200*time.Millisecond).Should(And(HaveLen(1), HaveKey(500)), "Traefik serves the CORS rule")
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "cors"}, route)).To(Succeed())
	accepted := false
	for _, p := range route.Status.Parents {
		for _, c := range p.Conditions {
			accepted = accepted || (c.Type == string(gatewayv1.RouteConditionAccepted) && c.Status == "True")
		}
	}
	g.Expect(accepted).To(BeTrue(), "and the route reads Accepted: a controller cannot tell from the status")
}

// A Canary on Traefik that asks for a CORS policy stalls with a message
// that says what to change, and writes nothing: the route keeps serving as
// it was and no user sees an error. Without the field, it is Ready again.
func TestDataPlane_UnsupportedFilterStallsAndKeepsTheRoute(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := gatewayCanary(t, g, ns)
	before := &gatewayv1.HTTPRoute{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, before)).To(Succeed())

	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
	patch := client.MergeFrom(c.DeepCopy())
	c.Spec.Routing.CorsPolicy = &v1alpha1.HTTPCORSFilter{AllowOrigins: []string{"https://example.com"}}
	g.Expect(k8s.Patch(ctx, c, patch)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(conditions.GetReason(c, meta.StalledCondition)).To(Equal(v1alpha1.UnsupportedByDataPlaneReason))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	msg := conditions.GetMessage(c, meta.StalledCondition)
	t.Logf("Stalled: %s", msg)
	g.Expect(msg).To(ContainSubstring("spec.routing.corsPolicy"))
	g.Expect(msg).To(ContainSubstring("answers every request of the route with a 500"))

	// A new revision does not start either: no route may be written.
	setImage(g, ns, "podinfo", "podinfo:v2")
	time.Sleep(3 * interval)
	after := &gatewayv1.HTTPRoute{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, after)).To(Succeed())
	g.Expect(after.Generation).To(Equal(before.Generation), "the route was not written")
	g.Expect(after.Spec.Rules[0].Filters).To(BeEmpty())
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
	g.Expect(c.Status.Phase).To(Equal(v1alpha1.PhaseInitialized), "the revision waits")

	// Removed: the rollout goes on.
	patch = client.MergeFrom(c.DeepCopy())
	c.Spec.Routing.CorsPolicy = nil
	g.Expect(k8s.Patch(ctx, c, patch)).To(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 90*time.Second)
	g.Expect(conditions.IsReady(c)).To(BeTrue())
	expectNoUserErrors(t, g, ns)
}

// The built-in checks of data plane application read what the canary's own
// pods say they served (http_request_duration_seconds, which each testbed
// pod exports with its namespace and pod labels and Prometheus scrapes):
// blue/green with plain Kubernetes routing, where no proxy's metrics tell
// the canary apart. A good revision passes both checks on the tester's
// traffic and is promoted, its record holding the values (a success rate of
// 100); a revision whose pods fail half their requests fails the success
// rate and is rolled back, its record holding the value that decided it,
// and no user ever reaches it.
func TestDataPlane_ApplicationMetricsJudgeBlueGreen(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	g.Expect(k8s.Create(ctx, testobj.MakeDeployment("podinfo", ns).Image("podinfo:v1").Obj())).To(Succeed())
	window := &metav1.Duration{Duration: 5 * time.Second}
	c := testobj.MakeCanary("podinfo", ns).ProgressDeadlineSeconds(30).
		Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.KubernetesRouting, DataPlane: v1alpha1.ApplicationDataPlane}).
		Analysis(v1alpha1.CanaryAnalysis{
			Interval:   &metav1.Duration{Duration: interval},
			Threshold:  2,
			Iterations: 3,
			Metrics: []v1alpha1.CanaryMetric{
				{Name: v1alpha1.RequestSuccessRateCheck, Interval: window, ThresholdRange: &v1alpha1.ThresholdRange{Min: ptr.To(99.0)}},
				{Name: v1alpha1.RequestDurationCheck, Interval: window, ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(500.0)}},
			},
		}).Obj()
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseInitialized, 30*time.Second)
	startBlueGreenTraffic(t, g, ns)

	releaseRevision(g, ns, "podinfo", "podinfo:v2", nil)
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 90*time.Second)
	g.Expect(c.Status.Analyses).NotTo(BeEmpty())
	passed := checksOf(c.Status.Analyses[0], v1alpha1.VerdictPassed)
	t.Logf("promoted v2: %v", passed)
	g.Expect(passed).To(HaveKeyWithValue(v1alpha1.RequestSuccessRateCheck, BeNumerically("~", 100, 1e-9)), "the canary's pods answered every request")
	g.Expect(passed).To(HaveKey(v1alpha1.RequestDurationCheck))
	g.Eventually(func() string { return lastVersion(usersIn(ns)) }, 5*time.Second).Should(Equal("v2"))

	failedAt := time.Now()
	releaseRevision(g, ns, "podinfo", "podinfo:v3", erroring(50))
	waitForPhase(g, c, v1alpha1.PhaseFailed, 90*time.Second)
	failed := checksOf(c.Status.Analyses[0], v1alpha1.VerdictFailed)
	t.Logf("rolled back v3: %v (%s)", failed, c.Status.Analyses[0].Message)
	g.Expect(failed).To(HaveKeyWithValue(v1alpha1.RequestSuccessRateCheck, BeNumerically("~", 50, 10)),
		"the success rate the canary's pods reported decided it")
	after := usersIn(ns).Counts(failedAt, time.Now())
	g.Expect(after.ByVersion).To(HaveLen(1), "the users never reach v3: %v", after.ByVersion)
	g.Expect(after.ByVersion).To(HaveKey("v2"))
	expectNoUserErrors(t, g, ns)
}

// checksOf gathers the values of the checks with a verdict in an analysis
// record, the last value of each.
func checksOf(r v1alpha1.AnalysisRecord, verdict string) map[string]float64 {
	values := map[string]float64{}
	for _, step := range r.Steps {
		for _, check := range step.Checks {
			if check.Verdict != verdict {
				continue
			}
			if v, err := strconv.ParseFloat(check.Value, 64); err == nil {
				values[check.Name] = v
			}
		}
	}
	return values
}
