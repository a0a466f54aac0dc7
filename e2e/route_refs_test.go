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
	"net/http"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
	"github.com/serin-dev/serin/routing"
)

// storeApp is a fleet whose ./apps/podinfo holds podinfo at tag (its pods
// answering errorPct % 500s), a storefront Deployment and Service, the
// Canary steering the user's route shop, and that route: the storefront's
// rule first, then podinfo's, both with a request-header filter, podinfo's
// with a timeout; extra rules come last.
func storeApp(ns, tag string, errorPct int, extraRules string) map[string]string {
	meta := ""
	if errorPct > 0 {
		meta = fmt.Sprintf("\n      annotations:\n        %s: %q", testbed.ErrorPercentAnnotation, fmt.Sprint(errorPct))
	}
	return map[string]string{
		"apps/podinfo/kustomization.yaml": fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: %s
resources:
  - deployment.yaml
  - storefront.yaml
  - canary.yaml
  - route.yaml
images:
  - name: podinfo
    newTag: %s
  - name: storefront
    newTag: s1
`, ns, tag),
		"apps/podinfo/deployment.yaml": podinfoDeployment(meta),
		"apps/podinfo/storefront.yaml": strings.ReplaceAll(podinfoDeployment(""), "podinfo", "storefront") + `---
apiVersion: v1
kind: Service
metadata:
  name: storefront
spec:
  selector:
    app: storefront
  ports:
    - name: http
      port: 9898
      targetPort: http
`,
		"apps/podinfo/canary.yaml": `apiVersion: serin.dev/v1alpha1
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
  routing:
    provider: gatewayapi
    routeRefs:
      - name: shop
  analysis:
    interval: 2s
    threshold: 2
    stepWeight: 20
    maxWeight: 60
    metrics:
      - name: request-success-rate
        interval: 3s
        thresholdRange:
          min: 99
`,
		"apps/podinfo/route.yaml": fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: shop
spec:
  parentRefs:
    - name: %s
      namespace: %s
  hostnames:
    - %s
  rules:
    - matches:
        - path:
            type: PathPrefix
            value: /storefront
      filters:
        - type: RequestHeaderModifier
          requestHeaderModifier:
            set:
              - name: %s
                value: storefront
      backendRefs:
        - name: storefront
          port: 9898
    - matches:
        - path:
            type: PathPrefix
            value: /
      filters:
        - type: RequestHeaderModifier
          requestHeaderModifier:
            set:
              - name: %s
                value: shop
      timeouts:
        request: 10s
      backendRefs:
        - name: podinfo
          port: 9898
%s`, testbed.GatewayName, testbed.GatewayNamespace, appHost(ns), testbed.TagHeader, testbed.TagHeader, extraRules),
	}
}

// adminRule is a rule a user commits to the route during a rollout.
const adminRule = `    - matches:
        - path:
            type: PathPrefix
            value: /admin
      backendRefs:
        - name: storefront
          port: 9898
`

// shopKustomization is the Kustomization's spec beyond newFleet's: Flux
// applies the route every 5 s, and leaves the backends of podinfo's rule
// (the route's second) to serin, as docs/gateway-api-routes.md says.
var shopKustomization = map[string]any{
	"interval": "5s",
	"ignore": []any{map[string]any{
		"paths":  []any{"/spec/rules/1/backendRefs"},
		"target": map[string]any{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "shop"},
	}},
}

// appBackends renders the backends of podinfo's rule of the route shop as
// the cluster has it: "name:port=weight" each.
func appBackends(g Gomega, ns string) string {
	s := appBackendsNow(ns)
	g.Expect(s).NotTo(BeEmpty(), "the route shop and its podinfo rule")
	return s
}

// appBackendsNow is appBackends for a sampler: "" when the route cannot be
// read.
func appBackendsNow(ns string) string {
	route := &gatewayv1.HTTPRoute{}
	if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "shop"}, route); err != nil || len(route.Spec.Rules) < 2 {
		return ""
	}
	var refs []gatewayv1.BackendRef
	for _, b := range route.Spec.Rules[1].BackendRefs {
		refs = append(refs, b.BackendRef)
	}
	return renderBackends(refs)
}

// renderBackends renders a rule's backends: "name:port=weight" each.
func renderBackends(refs []gatewayv1.BackendRef) string {
	var parts []string
	for _, b := range refs {
		s := string(b.Name)
		if b.Port != nil {
			s += fmt.Sprintf(":%d", *b.Port)
		}
		if b.Weight != nil {
			s += fmt.Sprintf("=%d", *b.Weight)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ",")
}

// initializedFleet is newFleetWithKustomization and the podinfo Canary its
// files hold, once it is initialized.
func initializedFleet(t *testing.T, g Gomega, ns string, files map[string]string, kustomization map[string]any) (*fleet, *v1alpha1.Canary) {
	t.Helper()
	f := newFleetWithKustomization(t, g, ns, files, kustomization)
	c := &v1alpha1.Canary{}
	c.Namespace, c.Name = ns, "podinfo"
	g.Eventually(func() error { return k8s.Get(context.Background(), client.ObjectKeyFromObject(c), c) }, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseInitialized, 60*time.Second)
	return f, c
}

// A user's HTTPRoute, kept in Git and applied by Flux every 5 s with the
// guide's drift ignore rule: serin walks the weights of podinfo's rule
// 20→40→60, the storefront's rule never moves, the filters reach every
// backend, a rule committed mid-rollout reaches the cluster with serin's
// weights intact, and promotion and rollback leave the route as in Git.
// Every request counted went through Traefik.
func TestRouteRefs_UsersRouteInGitKeepsItsRulesAndWeights(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	f, c := initializedFleet(t, g, ns, storeApp(ns, "v1", 0, ""), shopKustomization)

	app := startUsers(t, appHost(ns))
	shop := testbed.StartLoad(ctx, testbed.LoadOptions{URL: gateway.URL + "/storefront", Host: appHost(ns), Rate: 20, Duration: time.Hour})
	t.Cleanup(shop.Stop)
	g.Eventually(func() string { return lastVersion(app) }, 30*time.Second).Should(Equal("v1"), "podinfo answers through the user's route")
	g.Eventually(func() string { return lastVersion(shop) }, 30*time.Second).Should(Equal("s1"), "the storefront answers through the user's route")
	g.Expect(appBackends(g, ns)).To(Equal("podinfo:9898=1"), "between rollouts podinfo's rule is as in Git")
	weights := sample(t, func() string { return appBackendsNow(ns) })
	start := time.Now()

	// v2, by a commit: the weights walk; mid-rollout a commit adds a rule.
	f.sync(g, f.push(storeApp(ns, "v2", 0, ""), "podinfo v2"))
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(c.Status.Phase).To(Equal(v1alpha1.PhaseProgressing))
		g.Expect(c.Status.CanaryWeight).To(BeNumerically(">=", 20))
	}, 60*time.Second, 100*time.Millisecond).Should(Succeed())
	f.sync(g, f.push(storeApp(ns, "v2", 0, adminRule), "Add the admin rule"))
	route := &gatewayv1.HTTPRoute{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "shop"}, route)).To(Succeed())
	g.Expect(route.Spec.Rules).To(HaveLen(3), "the rule committed mid-rollout reached the cluster")
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
	if c.Status.Phase == v1alpha1.PhaseProgressing {
		g.Expect(appBackends(g, ns)).To(HavePrefix("podinfo-primary:9898="), "serin's weights survived Flux applying the new commit")
	}
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 120*time.Second)
	time.Sleep(time.Second)
	end := time.Now()

	seen := strings.Join(weights.seen(), " ")
	for _, w := range []string{"podinfo-primary:9898=80,podinfo-canary:9898=20", "podinfo-primary:9898=60,podinfo-canary:9898=40", "podinfo-primary:9898=40,podinfo-canary:9898=60"} {
		g.Expect(seen).To(ContainSubstring(w), "the weights walked their steps on the user's route")
	}
	g.Expect(appBackends(g, ns)).To(Equal("podinfo:9898=1"), "promoted: podinfo's rule is as in Git")
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "shop"}, route)).To(Succeed())
	g.Expect(route.Spec.Rules).To(HaveLen(3))
	g.Expect(route.Spec.Rules[0].BackendRefs).To(HaveLen(1))
	g.Expect(string(route.Spec.Rules[0].BackendRefs[0].Name)).To(Equal("storefront"), "the storefront's rule never moved")
	g.Expect(route.Annotations).To(HaveKeyWithValue("serin.dev/steered-by", "podinfo"))
	g.Expect(route.Annotations).NotTo(HaveKey("serin.dev/rest-backends"))

	apps := app.Counts(start, end)
	t.Logf("podinfo's users over the rollout (%s): %d requests, by version %v, by code %v, by tag %v", end.Sub(start).Round(time.Second), apps.Total, apps.ByVersion, apps.ByCode, apps.ByTag)
	g.Expect(apps.Errors).To(BeZero(), "no podinfo user saw an error")
	g.Expect(apps.ByVersion["v2"]).To(BeNumerically(">", 0), "the canary served users through the user's route")
	g.Expect(apps.ByTag).To(Equal(map[string]int{"shop": apps.Total}), "the rule's filter reached every backend, primary and canary")
	shops := shop.Counts(start, end)
	t.Logf("storefront's users: %d requests, by version %v, by code %v, by tag %v", shops.Total, shops.ByVersion, shops.ByCode, shops.ByTag)
	g.Expect(shops.Errors).To(BeZero())
	g.Expect(shops.ByVersion).To(Equal(map[string]int{"s1": shops.Total}), "the storefront's traffic never moved")
	g.Expect(shops.ByTag).To(Equal(map[string]int{"storefront": shops.Total}))
	g.Expect(lastVersion(app)).To(Equal("v2"))

	// v3 errs: rolled back, the route as in Git again.
	f.sync(g, f.push(storeApp(ns, "v3", 50, adminRule), "podinfo v3"))
	waitForPhase(g, c, v1alpha1.PhaseFailed, 120*time.Second)
	g.Eventually(func(g Gomega) string { return appBackends(g, ns) }, 10*time.Second, 100*time.Millisecond).Should(Equal("podinfo:9898=1"), "rolled back: podinfo's rule is as in Git")
	g.Eventually(func() string { return lastVersion(app) }, 10*time.Second).Should(Equal("v2"))
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "shop"}, route)).To(Succeed())
	g.Expect(route.Spec.Rules).To(HaveLen(3), "the rollback kept Git's rules")
}

// pinnedStoreApp is storeApp whose Canary has 10 s steps and analysis.pin:
// the requests with X-Tester: yes go to the canary from the 40 % step.
func pinnedStoreApp(ns, tag string) map[string]string {
	files := storeApp(ns, tag, 0, "")
	files["apps/podinfo/canary.yaml"] = strings.Replace(files["apps/podinfo/canary.yaml"], "  analysis:\n    interval: 2s\n",
		"  analysis:\n    interval: 10s\n    pin:\n      fromWeight: 40\n      match:\n        - headers:\n            - name: X-Tester\n              value: \"yes\"\n", 1)
	return files
}

// Testers pinned by a header on a user's route kept in Git: from 40 %
// serin keeps a route of its own next to the user's (shop-serin-pin, the
// user's parents, hostname, path and filter), so every tester's request
// reaches the canary while the others follow the weights; the user's
// route never gets a rule, and after the promotion serin's sends the
// testers where everyone goes.
func TestRouteRefs_PinnedTestersOnTheUsersRoute(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	f, c := initializedFleet(t, g, ns, pinnedStoreApp(ns, "v1"), shopKustomization)
	g.Expect(c.Spec.Analysis.Pin).NotTo(BeNil(), "the Canary from Git pins the testers")

	others := startUsers(t, appHost(ns))
	testers := startUsersWith(t, appHost(ns), http.Header{"X-Tester": {"yes"}})
	g.Eventually(func() string { return lastVersion(testers) }, 30*time.Second).Should(Equal("v1"))
	pinRoute := types.NamespacedName{Namespace: ns, Name: routing.PinRouteName("shop")}

	f.sync(g, f.push(pinnedStoreApp(ns, "v2"), "podinfo v2"))
	// At 20 % nothing is pinned; at 40 % and 60 % the testers are.
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(c.Status.CanaryWeight).To(Equal(20))
	}, 60*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(k8s.Get(ctx, pinRoute, &gatewayv1.HTTPRoute{})).NotTo(Succeed(), "no pin route before fromWeight")
	measured := 0
	for _, weight := range []int{40, 60} {
		g.Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
			g.Expect(c.Status.CanaryWeight).To(Equal(weight))
			pin := &gatewayv1.HTTPRoute{}
			g.Expect(k8s.Get(ctx, pinRoute, pin)).To(Succeed())
			g.Expect(routing.HTTPRouteStatus(pin).Programmed).To(BeTrue(), "the gateway accepted the pin route")
		}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
		time.Sleep(time.Second) // Traefik applies what it accepted
		from := time.Now()
		time.Sleep(4 * time.Second)
		to := time.Now()
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		pinned, rest := testers.Counts(from, to), others.Counts(from, to)
		t.Logf("weight %d%%: testers %v (tags %v), others %v (v2 %.1f%%)", weight, pinned.ByVersion, pinned.ByTag, rest.ByVersion, rest.Share("v2"))
		g.Expect(pinned.Total).To(BeNumerically(">", 50))
		g.Expect(pinned.ByVersion).To(Equal(map[string]int{"v2": pinned.Total}), "at %d%% every tester's request reached the canary", weight)
		g.Expect(pinned.ByTag).To(Equal(map[string]int{"shop": pinned.Total}), "the pinned rule kept the user's filter")
		if c.Status.CanaryWeight == weight && c.Status.Phase == v1alpha1.PhaseProgressing {
			g.Expect(math.Abs(rest.Share("v2")-float64(weight))).To(BeNumerically("<=", 15), "at %d%% the other users follow the weights", weight)
			measured++
		}
		route := &gatewayv1.HTTPRoute{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "shop"}, route)).To(Succeed())
		g.Expect(route.Spec.Rules).To(HaveLen(2), "the user's route never gets a rule")
	}
	g.Expect(measured).To(BeNumerically(">=", 1), "the other users' share was measured within a step")

	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 90*time.Second)
	g.Eventually(func(g Gomega) {
		pin := &gatewayv1.HTTPRoute{}
		g.Expect(k8s.Get(ctx, pinRoute, pin)).To(Succeed())
		g.Expect(routing.PinnedToCanary(pin, "podinfo-canary")).To(BeFalse())
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed(), "the promotion sent the testers where everyone goes")
	g.Expect(appBackends(g, ns)).To(Equal("podinfo:9898=1"), "promoted: podinfo's rule is as in Git")
	g.Eventually(func() string { return lastVersion(testers) }, 10*time.Second).Should(Equal("v2"))
	all := testers.Counts(time.Time{}, time.Time{})
	g.Expect(all.Errors).To(BeZero(), "no tester saw an error: %v", all.ByCode)
	g.Expect(others.Counts(time.Time{}, time.Time{}).Errors).To(BeZero())
}

// slowStoreApp is storeApp whose Canary takes 5 s steps of 10 %: a
// person has time to act mid-rollout.
func slowStoreApp(ns, tag string) map[string]string {
	files := storeApp(ns, tag, 0, "")
	files["apps/podinfo/canary.yaml"] = strings.NewReplacer("interval: 2s", "interval: 5s", "stepWeight: 20", "stepWeight: 10").
		Replace(files["apps/podinfo/canary.yaml"])
	return files
}

// A tired operator mid-rollout on a user's HTTPRoute applied by Flux:
// they put podinfo's rule back by hand (serin writes its weights again),
// then delete the route (Flux applies it again from Git, serin steers it
// again). The rollout ends promoted with the route as in Git; the only
// errors the users saw are the gateway's 404s while the route was gone.
// Every request counted went through Traefik.
func TestRouteRefs_RouteEditedAndDeletedByHandMidRollout(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	f, c := initializedFleet(t, g, ns, slowStoreApp(ns, "v1"), shopKustomization)
	app := startUsers(t, appHost(ns))
	g.Eventually(func() string { return lastVersion(app) }, 30*time.Second).Should(Equal("v1"))
	start := time.Now()

	f.sync(g, f.push(slowStoreApp(ns, "v2"), "podinfo v2"))
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(c.Status.Phase).To(Equal(v1alpha1.PhaseProgressing))
		g.Expect(c.Status.CanaryWeight).To(BeNumerically(">=", 10))
	}, 60*time.Second, 100*time.Millisecond).Should(Succeed())

	// By hand: podinfo's rule back to one backend, as in Git.
	route := &gatewayv1.HTTPRoute{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "shop"}, route)).To(Succeed())
	patch := client.MergeFrom(route.DeepCopy())
	route.Spec.Rules[1].BackendRefs = []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
		BackendObjectReference: gatewayv1.BackendObjectReference{Name: "podinfo", Port: ptr.To(gatewayv1.PortNumber(9898))}}}}
	g.Expect(k8s.Patch(ctx, route, patch, client.FieldOwner("kubectl-edit"))).To(Succeed())
	g.Eventually(appBackends, 10*time.Second, 100*time.Millisecond).WithArguments(ns).Should(HavePrefix("podinfo-primary:9898="),
		"serin wrote its weights again after the hand edit")

	// The route deleted: Flux applies it again, serin steers it again.
	deleted := time.Now()
	g.Expect(k8s.Delete(ctx, route)).To(Succeed())
	g.Eventually(func(g Gomega) {
		again := &gatewayv1.HTTPRoute{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "shop"}, again)).To(Succeed())
		g.Expect(again.UID).NotTo(Equal(route.UID), "a new route")
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed(), "Flux applies the deleted route again")
	recreated := time.Now()
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		if c.Status.Phase == v1alpha1.PhaseProgressing {
			g.Expect(appBackends(g, ns)).To(HavePrefix("podinfo-primary:9898="), "serin steers the new route")
		}
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 180*time.Second)
	g.Eventually(appBackends, 10*time.Second, 100*time.Millisecond).WithArguments(ns).Should(Equal("podinfo:9898=1"), "promoted: podinfo's rule is as in Git")
	g.Eventually(func() string { return lastVersion(app) }, 10*time.Second).Should(Equal("v2"))

	// The users' errors: the gateway's 404s while the route was gone
	// (from its deletion until Traefik programmed the route Flux applied
	// again, within 5 s of it), and no 5xx ever.
	counts := app.Counts(start, time.Now())
	t.Logf("users over the rollout: %d requests, by version %v, by code %v; the route was gone for %s",
		counts.Total, counts.ByVersion, counts.ByCode, recreated.Sub(deleted).Round(100*time.Millisecond))
	for _, s := range app.Samples(start, time.Now()) {
		if s.OK() {
			continue
		}
		g.Expect(s.Code).To(Equal(http.StatusNotFound), "an error at %s that was not the missing route's", s.Sent.Format("15:04:05.000"))
		g.Expect(s.Sent).To(BeTemporally(">=", deleted), "an error before the deletion")
		g.Expect(s.Sent).To(BeTemporally("<", recreated.Add(5*time.Second)), "an error after the route was back")
	}
	g.Expect(counts.ByVersion["v2"]).To(BeNumerically(">", 0))
}
