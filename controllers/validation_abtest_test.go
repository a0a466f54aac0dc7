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

// abTestAnalysis is an A/B test of the users with the canary cookie or
// the insider header.
func abTestAnalysis() v1alpha1.CanaryAnalysis {
	return v1alpha1.CanaryAnalysis{Iterations: 5, Match: []v1alpha1.AnalysisMatch{
		{Headers: []v1alpha1.HTTPHeaderMatch{{Name: "Cookie", Type: "RegularExpression", Value: `^(.*?;\s*)?(canary=always)(;.*)?$`}}},
		{Headers: []v1alpha1.HTTPHeaderMatch{{Name: "x-canary", Value: "insider"}}, QueryParams: []v1alpha1.HTTPQueryParamMatch{{Name: "beta", Value: "1"}}},
	}}
}

// analysis.match is admitted with gatewayapi and iterations, as blue/green
// on the HTTPRoute and its mirror, and each is refused,
// with a message that says what to fix, where it cannot work.
func TestValidation_IterationsOnTheHTTPRoute(t *testing.T) {
	ns := newNamespace(t)
	gateway := v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: []v1alpha1.GatewayReference{{Name: "public"}}}
	with := func(edit func(*v1alpha1.CanaryAnalysis)) v1alpha1.CanaryAnalysis {
		a := abTestAnalysis()
		edit(&a)
		return a
	}
	tests := map[string]struct {
		canary  *v1alpha1.Canary
		wantErr string
	}{
		"an A/B test":                    {canary: testobj.MakeCanary("ok-ab", ns).Routing(gateway).Analysis(abTestAnalysis()).Obj()},
		"an A/B test with routing.match": {canary: testobj.MakeCanary("ok-ab-match", ns).Routing(everyRouteSetting()).Analysis(abTestAnalysis()).Obj()},
		"with the kubernetes router": {
			canary:  testobj.MakeCanary("ab1", ns).Analysis(abTestAnalysis()).Obj(),
			wantErr: "analysis.match (an A/B test) needs routing.provider gatewayapi",
		},
		"without iterations": {
			canary:  testobj.MakeCanary("ab2", ns).Routing(gateway).Analysis(with(func(a *v1alpha1.CanaryAnalysis) { a.Iterations = 0 })).Obj(),
			wantErr: "analysis.match (an A/B test) needs analysis.iterations",
		},
		"with weights": {
			canary:  testobj.MakeCanary("ab3", ns).Routing(gateway).Analysis(with(func(a *v1alpha1.CanaryAnalysis) { a.StepWeight, a.MaxWeight = 10, 50 })).Obj(),
			wantErr: "analysis.iterations (blue/green, or an A/B test with analysis.match) moves no weights step by step: remove analysis.stepWeight, stepWeights, maxWeight and stepWeightPromotion",
		},
		"an entry that matches every request": {
			canary:  testobj.MakeCanary("ab4", ns).Routing(gateway).Analysis(with(func(a *v1alpha1.CanaryAnalysis) { a.Match = append(a.Match, v1alpha1.AnalysisMatch{}) })).Obj(),
			wantErr: "analysis.match entries need at least one header or query parameter",
		},
		"blue/green on the HTTPRoute":           {canary: testobj.MakeCanary("ok-bg", ns).Routing(gateway).Analysis(v1alpha1.CanaryAnalysis{Iterations: 3}).Obj()},
		"blue/green on the HTTPRoute, mirrored": {canary: testobj.MakeCanary("ok-mirror", ns).Routing(gateway).Analysis(v1alpha1.CanaryAnalysis{Iterations: 3, Mirror: true}).Obj()},
		"blue/green with weights": {
			canary:  testobj.MakeCanary("bg1", ns).Routing(gateway).Analysis(v1alpha1.CanaryAnalysis{Iterations: 3, StepWeights: []int{10, 20}}).Obj(),
			wantErr: "analysis.iterations (blue/green, or an A/B test with analysis.match) moves no weights step by step",
		},
		"blue/green on the HTTPRoute, a quarter mirrored": {canary: testobj.MakeCanary("ok-mirror-share", ns).Routing(gateway).
			Analysis(v1alpha1.CanaryAnalysis{Iterations: 3, Mirror: true, MirrorWeight: ptr.To(int32(25))}).Obj()},
		"a mirrored share without a mirror": {
			canary:  testobj.MakeCanary("mirror5", ns).Routing(gateway).Analysis(v1alpha1.CanaryAnalysis{Iterations: 3, MirrorWeight: ptr.To(int32(25))}).Obj(),
			wantErr: "analysis.mirrorWeight is the share of the requests mirrored to the canary: it needs analysis.mirror: true",
		},
		"a mirrored share above 100 %": {
			canary:  testobj.MakeCanary("mirror6", ns).Routing(gateway).Analysis(v1alpha1.CanaryAnalysis{Iterations: 3, Mirror: true, MirrorWeight: ptr.To(int32(150))}).Obj(),
			wantErr: "spec.analysis.mirrorWeight: Invalid value: 150: spec.analysis.mirrorWeight in body should be less than or equal to 100",
		},
		"a mirror without iterations": {
			canary:  testobj.MakeCanary("mirror1", ns).Routing(gateway).Analysis(v1alpha1.CanaryAnalysis{StepWeight: 10, Mirror: true}).Obj(),
			wantErr: "analysis.mirror copies the primary's requests to the canary during a blue/green analysis on the HTTPRoute",
		},
		"a mirror with the kubernetes router": {
			canary:  testobj.MakeCanary("mirror2", ns).Analysis(v1alpha1.CanaryAnalysis{Iterations: 3, Mirror: true}).Obj(),
			wantErr: "analysis.mirror copies the primary's requests to the canary during a blue/green analysis on the HTTPRoute",
		},
		"session affinity with weights": {canary: testobj.MakeCanary("ok-sticky", ns).Routing(gateway).Analysis(v1alpha1.CanaryAnalysis{StepWeight: 10,
			SessionAffinity: &v1alpha1.SessionAffinity{CookieName: "canary", PrimaryCookieName: "primary", SameSite: "Lax", Path: "/"}}).Obj()},
		"session affinity with blue/green": {
			canary: testobj.MakeCanary("sticky1", ns).Routing(gateway).Analysis(v1alpha1.CanaryAnalysis{Iterations: 3,
				SessionAffinity: &v1alpha1.SessionAffinity{CookieName: "canary"}}).Obj(),
			wantErr: "analysis.sessionAffinity pins users to the side that served them while the weights move",
		},
		"session affinity with one cookie for both sides": {
			canary: testobj.MakeCanary("sticky2", ns).Routing(gateway).Analysis(v1alpha1.CanaryAnalysis{StepWeight: 10,
				SessionAffinity: &v1alpha1.SessionAffinity{CookieName: "canary", PrimaryCookieName: "canary"}}).Obj(),
			wantErr: "sessionAffinity.primaryCookieName must differ from cookieName",
		},
		"a cookie name that is no token": {
			canary: testobj.MakeCanary("sticky3", ns).Routing(gateway).Analysis(v1alpha1.CanaryAnalysis{StepWeight: 10,
				SessionAffinity: &v1alpha1.SessionAffinity{CookieName: "can ary"}}).Obj(),
			wantErr: "spec.analysis.sessionAffinity.cookieName in body should match",
		},
		"a mirror in an A/B test": {
			canary:  testobj.MakeCanary("mirror3", ns).Routing(gateway).Analysis(with(func(a *v1alpha1.CanaryAnalysis) { a.Mirror = true })).Obj(),
			wantErr: "analysis.mirror copies the primary's requests to the canary during a blue/green analysis on the HTTPRoute",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) { expectAdmission(t, tt.canary, tt.wantErr) })
	}
}

// Gateway API's own HTTPRoute CRD admits an A/B test's route with every
// rule setting, and its weights read back as the A/B test's.
func TestValidation_ABTestOnTheHTTPRoute(t *testing.T) {
	ns := newNamespace(t)
	g := NewWithT(t)
	ctx := context.Background()
	c := testobj.MakeCanary("podinfo", ns).Routing(everyRouteSetting()).Analysis(abTestAnalysis()).Obj()
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	target := routing.Target{ApexService: "podinfo", PrimaryService: "podinfo-primary", CanaryService: "podinfo-canary", Port: 9898}
	router := &routing.GatewayAPIRouter{Client: k8s, FieldOwner: "serin"}
	g.Expect(router.Reconcile(ctx, c, target)).To(Succeed())
	g.Expect(router.SetRoutes(ctx, c, target, routing.ABTest(100))).To(Succeed())

	routes, err := router.GetRoutes(ctx, c, target)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(routes.Weights).To(Equal(routing.ABTest(100)))

	route := &gatewayv1.HTTPRoute{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, route)).To(Succeed())
	g.Expect(route.Spec.Rules).To(HaveLen(3), "a rule per analysis.match entry, and the others'")
	g.Expect(route.Spec.Rules[0].Matches).To(HaveLen(1), "the entry within the one routing.match")
	g.Expect(route.Spec.Rules[0].Matches[0].Headers).To(HaveLen(2), "routing.match's header and the cookie")
	g.Expect(route.Spec.Rules[2].BackendRefs).To(HaveLen(1), "the other requests go to the primary alone")
}

// Gateway API's own HTTPRoute CRD admits a mirrored blue/green route, a
// share of the requests mirrored (its percent), read back as mirrored.
func TestValidation_MirrorOnTheHTTPRoute(t *testing.T) {
	ns := newNamespace(t)
	g := NewWithT(t)
	ctx := context.Background()
	c := testobj.MakeCanary("podinfo", ns).Routing(everyRouteSetting()).
		Analysis(v1alpha1.CanaryAnalysis{Iterations: 3, Mirror: true, MirrorWeight: ptr.To(int32(25))}).Obj()
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	target := routing.Target{ApexService: "podinfo", PrimaryService: "podinfo-primary", CanaryService: "podinfo-canary", Port: 9898}
	router := &routing.GatewayAPIRouter{Client: k8s, FieldOwner: "serin"}
	g.Expect(router.Reconcile(ctx, c, target)).To(Succeed())
	g.Expect(router.SetRoutes(ctx, c, target, routing.Mirrored)).To(Succeed())
	routes, err := router.GetRoutes(ctx, c, target)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(routes.Weights).To(Equal(routing.Mirrored))
	route := &gatewayv1.HTTPRoute{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, route)).To(Succeed())
	var percents []*int32
	for _, f := range route.Spec.Rules[0].Filters {
		if f.RequestMirror != nil && f.RequestMirror.BackendRef.Name == "podinfo-canary" {
			percents = append(percents, f.RequestMirror.Percent)
		}
	}
	g.Expect(percents).To(Equal([]*int32{ptr.To(int32(25))}))
}

// Gateway API's own HTTPRoute CRD admits the routes of session affinity:
// the cookie-setting filters on the backendRefs, the cookie rules.
func TestValidation_SessionAffinityOnTheHTTPRoute(t *testing.T) {
	ns := newNamespace(t)
	g := NewWithT(t)
	ctx := context.Background()
	c := testobj.MakeCanary("podinfo", ns).Routing(everyRouteSetting()).Analysis(v1alpha1.CanaryAnalysis{StepWeight: 10,
		SessionAffinity: &v1alpha1.SessionAffinity{CookieName: "canary", PrimaryCookieName: "primary", Secure: true}}).Obj()
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	c.Status.LastAppliedSpec = "5f6d"
	target := routing.Target{ApexService: "podinfo", PrimaryService: "podinfo-primary", CanaryService: "podinfo-canary", Port: 9898}
	router := &routing.GatewayAPIRouter{Client: k8s, FieldOwner: "serin"}
	g.Expect(router.Reconcile(ctx, c, target)).To(Succeed())
	for _, w := range []routing.Weights{routing.Canary(10), routing.AllPrimary} {
		g.Expect(router.SetRoutes(ctx, c, target, w)).To(Succeed())
		routes, err := router.GetRoutes(ctx, c, target)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(routes.Weights).To(Equal(w))
	}
}
