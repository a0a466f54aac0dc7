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
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// userRoute is a route of routing.routeRefs as serin reads and changes it:
// an HTTPRoute or a GRPCRoute, and the backends of each of its rules. The
// two kinds' rules differ in their matches and filters, which serin never
// changes; their backendRefs share the reference and the weight, which is
// all serin moves.
type userRoute struct {
	// Object is the route: a *gatewayv1.HTTPRoute or a *gatewayv1.GRPCRoute.
	client.Object
	// kind is HTTPRoute or GRPCRoute.
	kind string
	// rules are the backends of each rule, in the route's order.
	rules [][]routeBackend
	// names are the rules' names, "" for a rule without one.
	names []string
}

// routeBackend is one backendRef of a rule, of either kind of route: its
// reference and weight, and its filters (an HTTPRoute's or a GRPCRoute's)
// carried as they are.
type routeBackend struct {
	gatewayv1.BackendRef `json:",inline"`
	Filters              json.RawMessage `json:"filters,omitempty"`
}

// newRouteObject is an empty route of kind.
func newRouteObject(kind string) client.Object {
	if kind == v1alpha1.GRPCRouteKind {
		return &gatewayv1.GRPCRoute{}
	}
	return &gatewayv1.HTTPRoute{}
}

// getUserRoute reads the route ref names in namespace.
func getUserRoute(ctx context.Context, c client.Reader, namespace string, ref v1alpha1.RouteReference) (*userRoute, error) {
	obj := newRouteObject(ref.GetKind())
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ref.Name}, obj); err != nil {
		return nil, err
	}
	return asUserRoute(obj)
}

// asUserRoute reads the backends of a route's rules.
func asUserRoute(obj client.Object) (*userRoute, error) {
	u := &userRoute{Object: obj}
	var err error
	switch r := obj.(type) {
	case *gatewayv1.HTTPRoute:
		u.kind = v1alpha1.HTTPRouteKind
		err = readRules(u, r.Spec.Rules, func(rule gatewayv1.HTTPRouteRule) ([]gatewayv1.HTTPBackendRef, *gatewayv1.SectionName) {
			return rule.BackendRefs, rule.Name
		})
	case *gatewayv1.GRPCRoute:
		u.kind = v1alpha1.GRPCRouteKind
		err = readRules(u, r.Spec.Rules, func(rule gatewayv1.GRPCRouteRule) ([]gatewayv1.GRPCBackendRef, *gatewayv1.SectionName) {
			return rule.BackendRefs, rule.Name
		})
	default:
		return nil, fmt.Errorf("route of type %T: want an HTTPRoute or a GRPCRoute", obj)
	}
	if err != nil {
		return nil, fmt.Errorf("failed to read the backends of %s: %w", u.describe(), err)
	}
	return u, nil
}

// readRules reads the backends and name of each of a route's rules into u.
func readRules[Rule, Ref any](u *userRoute, rules []Rule, of func(Rule) ([]Ref, *gatewayv1.SectionName)) error {
	for _, rule := range rules {
		refs, name := of(rule)
		bs, err := convertBackends[routeBackend](refs)
		if err != nil {
			return err
		}
		u.rules, u.names = append(u.rules, bs), append(u.names, string(ptr.Deref(name, "")))
	}
	return nil
}

// setBackends gives rule i the backends bs, in the route object too.
func (u *userRoute) setBackends(i int, bs []routeBackend) error {
	u.rules[i] = bs
	var err error
	switch r := u.Object.(type) {
	case *gatewayv1.HTTPRoute:
		r.Spec.Rules[i].BackendRefs, err = convertBackends[gatewayv1.HTTPBackendRef](bs)
	case *gatewayv1.GRPCRoute:
		r.Spec.Rules[i].BackendRefs, err = convertBackends[gatewayv1.GRPCBackendRef](bs)
	}
	if err != nil {
		return fmt.Errorf("failed to write the backends of %s: %w", u.describe(), err)
	}
	return nil
}

// convertBackends converts backendRefs between the kinds' types and
// routeBackend: they have the same JSON.
func convertBackends[To, From any](from []From) ([]To, error) {
	if from == nil {
		return nil, nil
	}
	data, err := json.Marshal(from)
	if err != nil {
		return nil, err
	}
	var to []To
	if err := json.Unmarshal(data, &to); err != nil {
		return nil, err
	}
	return to, nil
}

// spec is the route's spec, to compare before and after a change.
func (u *userRoute) spec() any {
	switch r := u.Object.(type) {
	case *gatewayv1.HTTPRoute:
		return r.Spec
	case *gatewayv1.GRPCRoute:
		return r.Spec
	}
	return nil
}

// deepCopy is a copy of the route that shares nothing with it.
func (u *userRoute) deepCopy() *userRoute {
	out := &userRoute{Object: u.Object.DeepCopyObject().(client.Object), kind: u.kind, names: slices.Clone(u.names)}
	for _, bs := range u.rules {
		rule := make([]routeBackend, len(bs))
		for i, b := range bs {
			rule[i] = b.deepCopy()
		}
		out.rules = append(out.rules, rule)
	}
	return out
}

// status is whether every parent programmed the route's generation.
func (u *userRoute) status() RouteStatus {
	switch r := u.Object.(type) {
	case *gatewayv1.HTTPRoute:
		return routeStatus(r)
	case *gatewayv1.GRPCRoute:
		return statusOf(r.Namespace, r.Generation, r.Spec.ParentRefs, r.Status.Parents)
	}
	return RouteStatus{}
}

// describe names the route for a person: "httproute NAMESPACE/NAME".
func (u *userRoute) describe() string {
	return describeRoute(u.kind, u.GetNamespace(), u.GetName())
}

// describeRoute names a route of kind for a person.
func describeRoute(kind, namespace, name string) string {
	return strings.ToLower(kind) + " " + namespace + "/" + name
}

// deepCopy is a copy of b that shares nothing with it.
func (b routeBackend) deepCopy() routeBackend {
	return routeBackend{BackendRef: *b.BackendRef.DeepCopy(), Filters: append(json.RawMessage(nil), b.Filters...)}
}
