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
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// A route a Canary steers and a Kustomization applies passes the check
// only when the Kustomization's spec.ignore leaves the steered rule's
// backends alone; the message says what to add.
func TestCheckSteeredRoutes(t *testing.T) {
	route := &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "shop", Labels: map[string]string{
			kustomizationNameLabel: "apps", kustomizationNamespaceLabel: "flux-system"}},
		Spec: gatewayv1.HTTPRouteSpec{Rules: []gatewayv1.HTTPRouteRule{
			{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: "storefront", Port: ptr.To(gatewayv1.PortNumber(80))}}}}},
			{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: "podinfo", Port: ptr.To(gatewayv1.PortNumber(9898))}}}}},
		}},
	}
	canary := testobj.MakeCanary("podinfo", "apps").Routing(v1alpha1.CanaryRouting{
		Provider: v1alpha1.GatewayAPIRouting, RouteRefs: []v1alpha1.RouteReference{{Name: "shop"}}}).Obj()
	kustomization := func(ignore ...any) *unstructured.Unstructured {
		ks := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"interval": "5m"}}}
		ks.SetAPIVersion("kustomize.toolkit.fluxcd.io/v1")
		ks.SetKind("Kustomization")
		ks.SetNamespace("flux-system")
		ks.SetName("apps")
		if len(ignore) > 0 {
			_ = unstructured.SetNestedSlice(ks.Object, ignore, "spec", "ignore")
		}
		return ks
	}
	rule := func(target map[string]any, paths ...any) map[string]any {
		r := map[string]any{"paths": paths}
		if target != nil {
			r["target"] = target
		}
		return r
	}
	tests := map[string]struct {
		ks     *unstructured.Unstructured
		wantOK bool
		want   string
	}{
		"no ignore rule": {ks: kustomization(), want: "add to its spec.ignore {paths: [/spec/rules/1/backendRefs], target: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: shop}}"},
		"the steered rule's backends": {ks: kustomization(rule(map[string]any{"kind": "HTTPRoute", "name": "shop"}, "/spec/rules/1/backendRefs")),
			wantOK: true, want: "leaves the backends of rules [1] to serin"},
		"a parent path, every object":              {ks: kustomization(rule(nil, "/spec/rules")), wantOK: true},
		"another rule's backends":                  {ks: kustomization(rule(map[string]any{"kind": "HTTPRoute"}, "/spec/rules/0/backendRefs")), want: "/spec/rules/1/backendRefs"},
		"another route":                            {ks: kustomization(rule(map[string]any{"kind": "HTTPRoute", "name": "shop-.*"}, "/spec/rules/1/backendRefs")), want: "puts back the backends"},
		"a route selected by a regular expression": {ks: kustomization(rule(map[string]any{"kind": "HTTPRoute", "name": "sho.*"}, "/spec/rules/1/backendRefs")), wantOK: true},
		"no Kustomization any more":                {ks: nil, wantOK: true, want: "is gone"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			objs := []client.Object{route.DeepCopy(), canary.DeepCopy()}
			if tt.ks != nil {
				objs = append(objs, tt.ks)
			}
			s := newScheme()
			_ = gatewayv1.Install(s)
			kube := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
			msg, ok, err := steeredRouteState(context.Background(), kube, canary, v1alpha1.RouteReference{Name: "shop"})
			if err != nil {
				t.Fatal(err)
			}
			if ok != tt.wantOK || !strings.Contains(msg, tt.want) {
				t.Fatalf("steeredRouteState = %v, %q; want %v, saying %q", ok, msg, tt.wantOK, tt.want)
			}
		})
	}
}
