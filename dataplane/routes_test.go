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

package dataplane

import (
	"strings"
	"testing"

	"github.com/serin-dev/serin/api/v1alpha1"
)

func TestUnsupported(t *testing.T) {
	withCORS := func(provider v1alpha1.RoutingProvider) *v1alpha1.Canary {
		c := podinfoCanary()
		c.Spec.Routing.Provider = provider
		c.Spec.Routing.CorsPolicy = &v1alpha1.HTTPCORSFilter{AllowOrigins: []string{"https://example.com"}}
		return c
	}
	tests := map[string]struct {
		canary    *v1alpha1.Canary
		dataPlane v1alpha1.DataPlane
		want      []string // substrings; none means supported
	}{
		"CORS on Traefik": {canary: withCORS(v1alpha1.GatewayAPIRouting), dataPlane: v1alpha1.TraefikDataPlane,
			want: []string{"the data plane traefik", "spec.routing.corsPolicy", "500", "set routing.dataPlane"}},
		"a mirror on Traefik": {canary: func() *v1alpha1.Canary {
			c := podinfoCanary()
			c.Spec.Analysis = &v1alpha1.CanaryAnalysis{Iterations: 3, Mirror: true}
			return c
		}(), dataPlane: v1alpha1.TraefikDataPlane, want: []string{"spec.analysis.mirror", "RequestMirror"}},
		"a route's mirror on Traefik": {canary: func() *v1alpha1.Canary {
			c := podinfoCanary()
			c.Spec.Routing.Mirrors = []v1alpha1.RouteMirror{{Name: "shadow", Port: 80}}
			return c
		}(), dataPlane: v1alpha1.TraefikDataPlane, want: []string{"spec.routing.mirrors", "RequestMirror", "500"}},
		"session affinity on Traefik": {canary: func() *v1alpha1.Canary {
			c := podinfoCanary()
			c.Spec.Analysis = &v1alpha1.CanaryAnalysis{StepWeight: 10, SessionAffinity: &v1alpha1.SessionAffinity{CookieName: "canary"}}
			return c
		}(), dataPlane: v1alpha1.TraefikDataPlane, want: []string{"spec.analysis.sessionAffinity", "backendRef"}},
		"CORS on Envoy Gateway":            {canary: withCORS(v1alpha1.GatewayAPIRouting), dataPlane: v1alpha1.EnvoyGatewayDataPlane},
		"no filter on Traefik":             {canary: podinfoCanary(), dataPlane: v1alpha1.TraefikDataPlane},
		"no HTTPRoute: kubernetes routing": {canary: withCORS(v1alpha1.KubernetesRouting), dataPlane: v1alpha1.TraefikDataPlane},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := Unsupported(tt.canary, tt.dataPlane)
			if len(tt.want) == 0 {
				if got != "" {
					t.Fatalf("Unsupported() = %q, want none", got)
				}
				return
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("Unsupported() = %q, want it to say %q", got, w)
				}
			}
		})
	}
}
