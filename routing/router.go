// Package routing shifts traffic between a Canary's primary and canary. A
// Router owns the objects that decide where requests go: the apex Service
// (kubernetes, blue/green) or an HTTPRoute (gatewayapi, weights).
package routing

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// Weights are the traffic percentages of the primary and the canary; they
// add up to 100.
type Weights struct {
	Primary int
	Canary  int
}

// AllPrimary routes every request to the primary.
var AllPrimary = Weights{Primary: 100}

// Canary returns the weights that give the canary w percent.
func Canary(w int) Weights { return Weights{Primary: 100 - w, Canary: w} }

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
}

// Router shifts traffic between primary and canary.
type Router interface {
	// Reconcile creates the routing objects, routing everything to the
	// primary, or brings their spec (not their weights) up to date.
	Reconcile(ctx context.Context, canary *v1alpha1.Canary, t Target) error
	// SetRoutes sets the weights.
	SetRoutes(ctx context.Context, canary *v1alpha1.Canary, t Target, w Weights) error
	// GetRoutes returns the weights in force; found is false when the
	// routing objects do not exist yet.
	GetRoutes(ctx context.Context, canary *v1alpha1.Canary, t Target) (w Weights, found bool, err error)
}

// New returns the router of a Canary's routing provider.
func New(c client.Client, owner string, provider v1alpha1.RoutingProvider) (Router, error) {
	switch provider {
	case v1alpha1.KubernetesRouting, "":
		return &KubernetesRouter{Client: c, FieldOwner: owner}, nil
	case v1alpha1.GatewayAPIRouting:
		return &GatewayAPIRouter{Client: c, FieldOwner: owner}, nil
	}
	return nil, fmt.Errorf("routing provider %q is not supported: use kubernetes or gatewayapi", provider)
}
