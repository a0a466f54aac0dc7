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
	"maps"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/workload"
)

// GatewayAPIRouter shifts weights between the primary and canary Services on
// a Gateway API HTTPRoute named after the apex Service.
type GatewayAPIRouter struct {
	Client     client.Client
	FieldOwner string
}

// Reconcile creates the HTTPRoute with all traffic on the primary, or
// updates its parents and hostnames keeping the weights. A route of that
// name the Canary may not take over is left as it is
// (workload.NotManagedError).
func (r *GatewayAPIRouter) Reconcile(ctx context.Context, canary *v1alpha1.Canary, t Target) error {
	route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: canary.Namespace, Name: t.ApexService}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, route, func() error {
		// A route serin did not create is not taken over, unless annotated.
		if err := workload.Claim(canary, route, r.Client.Scheme()); err != nil {
			return err
		}
		w := AllPrimary
		if current, ok := weightsOf(route, t, canary.IsABTest()); ok {
			w = current
		}
		// spec.service.apex's metadata, under serin's own.
		route.Labels = maps.Clone(canary.Spec.Service.Apex.GetLabels())
		if route.Labels == nil {
			route.Labels = map[string]string{}
		}
		route.Labels["serin.dev/canary"] = canary.Name
		route.Annotations = maps.Clone(canary.Spec.Service.Apex.GetAnnotations())
		if route.Annotations == nil {
			route.Annotations = map[string]string{}
		}
		route.Annotations["kustomize.toolkit.fluxcd.io/reconcile"] = "disabled"
		route.Spec = routeSpec(canary, t, w)
		return nil
	})
	if err != nil {
		return fmt.Errorf("failed to apply httproute %s: %w", route.Name, err)
	}
	return nil
}

// SetRoutes writes the weights on the HTTPRoute.
func (r *GatewayAPIRouter) SetRoutes(ctx context.Context, canary *v1alpha1.Canary, t Target, w Weights) error {
	route := &gatewayv1.HTTPRoute{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: canary.Namespace, Name: t.ApexService}, route); err != nil {
		return fmt.Errorf("failed to get httproute %s: %w", t.ApexService, err)
	}
	if !metav1.IsControlledBy(route, canary) {
		// Another Canary's route, or one a person made: never its weights.
		return notManaged("HTTPRoute", route)
	}
	if current, ok := weightsOf(route, t, canary.IsABTest()); ok && current == w && routesBaseline(route, t) == t.routedBaseline() {
		return nil
	}
	patch := client.MergeFrom(route.DeepCopy())
	route.Spec = routeSpec(canary, t, w)
	if err := r.Client.Patch(ctx, route, patch, client.FieldOwner(r.FieldOwner)); err != nil {
		return fmt.Errorf("failed to set weights on httproute %s: %w", route.Name, err)
	}
	return nil
}

// GetRoutes reads the weights of the HTTPRoute, and from its
// status.parents whether every Gateway accepted them (routeStatus).
func (r *GatewayAPIRouter) GetRoutes(ctx context.Context, canary *v1alpha1.Canary, t Target) (Routes, error) {
	route := &gatewayv1.HTTPRoute{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: canary.Namespace, Name: t.ApexService}, route); err != nil {
		if apierrors.IsNotFound(err) {
			return Routes{}, nil
		}
		return Routes{}, err
	}
	if !metav1.IsControlledBy(route, canary) {
		// Not this Canary's: its weights are not the Canary's to judge or
		// keep; the routes count as missing until the Canary may claim it.
		return Routes{}, nil
	}
	w, ok := weightsOf(route, t, canary.IsABTest())
	return Routes{Found: ok, Weights: w, Baseline: routesBaseline(route, t), Status: routeStatus(route)}, nil
}

// Finalize sends every rule of the HTTPRoute to the apex Service alone and
// releases the route (workload.Release), so that the Gateway keeps serving
// through the apex Service once the primary and canary Services are gone.
// A missing route, or a missing HTTPRoute kind, is nothing to do.
func (r *GatewayAPIRouter) Finalize(ctx context.Context, canary *v1alpha1.Canary, t Target) error {
	route := &gatewayv1.HTTPRoute{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: canary.Namespace, Name: t.ApexService}, route); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return nil
		}
		return fmt.Errorf("failed to get httproute %s: %w", t.ApexService, err)
	}
	if !metav1.IsControlledBy(route, canary) {
		return nil // not serin's to change
	}
	patch := client.MergeFrom(route.DeepCopy())
	for i, rule := range route.Spec.Rules {
		if len(rule.BackendRefs) == 0 {
			continue
		}
		only := rule.BackendRefs[0]
		only.Name = gatewayv1.ObjectName(t.ApexService)
		only.Weight = ptr.To(int32(100))
		route.Spec.Rules[i].BackendRefs = []gatewayv1.HTTPBackendRef{only}
	}
	workload.Release(canary, route)
	if err := r.Client.Patch(ctx, route, patch, client.FieldOwner(r.FieldOwner)); err != nil {
		return fmt.Errorf("failed to hand httproute %s back to the apex service: %w", route.Name, err)
	}
	return nil
}

// routeSpec is the HTTPRoute serin wants: the Canary's gateways and hosts,
// one rule sending to primary and canary with the given weights, with
// routing's match, timeout, retries and filters (applyRuleSettings).
func routeSpec(canary *v1alpha1.Canary, t Target, w Weights) gatewayv1.HTTPRouteSpec {
	var parents []gatewayv1.ParentReference
	for _, g := range canary.Spec.Routing.GatewayRefs {
		parents = append(parents, parentRef(g))
	}
	var hosts []gatewayv1.Hostname
	for _, h := range canary.Spec.Routing.Hosts {
		hosts = append(hosts, gatewayv1.Hostname(h))
	}
	backend := func(name string, weight int) gatewayv1.HTTPBackendRef {
		return gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{
			BackendObjectReference: gatewayv1.BackendObjectReference{
				Name: gatewayv1.ObjectName(name),
				Port: ptr.To(t.Port),
			},
			Weight: ptr.To(int32(weight)),
		}}
	}
	rule := gatewayv1.HTTPRouteRule{
		BackendRefs: []gatewayv1.HTTPBackendRef{
			backend(t.PrimaryService, w.Primary),
			backend(t.CanaryService, w.Canary),
		},
	}
	if t.routedBaseline() {
		// The baseline takes the canary's weight from the primary's share.
		b := baselineWeight(w)
		rule.BackendRefs = []gatewayv1.HTTPBackendRef{
			backend(t.PrimaryService, w.Primary-b),
			backend(t.BaselineService, b),
			backend(t.CanaryService, w.Canary),
		}
	}
	applyRuleSettings(&rule, canary.Spec.Routing)
	if w.Mirror {
		mirror := &gatewayv1.HTTPRequestMirrorFilter{BackendRef: backend(t.CanaryService, 0).BackendObjectReference}
		if a := canary.Spec.Analysis; a != nil && a.MirrorWeight != nil && *a.MirrorWeight < 100 {
			// Only a share needs the percentage feature: every request
			// is the filter's core behaviour.
			mirror.Percent = ptr.To(*a.MirrorWeight)
		}
		rule.Filters = append(rule.Filters, gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestMirror, RequestMirror: mirror})
	}
	rules := []gatewayv1.HTTPRouteRule{rule}
	switch {
	case canary.IsABTest():
		rules = abTestRules(canary, rule, w, backend(t.PrimaryService, 100))
	case canary.Spec.Analysis != nil && canary.Spec.Analysis.SessionAffinity != nil:
		rules = stickyRules(canary, t, rule, w)
	case pinned(canary, w):
		rules = append(rules, pinRules(canary, rule, backend(t.CanaryService, 100))...)
	}
	return gatewayv1.HTTPRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parents},
		Hostnames:       hosts,
		Rules:           rules,
	}
}

// abTestRules are the rules of an A/B test (analysis.match): first a rule
// per analysis.match entry, with the entry within each routing.match
// (their headers and query parameters together; an entry's condition on a
// name routing.match also names replaces it), sending the matched requests
// to primary and canary by the weights; then rule, which keeps every other
// request on the primary while the test runs (w.ABTest) and follows the
// weights otherwise (all traffic to the canary while a primary that may go
// dark is promoted, back to the primary after). A rule per entry, not one
// with every entry, because a ReplacePrefixMatch rewrite allows one match
// per rule. The matched rules are the more specific (more header and query
// matches), which Gateway API's precedence serves first whatever the
// order; they come first so that weightsOf reads them.
func abTestRules(canary *v1alpha1.Canary, rule gatewayv1.HTTPRouteRule, w Weights, primaryOnly gatewayv1.HTTPBackendRef) []gatewayv1.HTTPRouteRule {
	rules := matchedRules(rule, canary.Spec.Analysis.Match)
	others := rule
	if w.ABTest {
		others = *rule.DeepCopy()
		others.BackendRefs = []gatewayv1.HTTPBackendRef{primaryOnly}
	}
	return append(rules, others)
}

// pinned tells whether the route at weights w pins analysis.pin's requests
// to the canary: during a weighted analysis (the canary has a share, not
// all of it), from analysis.pin.fromWeight.
func pinned(canary *v1alpha1.Canary, w Weights) bool {
	a := canary.Spec.Analysis
	if a == nil || a.Pin == nil || w.Canary <= 0 || w.Canary >= 100 || w.ABTest || w.Mirror {
		return false
	}
	return a.Pin.FromWeight == nil || int32(w.Canary) >= *a.Pin.FromWeight
}

// pinRules are the rules of analysis.pin: one per entry, its conditions
// within each match of routing.match (abTestMatch), sending what it matches
// to the canary alone. They are more specific than rule (more header and
// query matches), which Gateway API's precedence serves first whatever the
// order; they come after it so that weightsOf reads rule.
func pinRules(canary *v1alpha1.Canary, rule gatewayv1.HTTPRouteRule, canaryOnly gatewayv1.HTTPBackendRef) []gatewayv1.HTTPRouteRule {
	rules := matchedRules(rule, canary.Spec.Analysis.Pin.Match)
	for i := range rules {
		rules[i].BackendRefs = []gatewayv1.HTTPBackendRef{canaryOnly}
	}
	return rules
}

// matchedRules are copies of rule, one per entry, whose matches are the
// entry's conditions within each of rule's matches (every path when it
// has none).
func matchedRules(rule gatewayv1.HTTPRouteRule, entries []v1alpha1.AnalysisMatch) []gatewayv1.HTTPRouteRule {
	bases := rule.Matches
	if len(bases) == 0 {
		bases = []gatewayv1.HTTPRouteMatch{routeMatch(v1alpha1.HTTPRouteMatch{})} // every path
	}
	var rules []gatewayv1.HTTPRouteRule
	for _, m := range entries {
		matched := *rule.DeepCopy()
		matched.Matches = nil
		for _, base := range bases {
			matched.Matches = append(matched.Matches, abTestMatch(base, m))
		}
		rules = append(rules, matched)
	}
	return rules
}

// abTestMatch adds an analysis.match entry's conditions to a match of
// routing.match.
func abTestMatch(base gatewayv1.HTTPRouteMatch, m v1alpha1.AnalysisMatch) gatewayv1.HTTPRouteMatch {
	out := *base.DeepCopy()
	extra := routeMatch(v1alpha1.HTTPRouteMatch{Headers: m.Headers, QueryParams: m.QueryParams})
	for _, h := range extra.Headers {
		out.Headers = slices.DeleteFunc(out.Headers, func(o gatewayv1.HTTPHeaderMatch) bool {
			return strings.EqualFold(string(o.Name), string(h.Name))
		})
		out.Headers = append(out.Headers, h)
	}
	for _, q := range extra.QueryParams {
		out.QueryParams = slices.DeleteFunc(out.QueryParams, func(o gatewayv1.HTTPQueryParamMatch) bool { return o.Name == q.Name })
		out.QueryParams = append(out.QueryParams, q)
	}
	return out
}

// parentRef is the HTTPRoute's reference to one of routing.gatewayRefs: a
// Gateway (the Gateway API's defaults: group and kind unset), or a core
// Service for a mesh (GAMMA).
func parentRef(g v1alpha1.GatewayReference) gatewayv1.ParentReference {
	ref := gatewayv1.ParentReference{Name: gatewayv1.ObjectName(g.Name)}
	if g.GetKind() == v1alpha1.ServiceParent {
		ref.Group = ptr.To(gatewayv1.Group(""))
		ref.Kind = ptr.To(gatewayv1.Kind("Service"))
	}
	if g.Namespace != "" {
		ref.Namespace = ptr.To(gatewayv1.Namespace(g.Namespace))
	}
	if g.SectionName != "" {
		ref.SectionName = ptr.To(gatewayv1.SectionName(g.SectionName))
	}
	if g.Port != nil {
		ref.Port = ptr.To(*g.Port)
	}
	return ref
}

// weightsOf reads primary and canary weights from the route's first rule;
// in an A/B test, with a last rule that keeps every request on the primary
// while the first sends some to the canary, the test's (Weights.ABTest).
func weightsOf(route *gatewayv1.HTTPRoute, t Target, abTest bool) (Weights, bool) {
	rules := route.Spec.Rules
	if len(rules) == 0 {
		return Weights{}, false
	}
	w, ok := ruleWeights(rules[0], t)
	w.Mirror = mirrorsTo(rules[0], t.CanaryService)
	if ok && abTest && len(rules) > 1 && w.Canary > 0 {
		others, _ := ruleWeights(rules[len(rules)-1], t)
		w.ABTest = others.Canary == 0
	}
	return w, ok
}

// mirrorsTo reports whether the rule mirrors its requests to service.
func mirrorsTo(rule gatewayv1.HTTPRouteRule, service string) bool {
	for _, f := range rule.Filters {
		if f.Type == gatewayv1.HTTPRouteFilterRequestMirror && f.RequestMirror != nil && string(f.RequestMirror.BackendRef.Name) == service {
			return true
		}
	}
	return false
}

// routedBaseline reports whether routes written for t name the baseline.
func (t Target) routedBaseline() bool {
	return t.RouteBaseline && t.BaselineService != ""
}

// routesBaseline reports whether the route's first rule names the
// baseline's Service.
func routesBaseline(route *gatewayv1.HTTPRoute, t Target) bool {
	if t.BaselineService == "" || len(route.Spec.Rules) == 0 {
		return false
	}
	for _, b := range route.Spec.Rules[0].BackendRefs {
		if string(b.Name) == t.BaselineService {
			return true
		}
	}
	return false
}

// ruleWeights reads the primary and canary weights of one rule; found is
// false unless the rule names both. The baseline's weight, when the rule
// names it, counts in the primary's share, which it was taken from.
func ruleWeights(rule gatewayv1.HTTPRouteRule, t Target) (Weights, bool) {
	var w Weights
	found := 0
	for _, b := range rule.BackendRefs {
		weight := 1
		if b.Weight != nil {
			weight = int(*b.Weight)
		}
		switch string(b.Name) {
		case t.PrimaryService:
			w.Primary, found = w.Primary+weight, found+1
		case t.CanaryService:
			w.Canary, found = weight, found+1
		case t.BaselineService:
			w.Primary += weight
		}
	}
	return w, found == 2
}
