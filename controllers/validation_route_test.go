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

package controllers

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/routing"
)

// everyRouteSetting is a gatewayapi routing with every setting of the
// HTTPRoute's rule.
func everyRouteSetting() v1alpha1.CanaryRouting {
	return v1alpha1.CanaryRouting{
		Provider:    v1alpha1.GatewayAPIRouting,
		GatewayRefs: []v1alpha1.GatewayReference{{Name: "public"}},
		Match: []v1alpha1.HTTPRouteMatch{{
			Path:        &v1alpha1.HTTPPathMatch{Type: "PathPrefix", Value: "/api"},
			Headers:     []v1alpha1.HTTPHeaderMatch{{Name: "x-canary", Value: "insider"}},
			QueryParams: []v1alpha1.HTTPQueryParamMatch{{Type: "RegularExpression", Name: "v", Value: "^2"}},
			Method:      "GET",
		}},
		Timeout:        "1m30s",
		BackendTimeout: "10s",
		Retries:        &v1alpha1.HTTPRouteRetry{Codes: []int32{503}, Attempts: ptr.To(int32(2)), Backoff: "100ms"},
		Headers: &v1alpha1.HTTPHeaderModifiers{
			Request:  &v1alpha1.HTTPHeaderFilter{Set: []v1alpha1.HTTPHeader{{Name: "x-env", Value: "prod"}}, Remove: []string{"x-debug"}},
			Response: &v1alpha1.HTTPHeaderFilter{Add: []v1alpha1.HTTPHeader{{Name: "x-served-by", Value: "serin"}}},
		},
		Rewrite: &v1alpha1.HTTPURLRewrite{Hostname: "podinfo.internal",
			Path: &v1alpha1.HTTPPathModifier{Type: "ReplacePrefixMatch", ReplacePrefixMatch: ptr.To("/")}},
		CorsPolicy: &v1alpha1.HTTPCORSFilter{AllowOrigins: []string{"https://example.com"}, AllowMethods: []string{"GET", "POST"}},
		Mirrors:    []v1alpha1.RouteMirror{{Name: "shadow", Port: 80, Percent: ptr.To(int32(10))}, {Name: "recorder", Port: 8080}},
	}
}

// The HTTPRoute's settings are admitted with gatewayapi and refused with a
// message that says what to fix.
func TestValidation_RouteSettings(t *testing.T) {
	ns := newNamespace(t)
	routingWith := func(edit func(*v1alpha1.CanaryRouting)) v1alpha1.CanaryRouting {
		r := everyRouteSetting()
		edit(&r)
		return r
	}
	canary := func(name string, r v1alpha1.CanaryRouting) *v1alpha1.Canary {
		return testobj.MakeCanary(name, ns).Routing(r).Analysis(v1alpha1.CanaryAnalysis{StepWeight: 10}).Obj()
	}
	tests := map[string]struct {
		canary  *v1alpha1.Canary
		wantErr string
	}{
		"every setting": {canary: canary("ok-all", everyRouteSetting())},
		"a full-path rewrite with any match": {canary: canary("ok-full", routingWith(func(r *v1alpha1.CanaryRouting) {
			r.Match = append(r.Match, v1alpha1.HTTPRouteMatch{Path: &v1alpha1.HTTPPathMatch{Type: "Exact", Value: "/healthz"}})
			r.Rewrite.Path = &v1alpha1.HTTPPathModifier{Type: "ReplaceFullPath", ReplaceFullPath: ptr.To("/")}
		}))},
		"settings with kubernetes": {
			canary: testobj.MakeCanary("r1", ns).Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.KubernetesRouting, Timeout: "10s"}).
				Analysis(v1alpha1.CanaryAnalysis{Iterations: 2}).Obj(),
			wantErr: "routing.match, timeout, backendTimeout, retries, headers, rewrite, corsPolicy and mirrors configure the HTTPRoute and need routing.provider gatewayapi",
		},
		"mirrors with kubernetes": {
			canary: testobj.MakeCanary("r-mirror1", ns).Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.KubernetesRouting,
				Mirrors: []v1alpha1.RouteMirror{{Name: "shadow", Port: 80}}}).Analysis(v1alpha1.CanaryAnalysis{Iterations: 2}).Obj(),
			wantErr: "routing.match, timeout, backendTimeout, retries, headers, rewrite, corsPolicy and mirrors configure the HTTPRoute and need routing.provider gatewayapi",
		},
		"a mirror to the canary Service": {
			canary: canary("r-mirror2", routingWith(func(r *v1alpha1.CanaryRouting) {
				r.Mirrors = []v1alpha1.RouteMirror{{Name: "r-mirror2-canary", Port: 9898}}
			})),
			wantErr: "routing.mirrors must not name the apex, primary or canary Service",
		},
		"a mirror to the apex Service": {
			canary:  canary("r-mirror3", routingWith(func(r *v1alpha1.CanaryRouting) { r.Mirrors = []v1alpha1.RouteMirror{{Name: "r-mirror3", Port: 9898}} })),
			wantErr: "routing.mirrors must not name the apex, primary or canary Service",
		},
		"a mirror of more than every request": {
			canary:  canary("r-mirror4", routingWith(func(r *v1alpha1.CanaryRouting) { r.Mirrors[0].Percent = ptr.To(int32(101)) })),
			wantErr: "should be less than or equal to 100",
		},
		"a mirror that is no Service name": {
			canary:  canary("r-mirror5", routingWith(func(r *v1alpha1.CanaryRouting) { r.Mirrors[0].Name = "Shadow" })),
			wantErr: "routing.mirrors[].name must be a Service name: a DNS-1123 label",
		},
		"a backend timeout longer than the request's": {
			canary:  canary("r8", routingWith(func(r *v1alpha1.CanaryRouting) { r.BackendTimeout = "2m" })),
			wantErr: "routing.backendTimeout must not exceed routing.timeout",
		},
		"a backend timeout with the request's disabled (0s)": {canary: canary("ok-backend", routingWith(func(r *v1alpha1.CanaryRouting) {
			r.Timeout, r.BackendTimeout = "0s", "2m"
		}))},
		"a prefix rewrite with an exact match": {
			canary:  canary("r2", routingWith(func(r *v1alpha1.CanaryRouting) { r.Match[0].Path.Type = "Exact" })),
			wantErr: "routing.rewrite.path of type ReplacePrefixMatch needs exactly one routing.match, with a path of type PathPrefix",
		},
		"a rewrite without its path": {
			canary:  canary("r3", routingWith(func(r *v1alpha1.CanaryRouting) { r.Rewrite.Path.ReplacePrefixMatch = nil })),
			wantErr: "rewrite.path needs replaceFullPath with type ReplaceFullPath, or replacePrefixMatch with type ReplacePrefixMatch",
		},
		"a timeout that is not a Gateway API duration": {
			canary:  canary("r4", routingWith(func(r *v1alpha1.CanaryRouting) { r.Timeout = "1.5s" })),
			wantErr: "spec.routing.timeout in body should match",
		},
		"'*' alongside other methods": {
			canary:  canary("r6", routingWith(func(r *v1alpha1.CanaryRouting) { r.CorsPolicy.AllowMethods = []string{"GET", "*"} })),
			wantErr: "corsPolicy.allowMethods cannot have '*' alongside other methods",
		},
		"a relative path": {
			canary:  canary("r7", routingWith(func(r *v1alpha1.CanaryRouting) { r.Match[0].Path.Value = "api" })),
			wantErr: "match.path.value must be an absolute path",
		},
		"a header matched twice": {
			canary: canary("r8", routingWith(func(r *v1alpha1.CanaryRouting) {
				r.Match[0].Headers = append(r.Match[0].Headers, r.Match[0].Headers[0])
			})),
			wantErr: "Duplicate value",
		},
		"a retry code out of range": {
			canary:  canary("r5", routingWith(func(r *v1alpha1.CanaryRouting) { r.Retries.Codes = []int32{302} })),
			wantErr: "spec.routing.retries.codes[0]: Invalid value: 302",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) { expectAdmission(t, tt.canary, tt.wantErr) })
	}
}

// Gateway API's own HTTPRoute CRD (the standard channel, as the testbed
// installs it) admits the route serin generates with every setting, and
// its weights are found; the standard channel has no retry, so the API
// server drops it.
func TestValidation_RouteSettingsOnTheHTTPRoute(t *testing.T) {
	ns := newNamespace(t)
	g := NewWithT(t)
	ctx := context.Background()
	c := testobj.MakeCanary("podinfo", ns).Routing(everyRouteSetting()).Analysis(v1alpha1.CanaryAnalysis{StepWeight: 10}).Obj()
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	target := routing.Target{ApexService: "podinfo", PrimaryService: "podinfo-primary", CanaryService: "podinfo-canary", Port: 9898}
	router := &routing.GatewayAPIRouter{Client: k8s, FieldOwner: "serin"}
	g.Expect(router.Reconcile(ctx, c, target)).To(Succeed())
	g.Expect(router.SetRoutes(ctx, c, target, routing.Canary(20))).To(Succeed())

	routes, err := router.GetRoutes(ctx, c, target)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(routes.Found).To(BeTrue())
	g.Expect(routes.Weights).To(Equal(routing.Canary(20)))

	route := &gatewayv1.HTTPRoute{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, route)).To(Succeed())
	g.Expect(route.Spec.Rules).To(HaveLen(1))
	rule := route.Spec.Rules[0]
	g.Expect(rule.Matches).To(HaveLen(1))
	g.Expect(*rule.Timeouts.Request).To(Equal(gatewayv1.Duration("1m30s")))
	g.Expect(*rule.Timeouts.BackendRequest).To(Equal(gatewayv1.Duration("10s")))
	var filters []gatewayv1.HTTPRouteFilterType
	for _, f := range rule.Filters {
		filters = append(filters, f.Type)
	}
	g.Expect(filters).To(Equal([]gatewayv1.HTTPRouteFilterType{gatewayv1.HTTPRouteFilterRequestHeaderModifier,
		gatewayv1.HTTPRouteFilterResponseHeaderModifier, gatewayv1.HTTPRouteFilterURLRewrite, gatewayv1.HTTPRouteFilterCORS,
		gatewayv1.HTTPRouteFilterRequestMirror, gatewayv1.HTTPRouteFilterRequestMirror}))
	g.Expect(rule.Filters[4].RequestMirror.BackendRef.Name).To(BeEquivalentTo("shadow"))
	g.Expect(rule.Filters[4].RequestMirror.Percent).To(Equal(ptr.To(int32(10))), "the standard channel keeps a mirror's percent")
	g.Expect(rule.Filters[5].RequestMirror.Percent).To(BeNil())
	g.Expect(rule.Retry).To(BeNil(), "the standard channel's HTTPRoute has no retry")
}

// routing.routeRefs is admitted with gatewayapi and a Deployment target,
// and refused with a message that says what to fix wherever it cannot
// work: with the settings of the generated route, the kubernetes router,
// a Service target, or analyses that add rules to a route.
func TestValidation_RouteRefs(t *testing.T) {
	ns := newNamespace(t)
	refs := func() v1alpha1.CanaryRouting {
		return v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, RouteRefs: []v1alpha1.RouteReference{{Name: "shop"}, {Name: "shop.internal"}}}
	}
	canary := func(name string, edit func(*v1alpha1.Canary)) *v1alpha1.Canary {
		c := testobj.MakeCanary(name, ns).Routing(refs()).Analysis(v1alpha1.CanaryAnalysis{StepWeight: 10}).Obj()
		if edit != nil {
			edit(c)
		}
		return c
	}
	tests := map[string]struct {
		canary  *v1alpha1.Canary
		wantErr string
	}{
		"the user's routes, no gatewayRefs": {canary: canary("ok-refs", nil)},
		"with gatewayRefs": {
			canary:  canary("rr1", func(c *v1alpha1.Canary) { c.Spec.Routing.GatewayRefs = []v1alpha1.GatewayReference{{Name: "public"}} }),
			wantErr: "routing.routeRefs steers the routes you keep, as you wrote them",
		},
		"with a setting of the generated route": {
			canary:  canary("rr2", func(c *v1alpha1.Canary) { c.Spec.Routing.Timeout = "10s" }),
			wantErr: "remove routing.gatewayRefs, hosts, match, timeout, backendTimeout, retries, headers, rewrite, corsPolicy and mirrors",
		},
		"with the kubernetes router": {
			canary: canary("rr3", func(c *v1alpha1.Canary) {
				c.Spec.Routing.Provider = v1alpha1.KubernetesRouting
				c.Spec.Analysis = &v1alpha1.CanaryAnalysis{Iterations: 2}
			}),
			wantErr: "routing.routeRefs names HTTPRoutes and GRPCRoutes whose weights serin moves: it needs routing.provider gatewayapi",
		},
		"a Service target": {
			canary: canary("rr4", func(c *v1alpha1.Canary) {
				c.Spec.TargetRef = v1alpha1.TargetReference{APIVersion: "v1", Kind: "Service", Name: "rr4"}
			}),
			wantErr: "routing.routeRefs needs a Deployment target",
		},
		"an A/B test": {
			canary: canary("rr5", func(c *v1alpha1.Canary) {
				c.Spec.Analysis = &v1alpha1.CanaryAnalysis{Iterations: 2, Match: []v1alpha1.AnalysisMatch{{Headers: []v1alpha1.HTTPHeaderMatch{{Name: "x-canary", Value: "1"}}}}}
			}),
			wantErr: "analysis.match, analysis.mirror and analysis.sessionAffinity add rules or filters to a route",
		},
		"a route name that is no object name": {
			canary:  canary("rr6", func(c *v1alpha1.Canary) { c.Spec.Routing.RouteRefs[0].Name = "Shop_1" }),
			wantErr: "routing.routeRefs[].name must be an object name",
		},
		"another kind of route": {
			canary:  canary("rr7", func(c *v1alpha1.Canary) { c.Spec.Routing.RouteRefs[0].Kind = "TLSRoute" }),
			wantErr: "Unsupported value: \"TLSRoute\"",
		},
		"the same route twice": {
			canary:  canary("rr8", func(c *v1alpha1.Canary) { c.Spec.Routing.RouteRefs[1].Name = "shop" }),
			wantErr: "Duplicate value",
		},
		"a GRPCRoute and an HTTPRoute of the same name": {
			canary: canary("ok-grpc", func(c *v1alpha1.Canary) {
				c.Spec.Routing.RouteRefs[1] = v1alpha1.RouteReference{Kind: v1alpha1.GRPCRouteKind, Name: "shop"}
			}),
		},
		"the same GRPCRoute twice": {
			canary: canary("rr9", func(c *v1alpha1.Canary) {
				c.Spec.Routing.RouteRefs = []v1alpha1.RouteReference{{Kind: v1alpha1.GRPCRouteKind, Name: "shop"}, {Kind: v1alpha1.GRPCRouteKind, Name: "shop"}}
			}),
			wantErr: "Duplicate value",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) { expectAdmission(t, tt.canary, tt.wantErr) })
	}
}

// analysis.pin is admitted on a weighted gatewayapi analysis, of the
// generated route or the user's, and refused with a message that says
// what to fix elsewhere.
func TestValidation_Pin(t *testing.T) {
	ns := newNamespace(t)
	pin := &v1alpha1.CanaryPin{Match: []v1alpha1.AnalysisMatch{{Headers: []v1alpha1.HTTPHeaderMatch{{Name: "x-tester", Value: "yes"}}}}, FromWeight: ptr.To(int32(20))}
	canary := func(name string, r v1alpha1.CanaryRouting, a v1alpha1.CanaryAnalysis) *v1alpha1.Canary {
		a.Pin = pin
		return testobj.MakeCanary(name, ns).Routing(r).Analysis(a).Obj()
	}
	gateway := v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: []v1alpha1.GatewayReference{{Name: "public"}}}
	const refused = "analysis.pin sends the pinned requests to the canary during a weighted analysis"
	tests := map[string]struct {
		canary  *v1alpha1.Canary
		wantErr string
	}{
		"weights on the generated route": {canary: canary("ok-pin", gateway, v1alpha1.CanaryAnalysis{StepWeight: 10})},
		"the kubernetes router": {canary: canary("pin1", v1alpha1.CanaryRouting{Provider: v1alpha1.KubernetesRouting}, v1alpha1.CanaryAnalysis{Iterations: 2}),
			wantErr: refused},
		"blue/green on the route": {canary: canary("pin2", gateway, v1alpha1.CanaryAnalysis{Iterations: 2}), wantErr: refused},
		"weights on the user's routes": {canary: canary("ok-pin3", v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, RouteRefs: []v1alpha1.RouteReference{{Name: "shop"}}},
			v1alpha1.CanaryAnalysis{StepWeight: 10})},
		"weights on the user's GRPCRoute": {canary: canary("pin5", v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting,
			RouteRefs: []v1alpha1.RouteReference{{Name: "shop"}, {Kind: v1alpha1.GRPCRouteKind, Name: "shop"}}}, v1alpha1.CanaryAnalysis{StepWeight: 10}),
			wantErr: "analysis.pin sends the pinned requests by an HTTPRoute of serin's own next to each of your routes, matching HTTP headers and query parameters: it works with HTTPRoutes only"},
		"no match": {canary: func() *v1alpha1.Canary {
			c := canary("pin4", gateway, v1alpha1.CanaryAnalysis{StepWeight: 10})
			c.Spec.Analysis.Pin = &v1alpha1.CanaryPin{}
			return c
		}(), wantErr: "spec.analysis.pin.match"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) { expectAdmission(t, tt.canary, tt.wantErr) })
	}
}
