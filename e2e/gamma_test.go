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

package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// A Canary whose HTTPRoute attaches to a mesh's Service (the Gateway API's
// GAMMA) walks its weights and is promoted, each weight applied only once
// the parent accepted the route's generation. No service mesh builds on
// this testbed and Traefik implements no GAMMA, so the test stands in for
// the mesh's controller: it writes the route's status for the Service
// parent, as Istio's and Linkerd's do, only after it saw each generation;
// the agent, the API server and the route are real. The traffic itself
// is proven through Traefik for Gateway parents (TestTraffic_*).
func TestGAMMA_ServiceParentWalksTheWeights(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := newNamespace(t)

	g.Expect(k8s.Create(ctx, testobj.MakeDeployment("podinfo", ns).Replicas(1).Image("podinfo:v1").Obj())).To(Succeed())
	c := testobj.MakeCanary("podinfo", ns).
		Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: []v1alpha1.GatewayReference{
			{Kind: v1alpha1.ServiceParent, Name: "podinfo", Port: ptr.To(int32(9898))},
		}}).
		ProgressDeadlineSeconds(30).
		Analysis(v1alpha1.CanaryAnalysis{Interval: &metav1.Duration{Duration: time.Second}, Threshold: 2, StepWeight: 25, MaxWeight: 50}).
		Obj()
	g.Expect(k8s.Create(ctx, c)).To(Succeed())

	// The mesh: accept every generation of the route for its Service.
	accepted := make(chan int64, 64)
	go func() {
		for ctx.Err() == nil {
			if gen, ok := acceptAsMesh(ctx, ns, "podinfo"); ok {
				select {
				case accepted <- gen:
				default:
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()

	waitForPhase(g, c, v1alpha1.PhaseInitialized, 30*time.Second)
	route := &gatewayv1.HTTPRoute{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, route)).To(Succeed())
	g.Expect(route.Spec.ParentRefs).To(Equal([]gatewayv1.ParentReference{{
		Group: ptr.To(gatewayv1.Group("")), Kind: ptr.To(gatewayv1.Kind("Service")),
		Name: "podinfo", Port: ptr.To(gatewayv1.PortNumber(9898)),
	}}), "the route's parent is the apex Service, in the core group")

	routes := sample(t, routeWeights(ns, "podinfo"))
	setImage(g, ns, "podinfo", "podinfo:v2")
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 90*time.Second)
	g.Eventually(routes.seen).Should(Equal([]string{"100/0", "75/25", "50/50", "100/0"}), "HTTPRoute weights, primary/canary")
	g.Expect(len(accepted)).To(BeNumerically(">=", 3), "the mesh accepted the route's generations")
}

// acceptAsMesh writes what a GAMMA mesh writes for a route it applies:
// a parent status for the Service, Accepted and ResolvedRefs of the
// route's current generation. It reports the generation it accepted.
func acceptAsMesh(ctx context.Context, ns, name string) (int64, bool) {
	route := &gatewayv1.HTTPRoute{}
	if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, route); err != nil || len(route.Spec.ParentRefs) == 0 {
		return 0, false
	}
	ref := route.Spec.ParentRefs[0]
	ref.Namespace = ptr.To(gatewayv1.Namespace(ns))
	for _, p := range route.Status.Parents {
		if c := apimeta.FindStatusCondition(p.Conditions, string(gatewayv1.RouteConditionAccepted)); c != nil && c.ObservedGeneration == route.Generation {
			return 0, false // seen already
		}
	}
	cond := func(t gatewayv1.RouteConditionType) metav1.Condition {
		return metav1.Condition{Type: string(t), Status: metav1.ConditionTrue, ObservedGeneration: route.Generation,
			Reason: string(t), LastTransitionTime: metav1.Now()}
	}
	route.Status.Parents = []gatewayv1.RouteParentStatus{{
		ParentRef:      ref,
		ControllerName: "linkerd.io/policy-controller",
		Conditions:     []metav1.Condition{cond(gatewayv1.RouteConditionAccepted), cond(gatewayv1.RouteConditionResolvedRefs)},
	}}
	if err := k8s.Status().Update(ctx, route); err != nil {
		return 0, false
	}
	return route.Generation, true
}
