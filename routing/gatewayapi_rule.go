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
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// applyRuleSettings sets routing's match, timeout, retries and filters
// (headers, rewrite, CORS, in that order) on the rule. Unset settings leave
// the rule as it is.
func applyRuleSettings(rule *gatewayv1.HTTPRouteRule, r v1alpha1.CanaryRouting) {
	for _, m := range r.Match {
		rule.Matches = append(rule.Matches, routeMatch(m))
	}
	if r.Timeout != "" || r.BackendTimeout != "" {
		rule.Timeouts = &gatewayv1.HTTPRouteTimeouts{}
		if r.Timeout != "" {
			rule.Timeouts.Request = ptr.To(gatewayv1.Duration(r.Timeout))
		}
		if r.BackendTimeout != "" {
			rule.Timeouts.BackendRequest = ptr.To(gatewayv1.Duration(r.BackendTimeout))
		}
	}
	if r.Retries != nil {
		rule.Retry = routeRetry(*r.Retries)
	}
	if h := r.Headers; h != nil && h.Request != nil {
		rule.Filters = append(rule.Filters, gatewayv1.HTTPRouteFilter{
			Type:                  gatewayv1.HTTPRouteFilterRequestHeaderModifier,
			RequestHeaderModifier: headerFilter(*h.Request),
		})
	}
	if h := r.Headers; h != nil && h.Response != nil {
		rule.Filters = append(rule.Filters, gatewayv1.HTTPRouteFilter{
			Type:                   gatewayv1.HTTPRouteFilterResponseHeaderModifier,
			ResponseHeaderModifier: headerFilter(*h.Response),
		})
	}
	if r.Rewrite != nil {
		rule.Filters = append(rule.Filters, gatewayv1.HTTPRouteFilter{
			Type:       gatewayv1.HTTPRouteFilterURLRewrite,
			URLRewrite: urlRewrite(*r.Rewrite),
		})
	}
	if r.CorsPolicy != nil {
		rule.Filters = append(rule.Filters, gatewayv1.HTTPRouteFilter{
			Type: gatewayv1.HTTPRouteFilterCORS,
			CORS: corsFilter(*r.CorsPolicy),
		})
	}
	for _, m := range r.Mirrors {
		mirror := &gatewayv1.HTTPRequestMirrorFilter{BackendRef: gatewayv1.BackendObjectReference{
			Name: gatewayv1.ObjectName(m.Name),
			Port: ptr.To(m.Port),
		}}
		if m.Percent != nil && *m.Percent < 100 {
			mirror.Percent = ptr.To(*m.Percent)
		}
		rule.Filters = append(rule.Filters, gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestMirror, RequestMirror: mirror})
	}
}

func routeMatch(m v1alpha1.HTTPRouteMatch) gatewayv1.HTTPRouteMatch {
	// Gateway API's defaults, written out so that the route read back from
	// the API server equals the one serin wants.
	path := v1alpha1.HTTPPathMatch{}
	if m.Path != nil {
		path = *m.Path
	}
	out := gatewayv1.HTTPRouteMatch{Path: &gatewayv1.HTTPPathMatch{
		Type:  ptr.To(gatewayv1.PathMatchType(orDefault(path.Type, string(gatewayv1.PathMatchPathPrefix)))),
		Value: ptr.To(orDefault(path.Value, "/")),
	}}
	for _, h := range m.Headers {
		out.Headers = append(out.Headers, gatewayv1.HTTPHeaderMatch{
			Type:  ptr.To(gatewayv1.HeaderMatchType(orDefault(h.Type, string(gatewayv1.HeaderMatchExact)))),
			Name:  gatewayv1.HTTPHeaderName(h.Name),
			Value: h.Value,
		})
	}
	for _, q := range m.QueryParams {
		out.QueryParams = append(out.QueryParams, gatewayv1.HTTPQueryParamMatch{
			Type:  ptr.To(gatewayv1.QueryParamMatchType(orDefault(q.Type, string(gatewayv1.QueryParamMatchExact)))),
			Name:  gatewayv1.HTTPHeaderName(q.Name),
			Value: q.Value,
		})
	}
	if m.Method != "" {
		out.Method = ptr.To(gatewayv1.HTTPMethod(m.Method))
	}
	return out
}

func routeRetry(r v1alpha1.HTTPRouteRetry) *gatewayv1.HTTPRouteRetry {
	out := &gatewayv1.HTTPRouteRetry{}
	for _, c := range r.Codes {
		out.Codes = append(out.Codes, gatewayv1.HTTPRouteRetryStatusCode(c))
	}
	if r.Attempts != nil {
		out.Attempts = ptr.To(int(*r.Attempts))
	}
	if r.Backoff != "" {
		out.Backoff = ptr.To(gatewayv1.Duration(r.Backoff))
	}
	return out
}

func headerFilter(f v1alpha1.HTTPHeaderFilter) *gatewayv1.HTTPHeaderFilter {
	headers := func(in []v1alpha1.HTTPHeader) []gatewayv1.HTTPHeader {
		var out []gatewayv1.HTTPHeader
		for _, h := range in {
			out = append(out, gatewayv1.HTTPHeader{Name: gatewayv1.HTTPHeaderName(h.Name), Value: h.Value})
		}
		return out
	}
	return &gatewayv1.HTTPHeaderFilter{Set: headers(f.Set), Add: headers(f.Add), Remove: f.Remove}
}

func urlRewrite(r v1alpha1.HTTPURLRewrite) *gatewayv1.HTTPURLRewriteFilter {
	out := &gatewayv1.HTTPURLRewriteFilter{}
	if r.Hostname != "" {
		out.Hostname = ptr.To(gatewayv1.PreciseHostname(r.Hostname))
	}
	if p := r.Path; p != nil {
		out.Path = &gatewayv1.HTTPPathModifier{
			Type:               gatewayv1.HTTPPathModifierType(p.Type),
			ReplaceFullPath:    p.ReplaceFullPath,
			ReplacePrefixMatch: p.ReplacePrefixMatch,
		}
	}
	return out
}

func corsFilter(c v1alpha1.HTTPCORSFilter) *gatewayv1.HTTPCORSFilter {
	out := &gatewayv1.HTTPCORSFilter{AllowCredentials: c.AllowCredentials, MaxAge: c.MaxAge}
	if out.MaxAge == 0 {
		out.MaxAge = 5 // Gateway API's default
	}
	for _, o := range c.AllowOrigins {
		out.AllowOrigins = append(out.AllowOrigins, gatewayv1.CORSOrigin(o))
	}
	for _, m := range c.AllowMethods {
		out.AllowMethods = append(out.AllowMethods, gatewayv1.HTTPMethodWithWildcard(m))
	}
	for _, h := range c.AllowHeaders {
		out.AllowHeaders = append(out.AllowHeaders, gatewayv1.HTTPHeaderName(h))
	}
	for _, h := range c.ExposeHeaders {
		out.ExposeHeaders = append(out.ExposeHeaders, gatewayv1.HTTPHeaderName(h))
	}
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
