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

package routing

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// usersRoute is a route as a user keeps it in Git: podinfo's rule (a
// request header filter on its backend, a timeout, a path) and a rule of
// another service, on the gateway gateways/public.
func usersRoute(name string) *gatewayv1.HTTPRoute {
	return &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name, Labels: map[string]string{"kustomize.toolkit.fluxcd.io/name": "apps"}},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "public", Namespace: ptr.To(gatewayv1.Namespace("gateways"))}}},
			Hostnames:       []gatewayv1.Hostname{"shop.example.com"},
			Rules: []gatewayv1.HTTPRouteRule{
				{
					Matches:  []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To("/api")}}},
					Timeouts: &gatewayv1.HTTPRouteTimeouts{Request: ptr.To(gatewayv1.Duration("10s"))},
					BackendRefs: []gatewayv1.HTTPBackendRef{{
						BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: "podinfo", Port: ptr.To(gatewayv1.PortNumber(9898))}},
						Filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{
							Set: []gatewayv1.HTTPHeader{{Name: "X-Tenant", Value: "shop"}},
						}}},
					}},
				},
				{
					Matches:     []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To("/")}}},
					BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: "storefront", Port: ptr.To(gatewayv1.PortNumber(80))}}}},
				},
			},
		},
	}
}

// steeringCanary is podinfo's Canary steering the routes named.
func steeringCanary(name string, routes ...string) *v1alpha1.Canary {
	r := v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting}
	for _, n := range routes {
		r.RouteRefs = append(r.RouteRefs, v1alpha1.RouteReference{Kind: "HTTPRoute", Name: n})
	}
	return testobj.MakeCanary(name, "apps").UID(k8stypes.UID("uid-"+name)).Target("apps/v1", "Deployment", "podinfo").Routing(r).Obj()
}

var podinfoTarget = Target{ApexService: "podinfo", PrimaryService: "podinfo-primary", CanaryService: "podinfo-canary", Port: 9898}

// backendsOf returns the names and weights of a rule's backends, as
// "name=weight" ("name" without a weight).
func backendsOf(rule gatewayv1.HTTPRouteRule) []string {
	var out []string
	for _, b := range rule.BackendRefs {
		s := string(b.Name)
		if b.Weight != nil {
			s += "=" + strconv.Itoa(int(*b.Weight))
		}
		out = append(out, s)
	}
	return out
}

func TestRouteRefsRouter_MovesOnlyTheApexRulesBackends(t *testing.T) {
	ctx := context.Background()
	w := newRouterWorld(t, usersRoute("shop"))
	canary := steeringCanary("podinfo", "shop")
	r := &RouteRefsRouter{Client: w.client, FieldOwner: "serin"}
	original := usersRoute("shop")

	if err := r.Reconcile(ctx, canary, podinfoTarget); err != nil {
		t.Fatal(err)
	}
	got := w.get("shop")
	if d := cmp.Diff(original.Spec, got.Spec); d != "" {
		t.Fatalf("Reconcile changed the route's spec before any rollout (-want +got):\n%s", d)
	}
	if got.Annotations[SteeredByAnnotation] != "podinfo" {
		t.Fatalf("the route is not marked as steered by podinfo: %v", got.Annotations)
	}
	routes, err := r.GetRoutes(ctx, canary, podinfoTarget)
	if err != nil || !routes.Found || routes.Weights != AllPrimary {
		t.Fatalf("GetRoutes at rest = %+v, %v; want found, all on the primary", routes, err)
	}

	if err := r.SetRoutes(ctx, canary, podinfoTarget, Canary(10)); err != nil {
		t.Fatal(err)
	}
	got = w.get("shop")
	if d := cmp.Diff([]string{"podinfo-primary=90", "podinfo-canary=10"}, backendsOf(got.Spec.Rules[0])); d != "" {
		t.Fatalf("podinfo's rule at 10%% (-want +got):\n%s", d)
	}
	for _, b := range got.Spec.Rules[0].BackendRefs {
		if d := cmp.Diff(original.Spec.Rules[0].BackendRefs[0].Filters, b.Filters); d != "" || *b.Port != 9898 {
			t.Fatalf("backend %s lost the user's port or filters (-want +got):\n%s", b.Name, d)
		}
	}
	// Everything but podinfo's backends is as the user wrote it.
	moved := got.DeepCopy()
	moved.Spec.Rules[0].BackendRefs = original.Spec.Rules[0].BackendRefs
	if d := cmp.Diff(original.Spec, moved.Spec); d != "" {
		t.Fatalf("SetRoutes changed more than podinfo's backends (-want +got):\n%s", d)
	}
	routes, err = r.GetRoutes(ctx, canary, podinfoTarget)
	if err != nil || !routes.Found || routes.Weights != Canary(10) {
		t.Fatalf("GetRoutes at 10%% = %+v, %v", routes, err)
	}

	if err := r.SetRoutes(ctx, canary, podinfoTarget, AllPrimary); err != nil {
		t.Fatal(err)
	}
	got = w.get("shop")
	if d := cmp.Diff(original.Spec, got.Spec); d != "" {
		t.Fatalf("after the rollout the route is not as the user wrote it (-want +got):\n%s", d)
	}
	if _, ok := got.Annotations[restBackendsAnnotation]; ok {
		t.Fatalf("the rest backends stay recorded after the rollout: %v", got.Annotations)
	}
}

// Flux applying the route from Git without the drift ignore rule puts the
// user's backend back mid-rollout: the routes are not found in sync, and
// Reconcile writes the weights serin last wrote again, keeping what Git
// changed elsewhere (a new rule).
func TestRouteRefsRouter_ResetByAnotherWriterIsSeenAndUndone(t *testing.T) {
	ctx := context.Background()
	w := newRouterWorld(t, usersRoute("shop"))
	canary := steeringCanary("podinfo", "shop")
	r := &RouteRefsRouter{Client: w.client, FieldOwner: "serin"}
	if err := r.SetRoutes(ctx, canary, podinfoTarget, Canary(30)); err != nil {
		t.Fatal(err)
	}
	// kustomize-controller applies a new commit: Git's rules, one more.
	flux := w.get("shop")
	flux.Spec.Rules = append(usersRoute("shop").Spec.Rules, gatewayv1.HTTPRouteRule{
		Matches:     []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To("/admin")}}},
		BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: "admin", Port: ptr.To(gatewayv1.PortNumber(80))}}}},
	})
	if err := w.store.Update(ctx, flux); err != nil {
		t.Fatal(err)
	}
	routes, err := r.GetRoutes(ctx, canary, podinfoTarget)
	if err != nil || routes.Found {
		t.Fatalf("GetRoutes after a reset = %+v, %v; want not found (out of sync)", routes, err)
	}
	if err := r.Reconcile(ctx, canary, podinfoTarget); err != nil {
		t.Fatal(err)
	}
	got := w.get("shop")
	if d := cmp.Diff([]string{"podinfo-primary=70", "podinfo-canary=30"}, backendsOf(got.Spec.Rules[0])); d != "" {
		t.Fatalf("weights after Reconcile (-want +got):\n%s", d)
	}
	if len(got.Spec.Rules) != 3 || got.Spec.Rules[2].BackendRefs[0].Name != "admin" {
		t.Fatalf("Git's new rule is gone: %+v", got.Spec.Rules)
	}
	if routes, _ := r.GetRoutes(ctx, canary, podinfoTarget); !routes.Found || routes.Weights != Canary(30) {
		t.Fatalf("GetRoutes after Reconcile = %+v", routes)
	}
}

func TestRouteRefsRouter_RoutesMoveInLockstep(t *testing.T) {
	ctx := context.Background()
	w := newRouterWorld(t, usersRoute("shop"), usersRoute("shop-internal"))
	canary := steeringCanary("podinfo", "shop", "shop-internal")
	r := &RouteRefsRouter{Client: w.client, FieldOwner: "serin"}
	if err := r.SetRoutes(ctx, canary, podinfoTarget, Canary(50)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"shop", "shop-internal"} {
		if d := cmp.Diff([]string{"podinfo-primary=50", "podinfo-canary=50"}, backendsOf(w.get(name).Spec.Rules[0])); d != "" {
			t.Fatalf("%s at 50%% (-want +got):\n%s", name, d)
		}
	}
	// One route put back by hand: the pair is out of step.
	back := w.get("shop-internal")
	back.Spec.Rules = usersRoute("shop-internal").Spec.Rules
	if err := w.store.Update(ctx, back); err != nil {
		t.Fatal(err)
	}
	if routes, _ := r.GetRoutes(ctx, canary, podinfoTarget); routes.Found {
		t.Fatalf("routes out of step read as found: %+v", routes)
	}
}

func TestRouteRefsRouter_RefusesWhatItCannotSteer(t *testing.T) {
	ctx := context.Background()
	noApex := usersRoute("shop")
	noApex.Spec.Rules = noApex.Spec.Rules[1:]
	mixed := usersRoute("shop")
	mixed.Spec.Rules[0].BackendRefs = append(mixed.Spec.Rules[0].BackendRefs, mixed.Spec.Rules[1].BackendRefs...)
	taken := usersRoute("shop")
	taken.Annotations = map[string]string{SteeredByAnnotation: "other"}
	for name, tc := range map[string]struct {
		route   *gatewayv1.HTTPRoute
		missing bool
		want    string
	}{
		"missing":                {route: nil, missing: true, want: "httproute apps/shop named by routing.routeRefs not found"},
		"no rule to the apex":    {route: noApex, want: "has no rule that sends to Service podinfo"},
		"apex and other backend": {route: mixed, want: "rule 0 of httproute apps/shop sends to Service podinfo together with other backends"},
		"steered by another":     {route: taken, want: "is steered by canary other"},
	} {
		t.Run(name, func(t *testing.T) {
			var objs []client.Object
			if tc.route != nil {
				objs = append(objs, tc.route)
			}
			w := newRouterWorld(t, objs...)
			r := &RouteRefsRouter{Client: w.client, FieldOwner: "serin"}
			err := r.Reconcile(ctx, steeringCanary("podinfo", "shop"), podinfoTarget)
			var ref *RouteRefError
			if !errors.As(err, &ref) || ref.Missing != tc.missing || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Reconcile = %v; want a RouteRefError (missing %v) saying %q", err, tc.missing, tc.want)
			}
			if len(w.calls.Writes) != 0 {
				t.Fatalf("a route serin cannot steer was written: %v", w.calls.Writes)
			}
		})
	}
}

func TestRouteRefsRouter_FinalizeHandsTheRouteBack(t *testing.T) {
	ctx := context.Background()
	w := newRouterWorld(t, usersRoute("shop"))
	canary := steeringCanary("podinfo", "shop")
	r := &RouteRefsRouter{Client: w.client, FieldOwner: "serin"}
	if err := r.SetRoutes(ctx, canary, podinfoTarget, Canary(20)); err != nil {
		t.Fatal(err)
	}
	if err := r.Finalize(ctx, canary, Target{ApexService: "podinfo"}); err != nil {
		t.Fatal(err)
	}
	got := w.get("shop")
	original := usersRoute("shop")
	if d := cmp.Diff(original.Spec, got.Spec); d != "" {
		t.Fatalf("Finalize left the route changed (-want +got):\n%s", d)
	}
	for k := range got.Annotations {
		if strings.HasPrefix(k, "serin.dev/") {
			t.Fatalf("Finalize left serin's annotation %s", k)
		}
	}
}

// get reads a route of the apps namespace back.
func (w *routerWorld) get(name string) *gatewayv1.HTTPRoute {
	w.t.Helper()
	route := &gatewayv1.HTTPRoute{}
	if err := w.store.Get(context.Background(), client.ObjectKey{Namespace: "apps", Name: name}, route); err != nil {
		w.t.Fatal(err)
	}
	return route
}

// With the judge's baseline routed, the steered rule sends the canary's
// weight to the baseline too, from the primary's share, and reads back as
// routing the baseline; the rollout's end puts the user's backend back.
func TestRouteRefsRouter_RoutesTheBaseline(t *testing.T) {
	ctx := context.Background()
	w := newRouterWorld(t, usersRoute("shop"))
	canary := steeringCanary("podinfo", "shop")
	r := &RouteRefsRouter{Client: w.client, FieldOwner: "serin"}
	target := podinfoTarget
	target.BaselineService, target.RouteBaseline = "podinfo-baseline", true
	if err := r.SetRoutes(ctx, canary, target, Canary(20)); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"podinfo-primary=60", "podinfo-baseline=20", "podinfo-canary=20"}, backendsOf(w.get("shop").Spec.Rules[0])); d != "" {
		t.Fatalf("the steered rule with the baseline (-want +got):\n%s", d)
	}
	routes, err := r.GetRoutes(ctx, canary, target)
	if err != nil || !routes.Found || !routes.Baseline || routes.Weights != Canary(20) {
		t.Fatalf("GetRoutes = %+v, %v; want found at 20%% with the baseline routed", routes, err)
	}
	target.RouteBaseline = false
	if err := r.SetRoutes(ctx, canary, target, AllPrimary); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(usersRoute("shop").Spec, w.get("shop").Spec); d != "" {
		t.Fatalf("after the rollout the route is not as the user wrote it (-want +got):\n%s", d)
	}
}
