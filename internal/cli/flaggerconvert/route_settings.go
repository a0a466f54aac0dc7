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

package flaggerconvert

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// gatewayAPIDuration is Gateway API's Duration (GEP-2257), the pattern of
// routing.timeout and routing.retries.backoff.
var gatewayAPIDuration = regexp.MustCompile(`^([0-9]{1,5}(h|m|s|ms)){1,4}$`)

// httpMethods are the methods a Gateway API match or CORS policy names.
var httpMethods = []string{"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"}

// routeSettings maps the spec.service settings that Flagger's gatewayapi
// router puts on the HTTPRoute's rule to routing's: match, timeout and
// backendTimeout,
// headers, rewrite and corsPolicy as Flagger maps them, and retries, which
// Flagger's gatewayapi router ignores, to Gateway API's retry.
func (c canaryConverter) routeSettings(out *v1alpha1.CanaryRouting) {
	s := c.in.Spec.Service
	out.Match = c.routeMatches(s.Match)
	if s.Timeout != "" {
		if gatewayAPIDuration.MatchString(s.Timeout) {
			out.Timeout = s.Timeout
		} else {
			c.report.drop("spec.service.timeout", "%q is not a Gateway API duration, such as 30s or 1m30s", s.Timeout)
		}
	}
	if s.BackendTimeout != "" {
		if gatewayAPIDuration.MatchString(s.BackendTimeout) {
			out.BackendTimeout = s.BackendTimeout
		} else {
			c.report.drop("spec.service.backendTimeout", "%q is not a Gateway API duration, such as 30s or 1m30s", s.BackendTimeout)
		}
	}
	out.Retries = c.routeRetries(s.Retries, out)
	out.Headers = routeHeaders(s.Headers)
	out.Rewrite = routeRewrite(s.Rewrite)
	out.CorsPolicy = c.routeCORS(s.CorsPolicy)
	out.Mirrors = c.routeMirrors(s.Mirror)
}

// routeMirrors maps service.mirror, the RequestMirror filters Flagger's
// gatewayapi router adds to the route (its other routers ignore them), to
// routing.mirrors: Services of the Canary's namespace, with a port, other
// than the ones the route serves.
func (c canaryConverter) routeMirrors(in []flaggerMirror) []v1alpha1.RouteMirror {
	if len(in) == 0 {
		return nil
	}
	if provider := baseProvider(c.in.Spec.Provider); provider != "gatewayapi" {
		c.report.drop("spec.service.mirror", "Flagger's %s router ignores it (its gatewayapi router's only): left out", provider)
		return nil
	}
	apex := c.in.Spec.TargetRef.Name
	if c.in.Spec.Service.Name != "" {
		apex = c.in.Spec.Service.Name
	}
	var out []v1alpha1.RouteMirror
	seen := map[string]bool{}
	for i, m := range in {
		field, ref := fmt.Sprintf("spec.service.mirror[%d]", i), m.BackendRef
		switch {
		case ref.Group != nil && *ref.Group != "" || ref.Kind != nil && *ref.Kind != "Service":
			c.report.drop(field, "serin mirrors to Services only: left out")
		case ref.Namespace != nil && *ref.Namespace != "" && *ref.Namespace != c.in.Metadata.Namespace:
			c.report.drop(field, "the Service is in namespace %s: serin mirrors to Services of the Canary's namespace only (no ReferenceGrant): left out", *ref.Namespace)
		case ref.Port == nil:
			c.report.drop(field, "no port: Gateway API needs one for a Service: left out")
		case ref.Name == apex || ref.Name == apex+"-primary" || ref.Name == apex+"-canary":
			c.report.drop(field, "%s is a Service the route already serves: left out", ref.Name)
		case seen[ref.Name]:
			c.report.drop(field, "%s is mirrored to already: left out", ref.Name)
		default:
			seen[ref.Name] = true
			out = append(out, v1alpha1.RouteMirror{Name: ref.Name, Port: *ref.Port})
		}
	}
	if len(out) > maxRouteMirrors {
		c.report.drop(fmt.Sprintf("spec.service.mirror[%d]", maxRouteMirrors), "serin takes %d mirrors at most: the others are left out", maxRouteMirrors)
		out = out[:maxRouteMirrors]
	}
	return out
}

// maxRouteMirrors is the most mirrors routing.mirrors takes.
const maxRouteMirrors = 4

// dropRouteSettings reports the HTTPRoute's settings when there is no
// HTTPRoute: with routing.provider kubernetes.
func (c canaryConverter) dropRouteSettings() {
	s := c.in.Spec.Service
	set := []struct {
		field string
		isSet bool
	}{
		{"timeout", s.Timeout != ""},
		{"backendTimeout", s.BackendTimeout != ""},
		{"match", len(s.Match) > 0},
		{"rewrite", s.Rewrite != nil},
		{"retries", s.Retries != nil},
		{"headers", s.Headers != nil},
		{"corsPolicy", s.CorsPolicy != nil},
		{"mirror", len(s.Mirror) > 0},
	}
	for _, f := range set {
		if f.isSet {
			c.report.drop("spec.service."+f.field, "a setting of the HTTPRoute: used only with routing.provider gatewayapi")
		}
	}
}

// routeMatches maps Istio's match requests as Flagger's gatewayapi router
// does: uri to path, method, headers and queryParams; a condition Gateway
// API cannot express is reported and left out, which widens the match.
func (c canaryConverter) routeMatches(in []flaggerMatchRequest) []v1alpha1.HTTPRouteMatch {
	var out []v1alpha1.HTTPRouteMatch
	for i, m := range in {
		field := fmt.Sprintf("spec.service.match[%d]", i)
		c.dropIstioMatchFields(field, m)
		var match v1alpha1.HTTPRouteMatch
		if m.URI != nil {
			if kind, value, ok := c.stringMatch(field+".uri", *m.URI, true); ok {
				match.Path = &v1alpha1.HTTPPathMatch{Type: kind, Value: value}
			}
		}
		if m.Method != nil {
			match.Method = c.methodMatch(field+".method", *m.Method)
		}
		match.Headers, match.QueryParams = c.headerAndQueryMatches(field, m)
		// Flagger leaves out a match with no condition it can map.
		if match.Path != nil || match.Method != "" || len(match.Headers) > 0 || len(match.QueryParams) > 0 {
			out = append(out, match)
		}
	}
	return out
}

// headerAndQueryMatches maps the headers and query parameters of a match
// request, by name; a condition Gateway API cannot express is reported
// (stringMatch) and left out.
func (c canaryConverter) headerAndQueryMatches(field string, m flaggerMatchRequest) ([]v1alpha1.HTTPHeaderMatch, []v1alpha1.HTTPQueryParamMatch) {
	var headers []v1alpha1.HTTPHeaderMatch
	for _, name := range slices.Sorted(maps.Keys(m.Headers)) {
		if kind, value, ok := c.stringMatch(field+".headers."+name, m.Headers[name], false); ok {
			headers = append(headers, v1alpha1.HTTPHeaderMatch{Type: kind, Name: name, Value: value})
		}
	}
	var params []v1alpha1.HTTPQueryParamMatch
	for _, name := range slices.Sorted(maps.Keys(m.QueryParams)) {
		if kind, value, ok := c.stringMatch(field+".queryParams."+name, m.QueryParams[name], false); ok {
			params = append(params, v1alpha1.HTTPQueryParamMatch{Type: kind, Name: name, Value: value})
		}
	}
	return headers, params
}

// dropIstioMatchFields reports the conditions of Istio's match request
// that Gateway API has not, and Flagger's gatewayapi router ignores.
func (c canaryConverter) dropIstioMatchFields(field string, m flaggerMatchRequest) {
	istioOnly := []struct {
		name  string
		isSet bool
	}{
		{"name", m.Name != ""},
		{"scheme", present(m.Scheme)},
		{"authority", present(m.Authority)},
		{"port", present(m.Port)},
		{"sourceLabels", present(m.SourceLabels)},
		{"gateways", present(m.Gateways)},
		{"ignoreUriCase", present(m.IgnoreURICase)},
		{"withoutHeaders", present(m.WithoutHeaders)},
		{"sourceNamespace", present(m.SourceNamespace)},
	}
	for _, f := range istioOnly {
		if f.isSet {
			c.report.drop(field+"."+f.name, "Istio only: a Gateway API match has no %s, and Flagger's gatewayapi router ignores it", f.name)
		}
	}
}

// stringMatch maps an Istio StringMatch to a Gateway API match type and
// value: exact, regex, and prefix for a path. Suffix matches, and prefix
// matches of headers and query parameters, are reported.
func (c canaryConverter) stringMatch(field string, m flaggerStringMatch, path bool) (kind, value string, ok bool) {
	switch {
	case m.Exact != "":
		return "Exact", m.Exact, true
	case m.Regex != "":
		return "RegularExpression", m.Regex, true
	case m.Prefix != "" && path:
		return "PathPrefix", m.Prefix, true
	case m.Prefix != "":
		c.report.drop(field, "Gateway API matches headers and query parameters exactly or by regular expression, not by prefix: "+
			"the condition was left out, so the match is wider")
	case m.Suffix != "":
		c.report.drop(field, "Gateway API has no suffix match: the condition was left out, so the match is wider")
	}
	return "", "", false
}

func (c canaryConverter) methodMatch(field string, m flaggerStringMatch) string {
	if m.Exact != "" && slices.Contains(httpMethods, m.Exact) {
		return m.Exact
	}
	c.report.drop(field, "Gateway API matches one method exactly, one of %v: the condition was left out, so the match is wider", httpMethods)
	return ""
}

// routeRetries maps Flagger's retries (Istio's and Contour's) to Gateway
// API's retry: attempts as they are; the per-try timeout to the HTTPRoute's
// backendRequest timeout, which bounds each attempt; the retry conditions
// to the status codes they stand for. out takes the per-try timeout.
func (c canaryConverter) routeRetries(in *flaggerRetry, out *v1alpha1.CanaryRouting) *v1alpha1.HTTPRouteRetry {
	if in == nil {
		return nil
	}
	if in.PerTryTimeout != "" {
		c.perTryTimeout(in.PerTryTimeout, out)
	}
	retry := &v1alpha1.HTTPRouteRetry{}
	if in.Attempts >= 1 {
		retry.Attempts = ptr.To(int32(in.Attempts))
	}
	if in.RetryOn != "" {
		retry.Codes = c.retryCodes(in.RetryOn)
	}
	if retry.Attempts == nil && len(retry.Codes) == 0 {
		return nil
	}
	return retry
}

// perTryTimeout maps a per-try timeout to the HTTPRoute's backendRequest
// timeout: Gateway API applies it to each attempt of a request.
func (c canaryConverter) perTryTimeout(value string, out *v1alpha1.CanaryRouting) {
	const field = "spec.service.retries.perTryTimeout"
	perTry, err := time.ParseDuration(value)
	switch {
	case err != nil || !gatewayAPIDuration.MatchString(value):
		c.report.drop(field, "%q is not a Gateway API duration, such as 1s or 500ms", value)
	case out.BackendTimeout != "" && out.BackendTimeout != value:
		c.report.drop(field, "Gateway API bounds each attempt by routing.backendTimeout, which spec.service.backendTimeout sets to %s", out.BackendTimeout)
	case out.Timeout != "" && !exceeds(perTry, out.Timeout):
		out.BackendTimeout = value
		c.report.note(field, "converted to routing.backendTimeout, Gateway API's timeout of each attempt of a request")
	case out.Timeout != "":
		c.report.drop(field, "longer than the request's timeout %s, which covers every attempt", out.Timeout)
	default:
		out.BackendTimeout = value
		c.report.note(field, "converted to routing.backendTimeout, Gateway API's timeout of each attempt of a request")
	}
}

// exceeds tells whether d is longer than timeout (a Gateway API duration;
// 0s, no timeout, is exceeded by nothing).
func exceeds(d time.Duration, timeout string) bool {
	t, err := time.ParseDuration(timeout)
	return err == nil && t > 0 && d > t
}

// retryOnCodes are the status codes of Envoy's retry conditions, which
// Istio and Contour take as they are: 5xx as the registered 5xx codes
// (Gateway API lists codes, at most 32), gateway-error as Envoy defines
// it, retriable-4xx as 409.
var retryOnCodes = map[string][]int32{
	"5xx":           {500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511},
	"gateway-error": {502, 503, 504},
	"retriable-4xx": {409},
}

// connectionErrors are Envoy's retry conditions on failed connections,
// which Gateway API's retry covers: implementations SHOULD retry on
// connection errors once a retry is configured.
var connectionErrors = []string{"connect-failure", "refused-stream", "reset"}

// retryCodes maps retryOn, Envoy's comma-separated retry conditions (or
// status codes), to the status codes to retry on; what has no counterpart
// (gRPC statuses, retriable-headers, …) is reported.
func (c canaryConverter) retryCodes(retryOn string) []int32 {
	const field = "spec.service.retries.retryOn"
	var codes []int32
	var unmapped, connections []string
	fiveXX := false
	for _, condition := range strings.Split(retryOn, ",") {
		condition = strings.TrimSpace(condition)
		if code, err := strconv.Atoi(condition); err == nil && code >= 400 && code <= 599 {
			codes = append(codes, int32(code))
			continue
		}
		switch {
		case condition == "":
		case condition == "5xx":
			fiveXX = true
			codes = append(codes, retryOnCodes[condition]...)
		case retryOnCodes[condition] != nil:
			codes = append(codes, retryOnCodes[condition]...)
		case slices.Contains(connectionErrors, condition):
			connections = append(connections, condition)
		default:
			unmapped = append(unmapped, condition)
		}
	}
	slices.Sort(codes)
	codes = slices.Compact(codes)
	if len(unmapped) > 0 {
		c.report.drop(field, "%s: Gateway API retries on status codes (routing.retries.codes) and connection errors only", strings.Join(unmapped, ", "))
	}
	if len(connections) > 0 {
		c.report.note(field, "%s: Gateway API's retry covers connection errors (implementations SHOULD retry on them)", strings.Join(connections, ", "))
	}
	if fiveXX {
		c.report.note(field, "5xx: converted to the registered 5xx codes, 500 to 511")
	}
	return codes
}

func routeHeaders(in *flaggerHeaders) *v1alpha1.HTTPHeaderModifiers {
	if in == nil || (in.Request == nil && in.Response == nil) {
		return nil
	}
	return &v1alpha1.HTTPHeaderModifiers{Request: headerFilter(in.Request), Response: headerFilter(in.Response)}
}

// headerFilter lists the headers to set and add by name, as Flagger does.
func headerFilter(in *flaggerHeaderOperations) *v1alpha1.HTTPHeaderFilter {
	if in == nil {
		return nil
	}
	headers := func(m map[string]string) []v1alpha1.HTTPHeader {
		var out []v1alpha1.HTTPHeader
		for _, name := range slices.Sorted(maps.Keys(m)) {
			out = append(out, v1alpha1.HTTPHeader{Name: name, Value: m[name]})
		}
		return out
	}
	return &v1alpha1.HTTPHeaderFilter{Set: headers(in.Set), Add: headers(in.Add), Remove: in.Remove}
}

// routeRewrite: uri replaces the full path, or with type
// ReplacePrefixMatch the matched prefix; authority the host.
func routeRewrite(in *flaggerRewrite) *v1alpha1.HTTPURLRewrite {
	if in == nil || (in.URI == "" && in.Authority == "") {
		return nil
	}
	out := &v1alpha1.HTTPURLRewrite{Hostname: in.Authority}
	switch {
	case in.URI != "" && in.Type == "ReplacePrefixMatch":
		out.Path = &v1alpha1.HTTPPathModifier{Type: in.Type, ReplacePrefixMatch: ptr.To(in.URI)}
	case in.URI != "":
		out.Path = &v1alpha1.HTTPPathModifier{Type: "ReplaceFullPath", ReplaceFullPath: ptr.To(in.URI)}
	}
	return out
}

// routeCORS maps Istio's CORS policy: allowOrigin, and the exact ones of
// allowOrigins, which Flagger's gatewayapi router ignores; maxAge in
// seconds.
func (c canaryConverter) routeCORS(in *flaggerCorsPolicy) *v1alpha1.HTTPCORSFilter {
	if in == nil {
		return nil
	}
	out := &v1alpha1.HTTPCORSFilter{AllowOrigins: in.AllowOrigin, AllowHeaders: in.AllowHeaders, ExposeHeaders: in.ExposeHeaders}
	for i, o := range in.AllowOrigins {
		if o.Exact == "" {
			c.report.drop(fmt.Sprintf("spec.service.corsPolicy.allowOrigins[%d]", i),
				"Gateway API allows origins by name (wildcards such as https://*.example.com), not by prefix, suffix or regular expression")
			continue
		}
		out.AllowOrigins = append(out.AllowOrigins, o.Exact)
	}
	for _, m := range in.AllowMethods {
		if m != "*" && !slices.Contains(httpMethods, m) {
			c.report.drop("spec.service.corsPolicy.allowMethods", "%q is not one of %v or *: left out", m, httpMethods)
			continue
		}
		out.AllowMethods = append(out.AllowMethods, m)
	}
	if in.AllowCredentials {
		out.AllowCredentials = ptr.To(true)
	}
	if in.MaxAge != "" {
		d, err := time.ParseDuration(in.MaxAge)
		if err == nil && d >= time.Second {
			out.MaxAge = int32(d / time.Second)
		} else {
			c.report.drop("spec.service.corsPolicy.maxAge", "%q is not a duration of at least 1s: Gateway API's default, 5s, applies", in.MaxAge)
		}
	}
	return out
}
