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
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/internal/testing/testobj"
)

var podinfo = Target{ApexService: "podinfo", PrimaryService: "podinfo-primary", CanaryService: "podinfo-canary", Port: 9898}

// gateway is a parentRef to a Gateway; the namespace is left to default to
// the route's when empty.
func gateway(namespace, name string) gatewayv1.ParentReference {
	ref := gatewayv1.ParentReference{Name: gatewayv1.ObjectName(name)}
	if namespace != "" {
		ref.Namespace = ptr.To(gatewayv1.Namespace(namespace))
	}
	return ref
}

// spelled is ref as an API server and a gateway write it back: group and
// kind filled in, the namespace explicit.
func spelled(ref gatewayv1.ParentReference, namespace string) gatewayv1.ParentReference {
	ref.Group = ptr.To(gatewayv1.Group(gatewayv1.GroupName))
	ref.Kind = ptr.To(gatewayv1.Kind("Gateway"))
	if ref.Namespace == nil {
		ref.Namespace = ptr.To(gatewayv1.Namespace(namespace))
	}
	return ref
}

func section(ref gatewayv1.ParentReference, name string) gatewayv1.ParentReference {
	ref.SectionName = ptr.To(gatewayv1.SectionName(name))
	return ref
}

func condition(t gatewayv1.RouteConditionType, status metav1.ConditionStatus, generation int64, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: string(t), Status: status, ObservedGeneration: generation, Reason: reason, Message: msg}
}

// accepted is what a gateway reports for a route it applies.
func accepted(generation int64) []metav1.Condition {
	return []metav1.Condition{
		condition(gatewayv1.RouteConditionAccepted, metav1.ConditionTrue, generation, "Accepted", ""),
		condition(gatewayv1.RouteConditionResolvedRefs, metav1.ConditionTrue, generation, "ResolvedRefs", ""),
	}
}

func parent(ref gatewayv1.ParentReference, conditions ...metav1.Condition) gatewayv1.RouteParentStatus {
	return gatewayv1.RouteParentStatus{ParentRef: spelled(ref, "apps"), ControllerName: "traefik.io/gateway-controller", Conditions: conditions}
}

// httpRoute is podinfo's route at a generation, primary/canary 80/20,
// attached to refs, with the parent statuses.
func httpRoute(generation int64, refs []gatewayv1.ParentReference, parents ...gatewayv1.RouteParentStatus) *gatewayv1.HTTPRoute {
	c := testobj.MakeCanary("podinfo", "apps").Obj()
	route := &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo", Generation: generation,
			OwnerReferences: []metav1.OwnerReference{controllerRef(c.Name, c.UID)}},
		Spec: routeSpec(c, podinfo, Canary(20)),
	}
	route.Spec.ParentRefs = refs
	route.Status.Parents = parents
	return route
}

func newClient(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = gatewayv1.Install(scheme)
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(&gatewayv1.HTTPRoute{}).Build()
}

func TestGatewayAPIRouter_GetRoutesStatus(t *testing.T) {
	public := gateway("gateways", "public")
	internal := gateway("", "internal") // in the route's namespace
	web := section(public, "web")
	// The apex Service as a mesh writes the route (GAMMA): core group.
	meshService := gatewayv1.ParentReference{Group: ptr.To(gatewayv1.Group("")), Kind: ptr.To(gatewayv1.Kind("Service")),
		Name: "podinfo", Port: ptr.To(gatewayv1.PortNumber(9898))}
	meshParent := func(ref gatewayv1.ParentReference, conditions ...metav1.Condition) gatewayv1.RouteParentStatus {
		ref.Namespace = ptr.To(gatewayv1.Namespace("apps"))
		return gatewayv1.RouteParentStatus{ParentRef: ref, ControllerName: "linkerd.io/policy-controller", Conditions: conditions}
	}
	tests := map[string]struct {
		route *gatewayv1.HTTPRoute
		want  RouteStatus
	}{
		"accepted by its gateway": {
			httpRoute(3, []gatewayv1.ParentReference{public}, parent(public, accepted(3)...)),
			RouteStatus{Programmed: true, Generation: 3},
		},
		"no parent status yet": {
			httpRoute(1, []gatewayv1.ParentReference{public}),
			RouteStatus{Generation: 1, Message: "gateway gateways/public: waiting for the gateway to report status for generation 1"},
		},
		"status of an older generation (new weights not seen yet)": {
			httpRoute(4, []gatewayv1.ParentReference{public}, parent(public, accepted(3)...)),
			RouteStatus{Generation: 4, Message: "gateway gateways/public: waiting for the gateway to report status for generation 4"},
		},
		"a rejection of an older generation is not one of this one": {
			httpRoute(4, []gatewayv1.ParentReference{public}, parent(public,
				condition(gatewayv1.RouteConditionAccepted, metav1.ConditionFalse, 3, "NotAllowedByListeners", ""),
				condition(gatewayv1.RouteConditionResolvedRefs, metav1.ConditionTrue, 3, "ResolvedRefs", ""))),
			RouteStatus{Generation: 4, Message: "gateway gateways/public: waiting for the gateway to report status for generation 4"},
		},
		"not accepted, with the gateway's message": {
			httpRoute(2, []gatewayv1.ParentReference{public}, parent(public,
				condition(gatewayv1.RouteConditionAccepted, metav1.ConditionFalse, 2, "NotAllowedByListeners", "no listener allows routes from namespace apps"),
				condition(gatewayv1.RouteConditionResolvedRefs, metav1.ConditionTrue, 2, "ResolvedRefs", ""))),
			RouteStatus{Rejected: true, Generation: 2,
				Message: "gateway gateways/public: Accepted=False (NotAllowedByListeners): no listener allows routes from namespace apps"},
		},
		"not accepted, without a message": {
			httpRoute(2, []gatewayv1.ParentReference{public}, parent(public,
				condition(gatewayv1.RouteConditionAccepted, metav1.ConditionFalse, 2, "NoMatchingListenerHostname", ""))),
			RouteStatus{Rejected: true, Generation: 2, Message: "gateway gateways/public: Accepted=False (NoMatchingListenerHostname)"},
		},
		"references not resolved": {
			httpRoute(2, []gatewayv1.ParentReference{public}, parent(public,
				condition(gatewayv1.RouteConditionAccepted, metav1.ConditionTrue, 2, "Accepted", ""),
				condition(gatewayv1.RouteConditionResolvedRefs, metav1.ConditionFalse, 2, "BackendNotFound", "service apps/podinfo-canary not found"))),
			RouteStatus{Rejected: true, Generation: 2,
				Message: "gateway gateways/public: ResolvedRefs=False (BackendNotFound): service apps/podinfo-canary not found"},
		},
		"accepted but ResolvedRefs not reported": {
			httpRoute(2, []gatewayv1.ParentReference{public}, parent(public,
				condition(gatewayv1.RouteConditionAccepted, metav1.ConditionTrue, 2, "Accepted", ""))),
			RouteStatus{Generation: 2, Message: "gateway gateways/public: waiting for the gateway to report status for generation 2"},
		},
		"several parents, all accepted": {
			httpRoute(5, []gatewayv1.ParentReference{public, internal}, parent(internal, accepted(5)...), parent(public, accepted(5)...)),
			RouteStatus{Programmed: true, Generation: 5},
		},
		"several parents, one missing": {
			httpRoute(5, []gatewayv1.ParentReference{public, internal}, parent(public, accepted(5)...)),
			RouteStatus{Generation: 5, Message: "gateway apps/internal: waiting for the gateway to report status for generation 5"},
		},
		"several parents, one pending and one rejected": {
			httpRoute(5, []gatewayv1.ParentReference{public, internal}, parent(public, accepted(4)...), parent(internal,
				condition(gatewayv1.RouteConditionAccepted, metav1.ConditionFalse, 5, "NotAllowedByListeners", "namespace apps not allowed"),
				condition(gatewayv1.RouteConditionResolvedRefs, metav1.ConditionTrue, 5, "ResolvedRefs", ""))),
			RouteStatus{Rejected: true, Generation: 5, Message: "gateway gateways/public: waiting for the gateway to report status for generation 5; " +
				"gateway apps/internal: Accepted=False (NotAllowedByListeners): namespace apps not allowed"},
		},
		"a status for another gateway of the same name does not count": {
			httpRoute(1, []gatewayv1.ParentReference{public}, parent(gateway("apps", "public"), accepted(1)...)),
			RouteStatus{Generation: 1, Message: "gateway gateways/public: waiting for the gateway to report status for generation 1"},
		},
		"a mesh's Service parent (GAMMA), accepted by the mesh": {
			httpRoute(2, []gatewayv1.ParentReference{meshService}, meshParent(meshService, accepted(2)...)),
			RouteStatus{Programmed: true, Generation: 2},
		},
		"a mesh's Service parent waits for the mesh": {
			httpRoute(2, []gatewayv1.ParentReference{meshService}),
			RouteStatus{Generation: 2, Message: "service apps/podinfo (port 9898): waiting for the gateway to report status for generation 2"},
		},
		"a Gateway's status does not count for a Service of the same name": {
			httpRoute(2, []gatewayv1.ParentReference{meshService}, parent(gateway("apps", "podinfo"), accepted(2)...)),
			RouteStatus{Generation: 2, Message: "service apps/podinfo (port 9898): waiting for the gateway to report status for generation 2"},
		},
		"sectionName matches its own listener's status": {
			httpRoute(2, []gatewayv1.ParentReference{web}, parent(web, accepted(2)...)),
			RouteStatus{Programmed: true, Generation: 2},
		},
		"sectionName does not match another listener's status": {
			httpRoute(2, []gatewayv1.ParentReference{web}, parent(section(public, "websecure"), accepted(2)...)),
			RouteStatus{Generation: 2, Message: "gateway gateways/public (sectionName web): waiting for the gateway to report status for generation 2"},
		},
		"sectionName does not match the whole gateway's status": {
			httpRoute(2, []gatewayv1.ParentReference{web}, parent(public, accepted(2)...)),
			RouteStatus{Generation: 2, Message: "gateway gateways/public (sectionName web): waiting for the gateway to report status for generation 2"},
		},
		"a status for another port does not count": {
			httpRoute(2, []gatewayv1.ParentReference{withPort(public, 80)}, parent(withPort(public, 8080), accepted(2)...)),
			RouteStatus{Generation: 2, Message: "gateway gateways/public (port 80): waiting for the gateway to report status for generation 2"},
		},
		"a stale entry of another controller does not block": {
			httpRoute(3, []gatewayv1.ParentReference{public}, parent(public, accepted(1)...), parent(public, accepted(3)...)),
			RouteStatus{Programmed: true, Generation: 3},
		},
		"a rejection wins over another controller's acceptance": {
			httpRoute(3, []gatewayv1.ParentReference{public}, parent(public, accepted(3)...), parent(public,
				condition(gatewayv1.RouteConditionAccepted, metav1.ConditionFalse, 3, "UnsupportedValue", "weights not supported"),
				condition(gatewayv1.RouteConditionResolvedRefs, metav1.ConditionTrue, 3, "ResolvedRefs", ""))),
			RouteStatus{Rejected: true, Generation: 3, Message: "gateway gateways/public: Accepted=False (UnsupportedValue): weights not supported"},
		},
	}
	c := testobj.MakeCanary("podinfo", "apps").Obj()
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r := &GatewayAPIRouter{Client: newClient(t, tt.route), FieldOwner: "serin"}
			got, err := r.GetRoutes(context.Background(), c, podinfo)
			if err != nil {
				t.Fatal(err)
			}
			want := Routes{Found: true, Weights: Canary(20), Status: tt.want}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("GetRoutes() (-want +got):\n%s", diff)
			}
		})
	}
}

func withPort(ref gatewayv1.ParentReference, port int32) gatewayv1.ParentReference {
	ref.Port = ptr.To(port)
	return ref
}

func TestGatewayAPIRouter_GetRoutesNotFound(t *testing.T) {
	r := &GatewayAPIRouter{Client: newClient(t), FieldOwner: "serin"}
	got, err := r.GetRoutes(context.Background(), testobj.MakeCanary("podinfo", "apps").Obj(), podinfo)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Routes{}, got); diff != "" {
		t.Errorf("GetRoutes() (-want +got):\n%s", diff)
	}
}

func TestKubernetesRouter_AlwaysProgrammed(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo",
		OwnerReferences: []metav1.OwnerReference{controllerRef("podinfo", "")}}, Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "podinfo"}}}
	r := &KubernetesRouter{Client: newClient(t, svc), FieldOwner: "serin"}
	target := Target{ApexService: "podinfo", CanarySelector: map[string]string{"app": "podinfo"}, PrimarySelector: map[string]string{"app": "podinfo-primary"}}
	got, err := r.GetRoutes(context.Background(), testobj.MakeCanary("podinfo", "apps").Obj(), target)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Routes{Found: true, Weights: Canary(100), Status: Programmed}, got); diff != "" {
		t.Errorf("GetRoutes() (-want +got):\n%s", diff)
	}
}
