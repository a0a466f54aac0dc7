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

// Package routing shifts traffic between a Canary's primary and canary. A
// Router owns the objects that decide where requests go: the apex Service
// (kubernetes, blue/green) or an HTTPRoute (gatewayapi, weights).
package routing

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/workload"
)

// Weights are the traffic percentages of the primary and the canary; they
// add up to 100.
type Weights struct {
	Primary int
	Canary  int
	// ABTest confines the weights to the requests an A/B test matches
	// (analysis.match): every other request goes to the primary. Without
	// it, the weights apply to every request, as they do for a Canary
	// without analysis.match.
	ABTest bool
	// Mirror copies every request to the canary as well (a mirrored
	// blue/green analysis, analysis.mirror); the gateway discards the
	// canary's answers.
	Mirror bool
}

// AllPrimary routes every request to the primary.
var AllPrimary = Weights{Primary: 100}

// Canary returns the weights that give the canary w percent.
func Canary(w int) Weights { return Weights{Primary: 100 - w, Canary: w} }

// Mirrored routes every request to the primary and mirrors it to the
// canary.
var Mirrored = Weights{Primary: 100, Mirror: true}

// ABTest returns the weights of an A/B test's requests: the canary gets
// w percent of the requests analysis.match selects, none of the others.
func ABTest(w int) Weights { return Weights{Primary: 100 - w, Canary: w, ABTest: true} }

// Target describes the backends a router routes to.
type Target struct {
	// ApexService is the name of the Service clients call.
	ApexService string
	// PrimaryService and CanaryService select the primary and canary pods.
	PrimaryService, CanaryService string
	// PrimarySelector and CanarySelector are the pod selectors of the two
	// (kubernetes router).
	PrimarySelector, CanarySelector map[string]string
	// Port is the Services' port.
	Port int32
	// BaselineService selects the baseline's pods (analysis.judge.baseline,
	// gatewayapi); "" without a baseline. The routes are read with it, so
	// that a route naming the baseline is seen as such.
	BaselineService string
	// RouteBaseline gives BaselineService the canary's weight, taken from
	// the primary's share (rollout.BaselineRouted decides when); without
	// it, routes written name only primary and canary.
	RouteBaseline bool
}

// baselineWeight is the weight of the baseline in routes that give the
// primary's share w.Primary and the canary w.Canary: the canary's, within
// the primary's share.
func baselineWeight(w Weights) int {
	return min(w.Canary, w.Primary)
}

// Router shifts traffic between primary and canary.
type Router interface {
	// Reconcile creates the routing objects, routing everything to the
	// primary, or brings their spec (not their weights) up to date.
	Reconcile(ctx context.Context, canary *v1alpha1.Canary, t Target) error
	// SetRoutes sets the weights.
	SetRoutes(ctx context.Context, canary *v1alpha1.Canary, t Target, w Weights) error
	// GetRoutes reads the routing objects back: their weights, and whether
	// the data plane accepted them.
	GetRoutes(ctx context.Context, canary *v1alpha1.Canary, t Target) (Routes, error)
	// Finalize hands the routing objects back when the Canary is deleted
	// with revertOnDeletion: all traffic goes to t.ApexService, and the
	// objects are no longer owned by the Canary, so that the data plane
	// keeps serving once the Canary and its other objects are gone.
	// Objects the Canary does not control are left alone.
	Finalize(ctx context.Context, canary *v1alpha1.Canary, t Target) error
}

// Routes is what a router reads back from its routing objects.
type Routes struct {
	// Found is false when the routing objects do not exist yet.
	Found bool
	// Drifted is true when the routing objects no longer carry what the
	// router last wrote (a person scaled a side of a replicas split):
	// Reconcile writes it again.
	Drifted bool
	// Weights are the weights the routing objects ask for; they are in
	// force only when Status.Programmed.
	Weights Weights
	// Baseline is true when the routing objects name the baseline's
	// Service (Target.BaselineService), with any weight; its weight is
	// counted in Weights.Primary.
	Baseline bool
	// Status tells whether the data plane applies the weights.
	Status RouteStatus
}

// RouteStatus tells whether the data plane accepted the routing objects as
// they are now. A weight counts as applied only then.
type RouteStatus struct {
	// Programmed is true when every parent (Gateway) accepted the current
	// spec with all its references resolved; always true for routers that
	// have no data plane to wait for.
	Programmed bool
	// Rejected is true when a parent reported that it did not accept the
	// current spec, rather than not having reported on it yet.
	Rejected bool
	// Generation is the spec's metadata.generation the status is about (0
	// for routers that have none): a new one means new weights were written.
	Generation int64
	// Message says, when not programmed, what is missing, parent by parent.
	Message string
}

// Programmed is the status of routing objects without a data plane to wait
// for: what is written is in force.
var Programmed = RouteStatus{Programmed: true}

// New returns the router of a Canary's routing: its provider's, or the
// router of the routes the user keeps (routing.routeRefs).
func New(c client.Client, owner string, routing v1alpha1.CanaryRouting) (Router, error) {
	return NewFor(c, owner, v1alpha1.DeploymentKind, routing)
}

// NewFor is New for a target of kind: a StatefulSet's replicas are
// shared by its partition.
func NewFor(c client.Client, owner, kind string, routing v1alpha1.CanaryRouting) (Router, error) {
	if kind == v1alpha1.StatefulSetKind && routing.Provider == v1alpha1.ReplicasRouting {
		return &PartitionRouter{Client: c, FieldOwner: owner}, nil
	}
	switch routing.Provider {
	case v1alpha1.KubernetesRouting, "":
		return &KubernetesRouter{Client: c, FieldOwner: owner}, nil
	case v1alpha1.GatewayAPIRouting:
		if len(routing.RouteRefs) > 0 {
			return &RouteRefsRouter{Client: c, FieldOwner: owner}, nil
		}
		return &GatewayAPIRouter{Client: c, FieldOwner: owner}, nil
	case v1alpha1.ReplicasRouting:
		return &ReplicasRouter{Client: c, FieldOwner: owner}, nil
	}
	return nil, fmt.Errorf("routing provider %q is not supported: use kubernetes, gatewayapi or replicas", routing.Provider)
}

// notManaged is the error of a write to a routing object the Canary does
// not control: it is left as it is, and the Canary stalls (AdoptionRefused).
func notManaged(kind string, o metav1.Object) error {
	return &workload.NotManagedError{Kind: kind, Name: o.GetName(), Controller: metav1.GetControllerOf(o)}
}
