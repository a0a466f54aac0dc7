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
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// A Gateway tells whether it applies an HTTPRoute in the route's
// status.parents: one entry per parent (and per controller), whose
// conditions Accepted and ResolvedRefs carry the route generation they
// judged. Only when every parent accepted the current generation with all
// references resolved are the weights in spec in force.

// parentVerdict is what a parent's status says about the current generation.
type parentVerdict int

const (
	// parentPending: the parent has not reported on the current generation.
	parentPending parentVerdict = iota
	// parentRejected: the parent reported it does not apply it.
	parentRejected
	// parentProgrammed: the parent accepted it with all references resolved.
	parentProgrammed
)

// routeConditions are the conditions a parent must report True.
var routeConditions = []gatewayv1.RouteConditionType{gatewayv1.RouteConditionAccepted, gatewayv1.RouteConditionResolvedRefs}

// HTTPRouteStatus is routeStatus for readers outside the router (serin
// tree): whether every parent programmed the route, and why not.
func HTTPRouteStatus(route *gatewayv1.HTTPRoute) RouteStatus { return routeStatus(route) }

// routeStatus tells whether every parentRef of the route has a parent status
// accepting its current generation, and otherwise why not, parent by parent.
func routeStatus(route *gatewayv1.HTTPRoute) RouteStatus {
	return statusOf(route.Namespace, route.Generation, route.Spec.ParentRefs, route.Status.Parents)
}

// statusOf is routeStatus of a route of any kind: its namespace,
// generation, parentRefs and status.parents.
func statusOf(namespace string, generation int64, refs []gatewayv1.ParentReference, parents []gatewayv1.RouteParentStatus) RouteStatus {
	st := RouteStatus{Programmed: true, Generation: generation}
	var why []string
	for _, ref := range refs {
		verdict, msg := parentStatus(namespace, generation, parents, ref)
		if verdict == parentProgrammed {
			continue
		}
		st.Programmed = false
		st.Rejected = st.Rejected || verdict == parentRejected
		why = append(why, describeParent(ref, namespace)+": "+msg)
	}
	st.Message = strings.Join(why, "; ")
	return st
}

// parentStatus judges the status entries of one parentRef. Usually one
// controller reports per parent; when several do, a rejection of the current
// generation wins, then an acceptance (a stale entry another controller left
// behind does not block), else the route waits.
func parentStatus(namespace string, generation int64, parents []gatewayv1.RouteParentStatus, ref gatewayv1.ParentReference) (parentVerdict, string) {
	want := keyOf(ref, namespace)
	verdict := parentPending
	msg := fmt.Sprintf("waiting for the gateway to report status for generation %d", generation)
	for _, ps := range parents {
		if keyOf(ps.ParentRef, namespace) != want {
			continue
		}
		v, m := judgeParent(ps.Conditions, generation)
		if v == parentRejected {
			return v, m
		}
		if v == parentProgrammed {
			verdict, msg = v, m
		}
	}
	return verdict, msg
}

// judgeParent reads one parent status: rejected when a condition of the
// current generation is not True, pending when one is missing or about
// another generation.
func judgeParent(conditions []metav1.Condition, generation int64) (parentVerdict, string) {
	verdict, msg := parentProgrammed, ""
	for _, t := range routeConditions {
		c := apimeta.FindStatusCondition(conditions, string(t))
		switch {
		case c == nil || c.ObservedGeneration != generation:
			verdict = parentPending
			msg = fmt.Sprintf("waiting for the gateway to report status for generation %d", generation)
		case c.Status != metav1.ConditionTrue:
			msg = fmt.Sprintf("%s=%s (%s)", c.Type, c.Status, c.Reason)
			if c.Message != "" {
				msg += ": " + c.Message
			}
			return parentRejected, msg
		}
	}
	return verdict, msg
}

// parentKey is a ParentReference with its defaults applied, so that a
// reference in spec matches the same one in status however each is spelled.
type parentKey struct {
	group, kind, namespace, name, section string
	port                                  gatewayv1.PortNumber
}

func keyOf(ref gatewayv1.ParentReference, routeNamespace string) parentKey {
	return parentKey{
		group:     string(ptr.Deref(ref.Group, gatewayv1.GroupName)),
		kind:      string(ptr.Deref(ref.Kind, "Gateway")),
		namespace: string(ptr.Deref(ref.Namespace, gatewayv1.Namespace(routeNamespace))),
		name:      string(ref.Name),
		section:   string(ptr.Deref(ref.SectionName, "")),
		port:      ptr.Deref(ref.Port, 0),
	}
}

// describeParent names a parent for a person: "gateway gateways/public",
// with its section and port when the reference has them.
func describeParent(ref gatewayv1.ParentReference, routeNamespace string) string {
	k := keyOf(ref, routeNamespace)
	s := strings.ToLower(k.kind) + " " + k.namespace + "/" + k.name
	var within []string
	if k.section != "" {
		within = append(within, "sectionName "+k.section)
	}
	if k.port != 0 {
		within = append(within, fmt.Sprintf("port %d", k.port))
	}
	if len(within) > 0 {
		s += " (" + strings.Join(within, ", ") + ")"
	}
	return s
}
