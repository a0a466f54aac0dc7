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
	"strings"
	"testing"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// New returns the router of each provider, with the client and field
// owner it is given; kubernetes is the default; gatewayapi with
// routing.routeRefs steers the user's routes.
func TestNew(t *testing.T) {
	w := newRouterWorld(t)
	tests := map[string]struct {
		provider v1alpha1.RoutingProvider
		routes   []v1alpha1.RouteReference
		want     string // the router's type; "" for an error
	}{
		"kubernetes":                    {provider: v1alpha1.KubernetesRouting, want: "kubernetes"},
		"none: the default":             {provider: "", want: "kubernetes"},
		"gatewayapi":                    {provider: v1alpha1.GatewayAPIRouting, want: "gatewayapi"},
		"gatewayapi, the user's routes": {provider: v1alpha1.GatewayAPIRouting, routes: []v1alpha1.RouteReference{{Name: "shop"}}, want: "routeRefs"},
		"an unknown provider":           {provider: "istio", want: ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r, err := New(w.store, "serin", v1alpha1.CanaryRouting{Provider: tt.provider, RouteRefs: tt.routes})
			got := ""
			switch r := r.(type) {
			case *KubernetesRouter:
				got = "kubernetes"
				if r.Client != w.store || r.FieldOwner != "serin" {
					t.Errorf("router %+v, want the client and field owner given", r)
				}
			case *GatewayAPIRouter:
				got = "gatewayapi"
				if r.Client != w.store || r.FieldOwner != "serin" {
					t.Errorf("router %+v, want the client and field owner given", r)
				}
			case *RouteRefsRouter:
				got = "routeRefs"
				if r.Client != w.store || r.FieldOwner != "serin" {
					t.Errorf("router %+v, want the client and field owner given", r)
				}
			}
			if got != tt.want {
				t.Errorf("New(%q) = %T, want %s", tt.provider, r, tt.want)
			}
			if tt.want == "" && (err == nil || !strings.Contains(err.Error(), `"istio" is not supported`)) {
				t.Errorf("New(%q): error %v, want one naming the provider", tt.provider, err)
			}
		})
	}
}
