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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// usersGRPCRoute is a GRPCRoute as a user keeps it: podinfo's gRPC service
// (a method match, a header filter on its backend) and a rule of another
// service. It has the name of usersRoute's HTTPRoute: the kinds are apart.
func usersGRPCRoute(name string) *gatewayv1.GRPCRoute {
	return &gatewayv1.GRPCRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name},
		Spec: gatewayv1.GRPCRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "public", Namespace: ptr.To(gatewayv1.Namespace("gateways"))}}},
			Hostnames:       []gatewayv1.Hostname{"grpc.example.com"},
			Rules: []gatewayv1.GRPCRouteRule{
				{
					Name:    ptr.To(gatewayv1.SectionName("other")),
					Matches: []gatewayv1.GRPCRouteMatch{{Method: &gatewayv1.GRPCMethodMatch{Service: ptr.To("shop.Cart")}}},
					BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: gatewayv1.BackendRef{
						BackendObjectReference: gatewayv1.BackendObjectReference{Name: "cart", Port: ptr.To(gatewayv1.PortNumber(9000))}}}},
				},
				{
					Name:    ptr.To(gatewayv1.SectionName("podinfo")),
					Matches: []gatewayv1.GRPCRouteMatch{{Method: &gatewayv1.GRPCMethodMatch{Service: ptr.To("grpc.health.v1.Health")}}},
					BackendRefs: []gatewayv1.GRPCBackendRef{{
						BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: "podinfo", Port: ptr.To(gatewayv1.PortNumber(9898))}},
						Filters: []gatewayv1.GRPCRouteFilter{{Type: gatewayv1.GRPCRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{
							Set: []gatewayv1.HTTPHeader{{Name: "x-tenant", Value: "shop"}},
						}}},
					}},
				},
			},
		},
	}
}

// grpcBackendsOf is backendsOf for a GRPCRoute's rule.
func grpcBackendsOf(rule gatewayv1.GRPCRouteRule) []string {
	var asHTTP gatewayv1.HTTPRouteRule
	for _, b := range rule.BackendRefs {
		asHTTP.BackendRefs = append(asHTTP.BackendRefs, gatewayv1.HTTPBackendRef{BackendRef: b.BackendRef})
	}
	return backendsOf(asHTTP)
}

func getGRPCRoute(t *testing.T, c client.Client, name string) *gatewayv1.GRPCRoute {
	t.Helper()
	route := &gatewayv1.GRPCRoute{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "apps", Name: name}, route); err != nil {
		t.Fatal(err)
	}
	return route
}

// A GRPCRoute and an HTTPRoute of the same name move in lockstep: only the
// backends of the rules that send to the apex Service, every filter, match
// and port kept; at the end both are as the user wrote them.
func TestRouteRefsRouter_GRPCRouteMovesInLockstepWithTheHTTPRoute(t *testing.T) {
	ctx := context.Background()
	w := newRouterWorld(t, usersRoute("shop"), usersGRPCRoute("shop"))
	canary := steeringCanary("podinfo", "shop")
	canary.Spec.Routing.RouteRefs = append(canary.Spec.Routing.RouteRefs, v1alpha1.RouteReference{Kind: v1alpha1.GRPCRouteKind, Name: "shop"})
	r := &RouteRefsRouter{Client: w.client, FieldOwner: "serin"}
	original := usersGRPCRoute("shop")

	if err := r.Reconcile(ctx, canary, podinfoTarget); err != nil {
		t.Fatal(err)
	}
	got := getGRPCRoute(t, w.store, "shop")
	if d := cmp.Diff(original.Spec, got.Spec); d != "" {
		t.Fatalf("Reconcile changed the GRPCRoute's spec before any rollout (-want +got):\n%s", d)
	}
	if got.Annotations[SteeredByAnnotation] != "podinfo" {
		t.Fatalf("the GRPCRoute is not marked as steered by podinfo: %v", got.Annotations)
	}

	if err := r.SetRoutes(ctx, canary, podinfoTarget, Canary(30)); err != nil {
		t.Fatal(err)
	}
	got = getGRPCRoute(t, w.store, "shop")
	if d := cmp.Diff([]string{"podinfo-primary=70", "podinfo-canary=30"}, grpcBackendsOf(got.Spec.Rules[1])); d != "" {
		t.Fatalf("podinfo's gRPC rule at 30%% (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"podinfo-primary=70", "podinfo-canary=30"}, backendsOf(w.get("shop").Spec.Rules[0])); d != "" {
		t.Fatalf("the HTTPRoute's rule at 30%% (-want +got):\n%s", d)
	}
	for _, b := range got.Spec.Rules[1].BackendRefs {
		if d := cmp.Diff(original.Spec.Rules[1].BackendRefs[0].Filters, b.Filters); d != "" || *b.Port != 9898 {
			t.Fatalf("backend %s lost the user's port or filters (-want +got):\n%s", b.Name, d)
		}
	}
	moved := got.DeepCopy()
	moved.Spec.Rules[1].BackendRefs = original.Spec.Rules[1].BackendRefs
	if d := cmp.Diff(original.Spec, moved.Spec); d != "" {
		t.Fatalf("SetRoutes changed more of the GRPCRoute than podinfo's backends (-want +got):\n%s", d)
	}
	routes, err := r.GetRoutes(ctx, canary, podinfoTarget)
	if err != nil || !routes.Found || routes.Weights != Canary(30) {
		t.Fatalf("GetRoutes at 30%% = %+v, %v; want found at 30 %%", routes, err)
	}
	if !strings.Contains(routes.Status.Message, "grpcroute shop: gateway gateways/public: waiting for the gateway") {
		t.Fatalf("GetRoutes' status does not wait for the GRPCRoute's parent: %q", routes.Status.Message)
	}

	// Someone puts the GRPCRoute's rule back (Flux without the ignore
	// rule): the routes are no longer in lockstep, and Reconcile writes
	// the weights again.
	reset := getGRPCRoute(t, w.store, "shop")
	reset.Spec.Rules[1].BackendRefs = original.Spec.Rules[1].BackendRefs
	if err := w.store.Update(ctx, reset); err != nil {
		t.Fatal(err)
	}
	if routes, _ := r.GetRoutes(ctx, canary, podinfoTarget); routes.Found {
		t.Fatalf("GetRoutes found %+v on routes out of lockstep", routes)
	}
	if err := r.Reconcile(ctx, canary, podinfoTarget); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"podinfo-primary=70", "podinfo-canary=30"}, grpcBackendsOf(getGRPCRoute(t, w.store, "shop").Spec.Rules[1])); d != "" {
		t.Fatalf("Reconcile did not write the weights again (-want +got):\n%s", d)
	}

	if err := r.Finalize(ctx, canary, podinfoTarget); err != nil {
		t.Fatal(err)
	}
	got = getGRPCRoute(t, w.store, "shop")
	if d := cmp.Diff(original.Spec, got.Spec); d != "" {
		t.Fatalf("Finalize left the GRPCRoute changed (-want +got):\n%s", d)
	}
	for _, a := range []string{SteeredByAnnotation, weightsAnnotation, restBackendsAnnotation} {
		if _, ok := got.Annotations[a]; ok {
			t.Fatalf("Finalize left %s on the GRPCRoute: %v", a, got.Annotations)
		}
	}
}

// A GRPCRoute another Canary steers, or one that does not send to the
// apex Service, stalls this Canary with a message naming it by kind.
func TestRouteRefsRouter_GRPCRouteRefusals(t *testing.T) {
	ctx := context.Background()
	steered := usersGRPCRoute("taken")
	steered.Annotations = map[string]string{SteeredByAnnotation: "frontend"}
	elsewhere := usersGRPCRoute("elsewhere")
	elsewhere.Spec.Rules = elsewhere.Spec.Rules[:1]
	w := newRouterWorld(t, steered, elsewhere)
	r := &RouteRefsRouter{Client: w.client, FieldOwner: "serin"}
	for _, tt := range []struct{ route, want string }{
		{"taken", "grpcroute apps/taken is steered by canary frontend"},
		{"elsewhere", "grpcroute apps/elsewhere has no rule that sends to Service podinfo"},
		{"missing", "grpcroute apps/missing named by routing.routeRefs not found"},
	} {
		canary := steeringCanary("podinfo")
		canary.Spec.Routing.RouteRefs = []v1alpha1.RouteReference{{Kind: v1alpha1.GRPCRouteKind, Name: tt.route}}
		err := r.Reconcile(ctx, canary, podinfoTarget)
		var refErr *RouteRefError
		if !errors.As(err, &refErr) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Reconcile = %v; want a RouteRefError saying %q", tt.route, err, tt.want)
		}
	}
}

// A steered rule on a port serin's Services do not expose stalls with a
// message that says how to fix it, unless portDiscovery exposes the pods'
// other ports; with it, rules to two ports of the apex Service move in
// lockstep, each keeping its port.
func TestRouteRefsRouter_PortsOfTheSteeredRules(t *testing.T) {
	ctx := context.Background()
	twoPorts := usersGRPCRoute("shop")
	second := *twoPorts.Spec.Rules[1].DeepCopy()
	second.Name = ptr.To(gatewayv1.SectionName("podinfo-admin"))
	second.BackendRefs[0].Port = ptr.To(gatewayv1.PortNumber(9899))
	twoPorts.Spec.Rules = append(twoPorts.Spec.Rules, second)
	w := newRouterWorld(t, twoPorts)
	r := &RouteRefsRouter{Client: w.client, FieldOwner: "serin"}
	canary := steeringCanary("podinfo")
	canary.Spec.Routing.RouteRefs = []v1alpha1.RouteReference{{Kind: v1alpha1.GRPCRouteKind, Name: "shop"}}
	target := podinfoTarget

	err := r.Reconcile(ctx, canary, target)
	var refErr *RouteRefError
	if !errors.As(err, &refErr) || !strings.Contains(err.Error(), "rule 2 of grpcroute apps/shop sends to Service podinfo on port 9899, which serin's Services do not expose (spec.service.port is 9898)") {
		t.Fatalf("Reconcile = %v; want a RouteRefError naming rule 2's port", err)
	}
	if got := getGRPCRoute(t, w.store, "shop"); got.Annotations[SteeredByAnnotation] != "" {
		t.Fatalf("the refused route was written: %v", got.Annotations)
	}

	canary.Spec.Service.PortDiscovery = true
	if err := r.SetRoutes(ctx, canary, target, Canary(40)); err != nil {
		t.Fatal(err)
	}
	got := getGRPCRoute(t, w.store, "shop")
	for i, port := range map[int]gatewayv1.PortNumber{1: 9898, 2: 9899} {
		if d := cmp.Diff([]string{"podinfo-primary=60", "podinfo-canary=40"}, grpcBackendsOf(got.Spec.Rules[i])); d != "" {
			t.Errorf("rule %d at 40%% (-want +got):\n%s", i, d)
		}
		for _, b := range got.Spec.Rules[i].BackendRefs {
			if *b.Port != port {
				t.Errorf("rule %d's backend %s on port %d, want %d", i, b.Name, *b.Port, port)
			}
		}
	}
}

// A named rule's backend, as the user wrote it, is recorded under the
// rule's name: when a commit applied mid-rollout adds a rule before it,
// the rollout's end still puts back the user's backend (its weight too),
// not a copy of the primary's.
func TestRouteRefsRouter_NamedRuleKeepsItsBackendWhenRulesMove(t *testing.T) {
	ctx := context.Background()
	route := usersGRPCRoute("shop")
	route.Spec.Rules[1].BackendRefs[0].Weight = ptr.To(int32(7))
	original := route.DeepCopy()
	w := newRouterWorld(t, route)
	r := &RouteRefsRouter{Client: w.client, FieldOwner: "serin"}
	canary := steeringCanary("podinfo")
	canary.Spec.Routing.RouteRefs = []v1alpha1.RouteReference{{Kind: v1alpha1.GRPCRouteKind, Name: "shop"}}
	if err := r.SetRoutes(ctx, canary, podinfoTarget, Canary(30)); err != nil {
		t.Fatal(err)
	}
	got := getGRPCRoute(t, w.store, "shop")
	if !strings.Contains(got.Annotations[restBackendsAnnotation], `"name:podinfo"`) {
		t.Fatalf("the named rule's backend is not recorded under its name: %s", got.Annotations[restBackendsAnnotation])
	}
	// A commit adds a rule first: podinfo's rule is now the third.
	added := gatewayv1.GRPCRouteRule{
		Matches: []gatewayv1.GRPCRouteMatch{{Method: &gatewayv1.GRPCMethodMatch{Service: ptr.To("shop.Admin")}}},
		BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: gatewayv1.BackendRef{
			BackendObjectReference: gatewayv1.BackendObjectReference{Name: "admin", Port: ptr.To(gatewayv1.PortNumber(9000))}}}},
	}
	got.Spec.Rules = append([]gatewayv1.GRPCRouteRule{added}, got.Spec.Rules...)
	if err := w.store.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	if err := r.SetRoutes(ctx, canary, podinfoTarget, AllPrimary); err != nil {
		t.Fatal(err)
	}
	got = getGRPCRoute(t, w.store, "shop")
	if d := cmp.Diff(original.Spec.Rules[1].BackendRefs, got.Spec.Rules[2].BackendRefs); d != "" {
		t.Fatalf("podinfo's rule after the rollout (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"admin"}, grpcBackendsOf(got.Spec.Rules[0])); d != "" {
		t.Fatalf("the added rule was changed (-want +got):\n%s", d)
	}
}
