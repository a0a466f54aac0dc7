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

package dataplane

import (
	"fmt"
	"strings"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// Feature is a part of the generated HTTPRoute that a Canary field asks
// for.
type Feature struct {
	// Field is the Canary's field that asks for it.
	Field string
	// Used reports whether the Canary asks for it.
	Used func(*v1alpha1.Canary) bool
}

// The features some data planes serve wrongly.
var (
	CORSFeature = Feature{"spec.routing.corsPolicy", func(c *v1alpha1.Canary) bool {
		return c.Spec.Routing.CorsPolicy != nil
	}}
	MirrorFeature      = Feature{"spec.analysis.mirror", (*v1alpha1.Canary).IsMirrored}
	RouteMirrorFeature = Feature{"spec.routing.mirrors", func(c *v1alpha1.Canary) bool {
		return len(c.Spec.Routing.Mirrors) > 0
	}}
	SessionAffinityFeature = Feature{"spec.analysis.sessionAffinity", func(c *v1alpha1.Canary) bool {
		return c.Spec.Analysis != nil && c.Spec.Analysis.SessionAffinity != nil
	}}
)

// Gap is a feature a data plane does not implement, and what it does with
// a route that asks for it.
type Gap struct {
	Feature Feature
	Effect  string
}

// Unsupported tells which of the Canary's routing fields its data plane
// would serve wrongly, and what it would do, with what to change; empty
// when none. Only gatewayapi routes are concerned.
func Unsupported(c *v1alpha1.Canary, name v1alpha1.DataPlane) string {
	d, ok := registry[name]
	if !ok || c.GetRoutingProvider() != v1alpha1.GatewayAPIRouting {
		return ""
	}
	var found []string
	for _, g := range d.Gaps {
		if g.Feature.Used(c) {
			found = append(found, fmt.Sprintf("%s: %s", g.Feature.Field, g.Effect))
		}
	}
	if len(found) == 0 {
		return ""
	}
	return fmt.Sprintf("the data plane %s cannot serve this Canary's HTTPRoute (%s); no route was written: remove the field, "+
		"or set routing.dataPlane to the data plane that serves the route if it is not %s", name, strings.Join(found, "; "), name)
}
