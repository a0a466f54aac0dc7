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
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testutil"
)

// withEveryRuleSetting is podinfo's Canary with every setting of the
// HTTPRoute's rule: two matches, a timeout, retries, header changes both
// ways, a prefix rewrite and a CORS policy.
func withEveryRuleSetting(c *v1alpha1.Canary) *v1alpha1.Canary {
	c.Spec.Routing.Match = []v1alpha1.HTTPRouteMatch{
		{
			Path:        &v1alpha1.HTTPPathMatch{Type: "PathPrefix", Value: "/api"},
			Headers:     []v1alpha1.HTTPHeaderMatch{{Name: "x-canary", Value: "insider"}},
			QueryParams: []v1alpha1.HTTPQueryParamMatch{{Type: "RegularExpression", Name: "v", Value: "^2"}},
			Method:      "GET",
		},
	}
	c.Spec.Routing.Timeout = "15s"
	c.Spec.Routing.BackendTimeout = "5s"
	c.Spec.Routing.Retries = &v1alpha1.HTTPRouteRetry{Codes: []int32{502, 503}, Attempts: ptr.To(int32(3)), Backoff: "100ms"}
	c.Spec.Routing.Headers = &v1alpha1.HTTPHeaderModifiers{
		Request: &v1alpha1.HTTPHeaderFilter{
			Set:    []v1alpha1.HTTPHeader{{Name: "x-env", Value: "prod"}},
			Add:    []v1alpha1.HTTPHeader{{Name: "x-via", Value: "serin"}},
			Remove: []string{"x-debug"},
		},
		Response: &v1alpha1.HTTPHeaderFilter{Remove: []string{"server"}},
	}
	c.Spec.Routing.Rewrite = &v1alpha1.HTTPURLRewrite{
		Hostname: "podinfo.internal",
		Path:     &v1alpha1.HTTPPathModifier{Type: "ReplacePrefixMatch", ReplacePrefixMatch: ptr.To("/")},
	}
	c.Spec.Routing.CorsPolicy = &v1alpha1.HTTPCORSFilter{
		AllowOrigins:     []string{"https://example.com"},
		AllowCredentials: ptr.To(true),
		AllowMethods:     []string{"GET", "POST"},
		AllowHeaders:     []string{"x-canary"},
		ExposeHeaders:    []string{"x-version"},
		MaxAge:           600,
	}
	c.Spec.Routing.Mirrors = []v1alpha1.RouteMirror{{Name: "shadow", Port: 80, Percent: ptr.To(int32(10))}, {Name: "recorder", Port: 8080, Percent: ptr.To(int32(100))}}
	return c
}

// The route Reconcile creates for a Canary with every rule setting: still
// one rule, its matches, timeouts, retry and filters in the order headers,
// rewrite, CORS, mirrors (a mirror of every request without a percent).
func TestGatewayAPIRouter_ReconcileRuleSettingsGolden(t *testing.T) {
	w := newRouterWorld(t)
	c := withEveryRuleSetting(podinfoCanary())
	if err := (&GatewayAPIRouter{Client: w.client, FieldOwner: "serin"}).Reconcile(context.Background(), c, podinfo); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join("testdata", "httproute_rule_settings.yaml"), routeYAML(t, w.route()))
}

// With the rule settings, the weights stay where weightsOf and SetRoutes
// find them: SetRoutes writes new weights keeping the settings, GetRoutes
// reads them back, and Reconcile brings changed settings in keeping the
// weights.
func TestGatewayAPIRouter_RuleSettingsKeepTheWeights(t *testing.T) {
	ctx := context.Background()
	w := newRouterWorld(t)
	c := withEveryRuleSetting(podinfoCanary())
	r := &GatewayAPIRouter{Client: w.client, FieldOwner: "serin"}
	if err := r.Reconcile(ctx, c, podinfo); err != nil {
		t.Fatal(err)
	}
	created := w.route().Spec.Rules[0]
	if err := r.SetRoutes(ctx, c, podinfo, Canary(30)); err != nil {
		t.Fatal(err)
	}
	got, err := r.GetRoutes(ctx, c, podinfo)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Found || got.Weights != Canary(30) {
		t.Errorf("GetRoutes after SetRoutes = %+v, want found with %+v", got, Canary(30))
	}
	set := w.route().Spec.Rules[0]
	if diff := cmp.Diff(created, set, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".BackendRefs" }, cmp.Ignore())); diff != "" {
		t.Errorf("SetRoutes changed the rule's settings (-created +set):\n%s", diff)
	}

	c.Spec.Routing.Timeout = "30s"
	c.Spec.Routing.CorsPolicy = nil
	if err := r.Reconcile(ctx, c, podinfo); err != nil {
		t.Fatal(err)
	}
	route := w.route()
	if len(route.Spec.Rules) != 1 {
		t.Fatalf("rules = %d, want 1", len(route.Spec.Rules))
	}
	rule := route.Spec.Rules[0]
	if rule.Timeouts == nil || rule.Timeouts.Request == nil || *rule.Timeouts.Request != "30s" {
		t.Errorf("timeouts = %+v, want request 30s", rule.Timeouts)
	}
	for _, f := range rule.Filters {
		if f.Type == gatewayv1.HTTPRouteFilterCORS {
			t.Errorf("the CORS filter stayed after corsPolicy was removed")
		}
	}
	if got := weightsIn(route); got["podinfo-primary"] != 70 || got["podinfo-canary"] != 30 {
		t.Errorf("weights after Reconcile = %v, want 70/30", got)
	}
}

// Gateway API's defaults are written out: a match without a path is the
// prefix /, header and query matches are Exact, a CORS policy without
// maxAge has 5, so that the route read back equals the one serin wants.
func TestApplyRuleSettingsDefaults(t *testing.T) {
	var rule gatewayv1.HTTPRouteRule
	applyRuleSettings(&rule, v1alpha1.CanaryRouting{
		Match: []v1alpha1.HTTPRouteMatch{{
			Headers:     []v1alpha1.HTTPHeaderMatch{{Name: "x-canary", Value: "1"}},
			QueryParams: []v1alpha1.HTTPQueryParamMatch{{Name: "v", Value: "2"}},
		}},
		CorsPolicy: &v1alpha1.HTTPCORSFilter{AllowOrigins: []string{"*"}},
	})
	want := gatewayv1.HTTPRouteRule{
		Matches: []gatewayv1.HTTPRouteMatch{{
			Path:        &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To("/")},
			Headers:     []gatewayv1.HTTPHeaderMatch{{Type: ptr.To(gatewayv1.HeaderMatchExact), Name: "x-canary", Value: "1"}},
			QueryParams: []gatewayv1.HTTPQueryParamMatch{{Type: ptr.To(gatewayv1.QueryParamMatchExact), Name: "v", Value: "2"}},
		}},
		Filters: []gatewayv1.HTTPRouteFilter{{
			Type: gatewayv1.HTTPRouteFilterCORS,
			CORS: &gatewayv1.HTTPCORSFilter{AllowOrigins: []gatewayv1.CORSOrigin{"*"}, MaxAge: 5},
		}},
	}
	if diff := cmp.Diff(want, rule); diff != "" {
		t.Errorf("rule (-want +got):\n%s", diff)
	}
}

// Without rule settings the rule has backends only: no matches, timeouts,
// retry or filters (the golden file httproute_created.yaml shows the whole
// route).
func TestApplyRuleSettingsNone(t *testing.T) {
	var rule gatewayv1.HTTPRouteRule
	applyRuleSettings(&rule, podinfoCanary().Spec.Routing)
	if diff := cmp.Diff(gatewayv1.HTTPRouteRule{}, rule); diff != "" {
		t.Errorf("rule (-want +got):\n%s", diff)
	}
}
