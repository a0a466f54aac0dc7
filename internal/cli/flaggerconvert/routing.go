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

package flaggerconvert

import (
	"fmt"
	"k8s.io/utils/ptr"
	"strings"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// gatewayAPIGroup is the group of the Gateways an HTTPRoute attaches to.
const gatewayAPIGroup = "gateway.networking.k8s.io"

// routing maps spec.provider and the Gateway API settings, the HTTPRoute's
// rule's too (routeSettings). serin's gatewayapi routing shifts weights, or
// runs blue/green (iterations), an A/B test or a mirror on the HTTPRoute;
// its kubernetes routing is blue/green only, so weights without a Gateway
// become iterations, and an A/B test or a mirror is left out.
func (c canaryConverter) routing(provider v1alpha1.RoutingProvider, in *flaggerAnalysis, path string,
	out *v1alpha1.CanaryAnalysis) v1alpha1.CanaryRouting {
	abTest := out != nil && len(out.Match) > 0
	var gateways []v1alpha1.GatewayReference
	gatewaysReported, meshParent := false, false
	switch {
	case provider == v1alpha1.GatewayAPIRouting && gammaMeshes[c.in.Spec.Provider] != "" && len(c.in.Spec.Service.GatewayRefs) == 0:
		gateways = []v1alpha1.GatewayReference{c.apexParent()}
		c.report.note("spec.provider", "%s: converted to routing.provider gatewayapi with the apex Service %s (port %d) as the "+
			"HTTPRoute's parent, which %s applies to the mesh's calls of that Service (the Gateway API's GAMMA, %s)",
			c.in.Spec.Provider, gateways[0].Name, ptr.Deref(gateways[0].Port, 0), c.in.Spec.Provider, gammaMeshes[c.in.Spec.Provider])
		gatewaysReported, meshParent = true, true
		if c.ingressGatewaysToGateway() {
			// The mesh's ingress gateways give way to a Gateway API
			// Gateway; the hosts are its (GAMMA gives a Service parent's
			// hostnames no meaning, GEP-1294).
			gateways = append(gateways, *c.opts.Gateway)
			c.report.note("spec.service.gateways", "the ingress gateways %v: converted to the Gateway %s as the HTTPRoute's "+
				"second parent, with spec.service.hosts as its hostnames", c.ingressGateways(), gatewayName(*c.opts.Gateway))
			meshParent = false
			break
		}
		if len(c.in.Spec.Service.Hosts) > 0 {
			c.report.drop("spec.service.hosts", "the hosts of the mesh's ingress gateways: the HTTPRoute of a Service parent "+
				"routes the calls of that Service, whatever the host")
		}
	case provider == v1alpha1.GatewayAPIRouting && c.ingressToGateway():
		gateways, gatewaysReported = []v1alpha1.GatewayReference{*c.opts.Gateway}, true
		ic := ingressControllers[baseProvider(c.in.Spec.Provider)]
		serves := ic.servesHTTPRoutes
		if serves == "" {
			serves = fmt.Sprintf("%s serves no HTTPRoute: the controller of that Gateway serves it in its place", ic.name)
		}
		c.report.note("spec.provider", "%s: converted to routing.provider gatewayapi on the Gateway %s (%s); the HTTPRoute "+
			"replaces %s: give it your hostnames in routing.hosts", c.in.Spec.Provider, gatewayName(*c.opts.Gateway), serves, ic.replaces)
	case provider == v1alpha1.GatewayAPIRouting:
		if gateways, gatewaysReported = c.gatewayRefs(), true; len(gateways) == 0 {
			// A Canary that attaches to no Gateway (a mesh's Service
			// parent, GAMMA) would be refused by the API server.
			c.report.drop("spec.provider", "gatewayapi without a parent serin can attach to (a Gateway, or a Service for GAMMA): "+
				"converted to kubernetes (blue/green)")
			provider = v1alpha1.KubernetesRouting
		}
	}
	if provider == v1alpha1.KubernetesRouting {
		if abTest {
			c.report.drop(path+".match", "an A/B test needs routing.provider gatewayapi (a Gateway or a mesh's Service as parent): "+
				"converted to blue/green iterations, which send every request to the canary at the promotion only")
			out.Match = nil
		}
		if out != nil && out.SessionAffinity != nil {
			c.report.drop(path+".sessionAffinity", "session affinity needs routing.provider gatewayapi with weights: left out")
			out.SessionAffinity = nil
		}
		if out != nil && out.Mirror {
			c.report.drop(path+".mirror", "mirroring needs routing.provider gatewayapi (the HTTPRoute's RequestMirror filter): left out")
			if out.MirrorWeight != nil {
				c.report.drop(path+".mirrorWeight", "left out with analysis.mirror")
			}
			out.Mirror, out.MirrorWeight = false, nil
		}
		if out != nil && (out.StepWeight > 0 || len(out.StepWeights) > 0) {
			c.weightsToIterations(path, out)
		}
		c.dropGatewaySettings(!gatewaysReported)
		c.dropRouteSettings()
		return v1alpha1.CanaryRouting{Provider: provider}
	}
	routing := v1alpha1.CanaryRouting{Provider: provider, GatewayRefs: gateways}
	if !meshParent {
		routing.Hosts = c.in.Spec.Service.Hosts
	}
	c.routeSettings(&routing)
	if c.ingressToGateway() {
		c.ingressRouting(&routing)
		c.apisixRouting(&routing)
	}
	return routing
}

// gammaMeshes are the meshes whose Flagger provider maps to Gateway API
// routing with the apex Service as the HTTPRoute's parent (GAMMA), and
// from which version they apply such routes.
var gammaMeshes = map[string]string{
	"istio":   "Istio 1.22 and later",
	"linkerd": "Linkerd 2.14 and later",
	"kuma":    "Kuma 2.3 and later, experimental there",
}

// ingressController is a Flagger provider that routes through an ingress
// controller's own resources.
type ingressController struct {
	name string
	// servesHTTPRoutes says how the controller serves Gateway API
	// HTTPRoutes itself; empty when it does not.
	servesHTTPRoutes string
	// replaces says what the HTTPRoute takes the place of.
	replaces string
}

// ingressControllers are the providers whose Canaries convert to Gateway API
// routing on the Gateway of Options.Gateway.
var ingressControllers = map[string]ingressController{
	"contour": {name: "Contour", servesHTTPRoutes: "Contour serves HTTPRoutes",
		replaces: "the HTTPProxy Flagger generated and the root HTTPProxy that included it"},
	"gloo": {name: "Gloo", servesHTTPRoutes: "Gloo Gateway serves HTTPRoutes",
		replaces: "the RouteTable Flagger generated and the VirtualService that delegated to it"},
	"traefik": {name: "Traefik", servesHTTPRoutes: "Traefik serves HTTPRoutes with its kubernetesGateway provider",
		replaces: "the TraefikService Flagger generated and the IngressRoute that pointed to it"},
	"apisix": {name: "APISIX", servesHTTPRoutes: "the APISIX Ingress Controller serves HTTPRoutes",
		replaces: "the canary ApisixRoute Flagger generated"},
	"nginx":   {name: "ingress-nginx", replaces: "the canary Ingress Flagger generated"},
	"skipper": {name: "Skipper", replaces: "the canary Ingress Flagger generated"},
}

// baseProvider is a provider without its version: gloo:v1 is gloo.
func baseProvider(provider string) string {
	base, _, _ := strings.Cut(provider, ":")
	return base
}

// ingressToGateway tells whether the Canary's ingress controller gives way
// to the Gateway of Options.Gateway.
func (c canaryConverter) ingressToGateway() bool {
	_, ok := ingressControllers[baseProvider(c.in.Spec.Provider)]
	return ok && c.opts.Gateway != nil && len(c.in.Spec.Service.GatewayRefs) == 0
}

// ingressGateways are the Istio gateways of spec.service.gateways that
// are not the mesh itself ("mesh").
func (c canaryConverter) ingressGateways() []string {
	var out []string
	for _, g := range c.in.Spec.Service.Gateways {
		if g != "mesh" {
			out = append(out, g)
		}
	}
	return out
}

// ingressGatewaysToGateway tells whether a mesh's ingress gateways give way
// to the Gateway of Options.Gateway.
func (c canaryConverter) ingressGatewaysToGateway() bool {
	return gammaMeshes[c.in.Spec.Provider] != "" && c.opts.Gateway != nil &&
		len(c.in.Spec.Service.GatewayRefs) == 0 && len(c.ingressGateways()) > 0
}

// gatewayName is a Gateway's namespace/name.
func gatewayName(ref v1alpha1.GatewayReference) string {
	if ref.Namespace == "" {
		return ref.Name
	}
	return ref.Namespace + "/" + ref.Name
}

// apexParent is the Canary's apex Service as an HTTPRoute parent.
func (c canaryConverter) apexParent() v1alpha1.GatewayReference {
	name := c.in.Spec.Service.Name
	if name == "" {
		name = c.in.Spec.TargetRef.Name
	}
	ref := v1alpha1.GatewayReference{Kind: v1alpha1.ServiceParent, Name: name}
	if port := c.in.Spec.Service.Port; port > 0 {
		ref.Port = ptr.To(port)
	}
	return ref
}

// routingProvider maps spec.provider; anything serin cannot route with
// falls back to kubernetes (blue/green), which needs no mesh.
func (c canaryConverter) routingProvider() v1alpha1.RoutingProvider {
	provider := c.in.Spec.Provider
	switch {
	case provider == "kubernetes":
		return v1alpha1.KubernetesRouting
	case provider == "gatewayapi" || strings.HasPrefix(provider, "gatewayapi:"):
		return v1alpha1.GatewayAPIRouting
	case gammaMeshes[provider] != "":
		return v1alpha1.GatewayAPIRouting
	case c.ingressToGateway():
		return v1alpha1.GatewayAPIRouting
	case provider == "" && len(c.in.Spec.Service.GatewayRefs) > 0:
		c.report.drop("spec.provider", "not set, so Flagger used its -mesh-provider flag: "+
			"gatewayapi was assumed from spec.service.gatewayRefs")
		return v1alpha1.GatewayAPIRouting
	case provider == "":
		c.report.drop("spec.provider", "not set, so Flagger used its -mesh-provider flag: "+
			"kubernetes (blue/green) was assumed")
		return v1alpha1.KubernetesRouting
	}
	if _, ok := ingressControllers[baseProvider(provider)]; ok {
		c.report.drop("spec.provider", "%s is not supported: serin routes with gatewayapi or kubernetes; "+
			"converted to kubernetes (blue/green); name the Gateway that takes over (--gateway) to convert to gatewayapi", provider)
		return v1alpha1.KubernetesRouting
	}
	c.report.drop("spec.provider", "%s is not supported: serin routes with gatewayapi or kubernetes; "+
		"converted to kubernetes (blue/green)", provider)
	return v1alpha1.KubernetesRouting
}

// weightsToIterations turns traffic steps into as many blue/green
// iterations, for routing without a Gateway.
func (c canaryConverter) weightsToIterations(path string, out *v1alpha1.CanaryAnalysis) {
	steps := (&v1alpha1.Canary{Spec: v1alpha1.CanarySpec{Analysis: out}}).GetStepWeights()
	field := path + ".stepWeight"
	if len(out.StepWeights) > 0 {
		field = path + ".stepWeights"
	}
	c.report.drop(field, "traffic weights need routing.provider gatewayapi: converted to %d blue/green "+
		"iterations of routing.provider kubernetes", len(steps))
	out.Iterations = len(steps)
	out.StepWeight, out.StepWeights, out.MaxWeight, out.StepWeightPromotion = 0, nil, 0, 0
}

// dropGatewaySettings reports the settings of a Gateway that kubernetes
// routing has no use for; refs tells whether to report the gatewayRefs
// too (not when each was reported already).
func (c canaryConverter) dropGatewaySettings(refs bool) {
	service := c.in.Spec.Service
	if refs && len(service.GatewayRefs) > 0 {
		c.report.drop("spec.service.gatewayRefs", "used only with routing.provider gatewayapi")
	}
	if len(service.Hosts) > 0 {
		c.report.drop("spec.service.hosts", "used only with routing.provider gatewayapi, as the HTTPRoute's hostnames")
	}
}

// gatewayRefs maps Flagger's parentRefs: Gateways, and the Services of a
// mesh that routes east-west traffic by HTTPRoutes (GAMMA).
func (c canaryConverter) gatewayRefs() []v1alpha1.GatewayReference {
	refs := c.in.Spec.Service.GatewayRefs
	if len(refs) == 0 {
		c.report.drop("spec.service.gatewayRefs", "missing: routing.provider gatewayapi needs at least one Gateway in routing.gatewayRefs")
	}
	var out []v1alpha1.GatewayReference
	for i, ref := range refs {
		group, kind := valueOf(ref.Group), valueOf(ref.Kind)
		var parent v1alpha1.ParentKind // a Gateway, the default
		switch {
		case (ref.Group == nil || group == gatewayAPIGroup) && (ref.Kind == nil || kind == "Gateway"):
		case (group == "" || group == "core") && kind == "Service":
			parent = v1alpha1.ServiceParent
		default:
			c.report.drop(fmt.Sprintf("spec.service.gatewayRefs[%d]", i), "only Gateways of %s and core Services (GAMMA) can be "+
				"parents; the reference was left out", gatewayAPIGroup)
			continue
		}
		out = append(out, v1alpha1.GatewayReference{
			Kind:        parent,
			Name:        ref.Name,
			Namespace:   valueOf(ref.Namespace),
			SectionName: valueOf(ref.SectionName),
			Port:        ref.Port,
		})
	}
	return out
}

func valueOf(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
