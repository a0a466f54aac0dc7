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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// pinningCanary steers the route shop and pins the requests with
// x-tester: yes to the canary from 40 %.
func pinningCanary() *v1alpha1.Canary {
	c := steeringCanary("podinfo", "shop")
	c.Spec.Analysis = &v1alpha1.CanaryAnalysis{StepWeight: 20, MaxWeight: 60, Pin: &v1alpha1.CanaryPin{
		Match:      []v1alpha1.AnalysisMatch{{Headers: []v1alpha1.HTTPHeaderMatch{{Name: "x-tester", Value: "yes"}}}},
		FromWeight: ptr.To(int32(40)),
	}}
	return c
}

// pinRoute reads the pin route of shop; nil when there is none.
func (w *routerWorld) pinRoute() *gatewayv1.HTTPRoute {
	w.t.Helper()
	route := &gatewayv1.HTTPRoute{}
	err := w.store.Get(context.Background(), client.ObjectKey{Namespace: "apps", Name: PinRouteName("shop")}, route)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		w.t.Fatal(err)
	}
	return route
}

// analysis.pin on a user's route: from fromWeight, a route of serin's own,
// owned by the Canary, sends the pinned requests of the steered rule (its
// path, filters and timeout kept) to the canary; the user's route gets no
// rule. Deleted by hand, it is written again; out of the pinned steps (the
// weights back on the primary, Finalize) it sends the pinned requests where
// the user's rule sends everyone, and a later pinned step to the canary
// again.
func TestRouteRefsRouter_PinRouteNextToTheUsers(t *testing.T) {
	ctx := context.Background()
	w := newRouterWorld(t, usersRoute("shop"))
	canary := pinningCanary()
	r := &RouteRefsRouter{Client: w.client, FieldOwner: "serin"}

	if err := r.Reconcile(ctx, canary, podinfoTarget); err != nil {
		t.Fatal(err)
	}
	if err := r.SetRoutes(ctx, canary, podinfoTarget, Canary(20)); err != nil {
		t.Fatal(err)
	}
	if pin := w.pinRoute(); pin != nil {
		t.Fatalf("a pin route before fromWeight: %+v", pin.Spec)
	}

	if err := r.SetRoutes(ctx, canary, podinfoTarget, Canary(40)); err != nil {
		t.Fatal(err)
	}
	pin := w.pinRoute()
	if pin == nil {
		t.Fatal("no pin route at fromWeight")
	}
	if !metav1.IsControlledBy(pin, canary) || pin.Labels["serin.dev/canary"] != "podinfo" {
		t.Fatalf("the pin route is not the Canary's: owners %v, labels %v", pin.OwnerReferences, pin.Labels)
	}
	users := usersRoute("shop")
	if d := cmp.Diff(users.Spec.CommonRouteSpec, pin.Spec.CommonRouteSpec); d != "" {
		t.Fatalf("the pin route's parents are not the user's (-want +got):\n%s", d)
	}
	if d := cmp.Diff(users.Spec.Hostnames, pin.Spec.Hostnames); d != "" {
		t.Fatalf("the pin route's hostnames are not the user's (-want +got):\n%s", d)
	}
	if len(pin.Spec.Rules) != 1 {
		t.Fatalf("the pin route has %d rules, want 1 (one steered rule, one pin entry): %+v", len(pin.Spec.Rules), pin.Spec.Rules)
	}
	rule := pin.Spec.Rules[0]
	wantMatch := gatewayv1.HTTPRouteMatch{
		Path:    &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To("/api")},
		Headers: []gatewayv1.HTTPHeaderMatch{{Type: ptr.To(gatewayv1.HeaderMatchExact), Name: "x-tester", Value: "yes"}},
	}
	if d := cmp.Diff([]gatewayv1.HTTPRouteMatch{wantMatch}, rule.Matches); d != "" {
		t.Fatalf("the pinned rule's matches: the user's path and the tester header (-want +got):\n%s", d)
	}
	if d := cmp.Diff(users.Spec.Rules[0].Timeouts, rule.Timeouts); d != "" {
		t.Fatalf("the pinned rule's timeouts are not the user's (-want +got):\n%s", d)
	}
	wantBackend := *users.Spec.Rules[0].BackendRefs[0].DeepCopy()
	wantBackend.Name = "podinfo-canary"
	if d := cmp.Diff([]gatewayv1.HTTPBackendRef{wantBackend}, rule.BackendRefs); d != "" {
		t.Fatalf("the pinned rule sends to the canary with the user's port and filters (-want +got):\n%s", d)
	}
	got := w.get("shop")
	if len(got.Spec.Rules) != len(users.Spec.Rules) {
		t.Fatalf("the user's route has %d rules, want its %d", len(got.Spec.Rules), len(users.Spec.Rules))
	}
	if d := cmp.Diff([]string{"podinfo-primary=60", "podinfo-canary=40"}, backendsOf(got.Spec.Rules[0])); d != "" {
		t.Fatalf("podinfo's rule at 40%% (-want +got):\n%s", d)
	}
	routes, err := r.GetRoutes(ctx, canary, podinfoTarget)
	if err != nil || !routes.Found || routes.Weights != Canary(40) {
		t.Fatalf("GetRoutes at 40%% = %+v, %v; want found at 40", routes, err)
	}

	// Deleted by hand: GetRoutes no longer finds the routes in force, and
	// Reconcile writes it again.
	if err := w.store.Delete(ctx, pin); err != nil {
		t.Fatal(err)
	}
	if routes, err := r.GetRoutes(ctx, canary, podinfoTarget); err != nil || routes.Found {
		t.Fatalf("GetRoutes without the pin route = %+v, %v; want not found", routes, err)
	}
	if err := r.Reconcile(ctx, canary, podinfoTarget); err != nil {
		t.Fatal(err)
	}
	if w.pinRoute() == nil {
		t.Fatal("Reconcile did not write the pin route again")
	}

	if err := r.SetRoutes(ctx, canary, podinfoTarget, AllPrimary); err != nil {
		t.Fatal(err)
	}
	followsUsers := func(when string) {
		t.Helper()
		pin := w.pinRoute()
		if pin == nil || PinnedToCanary(pin, "podinfo-canary") || len(pin.Spec.Rules) != 1 {
			t.Fatalf("%s: the pin route still sends the testers to the canary: %+v", when, pin)
		}
		if d := cmp.Diff(backendsOf(w.get("shop").Spec.Rules[0]), backendsOf(pin.Spec.Rules[0])); d != "" {
			t.Fatalf("%s: the pin route does not send where the user's rule does (-user +pin):\n%s", when, d)
		}
	}
	followsUsers("at rest")
	if routes, err := r.GetRoutes(ctx, canary, podinfoTarget); err != nil || !routes.Found || routes.Weights != AllPrimary {
		t.Fatalf("GetRoutes at rest with the pin route following the user's = %+v, %v; want found, all on the primary", routes, err)
	}
	if err := r.SetRoutes(ctx, canary, podinfoTarget, Canary(20)); err != nil {
		t.Fatal(err)
	}
	followsUsers("at 20 %")

	if err := r.SetRoutes(ctx, canary, podinfoTarget, Canary(60)); err != nil {
		t.Fatal(err)
	}
	if pin := w.pinRoute(); pin == nil || !PinnedToCanary(pin, "podinfo-canary") {
		t.Fatalf("the next pinned step did not send the testers to the canary again: %+v", pin)
	}
	if err := r.Finalize(ctx, canary, podinfoTarget); err != nil {
		t.Fatal(err)
	}
	followsUsers("after Finalize")
	if d := cmp.Diff(users.Spec, w.get("shop").Spec); d != "" {
		t.Fatalf("Finalize did not give the user's route back (-want +got):\n%s", d)
	}
}

// A route of the pin route's name that is not the Canary's is never
// written or deleted: the Canary stalls naming it.
func TestRouteRefsRouter_PinRouteNameTakenStalls(t *testing.T) {
	ctx := context.Background()
	theirs := &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: PinRouteName("shop")},
		Spec:       gatewayv1.HTTPRouteSpec{Hostnames: []gatewayv1.Hostname{"other.example.com"}},
	}
	w := newRouterWorld(t, usersRoute("shop"), theirs)
	canary := pinningCanary()
	r := &RouteRefsRouter{Client: w.client, FieldOwner: "serin"}

	err := r.SetRoutes(ctx, canary, podinfoTarget, Canary(40))
	var refErr *RouteRefError
	if !errors.As(err, &refErr) || !strings.Contains(refErr.Message, "shop-serin-pin") || !strings.Contains(refErr.Message, "not this Canary's") {
		t.Fatalf("SetRoutes with the pin route's name taken = %v; want a RouteRefError naming shop-serin-pin", err)
	}
	for _, weights := range []Weights{AllPrimary, Canary(40)} {
		_ = r.SetRoutes(ctx, canary, podinfoTarget, weights)
	}
	_ = r.Finalize(ctx, canary, podinfoTarget)
	got := w.pinRoute()
	if got == nil || len(got.OwnerReferences) != 0 || !cmp.Equal(theirs.Spec, got.Spec) {
		t.Fatalf("the other route was changed or deleted: %+v", got)
	}
}
