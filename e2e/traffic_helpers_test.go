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
	"net/http"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// appPort is the port of the test app's Services (testobj's container port).
const appPort = 9898

// appHost is the hostname of a test namespace's app on the testbed's
// Gateway: every test has its own, so that routes of different tests on the
// one Gateway never overlap.
func appHost(ns string) string { return ns + ".serin.test" }

// canaryHost is the hostname of a route straight to the canary Service, as
// Flagger's load tester calls it during a blue/green analysis.
func canaryHost(ns string) string { return "canary." + ns + ".serin.test" }

// gatewayRouting is the routing of a test Canary on the testbed's Gateway
// (Traefik), under the test's own hostname.
func gatewayRouting(ns string) v1alpha1.CanaryRouting {
	return v1alpha1.CanaryRouting{
		Provider:    v1alpha1.GatewayAPIRouting,
		GatewayRefs: []v1alpha1.GatewayReference{{Name: testbed.GatewayName, Namespace: testbed.GatewayNamespace}},
		Hosts:       []string{appHost(ns)},
	}
}

// users holds the users' load of each test namespace (gatewayCanary
// starts it).
var users sync.Map

// usersIn returns the users' load of a test namespace.
func usersIn(ns string) *testbed.Load {
	l, _ := users.Load(ns)
	return l.(*testbed.Load)
}

// expectNoUserErrors checks that no request of the users of ns failed
// since the app first answered them (before, the Gateway may not have
// programmed the new route yet), and logs what they saw.
func expectNoUserErrors(t testing.TB, g Gomega, ns string) {
	t.Helper()
	c := usersIn(ns).Counts(firstAnswer(usersIn(ns)), time.Now().Add(-time.Second))
	t.Logf("users: %d requests through Traefik, by version %v, by code %v", c.Total, c.ByVersion, c.ByCode)
	g.Expect(c.Total).To(BeNumerically(">", 0), "the users sent requests")
	g.Expect(c.Errors).To(BeZero(), "a user saw an error: %v", c.ByCode)
}

// startUsers sends the app's users' requests through Traefik to host (50
// per second), until the test ends.
func startUsers(t testing.TB, host string) *testbed.Load {
	t.Helper()
	return startUsersWith(t, host, nil)
}

// startUsersWith is startUsers for users whose requests carry header (the
// header or cookie an A/B test matches).
func startUsersWith(t testing.TB, host string, header http.Header) *testbed.Load {
	t.Helper()
	// The users stay until the test ends (its cleanup stops them): a test
	// that outlives a fixed duration on a slow machine (the chaos test
	// runs its rollouts for 5–9 minutes) would otherwise judge canaries
	// that nobody calls any more. The hour only bounds a leak.
	l := testbed.StartLoad(context.Background(), testbed.LoadOptions{URL: gateway.URL + "/", Host: host, Header: header, Rate: 50, Duration: time.Hour})
	t.Cleanup(l.Stop)
	return l
}

// createRoute creates an HTTPRoute on the testbed's Gateway sending every
// request for host to one Service of the app.
func createRoute(t testing.TB, g Gomega, ns, name, host, service string) {
	t.Helper()
	route := &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{
				Name: testbed.GatewayName, Namespace: ptr.To(gatewayv1.Namespace(testbed.GatewayNamespace)),
			}}},
			Hostnames: []gatewayv1.Hostname{gatewayv1.Hostname(host)},
			Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
				BackendObjectReference: gatewayv1.BackendObjectReference{
					Name: gatewayv1.ObjectName(service), Port: ptr.To(gatewayv1.PortNumber(appPort)),
				},
			}}}}},
		},
	}
	g.Expect(k8s.Create(context.Background(), route)).To(Succeed())
}

// startCanaryTester routes canaryHost(ns) to the canary Service of the app
// and sends requests to it: the traffic a blue/green analysis judges (the
// apex Service keeps selecting the primary until the promotion).
func startCanaryTester(t testing.TB, g Gomega, ns, app string) *testbed.Load {
	t.Helper()
	createRoute(t, g, ns, app+"-canary-tester", canaryHost(ns), app+"-canary")
	return startUsers(t, canaryHost(ns))
}

// startBlueGreenTraffic sends the users of podinfo (v1) through its apex
// Service, once they reach v1, and a tester through <apex>-canary, as a
// blue/green analysis needs.
func startBlueGreenTraffic(t *testing.T, g Gomega, ns string) {
	t.Helper()
	createRoute(t, g, ns, "podinfo", appHost(ns), "podinfo")
	g.Eventually(func() string { return lastVersion(startOnce(t, ns)) }, 10*time.Second).Should(Equal("v1"))
	startCanaryTester(t, g, ns, "podinfo")
}

// releaseRevision rolls a new revision of a Deployment, as a Git commit
// would: a new image, and pod annotations that make the app err or slow
// down (testbed.ErrorPercentAnnotation, testbed.LatencyAnnotation); nil
// keeps the template's annotations, an empty map clears them.
func releaseRevision(g Gomega, ns, name, image string, annotations map[string]string) {
	d := &appsv1.Deployment{}
	g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, d)).To(Succeed())
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Template.Spec.Containers[0].Image = image
	if annotations != nil {
		d.Spec.Template.Annotations = annotations
	}
	g.Expect(k8s.Patch(context.Background(), d, patch)).To(Succeed())
}

// erroring is the pod annotation of a revision that answers pct % 5xx.
func erroring(pct int) map[string]string {
	return map[string]string{testbed.ErrorPercentAnnotation: fmt.Sprint(pct)}
}

// lastVersion is the version that answered the load's latest request.
func lastVersion(l *testbed.Load) string {
	s := l.Samples(time.Now().Add(-time.Second), time.Time{})
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1].Version
}

// firstAnswer is when the app first answered the load with a 2xx.
func firstAnswer(l *testbed.Load) time.Time {
	for _, s := range l.Samples(time.Time{}, time.Time{}) {
		if s.OK() {
			return s.Sent
		}
	}
	return time.Time{}
}

// builtinChecks are Flagger's built-in checks on the canary's real traffic,
// as the agent's --metrics-server Prometheus sees it from Traefik: at least
// 99% of non-5xx answers, a p99 latency under 500 ms.
func builtinChecks() []v1alpha1.CanaryMetric {
	window := &metav1.Duration{Duration: 3 * time.Second}
	return []v1alpha1.CanaryMetric{
		{Name: v1alpha1.RequestSuccessRateCheck, ThresholdRange: &v1alpha1.ThresholdRange{Min: ptrFloat(99)}, Interval: window},
		{Name: v1alpha1.RequestDurationCheck, ThresholdRange: &v1alpha1.ThresholdRange{Max: ptrFloat(500)}, Interval: window},
	}
}

// withBuiltinChecks makes a test Canary judge its canary with builtinChecks.
func withBuiltinChecks(c *v1alpha1.Canary) { c.Spec.Analysis.Metrics = builtinChecks() }
