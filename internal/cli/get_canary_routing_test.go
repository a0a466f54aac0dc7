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

package cli

import (
	"testing"

	"k8s.io/utils/ptr"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// The Routing line names each parent of the HTTPRoute as a person reads
// it: a Gateway by name, a mesh's Service (GAMMA) as a service, with the
// port and section when set.
func TestDescribeRouting(t *testing.T) {
	tests := map[string]struct {
		routing v1alpha1.CanaryRouting
		want    string
	}{
		"blue/green": {v1alpha1.CanaryRouting{Provider: v1alpha1.KubernetesRouting}, "kubernetes"},
		"a Gateway's listener, for a host": {v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting,
			GatewayRefs: []v1alpha1.GatewayReference{{Name: "public", Namespace: "gateways", SectionName: "web"}},
			Hosts:       []string{"app.example.com"}}, "gatewayapi via gateways/public (web) for app.example.com"},
		"a mesh's Service and a Gateway's port": {v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting,
			GatewayRefs: []v1alpha1.GatewayReference{{Kind: v1alpha1.ServiceParent, Name: "podinfo", Port: ptr.To(int32(9898))},
				{Kind: v1alpha1.GatewayParent, Name: "public", Port: ptr.To(int32(443))}}},
			"gatewayapi via service podinfo:9898, public:443"},
		"the user's routes": {v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting,
			RouteRefs: []v1alpha1.RouteReference{{Name: "shop"}, {Name: "shop-internal"}}},
			"gatewayapi on your httproute shop, httproute shop-internal"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := &v1alpha1.Canary{Spec: v1alpha1.CanarySpec{Routing: tc.routing}}
			if got := describeRouting(c); got != tc.want {
				t.Errorf("describeRouting = %q, want %q", got, tc.want)
			}
		})
	}
}
