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
	"bytes"
	"fmt"
	notificationv1 "github.com/fluxcd/notification-controller/api/v1beta3"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/serin-dev/serin/api/v1alpha1"
)

func duration(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

// TestEverythingIsAccountedFor converts a Canary that sets every Flagger
// field: each field is either in the serin Canary or in the report, exactly
// once.
func TestEverythingIsAccountedFor(t *testing.T) {
	input, err := os.ReadFile(filepath.Join("testdata", "everything.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	result, err := Convert(input)
	if err != nil {
		t.Fatal(err)
	}
	// The unknown field comes first, from the strict decoding; then the
	// fields in the order the conversion reads them. gatewayapi:v1 maps to
	// gatewayapi, its built-in check to the pods' own metrics (data plane
	// application), which Flagger's gatewayapi provider queries.
	wantDropped := []string{
		"spec.service.loadBalancer",
		"spec.autoscalerRef.primaryScalerQueries",
		"spec.service.gateways", "spec.service.delegation",
		"spec.service.meshName", "spec.service.backends",
		"spec.metricsServer", "spec.ingressRef", "spec.routeRef", "spec.upstreamRef",
		"spec.canaryAnalysis",
		"spec.analysis.stepWeight",
		"spec.analysis.match", "spec.analysis.mirror", "spec.analysis.mirrorWeight",
		"spec.analysis.metrics[0].query",
		"spec.analysis.webhooks[0].muteAlert", "spec.analysis.webhooks[2].type",
		"spec.service.gatewayRefs[1]",
	}
	var gotDropped []string
	for _, d := range result.Dropped {
		if d.Object != "Canary apps/everything" {
			t.Errorf("dropped field of %q, want Canary apps/everything", d.Object)
		}
		gotDropped = append(gotDropped, d.Field)
	}
	if diff := cmp.Diff(wantDropped, gotDropped); diff != "" {
		t.Errorf("dropped fields differ (-want +got):\n%s", diff)
	}

	// The Canary, and the MetricTemplate of its inline query, querying
	// its spec.metricsServer. Its trafficPolicy, which Flagger applies with
	// its istio provider only, is noted and left out.
	if len(result.Manifests) != 2 {
		t.Fatalf("got %d manifests, want 2", len(result.Manifests))
	}
	if notes := fmt.Sprint(result.Notes); !strings.Contains(notes, "spec.service.trafficPolicy: Flagger applies it with its istio provider only") {
		t.Errorf("notes %s, want the trafficPolicy's", notes)
	}
	wantTemplate := metricTemplateManifest{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.MetricTemplateKind,
		Metadata: manifestMetadata{Name: "everything-inline", Namespace: "apps"},
		Spec: v1alpha1.MetricTemplateSpec{Provider: v1alpha1.MetricProvider{Type: v1alpha1.PrometheusProvider, Address: "http://prometheus.monitoring:9090"},
			Query: "sum(up)"}}
	if diff := cmp.Diff(wantTemplate, result.Manifests[1].Object); diff != "" {
		t.Errorf("generated MetricTemplate differs (-want +got):\n%s", diff)
	}
	got := result.Manifests[0].Object.(canaryManifest)
	wantMetadata := manifestMetadata{Name: "everything", Namespace: "apps",
		Labels: map[string]string{"team": "web"}, Annotations: map[string]string{"owner": "web-team"}}
	if diff := cmp.Diff(wantMetadata, got.Metadata); diff != "" {
		t.Errorf("metadata differs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(everythingSpec(), got.Spec); diff != "" {
		t.Errorf("spec differs (-want +got):\n%s", diff)
	}
}

func everythingSpec() v1alpha1.CanarySpec {
	return v1alpha1.CanarySpec{
		TargetRef: v1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "everything"},
		AutoscalerRef: &v1alpha1.AutoscalerReference{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Name: "everything",
			PrimaryScalerReplicas: &v1alpha1.ScalerReplicas{MinReplicas: ptr.To[int32](2), MaxReplicas: ptr.To[int32](4)}},
		ProgressDeadlineSeconds: ptr.To[int32](120),
		Service: v1alpha1.CanaryService{Name: "everything-svc", Port: 80, PortName: "web",
			TargetPort: ptr.To(intstr.FromInt32(8080)), AppProtocol: "http", PortDiscovery: true,
			Apex:    &v1alpha1.CustomMetadata{Labels: map[string]string{"tier": "apex"}},
			Primary: &v1alpha1.CustomMetadata{Annotations: map[string]string{"tier": "primary"}},
			Canary:  &v1alpha1.CustomMetadata{Labels: map[string]string{"tier": "canary"}}},
		Routing: v1alpha1.CanaryRouting{
			Provider:       v1alpha1.GatewayAPIRouting,
			GatewayRefs:    []v1alpha1.GatewayReference{{Name: "public", Namespace: "gateways", SectionName: "https", Port: ptr.To(int32(443))}},
			Hosts:          []string{"app.example.com"},
			DataPlane:      v1alpha1.ApplicationDataPlane,
			Match:          []v1alpha1.HTTPRouteMatch{{Path: &v1alpha1.HTTPPathMatch{Type: "PathPrefix", Value: "/api"}}},
			Timeout:        "30s",
			BackendTimeout: "1s",
			Retries:        &v1alpha1.HTTPRouteRetry{Attempts: ptr.To[int32](3)},
			Headers: &v1alpha1.HTTPHeaderModifiers{Request: &v1alpha1.HTTPHeaderFilter{
				Add: []v1alpha1.HTTPHeader{{Name: "x-canary", Value: "true"}}}},
			Rewrite:    &v1alpha1.HTTPURLRewrite{Path: &v1alpha1.HTTPPathModifier{Type: "ReplaceFullPath", ReplaceFullPath: ptr.To("/")}},
			CorsPolicy: &v1alpha1.HTTPCORSFilter{AllowOrigins: []string{"https://example.com"}},
		},
		Analysis: &v1alpha1.CanaryAnalysis{
			Interval:              duration(45 * time.Second),
			Threshold:             4,
			StepWeights:           []int{10, 30, 60},
			MaxWeight:             60,
			StepWeightPromotion:   20,
			PrimaryReadyThreshold: ptr.To(50),
			CanaryReadyThreshold:  ptr.To(80),
			SessionAffinity:       &v1alpha1.SessionAffinity{CookieName: "flagger-cookie", MaxAge: 60},
			Metrics: []v1alpha1.CanaryMetric{
				{Name: "templated", TemplateRef: &v1alpha1.TemplateReference{Name: "errors", Namespace: "monitoring"},
					TemplateVariables: map[string]string{"route": "/api"}, Interval: duration(2 * time.Minute),
					ThresholdRange: &v1alpha1.ThresholdRange{Min: ptr.To(1.0), Max: ptr.To(2.0)}},
				{Name: "request-success-rate", Interval: duration(time.Minute),
					ThresholdRange: &v1alpha1.ThresholdRange{Min: ptr.To(99.0)}},
				{Name: "inline", TemplateRef: &v1alpha1.TemplateReference{Name: "everything-inline"}, Interval: duration(time.Minute)},
				{Name: "default-interval", TemplateRef: &v1alpha1.TemplateReference{Name: "latency"},
					Interval: duration(time.Minute)},
			},
			Webhooks: []v1alpha1.CanaryWebhook{
				{Name: "gate", Type: v1alpha1.ConfirmRolloutHook, URL: "http://gate.example/",
					Timeout: duration(10 * time.Second), Retries: 2, Metadata: map[string]string{"key": "value"}},
				{Name: "load-test", Type: v1alpha1.RolloutHook, URL: "http://load.example/"},
			},
		},
		Alerts: []v1alpha1.CanaryAlert{{Name: "on-call", Severity: "error",
			ProviderRef: meta.NamespacedObjectReference{Name: "on-call", Namespace: "flagger"}}},
		SkipAnalysis:     true,
		Suspend:          true,
		RevertOnDeletion: true,
	}
}

// TestConvert covers the mapping rules one at a time.
func TestConvert(t *testing.T) {
	tests := map[string]struct {
		input       string
		wantDropped []string
		wantSpec    *v1alpha1.CanarySpec
		wantKinds   []string
	}{
		"blue/green with kubernetes; Flagger's default threshold": {
			input:     canaryYAML("provider: kubernetes", "analysis: {iterations: 5}"),
			wantSpec:  spec(kubernetes(), &v1alpha1.CanaryAnalysis{Iterations: 5, Threshold: 1}),
			wantKinds: []string{"Canary"},
		},
		"gatewayapi weights: Flagger's default max weight": {
			input: canaryYAML("provider: gatewayapi:v1beta1",
				"service: {port: 9898, gatewayRefs: [{name: public}]}", "analysis: {stepWeight: 20, threshold: 2}"),
			wantSpec: spec(gatewayAPI("public"), &v1alpha1.CanaryAnalysis{StepWeight: 20, MaxWeight: 100, Threshold: 2}),
		},
		"gatewayapi blue/green stays on the HTTPRoute": {
			input: canaryYAML("provider: gatewayapi:v1",
				"service: {port: 9898, gatewayRefs: [{name: public}], hosts: [a.example]}",
				"analysis: {iterations: 3, stepWeight: 10, threshold: 2}"),
			wantDropped: []string{"spec.analysis.stepWeight"},
			wantSpec: spec(v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: []v1alpha1.GatewayReference{{Name: "public"}}, Hosts: []string{"a.example"}},
				&v1alpha1.CanaryAnalysis{Iterations: 3, Threshold: 2}),
		},
		"gatewayapi blue/green, mirrored": {
			input: canaryYAML("provider: gatewayapi:v1", "service: {port: 9898, gatewayRefs: [{name: public}]}",
				"analysis: {iterations: 3, mirror: true, mirrorWeight: 50, threshold: 2}"),
			wantSpec: spec(gatewayAPI("public"), &v1alpha1.CanaryAnalysis{Iterations: 3, Mirror: true, MirrorWeight: ptr.To(int32(50)), Threshold: 2}),
		},
		"gatewayapi service.mirror: the route's mirrors": {
			input: canaryYAML("provider: gatewayapi:v1", "service: {port: 9898, gatewayRefs: [{name: public}], mirror: ["+
				"{backendRef: {name: shadow, port: 80}}, {backendRef: {name: recorder, namespace: apps, kind: Service, port: 8080}}, "+
				"{backendRef: {name: elsewhere, namespace: other, port: 80}}, {backendRef: {name: noport}}, "+
				"{backendRef: {name: bucket, group: example.com, kind: Bucket}}, {backendRef: {name: podinfo-canary, port: 9898}}]}",
				"analysis: {stepWeight: 10, maxWeight: 20, threshold: 2}"),
			wantDropped: []string{"spec.service.mirror[2]", "spec.service.mirror[3]", "spec.service.mirror[4]", "spec.service.mirror[5]"},
			wantSpec: spec(func() v1alpha1.CanaryRouting {
				r := gatewayAPI("public")
				r.Mirrors = []v1alpha1.RouteMirror{{Name: "shadow", Port: 80}, {Name: "recorder", Port: 8080}}
				return r
			}(), &v1alpha1.CanaryAnalysis{StepWeight: 10, MaxWeight: 20, Threshold: 2}),
		},
		"service.mirror on Istio, whose router ignores it": {
			input: canaryYAML("provider: istio", "service: {port: 9898, mirror: [{backendRef: {name: shadow, port: 80}}]}",
				"analysis: {stepWeight: 10, maxWeight: 20, threshold: 2}"),
			wantDropped: []string{"spec.service.mirror"},
			wantSpec: spec(v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting,
				GatewayRefs: []v1alpha1.GatewayReference{{Kind: v1alpha1.ServiceParent, Name: "podinfo", Port: ptr.To(int32(9898))}}},
				&v1alpha1.CanaryAnalysis{StepWeight: 10, MaxWeight: 20, Threshold: 2}),
		},
		"a mirrored share is left out with the mirror, on the kubernetes router": {
			input:       canaryYAML("provider: kubernetes", "analysis: {iterations: 3, mirror: true, mirrorWeight: 50, threshold: 2}"),
			wantDropped: []string{"spec.analysis.mirror", "spec.analysis.mirrorWeight"},
			wantSpec:    spec(kubernetes(), &v1alpha1.CanaryAnalysis{Iterations: 3, Threshold: 2}),
		},
		"a mirrored share above 100 %": {
			input: canaryYAML("provider: gatewayapi:v1", "service: {port: 9898, gatewayRefs: [{name: public}]}",
				"analysis: {iterations: 3, mirror: true, mirrorWeight: 150, threshold: 2}"),
			wantDropped: []string{"spec.analysis.mirrorWeight"},
			wantSpec:    spec(gatewayAPI("public"), &v1alpha1.CanaryAnalysis{Iterations: 3, Mirror: true, Threshold: 2}),
		},
		"session affinity with blue/green is left out": {
			input:       canaryYAML("provider: kubernetes", "analysis: {iterations: 3, threshold: 2, sessionAffinity: {cookieName: canary}}"),
			wantDropped: []string{"spec.analysis.sessionAffinity"},
			wantSpec:    spec(kubernetes(), &v1alpha1.CanaryAnalysis{Iterations: 3, Threshold: 2}),
		},
		"session affinity with weights on an ingress is left out": {
			input:       canaryYAML("provider: nginx", "analysis: {stepWeight: 10, maxWeight: 20, threshold: 2, sessionAffinity: {cookieName: canary}}"),
			wantDropped: []string{"spec.provider", "spec.analysis.sessionAffinity", "spec.analysis.stepWeight"},
			wantSpec:    spec(kubernetes(), &v1alpha1.CanaryAnalysis{Iterations: 2, Threshold: 2}),
		},
		"a mirror with kubernetes is left out": {
			input:       canaryYAML("provider: kubernetes", "analysis: {iterations: 3, mirror: true, threshold: 2}"),
			wantDropped: []string{"spec.analysis.mirror"},
			wantSpec:    spec(kubernetes(), &v1alpha1.CanaryAnalysis{Iterations: 3, Threshold: 2}),
		},
		"a mirror with weights is left out": {
			input: canaryYAML("provider: gatewayapi:v1", "service: {port: 9898, gatewayRefs: [{name: public}]}",
				"analysis: {stepWeight: 20, mirror: true, threshold: 2}"),
			wantDropped: []string{"spec.analysis.mirror"},
			wantSpec:    spec(gatewayAPI("public"), &v1alpha1.CanaryAnalysis{StepWeight: 20, MaxWeight: 100, Threshold: 2}),
		},
		"an A/B test on gatewayapi: headers, cookie and query parameters": {
			input: canaryYAML("provider: gatewayapi:v1", "service: {port: 9898, gatewayRefs: [{name: public}]}",
				"analysis: {iterations: 10, threshold: 2, match: [{headers: {x-canary: {exact: insider}}}, "+
					"{headers: {cookie: {regex: '^(.*?;)?(canary=always)(;.*)?$'}}, uri: {prefix: /api}}, {queryParams: {beta: {exact: '1'}}}]}"),
			wantDropped: []string{"spec.analysis.match[1].uri"},
			wantSpec: spec(gatewayAPI("public"), &v1alpha1.CanaryAnalysis{Iterations: 10, Threshold: 2, Match: []v1alpha1.AnalysisMatch{
				{Headers: []v1alpha1.HTTPHeaderMatch{{Type: "Exact", Name: "x-canary", Value: "insider"}}},
				{Headers: []v1alpha1.HTTPHeaderMatch{{Type: "RegularExpression", Name: "cookie", Value: "^(.*?;)?(canary=always)(;.*)?$"}}},
				{QueryParams: []v1alpha1.HTTPQueryParamMatch{{Type: "Exact", Name: "beta", Value: "1"}}},
			}}),
		},
		"an A/B test without a Gateway becomes blue/green": {
			input:       canaryYAML("provider: kubernetes", "analysis: {iterations: 4, threshold: 2, match: [{headers: {x-canary: {exact: insider}}}]}"),
			wantDropped: []string{"spec.analysis.match"},
			wantSpec:    spec(kubernetes(), &v1alpha1.CanaryAnalysis{Iterations: 4, Threshold: 2}),
		},
		"a match without iterations is left out": {
			input: canaryYAML("provider: gatewayapi:v1", "service: {port: 9898, gatewayRefs: [{name: public}]}",
				"analysis: {stepWeight: 20, threshold: 2, match: [{headers: {x-canary: {exact: insider}}}]}"),
			wantDropped: []string{"spec.analysis.match"},
			wantSpec:    spec(gatewayAPI("public"), &v1alpha1.CanaryAnalysis{StepWeight: 20, MaxWeight: 100, Threshold: 2}),
		},
		"weights with kubernetes become iterations": {
			input:       canaryYAML("provider: kubernetes", "analysis: {stepWeights: [5, 25, 50], threshold: 2}"),
			wantDropped: []string{"spec.analysis.stepWeights"},
			wantSpec:    spec(kubernetes(), &v1alpha1.CanaryAnalysis{Iterations: 3, Threshold: 2}),
		},
		"no provider, with gatewayRefs": {
			input:       canaryYAML("service: {port: 9898, gatewayRefs: [{name: public}]}", "analysis: {stepWeight: 10, maxWeight: 30, threshold: 2}"),
			wantDropped: []string{"spec.provider"},
			wantSpec:    spec(gatewayAPI("public"), &v1alpha1.CanaryAnalysis{StepWeight: 10, MaxWeight: 30, Threshold: 2}),
		},
		"no provider, no gateway": {
			input:       canaryYAML("analysis: {iterations: 2, threshold: 2}"),
			wantDropped: []string{"spec.provider"},
			wantSpec:    spec(kubernetes(), &v1alpha1.CanaryAnalysis{Iterations: 2, Threshold: 2}),
		},
		// Without a Gateway to attach to, the API server would refuse the
		// Canary: it becomes blue/green, its weights iterations.
		"gatewayapi without Gateways": {
			input:       canaryYAML("provider: gatewayapi:v1", "analysis: {stepWeight: 10, maxWeight: 20, threshold: 2}"),
			wantDropped: []string{"spec.service.gatewayRefs", "spec.provider", "spec.analysis.stepWeight"},
			wantSpec:    spec(kubernetes(), &v1alpha1.CanaryAnalysis{Iterations: 2, Threshold: 2}),
		},
		"gatewayapi with a mesh's Service parent (GAMMA)": {
			input: canaryYAML("provider: gatewayapi:v1", "service: {port: 9898, gatewayRefs: [{name: podinfo, kind: Service, group: core, port: 9898}]}",
				"analysis: {stepWeight: 10, maxWeight: 20, threshold: 2}"),
			wantSpec: spec(v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: []v1alpha1.GatewayReference{
				{Kind: v1alpha1.ServiceParent, Name: "podinfo", Port: ptr.To(int32(9898))}}}, &v1alpha1.CanaryAnalysis{StepWeight: 10, MaxWeight: 20, Threshold: 2}),
		},
		"gatewayapi with no parent serin can attach to": {
			input: canaryYAML("provider: gatewayapi:v1", "service: {port: 9898, hosts: [app.example], gatewayRefs: [{name: mesh, kind: Mesh, group: example.io}]}",
				"analysis: {stepWeight: 10, maxWeight: 20, threshold: 2}"),
			wantDropped: []string{"spec.service.gatewayRefs[0]", "spec.provider", "spec.analysis.stepWeight", "spec.service.hosts"},
			wantSpec:    spec(kubernetes(), &v1alpha1.CanaryAnalysis{Iterations: 2, Threshold: 2}),
		},
		"Service target": {
			input: canaryYAML("provider: gatewayapi:v1", "targetRef: {apiVersion: v1, kind: Service, name: podinfo}",
				"service: {port: 9898, gatewayRefs: [{name: public}]}"),
			wantSpec:  serviceTargetSpec(),
			wantKinds: []string{"Canary"},
		},
		// The kubernetes router switches the apex Service, which a Service
		// target is: the API server would refuse it.
		"Service target without a Gateway is left out": {
			input:       canaryYAML("provider: kubernetes", "targetRef: {apiVersion: v1, kind: Service, name: podinfo}"),
			wantDropped: []string{"spec.targetRef"},
			wantKinds:   []string{},
		},
		"DaemonSet target, blue/green": {
			input:     canaryYAML("provider: kubernetes", "targetRef: {apiVersion: apps/v1, kind: DaemonSet, name: podinfo}", "analysis: {iterations: 3, threshold: 2}"),
			wantSpec:  daemonSetTargetSpec(&v1alpha1.CanaryAnalysis{Iterations: 3, Threshold: 2}),
			wantKinds: []string{"Canary"},
		},
		// serin rolls a DaemonSet out blue/green only (its API refuses
		// weights for it): a mesh's weights become iterations, an
		// autoscaler has nothing to scale.
		"DaemonSet target with a mesh's weights and an autoscaler": {
			input: canaryYAML("provider: istio", "targetRef: {apiVersion: apps/v1, kind: DaemonSet, name: podinfo}",
				"autoscalerRef: {apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, name: podinfo}",
				"analysis: {stepWeight: 10, maxWeight: 30, threshold: 2}"),
			wantDropped: []string{"spec.provider", "spec.autoscalerRef", "spec.analysis.stepWeight"},
			wantSpec:    daemonSetTargetSpec(&v1alpha1.CanaryAnalysis{Iterations: 3, Threshold: 2}),
			wantKinds:   []string{"Canary"},
		},
		"DaemonSet of another API is left out": {
			input:       canaryYAML("provider: kubernetes", "targetRef: {apiVersion: extensions/v1beta1, kind: DaemonSet, name: podinfo}"),
			wantDropped: []string{"spec.targetRef"},
			wantKinds:   []string{},
		},
		"Knative Service target is left out": {
			input:       canaryYAML("provider: knative", "targetRef: {apiVersion: serving.knative.dev/v1, kind: Service, name: podinfo}"),
			wantDropped: []string{"spec.targetRef"},
			wantKinds:   []string{},
		},
		"invalid durations are dropped": {
			input:       canaryYAML("provider: kubernetes", "analysis: {interval: soon, iterations: 2, threshold: 2, webhooks: [{name: w, url: 'http://w', timeout: 5x}]}"),
			wantDropped: []string{"spec.analysis.interval", "spec.analysis.webhooks[0].timeout"},
			wantSpec: spec(kubernetes(), &v1alpha1.CanaryAnalysis{Iterations: 2, Threshold: 2,
				Webhooks: []v1alpha1.CanaryWebhook{{Name: "w", Type: v1alpha1.RolloutHook, URL: "http://w"}}}),
		},
		"values past serin's bounds are brought within them": {
			input: canaryYAML("provider: kubernetes", "analysis: {interval: 500ms, iterations: 5000, threshold: 2000, "+
				"metrics: [{name: errors, templateRef: {name: errors}, interval: 48h, thresholdRange: {max: 1}}], "+
				"webhooks: [{name: slow, type: confirm-promotion, url: 'http://w', timeout: 1m, retries: 10}, {name: zero, url: 'http://w', timeout: 0s}]}"),
			wantDropped: []string{"spec.analysis.interval", "spec.analysis.threshold", "spec.analysis.iterations",
				"spec.analysis.metrics[0].interval",
				"spec.analysis.webhooks[0].timeout", "spec.analysis.webhooks[0].retries", "spec.analysis.webhooks[1].timeout"},
			wantSpec: spec(kubernetes(), &v1alpha1.CanaryAnalysis{Interval: duration(time.Second), Iterations: 1000, Threshold: 1000,
				Metrics: []v1alpha1.CanaryMetric{{Name: "errors", TemplateRef: &v1alpha1.TemplateReference{Name: "errors"},
					Interval: duration(24 * time.Hour), ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(1.0)}}},
				Webhooks: []v1alpha1.CanaryWebhook{
					{Name: "slow", Type: v1alpha1.ConfirmPromotionHook, URL: "http://w", Timeout: duration(30 * time.Second), Retries: 3},
					{Name: "zero", Type: v1alpha1.RolloutHook, URL: "http://w"},
				}}),
		},
		"values at serin's bounds are kept": {
			input: canaryYAML("provider: kubernetes", "analysis: {interval: 24h, iterations: 1000, threshold: 1000, "+
				"metrics: [{name: errors, templateRef: {name: errors}, interval: 1s, thresholdRange: {max: 1}}], "+
				"webhooks: [{name: w, url: 'http://w', timeout: 30m, retries: 3}, {name: gate, type: confirm-rollout, url: 'http://w', timeout: 30s}]}"),
			wantSpec: spec(kubernetes(), &v1alpha1.CanaryAnalysis{Interval: duration(24 * time.Hour), Iterations: 1000, Threshold: 1000,
				Metrics: []v1alpha1.CanaryMetric{{Name: "errors", TemplateRef: &v1alpha1.TemplateReference{Name: "errors"},
					Interval: duration(time.Second), ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(1.0)}}},
				Webhooks: []v1alpha1.CanaryWebhook{{Name: "w", Type: v1alpha1.RolloutHook, URL: "http://w", Timeout: duration(30 * time.Minute), Retries: 3},
					{Name: "gate", Type: v1alpha1.ConfirmRolloutHook, URL: "http://w", Timeout: duration(30 * time.Second)}}}),
		},
		"built-in checks on Istio": {
			input: canaryYAML("provider: istio", "analysis: {iterations: 2, threshold: 2, metrics: ["+
				"{name: request-success-rate, interval: 1m, thresholdRange: {min: 99}}, "+
				"{name: request-duration, interval: 30s, thresholdRange: {max: 500}}]}"),
			// Blue/green on the apex Service's HTTPRoute (GAMMA), a note.
			wantSpec: spec(v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, DataPlane: v1alpha1.IstioDataPlane,
				GatewayRefs: []v1alpha1.GatewayReference{{Kind: v1alpha1.ServiceParent, Name: "podinfo", Port: ptr.To(int32(9898))}}},
				&v1alpha1.CanaryAnalysis{Iterations: 2, Threshold: 2, Metrics: []v1alpha1.CanaryMetric{
					{Name: "request-success-rate", Interval: duration(time.Minute), ThresholdRange: &v1alpha1.ThresholdRange{Min: ptr.To(99.0)}},
					{Name: "request-duration", Interval: duration(30 * time.Second), ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(500.0)}},
				}}),
		},
		"built-in checks on Kuma: its proxies' metrics, as Flagger's kuma provider": {
			input: canaryYAML("provider: kuma", "analysis: {stepWeight: 10, maxWeight: 20, threshold: 2, metrics: ["+
				"{name: request-success-rate, interval: 1m, thresholdRange: {min: 99}}]}"),
			wantSpec: spec(v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, DataPlane: v1alpha1.KumaDataPlane,
				GatewayRefs: []v1alpha1.GatewayReference{{Kind: v1alpha1.ServiceParent, Name: "podinfo", Port: ptr.To(int32(9898))}}},
				&v1alpha1.CanaryAnalysis{StepWeight: 10, MaxWeight: 20, Threshold: 2, Metrics: []v1alpha1.CanaryMetric{
					{Name: "request-success-rate", Interval: duration(time.Minute), ThresholdRange: &v1alpha1.ThresholdRange{Min: ptr.To(99.0)}},
				}}),
		},
		"built-in checks on Linkerd: its proxies' metrics, as Flagger's linkerd provider": {
			input: canaryYAML("provider: linkerd", "analysis: {stepWeight: 10, maxWeight: 20, threshold: 2, metrics: ["+
				"{name: request-success-rate, interval: 1m, thresholdRange: {min: 99}}, "+
				"{name: request-duration, interval: 30s, thresholdRange: {max: 500}}]}"),
			wantSpec: spec(v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, DataPlane: v1alpha1.LinkerdDataPlane,
				GatewayRefs: []v1alpha1.GatewayReference{{Kind: v1alpha1.ServiceParent, Name: "podinfo", Port: ptr.To(int32(9898))}}},
				&v1alpha1.CanaryAnalysis{StepWeight: 10, MaxWeight: 20, Threshold: 2, Metrics: []v1alpha1.CanaryMetric{
					{Name: "request-success-rate", Interval: duration(time.Minute), ThresholdRange: &v1alpha1.ThresholdRange{Min: ptr.To(99.0)}},
					{Name: "request-duration", Interval: duration(30 * time.Second), ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(500.0)}},
				}}),
		},
		"built-in checks: Flagger's deprecated threshold is the range": {
			input: canaryYAML("provider: traefik", "analysis: {iterations: 2, threshold: 2, metrics: ["+
				"{name: request-success-rate, threshold: 99}, {name: request-duration, threshold: 500}, "+
				"{name: request-duration, threshold: 500, thresholdRange: {max: 300}, query: up}]}"),
			wantDropped: []string{"spec.provider", "spec.analysis.metrics[2].query"},
			wantSpec: spec(v1alpha1.CanaryRouting{Provider: v1alpha1.KubernetesRouting, DataPlane: v1alpha1.TraefikDataPlane},
				&v1alpha1.CanaryAnalysis{Iterations: 2, Threshold: 2, Metrics: []v1alpha1.CanaryMetric{
					{Name: "request-success-rate", ThresholdRange: &v1alpha1.ThresholdRange{Min: ptr.To(99.0)}},
					{Name: "request-duration", ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(500.0)}},
					{Name: "request-duration", ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(300.0)}},
				}}),
		},
		"templates: Flagger fails a value above the deprecated threshold": {
			input: canaryYAML("provider: kubernetes", "analysis: {iterations: 2, threshold: 2, metrics: ["+
				"{name: latency, templateRef: {name: latency}, threshold: 300}, "+
				"{name: errors, templateRef: {name: errors}, threshold: 5, thresholdRange: {min: 1}}]}"),
			wantSpec: spec(kubernetes(), &v1alpha1.CanaryAnalysis{Iterations: 2, Threshold: 2, Metrics: []v1alpha1.CanaryMetric{
				{Name: "latency", TemplateRef: &v1alpha1.TemplateReference{Name: "latency"}, ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(300.0)}},
				{Name: "errors", TemplateRef: &v1alpha1.TemplateReference{Name: "errors"}, ThresholdRange: &v1alpha1.ThresholdRange{Min: ptr.To(1.0)}},
			}}),
		},
		"built-in check of an unset provider: which data plane is not known": {
			input:       canaryYAML("analysis: {iterations: 2, threshold: 2, metrics: [{name: request-duration, thresholdRange: {max: 500}}]}"),
			wantDropped: []string{"spec.provider", "spec.provider"},
			wantSpec: spec(kubernetes(), &v1alpha1.CanaryAnalysis{Iterations: 2, Threshold: 2,
				Metrics: []v1alpha1.CanaryMetric{{Name: "request-duration", ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(500.0)}}}}),
		},
		"built-in check on Gateway API: the pods' own metrics, as Flagger's": {
			input: canaryYAML("provider: gatewayapi:v1", "service: {port: 9898, gatewayRefs: [{name: public}]}",
				"analysis: {stepWeight: 10, maxWeight: 20, threshold: 2, metrics: [{name: request-duration, thresholdRange: {max: 500}}]}"),
			wantSpec: spec(v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: []v1alpha1.GatewayReference{{Name: "public"}},
				DataPlane: v1alpha1.ApplicationDataPlane}, &v1alpha1.CanaryAnalysis{StepWeight: 10, MaxWeight: 20, Threshold: 2,
				Metrics: []v1alpha1.CanaryMetric{{Name: "request-duration", ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(500.0)}}}}),
		},
		"a built-in name with a template: Flagger ran both": {
			input: canaryYAML("provider: kubernetes", "analysis: {iterations: 2, threshold: 2, metrics: ["+
				"{name: request-duration, templateRef: {name: latency}, thresholdRange: {max: 500}}]}"),
			wantDropped: []string{"spec.analysis.metrics[0].name"},
			wantSpec: spec(kubernetes(), &v1alpha1.CanaryAnalysis{Iterations: 2, Threshold: 2,
				Metrics: []v1alpha1.CanaryMetric{{Name: "request-duration", TemplateRef: &v1alpha1.TemplateReference{Name: "latency"},
					ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(500.0)}}}}),
		},
		"ready thresholds are kept": {
			input:    canaryYAML("provider: kubernetes", "analysis: {iterations: 2, threshold: 2, primaryReadyThreshold: 100, canaryReadyThreshold: 1}"),
			wantSpec: spec(kubernetes(), &v1alpha1.CanaryAnalysis{Iterations: 2, Threshold: 2, PrimaryReadyThreshold: ptr.To(100), CanaryReadyThreshold: ptr.To(1)}),
		},
		"ready thresholds past serin's bounds are brought within them": {
			input:       canaryYAML("provider: kubernetes", "analysis: {iterations: 2, threshold: 2, primaryReadyThreshold: 0, canaryReadyThreshold: 150}"),
			wantDropped: []string{"spec.analysis.primaryReadyThreshold", "spec.analysis.canaryReadyThreshold"},
			wantSpec:    spec(kubernetes(), &v1alpha1.CanaryAnalysis{Iterations: 2, Threshold: 2, PrimaryReadyThreshold: ptr.To(1), CanaryReadyThreshold: ptr.To(100)}),
		},
		"ready thresholds of a Service target are left out": {
			input: canaryYAML("provider: gatewayapi:v1", "targetRef: {apiVersion: v1, kind: Service, name: podinfo}",
				"service: {port: 9898, gatewayRefs: [{name: public}]}",
				"analysis: {stepWeight: 10, maxWeight: 20, threshold: 2, primaryReadyThreshold: 50, canaryReadyThreshold: 50}"),
			wantDropped: []string{"spec.analysis.primaryReadyThreshold", "spec.analysis.canaryReadyThreshold"},
			wantSpec: func() *v1alpha1.CanarySpec {
				s := serviceTargetSpec()
				s.Analysis = &v1alpha1.CanaryAnalysis{StepWeight: 10, MaxWeight: 20, Threshold: 2}
				return s
			}(),
		},
		"other objects pass through, other Flagger objects are left out": {
			input: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n# only a comment\n---\n" +
				"apiVersion: flagger.app/v1alpha3\nkind: Canary\nmetadata: {name: old}\n---\n" +
				"apiVersion: flagger.app/v1beta1\nkind: AlertProvider\nmetadata: {name: slack}\n",
			wantDropped: []string{"", "spec.type"},
			wantKinds:   []string{"ConfigMap"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			result, err := Convert([]byte(tc.input))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantDropped, droppedFields(result)); diff != "" {
				t.Errorf("dropped fields differ (-want +got):\n%s\n%v", diff, result.Dropped)
			}
			if tc.wantKinds != nil {
				gotKinds := []string{}
				for _, m := range result.Manifests {
					gotKinds = append(gotKinds, m.Kind)
				}
				if diff := cmp.Diff(tc.wantKinds, gotKinds); diff != "" {
					t.Errorf("manifests differ (-want +got):\n%s", diff)
				}
			}
			if tc.wantSpec != nil {
				got := result.Manifests[0].Object.(canaryManifest).Spec
				if diff := cmp.Diff(*tc.wantSpec, got); diff != "" {
					t.Errorf("spec differs (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// A value past serin's bounds is reported with the bound and what it became.
func TestConvertReportsBounds(t *testing.T) {
	result, err := Convert([]byte(canaryYAML("provider: kubernetes", "analysis: {interval: 25h, iterations: 2, threshold: 1001, "+
		"primaryReadyThreshold: 0, canaryReadyThreshold: 101, webhooks: [{name: slow, type: confirm-rollout, url: 'http://w', timeout: 60s, retries: 4}, {name: zero, url: 'http://w', timeout: 0s}, "+
		"{name: k6, type: pre-rollout, url: 'http://w', timeout: 5m}, {name: soak, url: 'http://w', timeout: 2h}]}")))
	if err != nil {
		t.Fatal(err)
	}
	want := []Dropped{
		{Object: "Canary apps/podinfo", Field: "spec.analysis.interval", Reason: "25h is outside serin's bounds, 1s to 24h: converted to 24h"},
		{Object: "Canary apps/podinfo", Field: "spec.analysis.threshold", Reason: "1001 is over serin's maximum of 1000: converted to 1000"},
		{Object: "Canary apps/podinfo", Field: "spec.analysis.primaryReadyThreshold",
			Reason: "0% is under serin's minimum of 1%: converted to 1%; serin never counts a Deployment without an available replica as ready"},
		{Object: "Canary apps/podinfo", Field: "spec.analysis.canaryReadyThreshold", Reason: "101% is over 100%: converted to 100%, every replica"},
		{Object: "Canary apps/podinfo", Field: "spec.analysis.webhooks[0].timeout", Reason: "60s is over serin's bound of one confirm-rollout webhook call, 30s: converted to 30s"},
		{Object: "Canary apps/podinfo", Field: "spec.analysis.webhooks[0].retries", Reason: "4 is over serin's maximum of 3: converted to 3"},
		{Object: "Canary apps/podinfo", Field: "spec.analysis.webhooks[1].timeout",
			Reason: "0s is outside serin's bounds, more than 0s and at most 30m: left out, so the default of 10s applies"},
		{Object: "Canary apps/podinfo", Field: "spec.analysis.webhooks[3].timeout", Reason: "2h is over serin's bound of one rollout webhook call, 30m: converted to 30m"},
	}
	if diff := cmp.Diff(want, result.Dropped); diff != "" {
		t.Errorf("report differs (-want +got):\n%s", diff)
	}
}

// canaryYAML is a Flagger Canary of the Deployment podinfo on port 9898,
// with the given spec lines (which replace the defaults of the same key).
func canaryYAML(specLines ...string) string {
	lines := map[string]string{
		"targetRef": "targetRef: {apiVersion: apps/v1, kind: Deployment, name: podinfo}",
		"service":   "service: {port: 9898}",
	}
	var extra []string
	for _, line := range specLines {
		key := line[:bytes.IndexByte([]byte(line), ':')]
		if _, isDefault := lines[key]; isDefault {
			lines[key] = line
		} else {
			extra = append(extra, line)
		}
	}
	out := "apiVersion: flagger.app/v1beta1\nkind: Canary\nmetadata: {name: podinfo, namespace: apps}\nspec:\n"
	for _, line := range append([]string{lines["targetRef"], lines["service"]}, extra...) {
		out += "  " + line + "\n"
	}
	return out
}

// droppedFields are the fields of the report, in its order.
func droppedFields(result *Result) []string {
	var fields []string
	for _, d := range result.Dropped {
		fields = append(fields, d.Field)
	}
	return fields
}

func kubernetes() v1alpha1.CanaryRouting {
	return v1alpha1.CanaryRouting{Provider: v1alpha1.KubernetesRouting}
}

func gatewayAPI(gateway string) v1alpha1.CanaryRouting {
	return v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting,
		GatewayRefs: []v1alpha1.GatewayReference{{Name: gateway}}}
}

func spec(routing v1alpha1.CanaryRouting, analysis *v1alpha1.CanaryAnalysis) *v1alpha1.CanarySpec {
	return &v1alpha1.CanarySpec{
		TargetRef: v1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "podinfo"},
		Service:   v1alpha1.CanaryService{Port: 9898},
		Routing:   routing,
		Analysis:  analysis,
	}
}

func serviceTargetSpec() *v1alpha1.CanarySpec {
	s := spec(gatewayAPI("public"), nil)
	s.TargetRef = v1alpha1.TargetReference{APIVersion: "v1", Kind: "Service", Name: "podinfo"}
	return s
}

func daemonSetTargetSpec(analysis *v1alpha1.CanaryAnalysis) *v1alpha1.CanarySpec {
	s := spec(kubernetes(), analysis)
	s.TargetRef = v1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "podinfo"}
	return s
}

func TestConvertMetricTemplate(t *testing.T) {
	tests := map[string]struct {
		input       string
		wantDropped []string
		wantSpec    *v1alpha1.MetricTemplateSpec
	}{
		"prometheus": {
			input: metricTemplateYAML("{type: prometheus, address: 'http://prom:9090', insecureSkipVerify: true}", "sum(up{namespace='{{ namespace }}'})"),
			wantSpec: &v1alpha1.MetricTemplateSpec{
				Provider: v1alpha1.MetricProvider{Type: v1alpha1.PrometheusProvider, Address: "http://prom:9090", InsecureSkipVerify: true},
				Query:    "sum(up{namespace='{{ namespace }}'})",
			},
		},
		"Flagger-only template functions and no address": {
			input:       metricTemplateYAML("{type: prometheus}", "sum(up{service='{{ service }}', ingress='{{ingress}}', route='{{ route }}'})"),
			wantDropped: []string{"spec.provider.address", "spec.query", "spec.query"},
			wantSpec: &v1alpha1.MetricTemplateSpec{
				Provider: v1alpha1.MetricProvider{Type: v1alpha1.PrometheusProvider},
				Query:    "sum(up{service='{{ service }}', ingress='{{ingress}}', route='{{ route }}'})",
			},
		},
		"prometheus headers, without Authorization": {
			input: metricTemplateYAML("{type: prometheus, address: 'http://mimir/prometheus', "+
				"headers: {X-Scope-OrgID: [team-a], Authorization: ['Bearer x']}}", "sum(up)"),
			wantDropped: []string{"spec.provider.headers.Authorization"},
			wantSpec: &v1alpha1.MetricTemplateSpec{
				Provider: v1alpha1.MetricProvider{Type: v1alpha1.PrometheusProvider, Address: "http://mimir/prometheus",
					Headers: map[string][]string{"X-Scope-OrgID": {"team-a"}}},
				Query: "sum(up)",
			},
		},
		"datadog, its default address": {
			input: metricTemplateYAML("{type: datadog, secretRef: {name: datadog}}", "avg:requests{kube_namespace:{{ namespace }}}"),
			wantSpec: &v1alpha1.MetricTemplateSpec{
				Provider: v1alpha1.MetricProvider{Type: v1alpha1.DatadogProvider, SecretRef: &meta.LocalObjectReference{Name: "datadog"}},
				Query:    "avg:requests{kube_namespace:{{ namespace }}}",
			},
		},
		"newrelic without a Secret": {
			input:       metricTemplateYAML("{type: newrelic}", "SELECT count(*) FROM Transaction"),
			wantDropped: []string{"spec.provider.secretRef"},
			wantSpec: &v1alpha1.MetricTemplateSpec{
				Provider: v1alpha1.MetricProvider{Type: v1alpha1.NewRelicProvider},
				Query:    "SELECT count(*) FROM Transaction",
			},
		},
		"graphite with basic auth": {
			input: metricTemplateYAML("{type: graphite, address: 'http://graphite.monitoring', secretRef: {name: graphite-basic-auth}}", "target=x"),
			wantSpec: &v1alpha1.MetricTemplateSpec{
				Provider: v1alpha1.MetricProvider{Type: v1alpha1.GraphiteProvider, Address: "http://graphite.monitoring",
					SecretRef: &meta.LocalObjectReference{Name: "graphite-basic-auth"}},
				Query: "target=x",
			},
		},
		"influxdb without an address": {
			input:       metricTemplateYAML("{type: influxdb, secretRef: {name: influx-token}}", "from(bucket: 'x')"),
			wantDropped: []string{"spec.provider.address"},
			wantSpec: &v1alpha1.MetricTemplateSpec{
				Provider: v1alpha1.MetricProvider{Type: v1alpha1.InfluxDBProvider, SecretRef: &meta.LocalObjectReference{Name: "influx-token"}},
				Query:    "from(bucket: 'x')",
			},
		},
		"dynatrace, headers dropped": {
			input: metricTemplateYAML("{type: dynatrace, address: 'https://abc.live.dynatrace.com', secretRef: {name: dynatrace}, "+
				"headers: {X-A: [b]}}", "builtin:service.response.time"),
			wantDropped: []string{"spec.provider.headers"},
			wantSpec: &v1alpha1.MetricTemplateSpec{
				Provider: v1alpha1.MetricProvider{Type: v1alpha1.DynatraceProvider, Address: "https://abc.live.dynatrace.com",
					SecretRef: &meta.LocalObjectReference{Name: "dynatrace"}},
				Query: "builtin:service.response.time",
			},
		},
		"splunk on its WebSocket address": {
			input: metricTemplateYAML("{type: splunk, address: 'wss://stream.us1.signalfx.com', secretRef: {name: splunk}}", "data('x').publish()"),
			wantSpec: &v1alpha1.MetricTemplateSpec{
				Provider: v1alpha1.MetricProvider{Type: v1alpha1.SplunkProvider, Address: "https://stream.us1.signalfx.com",
					SecretRef: &meta.LocalObjectReference{Name: "splunk"}},
				Query: "data('x').publish()",
			},
		},
		"keptn is left out": {
			input:       metricTemplateYAML("{type: keptn}", "keptnmetric/apps/response-time/2m/reporter=destination"),
			wantDropped: []string{"spec.provider.type"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			result, err := Convert([]byte(tc.input))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantDropped, droppedFields(result)); diff != "" {
				t.Errorf("dropped fields differ (-want +got):\n%s", diff)
			}
			if tc.wantSpec == nil {
				if len(result.Manifests) != 0 {
					t.Errorf("got %d manifests, want none", len(result.Manifests))
				}
				return
			}
			got := result.Manifests[0].Object.(metricTemplateManifest).Spec
			if diff := cmp.Diff(*tc.wantSpec, got); diff != "" {
				t.Errorf("spec differs (-want +got):\n%s", diff)
			}
		})
	}
}

func metricTemplateYAML(provider, query string) string {
	return "apiVersion: flagger.app/v1beta1\nkind: MetricTemplate\nmetadata: {name: m, namespace: apps}\n" +
		"spec:\n  provider: " + provider + "\n  query: \"" + query + "\"\n"
}

// checkConvertedMetricTemplate converts the Flagger MetricTemplate of
// provider and query and checks that it gives one MetricTemplate of
// wantSpec, reporting wantDropped; it returns the result.
func checkConvertedMetricTemplate(t *testing.T, provider, query string, wantDropped []string, wantSpec v1alpha1.MetricTemplateSpec) *Result {
	t.Helper()
	result, err := Convert([]byte(metricTemplateYAML(provider, query)))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantDropped, droppedFields(result)); diff != "" {
		t.Errorf("dropped fields differ (-want +got):\n%s", diff)
	}
	if len(result.Manifests) != 1 {
		t.Fatalf("got %d manifests, want 1", len(result.Manifests))
	}
	if diff := cmp.Diff(wantSpec, result.Manifests[0].Object.(metricTemplateManifest).Spec); diff != "" {
		t.Errorf("spec differs (-want +got):\n%s", diff)
	}
	return result
}

func TestConvertRejectsUnreadableInput(t *testing.T) {
	tests := map[string]string{
		"not YAML":       "apiVersion: [",
		"port as a word": canaryYAML("provider: kubernetes", "service: {port: http}"),
	}
	for name, input := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := Convert([]byte(input)); err == nil {
				t.Error("Convert succeeded, want an error")
			}
		})
	}
}

// A mesh that applies HTTPRoutes to a Service's calls (GAMMA) keeps its
// weights: Istio's and Linkerd's Canaries convert to gatewayapi with the
// apex Service as the parent, said in a note, not a loss; the hosts of
// Istio's ingress gateways are lost, and said so. So does an ingress
// controller's Canary, on the Gateway that takes over from it (--gateway),
// said in a note; the Ingress or ApisixRoute it named is reported, as
// its hosts and paths are not in the Canary.
func TestConvertProviderToGatewayAPI(t *testing.T) {
	public := &v1alpha1.GatewayReference{Namespace: "gateways", Name: "public"}
	onPublic := []v1alpha1.GatewayReference{*public}
	successRate := "metrics: [{name: request-success-rate, thresholdRange: {min: 99}}]"
	tests := map[string]struct {
		opts        Options
		input       string
		wantRouting v1alpha1.CanaryRouting
		wantNotes   []string
		wantDropped []string
	}{
		"contour onto the Gateway that takes over, with the timeout of its route": {
			opts:        Options{Gateway: public},
			input:       canaryYAML("provider: contour", "service: {port: 9898, timeout: 5s}", "analysis: {stepWeight: 10, maxWeight: 20, threshold: 2}"),
			wantRouting: v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: onPublic, Timeout: "5s"},
			wantNotes:   []string{"spec.provider"},
		},
		"traefik's built-in checks stay on Traefik": {
			opts:        Options{Gateway: public},
			input:       canaryYAML("provider: traefik", "analysis: {stepWeight: 10, maxWeight: 20, threshold: 2, "+successRate+"}"),
			wantRouting: v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: onPublic, DataPlane: v1alpha1.TraefikDataPlane},
			wantNotes:   []string{"spec.provider"},
		},
		"gloo's built-in checks on the data plane given": {
			opts:  Options{Gateway: public, DataPlane: v1alpha1.EnvoyGatewayDataPlane},
			input: canaryYAML("provider: gloo:v1", "analysis: {stepWeight: 10, maxWeight: 20, threshold: 2, "+successRate+"}"),
			wantRouting: v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: onPublic,
				DataPlane: v1alpha1.EnvoyGatewayDataPlane},
			wantNotes: []string{"spec.provider"},
		},
		"istio's ingress gateways give way to the Gateway, with its hosts": {
			opts: Options{Gateway: public},
			input: canaryYAML("provider: istio", "service: {port: 9898, gateways: [public-gateway.istio-system.svc.cluster.local, mesh], "+
				"hosts: [app.example.com]}", "analysis: {stepWeight: 10, maxWeight: 20, threshold: 2}"),
			wantRouting: v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, Hosts: []string{"app.example.com"},
				GatewayRefs: []v1alpha1.GatewayReference{{Kind: v1alpha1.ServiceParent, Name: "podinfo", Port: ptr.To(int32(9898))}, *public}},
			wantNotes: []string{"spec.provider", "spec.service.gateways"},
		},
		"istio within the mesh only: nothing to give way": {
			opts:  Options{Gateway: public},
			input: canaryYAML("provider: istio", "service: {port: 9898, gateways: [mesh]}", "analysis: {stepWeight: 10, maxWeight: 20, threshold: 2}"),
			wantRouting: v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting,
				GatewayRefs: []v1alpha1.GatewayReference{{Kind: v1alpha1.ServiceParent, Name: "podinfo", Port: ptr.To(int32(9898))}}},
			wantNotes: []string{"spec.provider"},
		},
		"skipper's built-in checks: the Gateway's proxy, which the agent names": {
			opts:        Options{Gateway: public},
			input:       canaryYAML("provider: skipper", "analysis: {stepWeight: 10, maxWeight: 20, threshold: 2, "+successRate+"}"),
			wantRouting: v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: onPublic},
			wantNotes:   []string{"spec.provider", "spec.provider"},
		},
		"nginx: the Ingress's hosts and paths are not in the Canary": {
			opts: Options{Gateway: public},
			input: canaryYAML("provider: nginx", "ingressRef: {apiVersion: networking.k8s.io/v1, kind: Ingress, name: podinfo}",
				"analysis: {stepWeight: 10, maxWeight: 20, threshold: 2}"),
			wantRouting: v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: onPublic},
			wantNotes:   []string{"spec.provider"},
			wantDropped: []string{"spec.ingressRef"},
		},
		"istio, the apex Service's port": {
			input: canaryYAML("provider: istio", "analysis: {stepWeight: 10, maxWeight: 20, threshold: 2}"),
			wantRouting: v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting,
				GatewayRefs: []v1alpha1.GatewayReference{{Kind: v1alpha1.ServiceParent, Name: "podinfo", Port: ptr.To(int32(9898))}}},
			wantNotes: []string{"spec.provider"},
		},
		"linkerd, a named apex Service, with the timeout of the route": {
			input: canaryYAML("provider: linkerd", "service: {name: web, port: 8080, timeout: 5s}",
				"analysis: {stepWeight: 10, maxWeight: 20, threshold: 2}"),
			wantRouting: v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, Timeout: "5s",
				GatewayRefs: []v1alpha1.GatewayReference{{Kind: v1alpha1.ServiceParent, Name: "web", Port: ptr.To(int32(8080))}}},
			wantNotes: []string{"spec.provider"},
		},
		"kuma, GAMMA since Kuma 2.3": {
			input: canaryYAML("provider: kuma", "analysis: {stepWeight: 10, maxWeight: 20, threshold: 2}"),
			wantRouting: v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting,
				GatewayRefs: []v1alpha1.GatewayReference{{Kind: v1alpha1.ServiceParent, Name: "podinfo", Port: ptr.To(int32(9898))}}},
			wantNotes: []string{"spec.provider"},
		},
		"istio's ingress hosts are lost": {
			input: canaryYAML("provider: istio", "service: {port: 9898, hosts: [app.example.com]}",
				"analysis: {stepWeight: 10, maxWeight: 20, threshold: 2}"),
			wantRouting: v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting,
				GatewayRefs: []v1alpha1.GatewayReference{{Kind: v1alpha1.ServiceParent, Name: "podinfo", Port: ptr.To(int32(9898))}}},
			wantNotes:   []string{"spec.provider"},
			wantDropped: []string{"spec.service.hosts"},
		},
		"istio with Gateway API parents of its own keeps them": {
			input: canaryYAML("provider: istio", "service: {port: 9898, gatewayRefs: [{name: public}]}",
				"analysis: {stepWeight: 10, maxWeight: 20, threshold: 2}"),
			wantRouting: gatewayAPI("public"),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			result, err := tc.opts.Convert([]byte(tc.input))
			if err != nil {
				t.Fatal(err)
			}
			var notes []string
			for _, n := range result.Notes {
				notes = append(notes, n.Field)
			}
			if diff := cmp.Diff(tc.wantNotes, notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s\n%v", diff, result.Notes)
			}
			if diff := cmp.Diff(tc.wantDropped, droppedFields(result)); diff != "" {
				t.Errorf("dropped (-want +got):\n%s\n%v", diff, result.Dropped)
			}
			if len(result.Manifests) != 1 {
				t.Fatalf("manifests: %v", result.Manifests)
			}
			got := result.Manifests[0].Object.(canaryManifest).Spec
			if diff := cmp.Diff(tc.wantRouting, got.Routing); diff != "" {
				t.Errorf("routing (-want +got):\n%s", diff)
			}
			if got.Analysis.StepWeight != 10 || got.Analysis.Iterations != 0 {
				t.Errorf("analysis %+v: the weights must stay weights", got.Analysis)
			}
		})
	}

	// Without a Gateway, an ingress controller's Canary is blue/green, and
	// the report says how to keep the weights.
	result, err := Convert([]byte(canaryYAML("provider: contour", "analysis: {stepWeight: 10, maxWeight: 20, threshold: 2}")))
	if err != nil {
		t.Fatal(err)
	}
	if got := droppedFields(result); !slices.Equal(got, []string{"spec.provider", "spec.analysis.stepWeight"}) ||
		!strings.Contains(result.Dropped[0].Reason, "--gateway") {
		t.Errorf("contour without a Gateway: %v", result.Dropped)
	}
}

// A Canary without spec.provider ran with its Flagger's -mesh-provider:
// given as an option, it converts as that provider; without it, the
// provider is unknown and reported.
func TestConvertMeshProviderOption(t *testing.T) {
	input := []byte(canaryYAML("analysis: {stepWeight: 10, maxWeight: 20, threshold: 2}"))
	result, err := Options{MeshProvider: "linkerd"}.Convert(input)
	if err != nil {
		t.Fatal(err)
	}
	if len(result.Dropped) != 0 || len(result.Notes) != 1 {
		t.Fatalf("with the mesh provider: dropped %v, notes %v", result.Dropped, result.Notes)
	}
	routing := result.Manifests[0].Object.(canaryManifest).Spec.Routing
	want := v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting,
		GatewayRefs: []v1alpha1.GatewayReference{{Kind: v1alpha1.ServiceParent, Name: "podinfo", Port: ptr.To(int32(9898))}}}
	if diff := cmp.Diff(want, routing); diff != "" {
		t.Errorf("routing (-want +got):\n%s", diff)
	}

	result, err = Convert(input)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"spec.provider", "spec.analysis.stepWeight"}, droppedFields(result)); diff != "" {
		t.Errorf("without it, dropped (-want +got):\n%s", diff)
	}
}

// An NGINX Canary converted onto a Gateway together with the Ingress its
// ingressRef names (after it in the stream): the HTTPRoute takes the hosts
// and paths by which the Ingress leads to the apex Service; the Ingress
// passes through; what an HTTPRoute does not say is reported.
func TestConvertIngressOntoGateway(t *testing.T) {
	canary := canaryYAML("provider: nginx", "ingressRef: {apiVersion: networking.k8s.io/v1, kind: Ingress, name: podinfo}",
		"analysis: {stepWeight: 10, maxWeight: 20, threshold: 2}")
	ingress := func(annotations, rules string) string {
		return "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: podinfo, namespace: apps, annotations: {" +
			annotations + "}}\nspec: {" + rules + "}\n"
	}
	backend := func(service string) string {
		return "backend: {service: {name: " + service + ", port: {number: 80}}}"
	}
	public := &v1alpha1.GatewayReference{Namespace: "gateways", Name: "public"}
	tests := map[string]struct {
		ingress     string
		wantHosts   []string
		wantMatch   []v1alpha1.HTTPRouteMatch
		wantDropped []string
		wantNotes   []string
	}{
		"hosts, the prefix / and another app's path": {
			ingress: ingress("kubernetes.io/ingress.class: nginx", "tls: [{hosts: [app.example.com], secretName: app-tls}], rules: ["+
				"{host: app.example.com, http: {paths: [{path: /, pathType: Prefix, "+backend("podinfo")+"}, "+
				"{path: /other, pathType: Prefix, "+backend("other")+"}]}}, "+
				"{host: www.example.com, http: {paths: [{path: /, pathType: Prefix, "+backend("podinfo")+"}]}}]"),
			wantHosts: []string{"app.example.com", "www.example.com"},
			wantNotes: []string{"spec.provider", "spec.ingressRef", "spec.ingressRef (Ingress podinfo).spec.tls"},
		},
		"paths, exact and regular expressions, an nginx setting reported": {
			ingress: ingress("nginx.ingress.kubernetes.io/use-regex: 'true', nginx.ingress.kubernetes.io/proxy-body-size: 8m",
				"rules: [{host: app.example.com, http: {paths: [{path: '/api/v[12]', pathType: ImplementationSpecific, "+backend("podinfo")+"}, "+
					"{path: /healthz, pathType: Exact, "+backend("podinfo")+"}]}}]"),
			wantHosts: []string{"app.example.com"},
			wantMatch: []v1alpha1.HTTPRouteMatch{
				{Path: &v1alpha1.HTTPPathMatch{Type: "RegularExpression", Value: "/api/v[12]"}},
				{Path: &v1alpha1.HTTPPathMatch{Type: "Exact", Value: "/healthz"}},
			},
			wantDropped: []string{"spec.ingressRef (Ingress podinfo).metadata.annotations.nginx.ingress.kubernetes.io/proxy-body-size"},
			wantNotes:   []string{"spec.provider", "spec.ingressRef"},
		},
		"every host: a rule without a host": {
			ingress:   ingress("", "rules: [{http: {paths: [{path: /api, pathType: Prefix, "+backend("podinfo")+"}]}}]"),
			wantMatch: []v1alpha1.HTTPRouteMatch{{Path: &v1alpha1.HTTPPathMatch{Type: "PathPrefix", Value: "/api"}}},
			wantNotes: []string{"spec.provider", "spec.ingressRef"},
		},
		"paths that differ by host": {
			ingress: ingress("", "rules: [{host: a.example.com, http: {paths: [{path: /a, pathType: Prefix, "+backend("podinfo")+"}]}}, "+
				"{host: b.example.com, http: {paths: [{path: /b, pathType: Prefix, "+backend("podinfo")+"}]}}]"),
			wantHosts: []string{"a.example.com", "b.example.com"},
			wantMatch: []v1alpha1.HTTPRouteMatch{{Path: &v1alpha1.HTTPPathMatch{Type: "PathPrefix", Value: "/a"}},
				{Path: &v1alpha1.HTTPPathMatch{Type: "PathPrefix", Value: "/b"}}},
			wantDropped: []string{"spec.ingressRef"},
			wantNotes:   []string{"spec.provider", "spec.ingressRef"},
		},
		"no path to the apex Service": {
			ingress:     ingress("", "rules: [{host: a.example.com, http: {paths: [{path: /, pathType: Prefix, "+backend("other")+"}]}}]"),
			wantDropped: []string{"spec.ingressRef"},
			wantNotes:   []string{"spec.provider"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			input := canary + tc.ingress
			result, err := Options{Gateway: public}.Convert([]byte(input))
			if err != nil {
				t.Fatal(err)
			}
			var notes []string
			for _, n := range result.Notes {
				notes = append(notes, n.Field)
			}
			if diff := cmp.Diff(tc.wantNotes, notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s\n%v", diff, result.Notes)
			}
			if len(result.Manifests) != 2 || result.Manifests[1].Kind != "Ingress" || result.Manifests[1].Converted {
				t.Fatalf("want the Canary and the Ingress passed through: %v", result.Manifests)
			}
			checkEntryRouting(t, result, tc.wantDropped, tc.wantHosts, tc.wantMatch)
		})
	}
}

// An APISIX Canary converted onto a Gateway together with the ApisixRoute
// its routeRef names: Flagger's tutorial's route (a host, GET, every
// path) becomes the HTTPRoute's host and match; its prometheus plugin
// serves Flagger's metrics, not routing; what else an HTTPRoute does not
// say is reported.
func TestConvertApisixRouteOntoGateway(t *testing.T) {
	canary := canaryYAML("provider: apisix", "routeRef: {apiVersion: apisix.apache.org/v2, kind: ApisixRoute, name: podinfo}",
		"analysis: {stepWeight: 10, maxWeight: 20, threshold: 2}")
	route := func(rules string) string {
		return "---\napiVersion: apisix.apache.org/v2\nkind: ApisixRoute\nmetadata: {name: podinfo, namespace: apps}\nspec: {http: [" + rules + "]}\n"
	}
	tests := map[string]struct {
		route       string
		wantHosts   []string
		wantMatch   []v1alpha1.HTTPRouteMatch
		wantDropped []string
	}{
		"Flagger's tutorial": {
			route: route("{name: method, backends: [{serviceName: podinfo, servicePort: 80}], match: {hosts: [app.example.com], " +
				"methods: [GET], paths: ['/*']}, plugins: [{name: prometheus, enable: true}]}"),
			wantHosts: []string{"app.example.com"},
			wantMatch: []v1alpha1.HTTPRouteMatch{{Path: &v1alpha1.HTTPPathMatch{Type: "PathPrefix", Value: "/"}, Method: "GET"}},
		},
		"prefixes and exact paths, another app's rule, an expression reported": {
			route: route("{name: a, backends: [{serviceName: podinfo}], match: {paths: ['/api/*', /healthz], exprs: [{subject: {scope: Header, name: X}, op: Equal, value: y}]}, " +
				"plugins: [{name: proxy-rewrite}]}, {name: b, backends: [{serviceName: other}], match: {paths: ['/*']}}"),
			wantMatch: []v1alpha1.HTTPRouteMatch{{Path: &v1alpha1.HTTPPathMatch{Type: "PathPrefix", Value: "/api"}},
				{Path: &v1alpha1.HTTPPathMatch{Type: "Exact", Value: "/healthz"}}},
			wantDropped: []string{"spec.routeRef (ApisixRoute podinfo).spec.http[0].match.exprs",
				"spec.routeRef (ApisixRoute podinfo).spec.http[0].plugins.proxy-rewrite"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			result, err := Options{Gateway: &v1alpha1.GatewayReference{Namespace: "gateways", Name: "public"}}.Convert([]byte(canary + tc.route))
			if err != nil {
				t.Fatal(err)
			}
			checkEntryRouting(t, result, tc.wantDropped, tc.wantHosts, tc.wantMatch)
		})
	}
}

// checkEntryRouting compares what a conversion onto a Gateway dropped, and
// the hosts and matches its Canary's routing took from an entry object.
func checkEntryRouting(t *testing.T, result *Result, wantDropped, wantHosts []string, wantMatch []v1alpha1.HTTPRouteMatch) {
	t.Helper()
	if diff := cmp.Diff(wantDropped, droppedFields(result)); diff != "" {
		t.Errorf("dropped (-want +got):\n%s\n%v", diff, result.Dropped)
	}
	routing := result.Manifests[0].Object.(canaryManifest).Spec.Routing
	if diff := cmp.Diff(wantHosts, routing.Hosts); diff != "" {
		t.Errorf("hosts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantMatch, routing.Match); diff != "" {
		t.Errorf("match (-want +got):\n%s", diff)
	}
}

// A KEDA ScaledObject converts with the primary's queries and replicas, as
// Flagger's tutorial sets them; an HPA keeps its replica overrides.
func TestConvertAutoscalerRef(t *testing.T) {
	tests := map[string]struct {
		ref  string
		want *v1alpha1.AutoscalerReference
	}{
		"Flagger's KEDA tutorial": {
			ref: "autoscalerRef: {apiVersion: keda.sh/v1alpha1, kind: ScaledObject, name: podinfo-so, " +
				"primaryScalerQueries: {prom-trigger: 'sum(rate(http_requests_total{app=\"podinfo-primary\"}[2m]))'}, " +
				"primaryScalerReplicas: {minReplicas: 2, maxReplicas: 5}}",
			want: &v1alpha1.AutoscalerReference{APIVersion: "keda.sh/v1alpha1", Kind: "ScaledObject", Name: "podinfo-so",
				PrimaryScalerQueries:  map[string]string{"prom-trigger": `sum(rate(http_requests_total{app="podinfo-primary"}[2m]))`},
				PrimaryScalerReplicas: &v1alpha1.ScalerReplicas{MinReplicas: ptr.To[int32](2), MaxReplicas: ptr.To[int32](5)}},
		},
		"an HPA with the primary's bounds": {
			ref: "autoscalerRef: {apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, name: podinfo, primaryScalerReplicas: {maxReplicas: 8}}",
			want: &v1alpha1.AutoscalerReference{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Name: "podinfo",
				PrimaryScalerReplicas: &v1alpha1.ScalerReplicas{MaxReplicas: ptr.To[int32](8)}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			result, err := Convert([]byte(canaryYAML("provider: kubernetes", tc.ref, "analysis: {iterations: 2, threshold: 2}")))
			if err != nil {
				t.Fatal(err)
			}
			if len(result.Dropped) != 0 {
				t.Errorf("dropped %v", result.Dropped)
			}
			if diff := cmp.Diff(tc.want, result.Manifests[0].Object.(canaryManifest).Spec.AutoscalerRef); diff != "" {
				t.Errorf("autoscalerRef (-want +got):\n%s", diff)
			}
		})
	}
}

// Flagger's AlertProviders become the Flux notification Providers of the
// same name, with their Secret (Flux reads its address key, as Flagger
// did), and a Canary's analysis.alerts name them; an AlertProvider a
// Canary names that is not in the input is named in a note.
func TestConvertAlertProviders(t *testing.T) {
	input := canaryYAML("provider: kubernetes", "analysis: {iterations: 2, threshold: 2, alerts: ["+
		"{name: chat, severity: warn, providerRef: {name: chat}}, {name: elsewhere, providerRef: {name: pager, namespace: ops}}]}") +
		"---\napiVersion: flagger.app/v1beta1\nkind: AlertProvider\nmetadata: {name: chat, namespace: apps}\n" +
		"spec: {type: gchat, secretRef: {name: chat-url}}\n" +
		"---\napiVersion: flagger.app/v1beta1\nkind: AlertProvider\nmetadata: {name: pager, namespace: apps}\n" +
		"spec: {type: pagerduty, address: https://events.example}\n"
	result, err := Convert([]byte(input))
	if err != nil {
		t.Fatal(err)
	}
	canary := result.Manifests[0].Object.(canaryManifest)
	wantAlerts := []v1alpha1.CanaryAlert{
		{Name: "chat", Severity: "warn", ProviderRef: meta.NamespacedObjectReference{Name: "chat"}},
		{Name: "elsewhere", Severity: "info", ProviderRef: meta.NamespacedObjectReference{Name: "pager", Namespace: "ops"}},
	}
	if diff := cmp.Diff(wantAlerts, canary.Spec.Alerts); diff != "" {
		t.Errorf("alerts (-want +got):\n%s", diff)
	}
	wantProvider := providerManifest{APIVersion: "notification.toolkit.fluxcd.io/v1beta3", Kind: "Provider",
		Metadata: manifestMetadata{Name: "chat", Namespace: "apps"},
		Spec:     notificationv1.ProviderSpec{Type: "googlechat", SecretRef: &meta.LocalObjectReference{Name: "chat-url"}}}
	if len(result.Manifests) != 2 {
		t.Fatalf("%d manifests, want the Canary and one Provider", len(result.Manifests))
	}
	if diff := cmp.Diff(wantProvider, result.Manifests[1].Object); diff != "" {
		t.Errorf("Provider (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"AlertProvider apps/pager: spec.type"}, droppedRefs(result.Dropped)); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}
	notes := fmt.Sprint(result.Notes)
	for _, want := range []string{"the AlertProvider ops/pager is not in the input", "the Provider ops/pager is in another namespace than the Canary"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %s, want %q", notes, want)
		}
	}
}

// An inline query, Flagger's older form, becomes a MetricTemplate
// generated next to the Canary, querying the Prometheus Flagger sent it
// to (--metrics-server); without it the metric is reported. The built-in
// checks' names before Flagger 1.0 are the built-in checks of the same
// meaning, their threshold the bound Flagger applied.
func TestConvertInlineAndLegacyMetrics(t *testing.T) {
	input := canaryYAML("provider: kubernetes", "analysis: {iterations: 2, threshold: 2, metrics: ["+
		"{name: 404s percentage, interval: 1m, threshold: 5, query: 'sum(rate(http_requests_total{code=\"404\"}[1m]))'}, "+
		"{name: istio_requests_total, threshold: 99}, {name: istio_request_duration_seconds_bucket, threshold: 500}]}")
	result, err := Options{MetricsServer: "http://prometheus.istio-system:9090"}.Convert([]byte(input))
	if err != nil {
		t.Fatal(err)
	}
	if len(result.Dropped) != 0 || len(result.Manifests) != 2 {
		t.Fatalf("dropped %v, %d manifests; want none dropped, the Canary and a MetricTemplate", result.Dropped, len(result.Manifests))
	}
	wantMetrics := []v1alpha1.CanaryMetric{
		{Name: "404s percentage", TemplateRef: &v1alpha1.TemplateReference{Name: "podinfo-404s-percentage"}, Interval: duration(time.Minute),
			ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(5.0)}},
		{Name: "request-success-rate", ThresholdRange: &v1alpha1.ThresholdRange{Min: ptr.To(99.0)}},
		{Name: "request-duration", ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(500.0)}},
	}
	if diff := cmp.Diff(wantMetrics, result.Manifests[0].Object.(canaryManifest).Spec.Analysis.Metrics); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	template := result.Manifests[1].Object.(metricTemplateManifest)
	if template.Metadata.Name != "podinfo-404s-percentage" || template.Spec.Provider.Address != "http://prometheus.istio-system:9090" ||
		template.Spec.Query != `sum(rate(http_requests_total{code="404"}[1m]))` {
		t.Errorf("generated MetricTemplate: %+v", template)
	}

	result, err = Convert([]byte(input))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Canary apps/podinfo: spec.analysis.metrics[0].query"}, droppedRefs(result.Dropped)); diff != "" ||
		!strings.Contains(result.Dropped[0].Reason, "serin convert --metrics-server") {
		t.Errorf("without --metrics-server: %v", result.Dropped)
	}
}

// The MetricTemplates generated for inline queries never share a name,
// with each other or with a MetricTemplate of the input.
func TestConvertInlineMetricNames(t *testing.T) {
	input := canaryYAML("provider: kubernetes", "analysis: {iterations: 2, threshold: 2, metrics: ["+
		"{name: error rate, query: a}, {name: error-rate, query: b}, {name: latency, query: c}]}") +
		"---\napiVersion: flagger.app/v1beta1\nkind: MetricTemplate\nmetadata: {name: podinfo-latency, namespace: apps}\n" +
		"spec: {provider: {type: prometheus, address: http://p}, query: up}\n"
	result, err := Options{MetricsServer: "http://prometheus"}.Convert([]byte(input))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range result.Manifests {
		if t, ok := m.Object.(metricTemplateManifest); ok {
			got = append(got, t.Metadata.Name+": "+t.Spec.Query)
		}
	}
	want := []string{"podinfo-error-rate: a", "podinfo-error-rate-2: b", "podinfo-latency-2: c", "podinfo-latency: up"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MetricTemplates (-want +got):\n%s", diff)
	}
}

// droppedRefs names each dropped field with its object.
func droppedRefs(dropped []Dropped) []string {
	var out []string
	for _, d := range dropped {
		out = append(out, d.Object+": "+d.Field)
	}
	return out
}
