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

	"github.com/serin-dev/serin/api/v1alpha1"
)

// routeFeature is a part of the generated HTTPRoute that a Canary field
// asks for.
type routeFeature struct {
	// field is the Canary's field that asks for it.
	field string
	// used reports whether the Canary asks for it.
	used func(*v1alpha1.Canary) bool
}

var (
	corsFeature = routeFeature{"spec.routing.corsPolicy", func(c *v1alpha1.Canary) bool {
		return c.Spec.Routing.CorsPolicy != nil
	}}
	mirrorFeature      = routeFeature{"spec.analysis.mirror", (*v1alpha1.Canary).IsMirrored}
	routeMirrorFeature = routeFeature{"spec.routing.mirrors", func(c *v1alpha1.Canary) bool {
		return len(c.Spec.Routing.Mirrors) > 0
	}}
	stickyFeature = routeFeature{"spec.analysis.sessionAffinity", func(c *v1alpha1.Canary) bool {
		return c.Spec.Analysis != nil && c.Spec.Analysis.SessionAffinity != nil
	}}
)

// gap is a feature a data plane does not implement, and what it does with
// a route that asks for it.
type gap struct {
	feature routeFeature
	effect  string
}

// dataPlaneGaps are the HTTPRoute features a data plane serves wrongly, as
// read in its source: Traefik v3.6's Gateway API provider
// (pkg/provider/kubernetes/gateway/httproute.go) implements the header
// modifiers, redirects, URL rewrites and its own ExtensionRef filters, and
// routes every request of a rule with any other filter to a service that
// answers 500, with the route still Accepted; it reads no backendRef's
// filters.
var dataPlaneGaps = map[v1alpha1.DataPlane][]gap{
	v1alpha1.TraefikDataPlane: {
		{corsFeature, "Traefik (v3.6) has no CORS filter and answers every request of the route with a 500"},
		{mirrorFeature, "Traefik (v3.6) has no RequestMirror filter and would answer every request of the route with a 500 while the analysis mirrors"},
		{routeMirrorFeature, "Traefik (v3.6) has no RequestMirror filter and answers every request of the route with a 500"},
		{stickyFeature, "Traefik (v3.6) ignores the filters of a backendRef, so the canary's answers would never set the cookie and no user would be pinned"},
	},
}

// Unsupported tells which of the Canary's routing fields its data plane
// would serve wrongly, and what it would do, with what to change; empty
// when none. Only gatewayapi routes are concerned.
func Unsupported(c *v1alpha1.Canary, dataPlane v1alpha1.DataPlane) string {
	if c.GetRoutingProvider() != v1alpha1.GatewayAPIRouting {
		return ""
	}
	var found []string
	for _, g := range dataPlaneGaps[dataPlane] {
		if g.feature.used(c) {
			found = append(found, fmt.Sprintf("%s: %s", g.feature.field, g.effect))
		}
	}
	if len(found) == 0 {
		return ""
	}
	return fmt.Sprintf("the data plane %s cannot serve this Canary's HTTPRoute (%s); no route was written: remove the field, "+
		"or set routing.dataPlane to the data plane that serves the route if it is not %s", dataPlane, strings.Join(found, "; "), dataPlane)
}
