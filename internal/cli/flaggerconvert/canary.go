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
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// canaryManifest is a serin Canary as written by convert: no status, no
// server-side metadata.
type canaryManifest struct {
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"`
	Metadata   manifestMetadata    `json:"metadata"`
	Spec       v1alpha1.CanarySpec `json:"spec"`
}

func (r *Result) convertCanary(jsonDocument []byte) error {
	var in flaggerCanary
	strictErrors, err := decodeStrict(jsonDocument, &in)
	if err != nil {
		return err
	}
	if in.Spec.Provider == "" {
		// As Flagger did: its -mesh-provider flag.
		in.Spec.Provider = r.opts.MeshProvider
	}
	converter := canaryConverter{in: &in, report: newObjectReport(in.Kind, in.Metadata), opts: r.opts,
		ingresses: r.ingresses, apisixRoutes: r.apisixRoutes, templates: r.templates, alertProviders: r.alertProviders,
		generated: &[]Manifest{}}
	converter.report.dropUnknown(strictErrors)
	spec, ok := converter.convert()
	r.Dropped = append(r.Dropped, converter.report.dropped...)
	r.Notes = append(r.Notes, converter.report.notes...)
	if ok {
		r.Manifests = append(r.Manifests, Manifest{Kind: v1alpha1.CanaryKind, Converted: true, Ref: converter.report.object, Object: canaryManifest{
			APIVersion: v1alpha1.GroupVersion.String(),
			Kind:       v1alpha1.CanaryKind,
			Metadata:   convertMetadata(in.Metadata),
			Spec:       spec,
		}})
		r.Manifests = append(r.Manifests, *converter.generated...)
	}
	return nil
}

// canaryConverter converts one Flagger Canary and reports what it drops.
type canaryConverter struct {
	in           *flaggerCanary
	report       *objectReport
	opts         Options
	ingresses    map[string]*networkingv1.Ingress
	apisixRoutes map[string]*apisixRoute
	templates    map[string]bool
	// alertProviders are the input's Flagger AlertProviders.
	alertProviders map[string]bool
	// generated are the objects the Canary needs that Flagger did not
	// have: MetricTemplates of its inline queries.
	generated *[]Manifest
}

// convert returns the serin spec, or false when the Canary cannot be
// converted at all.
func (c canaryConverter) convert() (v1alpha1.CanarySpec, bool) {
	spec := c.in.Spec
	target, ok := c.targetRef()
	if !ok {
		return v1alpha1.CanarySpec{}, false
	}
	provider := c.routingProvider()
	if target.Kind == "DaemonSet" && provider != v1alpha1.KubernetesRouting {
		c.report.drop("spec.provider", "a DaemonSet target is rolled out blue/green through the apex Service in serin "+
			"(routing.provider kubernetes, analysis.iterations): converted to kubernetes")
		provider = v1alpha1.KubernetesRouting
	}
	out := v1alpha1.CanarySpec{
		TargetRef:               target,
		AutoscalerRef:           c.autoscalerRef(),
		ProgressDeadlineSeconds: spec.ProgressDeadlineSeconds,
		Service:                 c.service(),
		SkipAnalysis:            spec.SkipAnalysis,
		Suspend:                 spec.Suspend,
		RevertOnDeletion:        spec.RevertOnDeletion,
	}
	c.dropProviderSettings()
	c.destinationRules()
	analysis, path := c.chooseAnalysis()
	out.Analysis = c.analysis(analysis, path)
	out.Alerts = c.alerts(analysis, path)
	out.Routing = c.routing(provider, analysis, path, out.Analysis)
	if target.Kind == "Service" && out.Routing.Provider != v1alpha1.GatewayAPIRouting {
		// The kubernetes router switches the apex Service, which a Service
		// target is.
		c.report.drop("spec.targetRef", "a Service target needs routing.provider gatewayapi, with a Gateway, "+
			"and this Canary converts to kubernetes (blue/green): the Canary was left out")
		return v1alpha1.CanarySpec{}, false
	}
	out.Routing.DataPlane = c.dataPlane(out.Analysis)
	return out, true
}

func (c canaryConverter) targetRef() (v1alpha1.TargetReference, bool) {
	ref := c.in.Spec.TargetRef
	switch ref.Kind {
	case "Deployment", "":
		return v1alpha1.TargetReference{APIVersion: "apps/v1", Kind: v1alpha1.DeploymentKind, Name: ref.Name}, true
	case "DaemonSet":
		if ref.APIVersion == "" || ref.APIVersion == "apps/v1" {
			return v1alpha1.TargetReference{APIVersion: "apps/v1", Kind: v1alpha1.DaemonSetKind, Name: ref.Name}, true
		}
	case "Service":
		if ref.APIVersion == "" || ref.APIVersion == "v1" {
			return v1alpha1.TargetReference{APIVersion: "v1", Kind: v1alpha1.ServiceKind, Name: ref.Name}, true
		}
	}
	kind := ref.Kind
	if ref.APIVersion != "" {
		kind = ref.APIVersion + " " + ref.Kind
	}
	c.report.drop("spec.targetRef", "%s is not supported: serin rolls out Deployments and DaemonSets (apps/v1) and Services (v1); "+
		"the Canary was left out", kind)
	return v1alpha1.TargetReference{}, false
}

func (c canaryConverter) autoscalerRef() *v1alpha1.AutoscalerReference {
	ref := c.in.Spec.AutoscalerRef
	if ref == nil {
		return nil
	}
	if c.in.Spec.TargetRef.Kind == "DaemonSet" {
		c.report.drop("spec.autoscalerRef", "a DaemonSet runs one pod per node and has no replicas to scale")
		return nil
	}
	out := &v1alpha1.AutoscalerReference{Name: ref.Name}
	switch ref.Kind {
	case v1alpha1.HorizontalPodAutoscalerKind:
		out.APIVersion, out.Kind = "autoscaling/v2", v1alpha1.HorizontalPodAutoscalerKind
		if len(ref.PrimaryScalerQueries) > 0 {
			c.report.drop("spec.autoscalerRef.primaryScalerQueries", "the queries of a ScaledObject's triggers: a HorizontalPodAutoscaler has none")
		}
	case v1alpha1.ScaledObjectKind:
		out.APIVersion, out.Kind = "keda.sh/v1alpha1", v1alpha1.ScaledObjectKind
		out.PrimaryScalerQueries = ref.PrimaryScalerQueries
	default:
		c.report.drop("spec.autoscalerRef", "%s is not supported: serin copies HorizontalPodAutoscalers and KEDA ScaledObjects", ref.Kind)
		return nil
	}
	if r := ref.PrimaryScalerReplicas; r != nil && (r.MinReplicas != nil || r.MaxReplicas != nil) {
		out.PrimaryScalerReplicas = r.DeepCopy()
	}
	return out
}

// dropProviderSettings reports the settings of routing providers and metric
// servers serin does not have.
func (c canaryConverter) dropProviderSettings() {
	spec := c.in.Spec
	if spec.MetricsServer != "" {
		c.report.drop("spec.metricsServer", "serin has no metrics server per Canary: the built-in checks query the agent's --metrics-server, MetricTemplates their own address")
	}
	switch {
	case present(spec.IngressRef) && c.ingressToGateway() && c.ingress() != nil:
		// Its hosts and paths become the HTTPRoute's (routing).
	case present(spec.IngressRef) && c.ingressToGateway():
		c.report.drop("spec.ingressRef", "the Ingress %s/%s, whose hosts and paths Flagger copied to its canary Ingress, is not in the input: "+
			"the HTTPRoute takes them from routing.hosts and routing.match; set those from the Ingress, or convert it with the Canary "+
			"(serin convert -f DIRECTORY reads every file of a folder)", c.in.Metadata.Namespace, refName(spec.IngressRef))
	case present(spec.IngressRef):
		c.report.drop("spec.ingressRef", "NGINX ingress routing is not supported: serin routes with gatewayapi or kubernetes")
	}
	switch {
	case present(spec.RouteRef) && c.ingressToGateway() && c.apisixRouteOf() != nil:
		// Its hosts and paths become the HTTPRoute's (routing).
	case present(spec.RouteRef) && c.ingressToGateway():
		c.report.drop("spec.routeRef", "the ApisixRoute %s/%s, whose hosts and paths Flagger copied to its canary route, is not in the input: "+
			"the HTTPRoute takes them from routing.hosts and routing.match; set those from the ApisixRoute, or convert it with the Canary "+
			"(serin convert -f DIRECTORY reads every file of a folder)", c.in.Metadata.Namespace, refName(spec.RouteRef))
	case present(spec.RouteRef):
		c.report.drop("spec.routeRef", "APISIX routing is not supported: serin routes with gatewayapi or kubernetes")
	}
	if present(spec.UpstreamRef) {
		c.report.drop("spec.upstreamRef", "Gloo upstreams are not supported: serin routes with gatewayapi or kubernetes")
	}
}

// chooseAnalysis picks spec.analysis, or the deprecated spec.canaryAnalysis
// as Flagger does when analysis is not set.
func (c canaryConverter) chooseAnalysis() (*flaggerAnalysis, string) {
	spec := c.in.Spec
	if spec.Analysis == nil {
		return spec.CanaryAnalysis, "spec.canaryAnalysis"
	}
	if spec.CanaryAnalysis != nil {
		c.report.drop("spec.canaryAnalysis", "deprecated and ignored by Flagger when spec.analysis is set")
	}
	return spec.Analysis, "spec.analysis"
}

func (c canaryConverter) service() v1alpha1.CanaryService {
	s := c.in.Spec.Service
	c.dropServiceMeshSettings()
	return v1alpha1.CanaryService{
		Name:          s.Name,
		Port:          s.Port,
		PortName:      s.PortName,
		TargetPort:    s.TargetPort,
		AppProtocol:   s.AppProtocol,
		PortDiscovery: s.PortDiscovery,
		Apex:          s.Apex.convert(),
		Primary:       s.Primary.convert(),
		Canary:        s.Canary.convert(),
	}
}

// convert is Flagger's CustomMetadata as serin's, field for field.
func (m *flaggerMetadata) convert() *v1alpha1.CustomMetadata {
	if m == nil || (len(m.Labels) == 0 && len(m.Annotations) == 0) {
		return nil
	}
	return &v1alpha1.CustomMetadata{Labels: m.Labels, Annotations: m.Annotations}
}

// dropServiceMeshSettings reports the spec.service fields that configure a
// service mesh, or the generated Services in ways serin does not. The
// HTTPRoute's settings are routing's (routeSettings).
func (c canaryConverter) dropServiceMeshSettings() {
	s := c.in.Spec.Service
	unsupported := []struct {
		field  string
		isSet  bool
		reason string
	}{
		{"gateways", len(c.ingressGateways()) > 0 && !c.ingressGatewaysToGateway(), "Istio gateways are not supported: serin attaches its " +
			"HTTPRoute to the Gateways of routing.gatewayRefs (--gateway names the Gateway API Gateway that takes over from them)"},
		{"delegation", s.Delegation, "Istio VirtualService delegation is not supported"},
		{"meshName", s.MeshName != "", "App Mesh is not supported"},
		{"backends", len(s.Backends) > 0, "App Mesh is not supported"},
	}
	for _, u := range unsupported {
		if u.isSet {
			c.report.drop("spec.service."+u.field, "%s", u.reason)
		}
	}
}
