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
	"fmt"
	"regexp"
	"strings"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// stickyRules are the rules of a rollout with session affinity
// (analysis.sessionAffinity), Flagger's Gateway API scheme. While the
// canary has weight: rule, the weighted one, whose canary backend sets the
// canary cookie on its answers (and whose primary backend sets the primary
// cookie, for one interval, when primaryCookieName is set); then a rule that
// sends the requests with the canary cookie to the canary alone, and one
// that keeps those with the primary cookie on the primary (unless every
// request goes to the canary, as while a primary that may go dark is
// promoted). With no weight on the canary: rule, then a rule that keeps the
// requests with this rollout's canary cookie on the primary and tells
// their clients to drop it. The weighted rule comes first, where weightsOf
// reads it; the cookie rules match more headers and win by Gateway API's
// precedence.
//
// The cookie's value is the revision under analysis (status.lastAppliedSpec),
// so each rollout pins with its own cookie, and the route follows from the
// Canary alone. Without a revision yet, there is no cookie.
func stickyRules(canary *v1alpha1.Canary, t Target, rule gatewayv1.HTTPRouteRule, w Weights) []gatewayv1.HTTPRouteRule {
	sa := canary.Spec.Analysis.SessionAffinity
	revision := canary.Status.LastAppliedSpec
	if revision == "" {
		return []gatewayv1.HTTPRouteRule{rule}
	}
	canaryCookie := sa.CookieName + "=" + revision
	only := func(primary, canaryWeight int) []gatewayv1.HTTPBackendRef {
		refs := []gatewayv1.HTTPBackendRef{*rule.BackendRefs[0].DeepCopy(), *rule.BackendRefs[1].DeepCopy()}
		*refs[0].Weight, *refs[1].Weight = int32(primary), int32(canaryWeight)
		return refs
	}
	if w.Canary == 0 {
		drop := cookieRule(rule, sa.CookieName, revision)
		drop.Filters = withResponseHeader(drop.Filters, setCookie(sa, canaryCookie, -1))
		return []gatewayv1.HTTPRouteRule{rule, drop}
	}
	weighted := *rule.DeepCopy()
	weighted.BackendRefs[1].Filters = append(weighted.BackendRefs[1].Filters, setCookie(sa, canaryCookie, sa.GetMaxAge()))
	toCanary := cookieRule(rule, sa.CookieName, revision)
	toCanary.BackendRefs = only(0, 100)
	rules := []gatewayv1.HTTPRouteRule{weighted, toCanary}
	if sa.PrimaryCookieName != "" && w.Primary > 0 {
		interval := int(canary.GetAnalysisInterval().Seconds())
		weighted.BackendRefs[0].Filters = append(weighted.BackendRefs[0].Filters, setCookie(sa, sa.PrimaryCookieName+"="+revision, interval))
		rules[0] = weighted
		toPrimary := cookieRule(rule, sa.PrimaryCookieName, revision)
		toPrimary.BackendRefs = only(100, 0)
		rules = append(rules, toPrimary)
	}
	return rules
}

// cookieRule is rule for the requests that carry the cookie name=value,
// within each of rule's matches (every path when it has none).
func cookieRule(rule gatewayv1.HTTPRouteRule, name, value string) gatewayv1.HTTPRouteRule {
	out := *rule.DeepCopy()
	bases := rule.Matches
	if len(bases) == 0 {
		bases = []gatewayv1.HTTPRouteMatch{routeMatch(v1alpha1.HTTPRouteMatch{})}
	}
	cookie := v1alpha1.AnalysisMatch{Headers: []v1alpha1.HTTPHeaderMatch{{
		Name:  "Cookie",
		Type:  string(gatewayv1.HeaderMatchRegularExpression),
		Value: fmt.Sprintf(`^(.*;\s*)?%s=%s(\s*;.*)?$`, regexp.QuoteMeta(name), regexp.QuoteMeta(value)),
	}}}
	out.Matches = nil
	for _, base := range bases {
		out.Matches = append(out.Matches, abTestMatch(base, cookie))
	}
	return out
}

// withResponseHeader adds the header of a ResponseHeaderModifier filter to
// filters: to their own ResponseHeaderModifier when they have one
// (routing.headers.response), as Gateway API allows one per rule.
func withResponseHeader(filters []gatewayv1.HTTPRouteFilter, f gatewayv1.HTTPRouteFilter) []gatewayv1.HTTPRouteFilter {
	for i := range filters {
		if filters[i].Type == gatewayv1.HTTPRouteFilterResponseHeaderModifier && filters[i].ResponseHeaderModifier != nil {
			filters[i].ResponseHeaderModifier.Add = append(filters[i].ResponseHeaderModifier.Add, f.ResponseHeaderModifier.Add...)
			return filters
		}
	}
	return append(filters, f)
}

// setCookie is the filter that adds a Set-Cookie header for cookie (name=
// value) with the affinity's attributes; maxAge -1 tells the client to drop
// it.
func setCookie(sa *v1alpha1.SessionAffinity, cookie string, maxAge int) gatewayv1.HTTPRouteFilter {
	attrs := []string{cookie, fmt.Sprintf("Max-Age=%d", maxAge)}
	if sa.Domain != "" {
		attrs = append(attrs, "Domain="+sa.Domain)
	}
	if sa.Path != "" {
		attrs = append(attrs, "Path="+sa.Path)
	}
	if sa.HTTPOnly {
		attrs = append(attrs, "HttpOnly")
	}
	if sa.Secure {
		attrs = append(attrs, "Secure")
	}
	if sa.SameSite != "" {
		attrs = append(attrs, "SameSite="+sa.SameSite)
	}
	if sa.Partitioned {
		attrs = append(attrs, "Partitioned")
	}
	return gatewayv1.HTTPRouteFilter{
		Type: gatewayv1.HTTPRouteFilterResponseHeaderModifier,
		ResponseHeaderModifier: &gatewayv1.HTTPHeaderFilter{
			Add: []gatewayv1.HTTPHeader{{Name: "Set-Cookie", Value: strings.Join(attrs, "; ")}},
		},
	}
}
