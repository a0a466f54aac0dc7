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
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// grpcHost is the hostname of the GRPCRoute of grpcApp.
func grpcHost(ns string) string { return "grpc." + ns + ".serin.test" }

// grpcApp is a fleet whose ./apps/podinfo holds podinfo at tag (its pods
// failing errorPct % of their calls with UNAVAILABLE), the Canary steering
// the user's GRPCRoute podinfo-grpc and judging the canary by its gRPC
// codes (the built-in grpc-success-rate: Traefik's codes on dataPlane
// traefik, the pods' grpc_server_handled_total on application), and
// that route: a rule of another service first, then podinfo's health
// service, with a header filter.
func grpcApp(ns, tag string, errorPct int, dataPlane v1alpha1.DataPlane) map[string]string {
	// storeApp's kustomization, podinfo and storefront; a Canary and a
	// route of their own.
	files := storeApp(ns, tag, errorPct, "")
	for name, content := range map[string]string{
		"apps/podinfo/canary.yaml": fmt.Sprintf(`apiVersion: serin.dev/v1alpha1
kind: Canary
metadata:
  name: podinfo
spec:
  targetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: podinfo
  progressDeadlineSeconds: 60
  service:
    port: 9898
    appProtocol: kubernetes.io/h2c
  routing:
    provider: gatewayapi
    dataPlane: %s
    routeRefs:
      - kind: GRPCRoute
        name: podinfo-grpc
  analysis:
    interval: 2s
    threshold: 2
    stepWeight: 20
    maxWeight: 60
    metrics:
      - name: grpc-success-rate
        interval: 3s
        thresholdRange:
          min: 99
`, dataPlane),
		"apps/podinfo/route.yaml": fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata:
  name: podinfo-grpc
spec:
  parentRefs:
    - name: %s
      namespace: %s
  hostnames:
    - %s
  rules:
    - matches:
        - method:
            service: shop.Cart
      backendRefs:
        - name: storefront
          port: 9898
    - matches:
        - method:
            service: grpc.health.v1.Health
      filters:
        - type: RequestHeaderModifier
          requestHeaderModifier:
            set:
              - name: %s
                value: grpc
      backendRefs:
        - name: podinfo
          port: 9898
`, testbed.GatewayName, testbed.GatewayNamespace, grpcHost(ns), strings.ToLower(testbed.TagHeader)),
	} {
		files[name] = content
	}
	return files
}

// grpcKustomization is the Kustomization's spec beyond newFleet's: Flux
// applies the route every 5 s and leaves the backends of podinfo's rule
// (the route's second) to serin, as docs/guides/gateway-api-routes.md says.
var grpcKustomization = map[string]any{
	"interval": "5s",
	"ignore": []any{map[string]any{
		"paths":  []any{"/spec/rules/1/backendRefs"},
		"target": map[string]any{"group": "gateway.networking.k8s.io", "kind": "GRPCRoute", "name": "podinfo-grpc"},
	}},
}

// failedChecks are the names of the checks that failed a step of the
// newest analysis record.
func failedChecks(c *v1alpha1.Canary) []string {
	var out []string
	if len(c.Status.Analyses) == 0 {
		return nil
	}
	for _, s := range c.Status.Analyses[0].Steps {
		for _, ch := range s.Checks {
			if ch.Verdict == v1alpha1.VerdictFailed {
				out = append(out, ch.Name)
			}
		}
	}
	return out
}

// grpcBackendsNow renders the backends of podinfo's rule of the GRPCRoute
// as the cluster has it ("name:port=weight" each; "" when it cannot be
// read).
func grpcBackendsNow(ns string) string {
	route := &gatewayv1.GRPCRoute{}
	if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "podinfo-grpc"}, route); err != nil || len(route.Spec.Rules) < 2 {
		return ""
	}
	var refs []gatewayv1.BackendRef
	for _, b := range route.Spec.Rules[1].BackendRefs {
		refs = append(refs, b.BackendRef)
	}
	return renderBackends(refs)
}

// A gRPC app behind the user's GRPCRoute, kept in Git and applied by Flux
// every 5 s with the guide's drift ignore rule: serin walks the weights of
// podinfo's rule 20→40→60 while gRPC clients call the health service
// through Traefik, the filter reaches every backend, and promotion leaves
// the route as in Git; a revision whose calls fail with UNAVAILABLE is
// judged by the gRPC codes its pods report and rolled back. Every call
// counted went through Traefik's GRPCRoute.
func TestRouteRefs_GRPCRouteInGitCarriesTheRollout(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	f, c := initializedFleet(t, g, ns, grpcApp(ns, "v1", 0, v1alpha1.TraefikDataPlane), grpcKustomization)
	for _, name := range []string{"podinfo", "podinfo-primary", "podinfo-canary"} {
		svc := &corev1.Service{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, svc)).To(Succeed())
		g.Expect(svc.Spec.Ports[0].AppProtocol).To(HaveValue(Equal("kubernetes.io/h2c")), "service.appProtocol on %s", name)
	}

	users := testbed.StartLoad(ctx, testbed.LoadOptions{URL: gateway.URL, Host: grpcHost(ns), GRPC: true, Rate: 40, Duration: time.Hour})
	t.Cleanup(users.Stop)
	g.Eventually(func() string { return lastVersion(users) }, 30*time.Second).Should(Equal("v1"), "podinfo answers gRPC through the user's GRPCRoute")
	g.Expect(grpcBackendsNow(ns)).To(Equal("podinfo:9898=1"), "between rollouts podinfo's rule is as in Git")
	weights := sample(t, func() string { return grpcBackendsNow(ns) })
	start := time.Now()

	f.sync(g, f.push(grpcApp(ns, "v2", 0, v1alpha1.TraefikDataPlane), "podinfo v2"))
	waitForPhase(g, c, v1alpha1.PhaseProgressing, 60*time.Second)
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 120*time.Second)
	time.Sleep(time.Second)
	end := time.Now()

	seen := strings.Join(weights.seen(), " ")
	for _, w := range []string{"podinfo-primary:9898=80,podinfo-canary:9898=20", "podinfo-primary:9898=60,podinfo-canary:9898=40", "podinfo-primary:9898=40,podinfo-canary:9898=60"} {
		g.Expect(seen).To(ContainSubstring(w), "the weights walked their steps on the user's GRPCRoute")
	}
	g.Expect(grpcBackendsNow(ns)).To(Equal("podinfo:9898=1"), "promoted: podinfo's rule is as in Git")
	route := &gatewayv1.GRPCRoute{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo-grpc"}, route)).To(Succeed())
	g.Expect(route.Spec.Rules[0].BackendRefs).To(HaveLen(1))
	g.Expect(string(route.Spec.Rules[0].BackendRefs[0].Name)).To(Equal("storefront"), "the other service's rule never moved")
	g.Expect(route.Annotations).To(HaveKeyWithValue("serin.dev/steered-by", "podinfo"))

	calls := users.Counts(start, end)
	t.Logf("gRPC users over the rollout (%s): %d calls, by version %v, by code %v, by tag %v", end.Sub(start).Round(time.Second), calls.Total, calls.ByVersion, calls.ByCode, calls.ByTag)
	g.Expect(calls.Errors).To(BeZero(), "no gRPC call failed")
	g.Expect(calls.ByVersion["v2"]).To(BeNumerically(">", 0), "the canary answered gRPC calls through the user's route")
	g.Expect(calls.ByTag).To(Equal(map[string]int{"grpc": calls.Total}), "the rule's filter reached every backend, primary and canary")
	g.Expect(lastVersion(users)).To(Equal("v2"))

	// v3 fails every call, judged by the codes its pods report (data
	// plane application): rolled back, the route as in Git again.
	bad := failingGRPCRevision(t, g, f, c, users, ns, "v3", v1alpha1.ApplicationDataPlane)
	g.Expect(bad[http.StatusServiceUnavailable]).To(BeNumerically(">", 0), "v3 served some calls, which failed")

	// v4 fails every call, judged by Traefik's codes. What Traefik
	// counted of its calls: UNAVAILABLE (gRPC code 14) and no HTTP 5xx,
	// which the data plane's request-success-rate would have passed.
	failing := time.Now()
	bad = failingGRPCRevision(t, g, f, c, users, ns, "v4", v1alpha1.TraefikDataPlane)
	g.Expect(bad[http.StatusServiceUnavailable]).To(BeNumerically(">", 0), "v4 served some calls, which failed")
	canary := fmt.Sprintf(`traefik_service_requests_total{service="%s-podinfo-canary-9898-grpc@kubernetesgateway"`, ns)
	window := fmt.Sprintf("[%ds]", int(time.Since(failing).Seconds())+5)
	g.Eventually(func(g Gomega) {
		unavailable, found, err := promValue(ctx, `sum(increase(`+canary+`,code="14"}`+window+`))`)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(found).To(BeTrue())
		g.Expect(unavailable).To(BeNumerically(">", 0), "Traefik counted v4's calls as UNAVAILABLE")
	}, 10*time.Second, 500*time.Millisecond).Should(Succeed())
	http5xx, _, err := promValue(ctx, `sum(increase(`+canary+`,code=~"5.."}`+window+`)) or vector(0)`)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(http5xx).To(BeZero(), "Traefik counted an HTTP 5xx for a gRPC call")
}

// failingGRPCRevision releases tag, whose calls all fail with UNAVAILABLE,
// judged on dataPlane, and waits for its rollback: the Canary Failed by
// grpc-success-rate, podinfo's rule as in Git, v2 answering again, and
// only tag's answers failed. It returns the calls' codes meanwhile.
func failingGRPCRevision(t *testing.T, g Gomega, f *fleet, c *v1alpha1.Canary, users *testbed.Load, ns, tag string, dataPlane v1alpha1.DataPlane) map[int]int {
	start := time.Now()
	commit := f.push(grpcApp(ns, tag, 100, dataPlane), "podinfo "+tag)
	f.sync(g, commit)
	// The verdict on this commit: the Canary may still be Failed from the
	// revision before when Flux has applied it.
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(c.Status.LastAttemptedRevision).To(Equal("main@sha1:" + commit))
		g.Expect(c.Status.Phase).To(Equal(v1alpha1.PhaseFailed))
		g.Expect(c.Status.Analyses).NotTo(BeEmpty())
		g.Expect(c.Status.Analyses[0].Revision).To(Equal("main@sha1:"+commit), "the newest analysis record is this revision's")
	}, 120*time.Second, 100*time.Millisecond).Should(Succeed(), "%s rolled back", tag)
	g.Eventually(grpcBackendsNow, 10*time.Second, 100*time.Millisecond).WithArguments(ns).Should(Equal("podinfo:9898=1"), "rolled back: podinfo's rule is as in Git")
	// Gone from the users' answers: none of tag's in the last second (the
	// data plane applies the rolled-back route within moments).
	g.Eventually(func(g Gomega) {
		last := users.Counts(time.Now().Add(-time.Second), time.Time{})
		g.Expect(last.ByVersion).To(HaveKey("v2"))
		g.Expect(last.ByVersion).NotTo(HaveKey(tag))
	}, 10*time.Second, 200*time.Millisecond).Should(Succeed(), "v2 alone answers after %s's rollback", tag)
	g.Expect(failedChecks(c)).To(ContainElement(v1alpha1.GRPCSuccessRateCheck), "the gRPC codes judged %s", tag)
	bad := users.Counts(start, time.Now())
	t.Logf("gRPC users while %s was judged on %s: %d calls, by version %v, by code %v", tag, dataPlane, bad.Total, bad.ByVersion, bad.ByCode)
	g.Expect(bad.ByCode[http.StatusServiceUnavailable]).To(BeNumerically("<=", bad.ByVersion[tag]), "only %s's answers failed", tag)
	return bad.ByCode
}
