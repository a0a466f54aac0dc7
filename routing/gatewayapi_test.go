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
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testutil"
	"github.com/serin-dev/serin/internal/workload"
)

// serinRoute is podinfo's HTTPRoute as serin wrote it for c earlier, with
// weights w, on the Gateway gateways/old for old.example.com.
func serinRoute(c *v1alpha1.Canary, w Weights) *gatewayv1.HTTPRoute {
	old := c.DeepCopy()
	old.Spec.Routing.GatewayRefs = []v1alpha1.GatewayReference{{Namespace: "gateways", Name: "old"}}
	old.Spec.Routing.Hosts = []string{"old.example.com"}
	route := &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo", Labels: map[string]string{"serin.dev/canary": "podinfo"},
			OwnerReferences: []metav1.OwnerReference{controllerRef(c.Name, c.UID)}},
		Spec: routeSpec(old, podinfo, w),
	}
	return route
}

func controllerRef(name string, uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.CanaryKind, Name: name, UID: uid,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
}

// foreignRoute is an HTTPRoute named podinfo that someone else made.
func foreignRoute(annotations map[string]string, owners ...metav1.OwnerReference) *gatewayv1.HTTPRoute {
	return &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo", Labels: map[string]string{"team": "payments"},
			Annotations: annotations, OwnerReferences: owners},
		Spec: gatewayv1.HTTPRouteSpec{
			Hostnames: []gatewayv1.Hostname{"legacy.example.com"},
			Rules:     []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{backend("legacy", 1)}}},
		},
	}
}

func backend(name string, weight int32) gatewayv1.HTTPBackendRef {
	return gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{
		BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(name), Port: ptr.To(gatewayv1.PortNumber(9898))},
		Weight:                 ptr.To(weight),
	}}
}

// weightsIn reads the weight of each backend of the route's first rule.
func weightsIn(route *gatewayv1.HTTPRoute) map[string]int32 {
	out := map[string]int32{}
	for _, b := range route.Spec.Rules[0].BackendRefs {
		out[string(b.Name)] = *b.Weight
	}
	return out
}

// routeYAML is the route as a golden file holds it.
func routeYAML(t *testing.T, route *gatewayv1.HTTPRoute) string {
	t.Helper()
	route = route.DeepCopy()
	route.TypeMeta = metav1.TypeMeta{APIVersion: gatewayv1.GroupVersion.String(), Kind: "HTTPRoute"}
	route.ResourceVersion = ""
	out, err := yaml.Marshal(route)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// Reconcile creates podinfo's HTTPRoute with all traffic on the primary,
// brings the parents and hostnames of serin's route up to date keeping its
// weights, and takes over no route it did not create, unless annotated
// serin.dev/adopt=true and controlled by nobody.
func TestGatewayAPIRouter_Reconcile(t *testing.T) {
	c := podinfoCanary()
	refusal := func(controller *metav1.OwnerReference) error {
		return &workload.NotManagedError{Kind: "HTTPRoute", Name: "podinfo", Controller: controller}
	}
	other := controllerRef("other", "uid-other")
	tests := map[string]struct {
		existing *gatewayv1.HTTPRoute
		fail     map[string]error
		// wantErr is the error Reconcile wraps; nil: none.
		wantErr error
		// wantWeights are the weights afterwards; nil: the route is as it was.
		wantWeights map[string]int32
		wantWrites  []string
	}{
		"no route: created, all traffic on the primary": {
			wantWeights: map[string]int32{"podinfo-primary": 100, "podinfo-canary": 0},
			wantWrites:  []string{"create HTTPRoute/podinfo"},
		},
		"serin's route at 70/30: parents and hostnames updated, the weights kept": {
			existing:    serinRoute(c, Canary(30)),
			wantWeights: map[string]int32{"podinfo-primary": 70, "podinfo-canary": 30},
			wantWrites:  []string{"update HTTPRoute/podinfo"},
		},
		"serin's route up to date: nothing written": {
			existing: func() *gatewayv1.HTTPRoute {
				r := serinRoute(c, Canary(30))
				r.Spec = routeSpec(c, podinfo, Canary(30))
				r.Annotations = map[string]string{"kustomize.toolkit.fluxcd.io/reconcile": "disabled"}
				return r
			}(),
			wantWeights: map[string]int32{"podinfo-primary": 70, "podinfo-canary": 30},
		},
		"a route someone else made: refused, left as it is": {
			existing: foreignRoute(nil),
			wantErr:  refusal(nil),
		},
		"a route annotated serin.dev/adopt=true with no controller: taken over, all traffic on the primary": {
			existing:    foreignRoute(map[string]string{v1alpha1.AdoptAnnotation: "true"}),
			wantWeights: map[string]int32{"podinfo-primary": 100, "podinfo-canary": 0},
			wantWrites:  []string{"update HTTPRoute/podinfo"},
		},
		"annotated, but another Canary's: refused": {
			existing: foreignRoute(map[string]string{v1alpha1.AdoptAnnotation: "true"}, other),
			wantErr:  refusal(&other),
		},
		"the create fails": {
			fail:       map[string]error{"create HTTPRoute/podinfo": injected},
			wantErr:    injected,
			wantWrites: []string{"create HTTPRoute/podinfo"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			w := newRouteWorld(t, tt.existing, tt.fail)
			before := w.route()
			err := (&GatewayAPIRouter{Client: w.client, FieldOwner: "serin"}).Reconcile(context.Background(), c, podinfo)
			if !sameError(err, tt.wantErr) {
				t.Fatalf("Reconcile: %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantWrites, w.calls.Writes); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			after := w.route()
			if tt.wantWeights == nil {
				if diff := cmp.Diff(before, after); diff != "" {
					t.Errorf("the route changed (-before +after):\n%s", diff)
				}
				return
			}
			if diff := cmp.Diff(tt.wantWeights, weightsIn(after)); diff != "" {
				t.Errorf("weights (-want +got):\n%s", diff)
			}
			if !metav1.IsControlledBy(after, c) {
				t.Errorf("owners %v: the Canary does not control the route", after.OwnerReferences)
			}
			wantParents := []gatewayv1.ParentReference{{Name: "public", Namespace: ptr.To(gatewayv1.Namespace("gateways"))}}
			if diff := cmp.Diff(wantParents, after.Spec.ParentRefs); diff != "" {
				t.Errorf("parents (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]gatewayv1.Hostname{"podinfo.example.com"}, after.Spec.Hostnames); diff != "" {
				t.Errorf("hostnames (-want +got):\n%s", diff)
			}
		})
	}
}

// The route Reconcile creates, as a whole: labels, the annotation that
// keeps kustomize-controller off it, the Canary as its controller, one rule
// sending everything to the primary.
func TestGatewayAPIRouter_ReconcileGolden(t *testing.T) {
	w := newRouterWorld(t)
	if err := (&GatewayAPIRouter{Client: w.client, FieldOwner: "serin"}).Reconcile(context.Background(), podinfoCanary(), podinfo); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join("testdata", "httproute_created.yaml"), routeYAML(t, w.route()))
}

// A mesh's Service as the parent (the Gateway API's GAMMA): the route
// names the core group and kind Service, with the port, next to a Gateway
// on a listener port; the weights are the same rule's.
func TestGatewayAPIRouter_ReconcileServiceParentGolden(t *testing.T) {
	w := newRouterWorld(t)
	c := podinfoCanary()
	c.Spec.Routing.GatewayRefs = []v1alpha1.GatewayReference{
		{Kind: v1alpha1.ServiceParent, Name: "podinfo", Port: ptr.To(int32(9898))},
		{Kind: v1alpha1.GatewayParent, Name: "public", Namespace: "gateways", Port: ptr.To(int32(443))},
	}
	if err := (&GatewayAPIRouter{Client: w.client, FieldOwner: "serin"}).Reconcile(context.Background(), c, podinfo); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join("testdata", "httproute_service_parent.yaml"), routeYAML(t, w.route()))
}

// spec.service.apex's labels and annotations go on the HTTPRoute, under
// serin's own, which they cannot replace.
func TestGatewayAPIRouter_ReconcileApexMetadata(t *testing.T) {
	w := newRouterWorld(t)
	c := podinfoCanary()
	c.Spec.Service.Apex = &v1alpha1.CustomMetadata{
		Labels:      map[string]string{"team": "payments"},
		Annotations: map[string]string{"example.com/owner": "payments", "kustomize.toolkit.fluxcd.io/reconcile": "enabled"},
	}
	if err := (&GatewayAPIRouter{Client: w.client, FieldOwner: "serin"}).Reconcile(context.Background(), c, podinfo); err != nil {
		t.Fatal(err)
	}
	route := w.route()
	wantLabels := map[string]string{"team": "payments", "serin.dev/canary": "podinfo"}
	wantAnnotations := map[string]string{"example.com/owner": "payments", "kustomize.toolkit.fluxcd.io/reconcile": "disabled"}
	if diff := cmp.Diff(wantLabels, route.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantAnnotations, route.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
}

// SetRoutes writes the route only when the weights change.
func TestGatewayAPIRouter_SetRoutes(t *testing.T) {
	c := podinfoCanary()
	tests := map[string]struct {
		existing    *gatewayv1.HTTPRoute
		set         Weights
		fail        map[string]error
		wantErr     error
		wantWeights map[string]int32
		wantWrites  []string
	}{
		"new weights: one patch": {
			existing:    serinRoute(c, Canary(10)),
			set:         Canary(30),
			wantWeights: map[string]int32{"podinfo-primary": 70, "podinfo-canary": 30},
			wantWrites:  []string{"patch HTTPRoute/podinfo"},
		},
		"the weights in force: no write": {
			existing:    serinRoute(c, Canary(30)),
			set:         Canary(30),
			wantWeights: map[string]int32{"podinfo-primary": 70, "podinfo-canary": 30},
		},
		"a route without the canary's backend: rewritten": {
			existing: func() *gatewayv1.HTTPRoute {
				r := serinRoute(c, AllPrimary)
				r.Spec.Rules[0].BackendRefs = r.Spec.Rules[0].BackendRefs[:1]
				return r
			}(),
			set:         AllPrimary,
			wantWeights: map[string]int32{"podinfo-primary": 100, "podinfo-canary": 0},
			wantWrites:  []string{"patch HTTPRoute/podinfo"},
		},
		"no route": {
			set:     Canary(30),
			wantErr: apierrors.NewNotFound(schema.GroupResource{Group: gatewayv1.GroupName, Resource: "httproutes"}, "podinfo"),
		},
		"the patch fails: the weights as they were": {
			existing:    serinRoute(c, Canary(10)),
			set:         Canary(30),
			fail:        map[string]error{"patch HTTPRoute/podinfo": injected},
			wantErr:     injected,
			wantWeights: map[string]int32{"podinfo-primary": 90, "podinfo-canary": 10},
			wantWrites:  []string{"patch HTTPRoute/podinfo"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			w := newRouteWorld(t, tt.existing, tt.fail)
			err := (&GatewayAPIRouter{Client: w.client, FieldOwner: "serin"}).SetRoutes(context.Background(), c, podinfo, tt.set)
			if !sameError(err, tt.wantErr) {
				t.Fatalf("SetRoutes: %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantWrites, w.calls.Writes); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			if tt.wantWeights != nil {
				if diff := cmp.Diff(tt.wantWeights, weightsIn(w.route())); diff != "" {
					t.Errorf("weights (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// weightsOf reads the primary's and the canary's weights from the first
// rule; a backend without a weight has the Gateway API's default, 1; the
// routes are not serin's (found false) unless both backends are there.
func TestWeightsOf(t *testing.T) {
	route := func(rules ...gatewayv1.HTTPRouteRule) *gatewayv1.HTTPRoute {
		return &gatewayv1.HTTPRoute{Spec: gatewayv1.HTTPRouteSpec{Rules: rules}}
	}
	rule := func(backends ...gatewayv1.HTTPBackendRef) gatewayv1.HTTPRouteRule {
		return gatewayv1.HTTPRouteRule{BackendRefs: backends}
	}
	unweighted := func(name string) gatewayv1.HTTPBackendRef {
		b := backend(name, 0)
		b.Weight = nil
		return b
	}
	tests := map[string]struct {
		route     *gatewayv1.HTTPRoute
		want      Weights
		wantFound bool
	}{
		"both backends":           {route(rule(backend("podinfo-primary", 80), backend("podinfo-canary", 20))), Canary(20), true},
		"in either order":         {route(rule(backend("podinfo-canary", 20), backend("podinfo-primary", 80))), Canary(20), true},
		"without weights: 1 each": {route(rule(unweighted("podinfo-primary"), unweighted("podinfo-canary"))), Weights{Primary: 1, Canary: 1}, true},
		"other backends ignored":  {route(rule(backend("podinfo-primary", 100), backend("mirror", 5), backend("podinfo-canary", 0))), AllPrimary, true},
		"no canary backend":       {route(rule(backend("podinfo-primary", 100))), Weights{Primary: 100}, false},
		"no primary backend":      {route(rule(backend("podinfo-canary", 100))), Weights{Canary: 100}, false},
		"no backend of serin's":   {route(rule(backend("legacy", 1))), Weights{}, false},
		"no rules":                {route(), Weights{}, false},
		"only the first rule counts": {route(rule(backend("legacy", 1)), rule(backend("podinfo-primary", 100), backend("podinfo-canary", 0))),
			Weights{}, false},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, found := weightsOf(tt.route, podinfo, false)
			if got != tt.want || found != tt.wantFound {
				t.Errorf("weightsOf() = %+v, %v; want %+v, %v", got, found, tt.want, tt.wantFound)
			}
		})
	}
}

// GetRoutes reports routes whose backends are not the Canary's as not
// found: Reconcile rewrites them.
func TestGatewayAPIRouter_GetRoutesOfAForeignRoute(t *testing.T) {
	w := newRouterWorld(t, foreignRoute(nil))
	got, err := (&GatewayAPIRouter{Client: w.client, FieldOwner: "serin"}).GetRoutes(context.Background(), podinfoCanary(), podinfo)
	if err != nil {
		t.Fatal(err)
	}
	if got.Found {
		t.Errorf("GetRoutes() = %+v: a route without the Canary's backends found", got)
	}
}

// Finalize hands serin's route back when the Canary is deleted: every rule
// to the apex Service at weight 100, the Canary no longer an owner, and
// serin.dev/adopt set so that a Canary created again takes it back. A
// route serin does not control, a missing route and a cluster without the
// HTTPRoute kind are left alone.
func TestGatewayAPIRouter_Finalize(t *testing.T) {
	c := podinfoCanary()
	noKind := &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: gatewayv1.GroupName, Kind: "HTTPRoute"}, SearchedVersions: []string{"v1"}}
	tests := map[string]struct {
		existing   *gatewayv1.HTTPRoute
		fail       map[string]error
		wantErr    error
		wantWrites []string
		// handedBack: the route was handed back (golden file); otherwise
		// it is as it was.
		handedBack bool
	}{
		"serin's route: to the apex Service, released": {
			existing: func() *gatewayv1.HTTPRoute {
				r := serinRoute(c, Canary(30))
				// A second rule someone added, and a rule without backends.
				r.Spec.Rules = append(r.Spec.Rules,
					gatewayv1.HTTPRouteRule{BackendRefs: []gatewayv1.HTTPBackendRef{backend("podinfo-primary", 1)}},
					gatewayv1.HTTPRouteRule{})
				// An owner that is not a controller stays.
				r.OwnerReferences = append(r.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "inventory", UID: "uid-inventory"})
				return r
			}(),
			wantWrites: []string{"patch HTTPRoute/podinfo"},
			handedBack: true,
		},
		"a route serin does not control: left alone": {existing: foreignRoute(map[string]string{v1alpha1.AdoptAnnotation: "true"})},
		"no route: nothing to do":                    {},
		"no HTTPRoute kind in the cluster: nothing to do": {
			fail: map[string]error{"get HTTPRoute/podinfo": noKind},
		},
		"the route cannot be read": {
			fail:    map[string]error{"get HTTPRoute/podinfo": injected},
			wantErr: injected,
		},
		"the patch fails": {
			existing:   serinRoute(c, Canary(30)),
			fail:       map[string]error{"patch HTTPRoute/podinfo": injected},
			wantErr:    injected,
			wantWrites: []string{"patch HTTPRoute/podinfo"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			w := newRouteWorld(t, tt.existing, tt.fail)
			before := w.route()
			err := (&GatewayAPIRouter{Client: w.client, FieldOwner: "serin"}).Finalize(context.Background(), c, podinfo)
			if !sameError(err, tt.wantErr) {
				t.Fatalf("Finalize: %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantWrites, w.calls.Writes); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			if tt.handedBack {
				testutil.Golden(t, filepath.Join("testdata", "httproute_finalized.yaml"), routeYAML(t, w.route()))
				return
			}
			if diff := cmp.Diff(before, w.route()); diff != "" {
				t.Errorf("the route changed (-before +after):\n%s", diff)
			}
		})
	}
}

// abTestCanary is podinfoCanary as an A/B test: the users with the canary
// cookie or the insider header, on /api only.
func abTestCanary() *v1alpha1.Canary {
	c := podinfoCanary()
	c.Spec.Routing.Match = []v1alpha1.HTTPRouteMatch{{
		Path:    &v1alpha1.HTTPPathMatch{Type: "PathPrefix", Value: "/api"},
		Headers: []v1alpha1.HTTPHeaderMatch{{Name: "X-Region", Value: "eu"}},
	}}
	c.Spec.Analysis = &v1alpha1.CanaryAnalysis{Iterations: 3, Match: []v1alpha1.AnalysisMatch{
		{Headers: []v1alpha1.HTTPHeaderMatch{{Name: "Cookie", Type: "RegularExpression", Value: `^(.*?;\s*)?(canary=always)(;.*)?$`}}},
		{Headers: []v1alpha1.HTTPHeaderMatch{{Name: "x-region", Value: "insider"}}, QueryParams: []v1alpha1.HTTPQueryParamMatch{{Name: "beta", Value: "1"}}},
	}}
	return c
}

// An A/B test's route while the test runs: a rule per analysis.match
// entry, within routing.match (an entry's header of the same name, in any
// case, replaces routing.match's), sending the matched requests to the
// canary, then routing.match's rule keeping every other request on the
// primary.
func TestGatewayAPIRouter_ABTestGolden(t *testing.T) {
	c := abTestCanary()
	w := newRouterWorld(t, serinRoute(c, AllPrimary))
	r := &GatewayAPIRouter{Client: w.client, FieldOwner: "serin"}
	if err := r.SetRoutes(context.Background(), c, podinfo, ABTest(100)); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join("testdata", "httproute_abtest.yaml"), routeYAML(t, w.route()))
	got, err := r.GetRoutes(context.Background(), c, podinfo)
	if err != nil {
		t.Fatal(err)
	}
	if want := ABTest(100); got.Weights != want {
		t.Errorf("weights read back %+v, want %+v", got.Weights, want)
	}
}

// The weights of an A/B test's route read back as they were set: during
// the test (the others on the primary), all to the canary (a promotion
// whose primary may go dark), all to the primary; setting them again
// writes nothing.
func TestGatewayAPIRouter_ABTestWeightsRoundTrip(t *testing.T) {
	c := abTestCanary()
	for _, set := range []Weights{ABTest(100), Canary(100), AllPrimary} {
		t.Run(fmt.Sprintf("%+v", set), func(t *testing.T) {
			w := newRouterWorld(t, serinRoute(c, AllPrimary))
			r := &GatewayAPIRouter{Client: w.client, FieldOwner: "serin"}
			if err := r.SetRoutes(context.Background(), c, podinfo, set); err != nil {
				t.Fatal(err)
			}
			route := w.route()
			if n := len(route.Spec.Rules); n != 3 {
				t.Fatalf("%d rules, want one per analysis.match entry and the others'", n)
			}
			others := map[string]int32{}
			for _, b := range route.Spec.Rules[2].BackendRefs {
				others[string(b.Name)] = *b.Weight
			}
			wantOthers := map[string]int32{"podinfo-primary": int32(set.Primary), "podinfo-canary": int32(set.Canary)}
			if set.ABTest {
				wantOthers = map[string]int32{"podinfo-primary": 100}
			}
			if diff := cmp.Diff(wantOthers, others); diff != "" {
				t.Errorf("the other requests' weights (-want +got):\n%s", diff)
			}
			got, err := r.GetRoutes(context.Background(), c, podinfo)
			if err != nil {
				t.Fatal(err)
			}
			if got.Weights != set {
				t.Errorf("weights read back %+v, want %+v", got.Weights, set)
			}
			w.calls.Writes = nil
			if err := r.SetRoutes(context.Background(), c, podinfo, set); err != nil {
				t.Fatal(err)
			}
			if len(w.calls.Writes) != 0 {
				t.Errorf("setting the weights in force wrote %v", w.calls.Writes)
			}
		})
	}
}

// A mirrored blue/green analysis: every request to the primary, a copy to
// the canary through the rule's RequestMirror filter, after the rule's own
// filters; read back as set, and gone once the weights move on.
func TestGatewayAPIRouter_MirrorGolden(t *testing.T) {
	c := podinfoCanary()
	c.Spec.Analysis = &v1alpha1.CanaryAnalysis{Iterations: 3, Mirror: true}
	c.Spec.Routing.Headers = &v1alpha1.HTTPHeaderModifiers{Request: &v1alpha1.HTTPHeaderFilter{Set: []v1alpha1.HTTPHeader{{Name: "x-env", Value: "prod"}}}}
	w := newRouterWorld(t, serinRoute(c, AllPrimary))
	r := &GatewayAPIRouter{Client: w.client, FieldOwner: "serin"}
	if err := r.SetRoutes(context.Background(), c, podinfo, Mirrored); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join("testdata", "httproute_mirror.yaml"), routeYAML(t, w.route()))
	for _, want := range []Weights{Mirrored, Canary(100), AllPrimary} {
		if err := r.SetRoutes(context.Background(), c, podinfo, want); err != nil {
			t.Fatal(err)
		}
		got, err := r.GetRoutes(context.Background(), c, podinfo)
		if err != nil {
			t.Fatal(err)
		}
		if got.Weights != want {
			t.Errorf("weights read back %+v, want %+v", got.Weights, want)
		}
	}
}

// A share of the requests mirrored (Flagger's mirrorWeight) is the
// RequestMirror filter's percent; every request (100, or unset) leaves it
// out, so that a data plane without the percentage feature still mirrors.
func TestGatewayAPIRouter_MirrorShare(t *testing.T) {
	for _, tt := range []struct {
		weight *int32
		want   *int32
	}{{weight: ptr.To(int32(25)), want: ptr.To(int32(25))}, {weight: ptr.To(int32(100))}, {}} {
		c := podinfoCanary()
		c.Spec.Analysis = &v1alpha1.CanaryAnalysis{Iterations: 3, Mirror: true, MirrorWeight: tt.weight}
		w := newRouterWorld(t, serinRoute(c, AllPrimary))
		r := &GatewayAPIRouter{Client: w.client, FieldOwner: "serin"}
		if err := r.SetRoutes(context.Background(), c, podinfo, Mirrored); err != nil {
			t.Fatal(err)
		}
		if tt.want != nil {
			testutil.Golden(t, filepath.Join("testdata", "httproute_mirror_share.yaml"), routeYAML(t, w.route()))
		}
		var mirrors []*gatewayv1.HTTPRequestMirrorFilter
		for _, f := range w.route().Spec.Rules[0].Filters {
			if f.RequestMirror != nil {
				mirrors = append(mirrors, f.RequestMirror)
			}
		}
		if len(mirrors) != 1 || !reflect.DeepEqual(mirrors[0].Percent, tt.want) || mirrors[0].Fraction != nil {
			t.Errorf("mirrorWeight %v: RequestMirror filters %+v, want one with percent %v", ptrString(tt.weight), mirrors, ptrString(tt.want))
		}
		got, err := r.GetRoutes(context.Background(), c, podinfo)
		if err != nil {
			t.Fatal(err)
		}
		if got.Weights != Mirrored {
			t.Errorf("mirrorWeight %v: weights read back %+v, want %+v", ptrString(tt.weight), got.Weights, Mirrored)
		}
	}
}

func ptrString(p *int32) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

// stickyCanary is podinfoCanary with session affinity, both cookies, during
// the rollout of revision 5f6d.
func stickyCanary() *v1alpha1.Canary {
	c := podinfoCanary()
	c.Spec.Analysis = &v1alpha1.CanaryAnalysis{StepWeight: 20, Interval: &metav1.Duration{Duration: 30 * time.Second},
		SessionAffinity: &v1alpha1.SessionAffinity{CookieName: "canary", PrimaryCookieName: "primary", MaxAge: 3600, Path: "/", Secure: true, SameSite: "Lax"}}
	c.Status.LastAppliedSpec = "5f6d"
	return c
}

// Session affinity while the canary has weight: the weighted rule first,
// its backends setting the cookies; then the canary cookie's rule to the
// canary and the primary cookie's to the primary. Weight 0: the weighted
// rule, and one that sends the canary cookie's holders to the primary and
// tells them to drop it. All to the canary (a dark primary's promotion):
// no rule keeps anyone on the primary.
func TestGatewayAPIRouter_SessionAffinityGolden(t *testing.T) {
	c := stickyCanary()
	for _, tt := range []struct {
		golden string
		w      Weights
	}{
		{"httproute_sticky_rollout.yaml", Canary(20)},
		{"httproute_sticky_after.yaml", AllPrimary},
		{"httproute_sticky_all_canary.yaml", Canary(100)},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			w := newRouterWorld(t, serinRoute(c, AllPrimary))
			r := &GatewayAPIRouter{Client: w.client, FieldOwner: "serin"}
			if err := r.SetRoutes(context.Background(), c, podinfo, tt.w); err != nil {
				t.Fatal(err)
			}
			testutil.Golden(t, filepath.Join("testdata", tt.golden), routeYAML(t, w.route()))
			got, err := r.GetRoutes(context.Background(), c, podinfo)
			if err != nil {
				t.Fatal(err)
			}
			if got.Weights != tt.w {
				t.Errorf("weights read back %+v, want %+v", got.Weights, tt.w)
			}
		})
	}
}

// A route another Canary controls is never this Canary's: GetRoutes reads
// none (the Canary syncs, and stalls on the claim), SetRoutes writes no
// weight into it.
func TestGatewayAPIRouter_AnotherCanarysRoute(t *testing.T) {
	first := controllerRef("first", "uid-first")
	existing := foreignRoute(nil, first)
	existing.Spec = routeSpec(podinfoCanary(), podinfo, AllPrimary)
	w := newRouteWorld(t, existing, nil)
	r := &GatewayAPIRouter{Client: w.client, FieldOwner: "serin"}
	ctx := context.Background()
	got, err := r.GetRoutes(ctx, podinfoCanary(), podinfo)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Routes{}, got); diff != "" {
		t.Errorf("GetRoutes() (-want +got):\n%s", diff)
	}
	want := &workload.NotManagedError{Kind: "HTTPRoute", Name: "podinfo", Controller: &first}
	if err := r.SetRoutes(ctx, podinfoCanary(), podinfo, Canary(50)); !sameError(err, want) {
		t.Errorf("SetRoutes: %v, want %v", err, want)
	}
	if len(w.calls.Writes) != 0 {
		t.Errorf("writes %v, want none", w.calls.Writes)
	}
	if diff := cmp.Diff(existing.Spec, w.route().Spec); diff != "" {
		t.Errorf("route changed (-want +got):\n%s", diff)
	}
}
