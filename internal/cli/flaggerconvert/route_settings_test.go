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
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// withGateway is gatewayAPI("public") with the HTTPRoute's rule settings
// that set sets.
func withGateway(set func(*v1alpha1.CanaryRouting)) v1alpha1.CanaryRouting {
	r := gatewayAPI("public")
	set(&r)
	return r
}

// The spec.service settings of Flagger's HTTPRoute rule become routing's,
// as Flagger's gatewayapi router maps them; what Gateway API cannot say is
// reported, field by field.
func TestConvertRouteSettings(t *testing.T) {
	gatewayCanary := func(service string) string {
		return canaryYAML("provider: gatewayapi:v1", "service: {port: 9898, gatewayRefs: [{name: public}], "+service+"}",
			"analysis: {stepWeight: 10, maxWeight: 20, threshold: 2}")
	}
	tests := map[string]struct {
		service     string
		wantRouting v1alpha1.CanaryRouting
		wantDropped []string
	}{
		"match: uri, method, headers and query parameters, headers by name": {
			service: "match: [{uri: {regex: '^/v[12]/'}, method: {exact: POST}, " +
				"headers: {x-user: {regex: 'a.*'}, x-canary: {exact: insider}}, queryParams: {v: {exact: '2'}}}, " +
				"{uri: {exact: /healthz}}]",
			wantRouting: withGateway(func(r *v1alpha1.CanaryRouting) {
				r.Match = []v1alpha1.HTTPRouteMatch{
					{
						Path:   &v1alpha1.HTTPPathMatch{Type: "RegularExpression", Value: "^/v[12]/"},
						Method: "POST",
						Headers: []v1alpha1.HTTPHeaderMatch{{Type: "Exact", Name: "x-canary", Value: "insider"},
							{Type: "RegularExpression", Name: "x-user", Value: "a.*"}},
						QueryParams: []v1alpha1.HTTPQueryParamMatch{{Type: "Exact", Name: "v", Value: "2"}},
					},
					{Path: &v1alpha1.HTTPPathMatch{Type: "Exact", Value: "/healthz"}},
				}
			}),
		},
		"match: what Gateway API cannot match is left out, an empty match too": {
			service: "match: [{uri: {suffix: .png}, headers: {x-a: {prefix: b}, x-c: {exact: d}}, method: {regex: 'GET|HEAD'}}, " +
				"{sourceLabels: {app: web}, name: from-web}]",
			wantRouting: withGateway(func(r *v1alpha1.CanaryRouting) {
				r.Match = []v1alpha1.HTTPRouteMatch{{Headers: []v1alpha1.HTTPHeaderMatch{{Type: "Exact", Name: "x-c", Value: "d"}}}}
			}),
			wantDropped: []string{"spec.service.match[0].uri", "spec.service.match[0].method", "spec.service.match[0].headers.x-a",
				"spec.service.match[1].name", "spec.service.match[1].sourceLabels"},
		},
		"timeout, retries, headers, rewrite of the prefix": {
			service: "timeout: 1m30s, backendTimeout: 20s, retries: {attempts: 2, retryOn: 5xx}, " +
				"headers: {request: {set: {x-b: '2', x-a: '1'}, remove: [x-debug]}, response: {add: {x-served-by: serin}}}, " +
				"rewrite: {uri: /, authority: internal.example, type: ReplacePrefixMatch}",
			wantRouting: withGateway(func(r *v1alpha1.CanaryRouting) {
				r.Timeout = "1m30s"
				r.BackendTimeout = "20s"
				r.Retries = &v1alpha1.HTTPRouteRetry{Attempts: ptr.To[int32](2),
					Codes: []int32{500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511}}
				r.Headers = &v1alpha1.HTTPHeaderModifiers{
					Request: &v1alpha1.HTTPHeaderFilter{Set: []v1alpha1.HTTPHeader{{Name: "x-a", Value: "1"}, {Name: "x-b", Value: "2"}},
						Remove: []string{"x-debug"}},
					Response: &v1alpha1.HTTPHeaderFilter{Add: []v1alpha1.HTTPHeader{{Name: "x-served-by", Value: "serin"}}},
				}
				r.Rewrite = &v1alpha1.HTTPURLRewrite{Hostname: "internal.example",
					Path: &v1alpha1.HTTPPathModifier{Type: "ReplacePrefixMatch", ReplacePrefixMatch: ptr.To("/")}}
			}),
		},
		"retries: Istio's conditions as codes, the per-try timeout as the backend timeout": {
			service: "timeout: 10s, retries: {attempts: 3, perTryTimeout: 1s, retryOn: 'gateway-error,connect-failure,refused-stream,409'}",
			wantRouting: withGateway(func(r *v1alpha1.CanaryRouting) {
				r.Timeout, r.BackendTimeout = "10s", "1s"
				r.Retries = &v1alpha1.HTTPRouteRetry{Attempts: ptr.To[int32](3), Codes: []int32{409, 502, 503, 504}}
			}),
		},
		"retries: what Gateway API cannot retry on, and a per-try timeout over the request's": {
			service: "timeout: 2s, retries: {attempts: 3, perTryTimeout: 5s, retryOn: 'retriable-status-codes,cancelled'}",
			wantRouting: withGateway(func(r *v1alpha1.CanaryRouting) {
				r.Timeout = "2s"
				r.Retries = &v1alpha1.HTTPRouteRetry{Attempts: ptr.To[int32](3)}
			}),
			wantDropped: []string{"spec.service.retries.perTryTimeout", "spec.service.retries.retryOn"},
		},
		"retries: backendTimeout set already bounds each attempt": {
			service: "backendTimeout: 3s, retries: {attempts: 2, perTryTimeout: 1s}",
			wantRouting: withGateway(func(r *v1alpha1.CanaryRouting) {
				r.BackendTimeout = "3s"
				r.Retries = &v1alpha1.HTTPRouteRetry{Attempts: ptr.To[int32](2)}
			}),
			wantDropped: []string{"spec.service.retries.perTryTimeout"},
		},
		"a timeout Gateway API cannot say is dropped": {
			service:     "timeout: 1.5s",
			wantRouting: gatewayAPI("public"),
			wantDropped: []string{"spec.service.timeout"},
		},
		"corsPolicy: origins by name, methods of Gateway API, maxAge in seconds": {
			service: "corsPolicy: {allowOrigin: ['https://a.example'], allowOrigins: [{exact: 'https://b.example'}, {regex: '.*'}], " +
				"allowMethods: [GET, PURGE], allowHeaders: [x-a], exposeHeaders: [x-b], maxAge: 24h, allowCredentials: true}",
			wantRouting: withGateway(func(r *v1alpha1.CanaryRouting) {
				r.CorsPolicy = &v1alpha1.HTTPCORSFilter{AllowOrigins: []string{"https://a.example", "https://b.example"},
					AllowMethods: []string{"GET"}, AllowHeaders: []string{"x-a"}, ExposeHeaders: []string{"x-b"},
					MaxAge: 86400, AllowCredentials: ptr.To(true)}
			}),
			wantDropped: []string{"spec.service.corsPolicy.allowOrigins[1]", "spec.service.corsPolicy.allowMethods"},
		},
		"corsPolicy: a maxAge Go cannot read is dropped": {
			service: "corsPolicy: {allowOrigin: ['*'], maxAge: 1d}",
			wantRouting: withGateway(func(r *v1alpha1.CanaryRouting) {
				r.CorsPolicy = &v1alpha1.HTTPCORSFilter{AllowOrigins: []string{"*"}}
			}),
			wantDropped: []string{"spec.service.corsPolicy.maxAge"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			result, err := Convert([]byte(gatewayCanary(tc.service)))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantDropped, droppedFields(result)); diff != "" {
				t.Errorf("dropped fields differ (-want +got):\n%s\n%v", diff, result.Dropped)
			}
			got := result.Manifests[0].Object.(canaryManifest).Spec.Routing
			if diff := cmp.Diff(tc.wantRouting, got); diff != "" {
				t.Errorf("routing differs (-want +got):\n%s", diff)
			}
		})
	}
}

// With kubernetes routing there is no HTTPRoute: its settings are
// reported, each once.
func TestConvertRouteSettingsWithoutGateway(t *testing.T) {
	result, err := Convert([]byte(canaryYAML("provider: kubernetes",
		"service: {port: 9898, timeout: 10s, match: [{uri: {prefix: /}}], rewrite: {uri: /}, retries: {attempts: 1}, "+
			"headers: {request: {remove: [x]}}, corsPolicy: {allowOrigin: ['*']}}",
		"analysis: {iterations: 2, threshold: 2}")))
	if err != nil {
		t.Fatal(err)
	}
	got := result.Dropped
	reason := "a setting of the HTTPRoute: used only with routing.provider gatewayapi"
	var want []Dropped
	for _, field := range []string{"timeout", "match", "rewrite", "retries", "headers", "corsPolicy"} {
		want = append(want, Dropped{Object: "Canary apps/podinfo", Field: "spec.service." + field, Reason: reason})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}
	if r := result.Manifests[0].Object.(canaryManifest).Spec.Routing; !cmp.Equal(r, kubernetes()) {
		t.Errorf("routing = %+v, want kubernetes without route settings", r)
	}
}
