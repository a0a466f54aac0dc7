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

package v1alpha1

import (
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const (
	// CanaryKind is the kind of the Canary object.
	CanaryKind = "Canary"

	// CanaryFinalizer is set on a Canary so that serin can clean up the
	// objects it generated, and restore the target when revertOnDeletion is
	// set, before the Canary is deleted.
	CanaryFinalizer = "serin.dev/finalizer"

	// LegacyCanaryFinalizer is the finalizer's name before v0.1.0, which
	// the API server warns about (a finalizer name should be
	// domain-qualified with a path). The agent still honours it for one
	// release: it replaces it with CanaryFinalizer on a live Canary, and
	// removes both when a Canary is deleted. To be removed in the release
	// after.
	LegacyCanaryFinalizer = "finalizers.serin.dev"

	// PrimarySuffix is appended to the target's name for the primary copy.
	PrimarySuffix = "-primary"

	// CanarySuffix is appended to the target's name for the Service that
	// selects the canary pods.
	CanarySuffix = "-canary"

	// BaselineSuffix is appended to the target's name for the baseline
	// Deployment, and to the apex Service's for the Service that selects
	// its pods (analysis.judge.baseline).
	BaselineSuffix = "-baseline"
)

// Defaults applied by the getters when a field is not set.
const (
	DefaultProgressDeadlineSeconds = 600
	DefaultAnalysisInterval        = time.Minute
	DefaultThreshold               = 5
	DefaultMaxWeight               = 50
	DefaultStepWeight              = 10
	// DefaultReadyThreshold is the percentage of a Deployment's updated
	// replicas that must be available for it to count as ready, on either
	// side, unless analysis.primaryReadyThreshold or canaryReadyThreshold
	// says otherwise.
	DefaultReadyThreshold = 100
)

// Bounds the API server enforces on a Canary (the validation markers
// repeat them; see the Validation section of docs/spec/v1alpha1/canaries.md).
const (
	// MinAnalysisInterval and MaxAnalysisInterval bound analysis.interval
	// and a metric's interval.
	MinAnalysisInterval = time.Second
	MaxAnalysisInterval = 24 * time.Hour
	// MaxThreshold bounds analysis.threshold.
	MaxThreshold = 1000
	// MaxIterations bounds analysis.iterations.
	MaxIterations = 1000
	// MaxWebhookTimeout bounds one call of a gate, a rollback or an event
	// webhook; MaxLongHookTimeout one call of a pre-rollout, rollout or
	// post-rollout hook (a load test runs for minutes).
	MaxWebhookTimeout  = 30 * time.Second
	MaxLongHookTimeout = 30 * time.Minute
	// MaxWebhookRetries bounds the retries of a webhook within one step.
	MaxWebhookRetries = 3
)

// CanarySpec defines how serin rolls out a new revision of a target. The
// rules read an omitted routing, or routing.provider, as kubernetes, the
// default.
// +kubebuilder:validation:XValidation:rule="self.targetRef.kind != 'Service' || (has(self.routing) && has(self.routing.provider) && self.routing.provider == 'gatewayapi')",message="a Service target needs routing.provider gatewayapi: the kubernetes router switches the apex Service, which is the target itself"
// +kubebuilder:validation:XValidation:rule="!has(self.analysis) || !has(self.analysis.iterations) || self.analysis.iterations == 0 || !has(self.routing) || !has(self.routing.provider) || self.routing.provider == 'kubernetes' || ((!has(self.analysis.stepWeight) || self.analysis.stepWeight == 0) && !has(self.analysis.stepWeights) && !has(self.analysis.maxWeight) && (!has(self.analysis.stepWeightPromotion) || self.analysis.stepWeightPromotion == 0))",message="analysis.iterations (blue/green, or an A/B test with analysis.match) moves no weights step by step: remove analysis.stepWeight, stepWeights, maxWeight and stepWeightPromotion, or remove iterations to shift weights"
// +kubebuilder:validation:XValidation:rule="!has(self.analysis) || !has(self.analysis.match) || size(self.analysis.match) == 0 || (has(self.routing) && has(self.routing.provider) && self.routing.provider == 'gatewayapi')",message="analysis.match (an A/B test) needs routing.provider gatewayapi: the kubernetes router switches whole Services and cannot pick requests by header"
// +kubebuilder:validation:XValidation:rule="!has(self.analysis) || !has(self.analysis.match) || size(self.analysis.match) == 0 || (has(self.analysis.iterations) && self.analysis.iterations > 0)",message="analysis.match (an A/B test) needs analysis.iterations, the number of steps the matched users stay on the canary"
// +kubebuilder:validation:XValidation:rule="!has(self.analysis) || !has(self.analysis.sessionAffinity) || (has(self.routing) && has(self.routing.provider) && self.routing.provider == 'gatewayapi' && (!has(self.analysis.iterations) || self.analysis.iterations == 0))",message="analysis.sessionAffinity pins users to the side that served them while the weights move: it needs routing.provider gatewayapi with weights (no analysis.iterations)"
// +kubebuilder:validation:XValidation:rule="!has(self.analysis) || !has(self.analysis.mirror) || !self.analysis.mirror || (has(self.routing) && has(self.routing.provider) && self.routing.provider == 'gatewayapi' && has(self.analysis.iterations) && self.analysis.iterations > 0 && (!has(self.analysis.match) || size(self.analysis.match) == 0))",message="analysis.mirror copies the primary's requests to the canary during a blue/green analysis on the HTTPRoute: it needs routing.provider gatewayapi and analysis.iterations, without analysis.match"
// +kubebuilder:validation:XValidation:rule="!has(self.routing) || !has(self.routing.routeRefs) || size(self.routing.routeRefs) == 0 || self.targetRef.kind == 'Deployment'",message="routing.routeRefs needs a Deployment target: between rollouts your route sends to the apex Service, which serin points at the primary's pods (a Service target is the apex itself, and serves the newest pods)"
// +kubebuilder:validation:XValidation:rule="!has(self.routing) || !has(self.routing.routeRefs) || size(self.routing.routeRefs) == 0 || !has(self.analysis) || ((!has(self.analysis.match) || size(self.analysis.match) == 0) && (!has(self.analysis.mirror) || !self.analysis.mirror) && !has(self.analysis.sessionAffinity))",message="routing.routeRefs moves only the backends of your rules: analysis.match, analysis.mirror and analysis.sessionAffinity add rules or filters to a route, which only the generated route can carry; remove them, or routing.routeRefs"
// +kubebuilder:validation:XValidation:rule="!has(self.analysis) || !has(self.analysis.pin) || !has(self.routing) || !has(self.routing.routeRefs) || self.routing.routeRefs.all(r, !has(r.kind) || r.kind == 'HTTPRoute')",message="analysis.pin sends the pinned requests by an HTTPRoute of serin's own next to each of your routes, matching HTTP headers and query parameters: it works with HTTPRoutes only; remove analysis.pin, or the GRPCRoutes from routing.routeRefs"
// +kubebuilder:validation:XValidation:rule="!has(self.analysis) || !has(self.analysis.pin) || (has(self.routing) && has(self.routing.provider) && self.routing.provider == 'gatewayapi' && (!has(self.analysis.iterations) || self.analysis.iterations == 0) && !has(self.analysis.sessionAffinity))",message="analysis.pin sends the pinned requests to the canary during a weighted analysis, by a rule of the generated HTTPRoute (or, with routing.routeRefs, a route of serin's own next to each of yours): it needs routing.provider gatewayapi, weights (no analysis.iterations), and no analysis.sessionAffinity"
// +kubebuilder:validation:XValidation:rule="self.targetRef.kind == oldSelf.targetRef.kind && self.targetRef.name == oldSelf.targetRef.name",message="spec.targetRef cannot change: the Canary owns the primary, Services and routes it generated for its target; delete this Canary (revertOnDeletion decides what the old target keeps) and create one for the new target (with Flux: annotate it kustomize.toolkit.fluxcd.io/force: Enabled)"
// +kubebuilder:validation:XValidation:rule="(has(self.service) && has(self.service.name) ? self.service.name : self.targetRef.name) == (has(oldSelf.service) && has(oldSelf.service.name) ? oldSelf.service.name : oldSelf.targetRef.name)",message="spec.service.name cannot change: it names the apex Service and HTTPRoute users reach; delete this Canary and create one with the new name (with Flux: annotate it kustomize.toolkit.fluxcd.io/force: Enabled)"
// +kubebuilder:validation:XValidation:rule="(has(self.routing) && has(self.routing.provider) && self.routing.provider != 'kubernetes') || !has(self.analysis) || ((!has(self.analysis.stepWeight) || self.analysis.stepWeight == 0) && !has(self.analysis.stepWeights))",message="routing.provider kubernetes switches all traffic at once: use analysis.iterations instead of analysis.stepWeight or analysis.stepWeights"
// +kubebuilder:validation:XValidation:rule="self.targetRef.kind != 'Service' || !has(self.analysis) || (!has(self.analysis.primaryReadyThreshold) && !has(self.analysis.canaryReadyThreshold))",message="analysis.primaryReadyThreshold and analysis.canaryReadyThreshold count a Deployment's replicas: a Service target has none (serin judges it by its ready endpoints), remove them"
// +kubebuilder:validation:XValidation:rule="self.targetRef.kind != 'DaemonSet' || !has(self.routing) || !has(self.routing.provider) || self.routing.provider == 'kubernetes'",message="a DaemonSet target needs routing.provider kubernetes: serin rolls a DaemonSet out blue/green through the apex Service (analysis.iterations), never by traffic weights, as Flagger does"
// +kubebuilder:validation:XValidation:rule="self.targetRef.kind != 'DaemonSet' || !has(self.autoscalerRef)",message="autoscalerRef scales a Deployment: a DaemonSet target runs one pod per node and has no replicas to scale, remove it"
// +kubebuilder:validation:XValidation:rule="!has(self.analysis) || !has(self.analysis.judge) || !has(self.analysis.judge.baseline) || !self.analysis.judge.baseline || (self.targetRef.kind == 'Deployment' && has(self.routing) && has(self.routing.provider) && self.routing.provider == 'gatewayapi')",message="analysis.judge.baseline runs a <target>-baseline Deployment that the HTTPRoute routes to: it needs a Deployment targetRef and routing.provider gatewayapi; remove baseline (the judge then compares the canary with the primary)"
// +kubebuilder:validation:XValidation:rule="!has(self.analysis) || !has(self.analysis.judge) || !has(self.analysis.judge.baseline) || !self.analysis.judge.baseline || size(has(self.service) && has(self.service.name) ? self.service.name : self.targetRef.name) <= 54",message="analysis.judge.baseline names a Service <service>-baseline, at most 63 characters: shorten service.name (or targetRef.name) to 54 characters, or remove baseline"
// +kubebuilder:validation:XValidation:rule="!has(self.routing) || !has(self.routing.mirrors) || self.routing.mirrors.all(m, !(m.name in [has(self.service) && has(self.service.name) ? self.service.name : self.targetRef.name, (has(self.service) && has(self.service.name) ? self.service.name : self.targetRef.name) + '-primary', (has(self.service) && has(self.service.name) ? self.service.name : self.targetRef.name) + '-canary']))",message="routing.mirrors must not name the apex, primary or canary Service: the route already serves them (analysis.mirror copies requests to the canary)"
// +kubebuilder:validation:XValidation:rule="!has(self.gitops) || !has(self.gitops.promote) || !self.gitops.promote.exists(p, has(p.soak) && duration(p.soak) > duration('0s')) || (has(self.analysis) && has(self.analysis.metrics) && self.analysis.metrics.exists(m, has(m.thresholdRange)))",message="gitops.promote[].soak holds the promoted primary to the thresholdRange of analysis.metrics, and no metric has one, so the soak could never fail (a judge block compares a canary with the primary, and a soak has no canary): add a thresholdRange to a metric, the soak's floor, or remove soak"
// +kubebuilder:validation:XValidation:rule="has(self.service) || (has(self.routing) && has(self.routing.provider) && self.routing.provider == 'replicas')",message="spec.service is required: it describes the Services serin generates for the target (only routing.provider replicas, a worker's rollout by its replicas, has none)"
// +kubebuilder:validation:XValidation:rule="!has(self.service) || !has(self.routing) || !has(self.routing.provider) || self.routing.provider != 'replicas'",message="routing.provider replicas rolls a worker out by its share of the replicas: serin generates no Service and no route for it; remove spec.service (or use routing.provider kubernetes or gatewayapi for an app that serves requests)"
// +kubebuilder:validation:XValidation:rule="!has(self.routing) || !has(self.routing.provider) || self.routing.provider != 'replicas' || self.targetRef.kind in ['Deployment', 'StatefulSet']",message="routing.provider replicas splits a Deployment's replicas between the primary and the canary, or moves a StatefulSet's partition: it needs a Deployment or StatefulSet targetRef"
// +kubebuilder:validation:XValidation:rule="self.targetRef.kind != 'StatefulSet' || (has(self.routing) && has(self.routing.provider) && self.routing.provider == 'replicas')",message="a StatefulSet target needs routing.provider replicas: serin rolls it out in place by its partition (a -primary copy would be a second set of volumes and identities), and its Service keeps selecting every pod"
// +kubebuilder:validation:XValidation:rule="!has(self.routing) || !has(self.routing.provider) || self.routing.provider != 'replicas' || !has(self.analysis) || !has(self.analysis.iterations) || self.analysis.iterations == 0",message="routing.provider replicas gives the canary its share of the replicas step by step: use analysis.stepWeight or analysis.stepWeights (the canary's percentage of the replicas), not analysis.iterations"
// +kubebuilder:validation:XValidation:rule="!has(self.routing) || !has(self.routing.provider) || self.routing.provider != 'replicas' || !has(self.autoscalerRef)",message="routing.provider replicas sets the primary's and the canary's replicas itself, which an autoscaler of the primary would undo: remove autoscalerRef (not supported with routing.provider replicas)"
// +kubebuilder:validation:XValidation:rule="!has(self.routing) || !has(self.routing.provider) || self.routing.provider != 'replicas' || !has(self.analysis) || !has(self.analysis.metrics) || self.analysis.metrics.all(m, has(m.templateRef) || !(m.name in ['request-success-rate', 'request-duration', 'grpc-success-rate']))",message="request-success-rate, request-duration and grpc-success-rate judge the requests a data plane routed, and a worker rolled out by routing.provider replicas receives none: use pod-restarts, or a MetricTemplate whose query reads the workers' own metrics ({{ pods }} names the pods of the side judged)"
// +kubebuilder:validation:XValidation:rule="self.targetRef.kind != 'Service' || !has(self.analysis) || !has(self.analysis.metrics) || self.analysis.metrics.all(m, has(m.templateRef) || m.name != 'pod-restarts')",message="pod-restarts counts the restarts of the canary's pods: a Service target has no pods of its own (its backends are another workload's); remove the check"
type CanarySpec struct {
	// TargetRef is the Deployment, DaemonSet or Service this Canary rolls
	// out. Every change to its pod template (or, for a Service, its spec)
	// is a new revision that serin analyses before promoting it.
	// +required
	TargetRef TargetReference `json:"targetRef"`

	// AutoscalerRef is an optional HorizontalPodAutoscaler for the target;
	// serin keeps a copy of it for the primary.
	// +optional
	AutoscalerRef *AutoscalerReference `json:"autoscalerRef,omitempty"`

	// ProgressDeadlineSeconds is how long the canary, and the primary during
	// promotion, may take to become ready before the rollout fails (or, during
	// promotion, halts). Defaults to 600.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`

	// Service describes the Services serin generates for the target.
	// Required, except with routing.provider replicas (a worker has none).
	// +optional
	Service CanaryService `json:"service,omitzero"`

	// Routing selects how traffic is shifted between primary and canary;
	// defaults to provider kubernetes (blue/green).
	// +kubebuilder:default={provider: kubernetes}
	// +optional
	Routing CanaryRouting `json:"routing,omitempty"`

	// Analysis defines the steps, checks and gates of a rollout.
	// +optional
	Analysis *CanaryAnalysis `json:"analysis,omitempty"`

	// Promotion defines what serin does when the primary fails to become
	// ready while a passed revision is being promoted.
	// +optional
	Promotion *PromotionPolicy `json:"promotion,omitempty"`

	// GitOps enables the revert of a bad revision in its Git source.
	// +optional
	GitOps *GitOpsSpec `json:"gitops,omitempty"`

	// Alerts are Flux notification Providers that receive this Canary's
	// events directly, in addition to the events sent to notification-controller.
	// +optional
	// +kubebuilder:validation:MaxItems=10
	Alerts []CanaryAlert `json:"alerts,omitempty"`

	// ServiceAccountName is the service account, in the Canary's namespace,
	// that serin impersonates for everything it writes on this Canary's
	// behalf (the primary, the generated Services and routes, the target's
	// scale) and for the Secrets it reads (MetricTemplates', Providers',
	// webhook signing keys). Empty means the agent's
	// --default-service-account, or, without it, the agent itself, as with
	// Flux's kustomize-controller and helm-controller.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// SkipAnalysis promotes every new revision at once, without analysis.
	// +optional
	SkipAnalysis bool `json:"skipAnalysis,omitempty"`

	// Suspend freezes the Canary: no step is taken until it is resumed.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// RevertOnDeletion restores the target to the primary's spec and scale
	// when the Canary is deleted, and removes the generated objects.
	// +optional
	RevertOnDeletion bool `json:"revertOnDeletion,omitempty"`
}

// TargetReference names the workload a Canary rolls out, in the Canary's
// namespace.
// +kubebuilder:validation:XValidation:rule="self.kind in ['Deployment', 'Service', 'DaemonSet', 'StatefulSet']",message="targetRef.kind must be Deployment or Service, or DaemonSet (blue/green only), or StatefulSet (by its partition: routing.provider replicas)"
// +kubebuilder:validation:XValidation:rule="(self.kind in ['Deployment', 'DaemonSet', 'StatefulSet'] && self.apiVersion == 'apps/v1') || (self.kind == 'Service' && self.apiVersion == 'v1')",message="targetRef.apiVersion must be apps/v1 for a Deployment and v1 for a Service; apps/v1 for a DaemonSet or a StatefulSet"
type TargetReference struct {
	// APIVersion of the target: apps/v1 for a Deployment or a DaemonSet, v1
	// for a Service.
	// +kubebuilder:default="apps/v1"
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`

	// Kind of the target: Deployment, DaemonSet (blue/green only: routing
	// provider kubernetes), StatefulSet (by its partition: routing provider
	// replicas) or Service.
	// +required
	Kind string `json:"kind"`

	// Name of the target: a DNS-1123 label of at most 55 characters, since
	// serin names the objects it generates <name>-primary and <name>-canary
	// and Service names are labels of at most 63.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="size(self) <= 55",message="targetRef.name must be at most 55 characters: serin names generated objects <name>-primary and <name>-canary"
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="targetRef.name must be a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit): serin names Services after it"
	// +required
	Name string `json:"name"`
}

// AutoscalerReference names the target's autoscaler in the Canary's
// namespace: a HorizontalPodAutoscaler, or a KEDA ScaledObject.
// +kubebuilder:validation:XValidation:rule="(self.apiVersion == 'autoscaling/v2' && self.kind == 'HorizontalPodAutoscaler') || (self.apiVersion == 'keda.sh/v1alpha1' && self.kind == 'ScaledObject')",message="autoscalerRef names an autoscaling/v2 HorizontalPodAutoscaler or a keda.sh/v1alpha1 ScaledObject: set apiVersion and kind as one of these pairs"
// +kubebuilder:validation:XValidation:rule="!has(self.primaryScalerQueries) || self.kind == 'ScaledObject'",message="autoscalerRef.primaryScalerQueries replace the queries of a ScaledObject's triggers: kind must be ScaledObject"
// +kubebuilder:validation:XValidation:rule="self.kind != 'HorizontalPodAutoscaler' || !has(self.primaryScalerReplicas) || !has(self.primaryScalerReplicas.minReplicas) || self.primaryScalerReplicas.minReplicas >= 1",message="autoscalerRef.primaryScalerReplicas.minReplicas must be at least 1 for a HorizontalPodAutoscaler"
type AutoscalerReference struct {
	// APIVersion of the autoscaler: autoscaling/v2, or keda.sh/v1alpha1 for
	// a ScaledObject.
	// +kubebuilder:default="autoscaling/v2"
	// +kubebuilder:validation:Enum=autoscaling/v2;keda.sh/v1alpha1
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`

	// Kind of the autoscaler: HorizontalPodAutoscaler, or ScaledObject
	// (KEDA). serin keeps a copy of it, <name>-primary, that scales the
	// primary; a ScaledObject of the target is paused
	// (autoscaling.keda.sh/paused-replicas: "0") while no analysis runs, so
	// that KEDA does not wake the idle canary.
	// +kubebuilder:default="HorizontalPodAutoscaler"
	// +kubebuilder:validation:Enum=HorizontalPodAutoscaler;ScaledObject
	// +optional
	Kind string `json:"kind,omitempty"`

	// Name of the autoscaler.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// PrimaryScalerQueries replace, in the primary's copy of a ScaledObject,
	// the metadata.query of the triggers they name (trigger name: query).
	// Without them, each trigger's query is copied with the target's name
	// replaced by the primary's, as Flagger does.
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(self[k]) <= 4096)",message="primaryScalerQueries values are at most 4096 characters"
	// +optional
	PrimaryScalerQueries map[string]string `json:"primaryScalerQueries,omitempty"`

	// PrimaryScalerReplicas override the bounds of the primary's copy of
	// the autoscaler.
	// +optional
	PrimaryScalerReplicas *ScalerReplicas `json:"primaryScalerReplicas,omitempty"`
}

// ScalerReplicas are the bounds of an autoscaler.
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas",message="primaryScalerReplicas.minReplicas must not exceed maxReplicas"
type ScalerReplicas struct {
	// MinReplicas replaces the autoscaler's minimum (a HorizontalPodAutoscaler's
	// minReplicas, a ScaledObject's minReplicaCount).
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// MaxReplicas replaces the autoscaler's maximum (maxReplicas,
	// maxReplicaCount).
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`
}

// The target kinds of spec.targetRef.
const (
	DeploymentKind = "Deployment"
	DaemonSetKind  = "DaemonSet"
	ServiceKind    = "Service"
	// StatefulSetKind is rolled out in place, by the StatefulSet's own
	// partition: no primary copy (routing.provider replicas).
	StatefulSetKind = "StatefulSet"
)

// The autoscaler kinds of spec.autoscalerRef.
const (
	HorizontalPodAutoscalerKind = "HorizontalPodAutoscaler"
	ScaledObjectKind            = "ScaledObject"
)

// IsScaledObject tells whether the autoscaler is a KEDA ScaledObject.
func (r *AutoscalerReference) IsScaledObject() bool {
	return r != nil && r.Kind == ScaledObjectKind
}

// CanaryService describes the apex, primary and canary Services.
type CanaryService struct {
	// Name of the apex Service; defaults to the target's name. A DNS-1123
	// label of at most 55 characters: the primary and canary Services are
	// <name>-primary and <name>-canary.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="size(self) <= 55",message="service.name must be at most 55 characters: serin names generated Services <name>-primary and <name>-canary"
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="service.name must be a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit): it names Services"
	// +optional
	Name string `json:"name,omitempty"`

	// Port the Services expose.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +required
	Port int32 `json:"port"`

	// PortName is the name of the port; defaults to http. A Service port
	// name: a DNS-1123 label of at most 63 characters.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="service.portName must be a DNS-1123 label, as a Service port name: lowercase letters, digits and '-', starting and ending with a letter or digit"
	// +optional
	PortName string `json:"portName,omitempty"`

	// TargetPort is the container port the Services send traffic to;
	// defaults to Port. A number from 1 to 65535, or a container port name
	// (IANA_SVC_NAME: at most 15 lowercase letters, digits and '-', at
	// least one letter, no '-' at either end and no '--').
	// +kubebuilder:validation:XValidation:rule="type(self) != int || (self >= 1 && self <= 65535)",message="service.targetPort must be a port number from 1 to 65535, or a container port name"
	// +kubebuilder:validation:XValidation:rule="type(self) != string || (size(self) <= 15 && self.matches('^[a-z0-9]+(-[a-z0-9]+)*$') && self.matches('[a-z]'))",message="service.targetPort must be a container port name (at most 15 lowercase letters, digits and '-', with at least one letter, no '-' at either end and no '--'), or a port number from 1 to 65535"
	// +optional
	TargetPort *intstr.IntOrString `json:"targetPort,omitempty"`

	// AppProtocol is the application protocol of the generated Services'
	// port (spec.ports[].appProtocol): kubernetes.io/h2c for a gRPC app
	// without TLS behind a GRPCRoute, as gateways such as Envoy Gateway
	// require (Traefik takes a port without one as h2c), or an IANA name
	// (http, https).
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')",message="service.appProtocol must be an IANA service name or a domain-prefixed name such as kubernetes.io/h2c"
	// +optional
	AppProtocol string `json:"appProtocol,omitempty"`

	// PortDiscovery adds every other container port of the pod template to
	// the generated Services.
	// +optional
	PortDiscovery bool `json:"portDiscovery,omitempty"`

	// Apex adds labels and annotations to the apex Service serin generates
	// (for a Deployment target) and to the HTTPRoute.
	// +optional
	Apex *CustomMetadata `json:"apex,omitempty"`

	// Primary adds labels and annotations to the <name>-primary Service.
	// +optional
	Primary *CustomMetadata `json:"primary,omitempty"`

	// Canary adds labels and annotations to the <name>-canary Service.
	// +optional
	Canary *CustomMetadata `json:"canary,omitempty"`
}

// CustomMetadata are labels and annotations serin sets on an object it
// generates, on top of its own. A key removed from here stays on the
// object until someone removes it: serin does not take away what it did
// not set in this reconcile, as others may have added it.
type CustomMetadata struct {
	// Labels to set.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('serin.dev/'))",message="labels in the serin.dev/ prefix are serin's own and cannot be set here"
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// Annotations to set.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('serin.dev/'))",message="annotations in the serin.dev/ prefix are serin's own and cannot be set here"
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// GetLabels returns the labels, nil-safe.
func (in *CustomMetadata) GetLabels() map[string]string {
	if in == nil {
		return nil
	}
	return in.Labels
}

// GetAnnotations returns the annotations, nil-safe.
func (in *CustomMetadata) GetAnnotations() map[string]string {
	if in == nil {
		return nil
	}
	return in.Annotations
}

// RoutingProvider names how traffic is shifted.
// +kubebuilder:validation:Enum=kubernetes;gatewayapi;replicas
type RoutingProvider string

const (
	// KubernetesRouting is blue/green: the apex Service selects either the
	// primary or the canary pods.
	KubernetesRouting RoutingProvider = "kubernetes"
	// GatewayAPIRouting shifts weights on a Gateway API HTTPRoute.
	GatewayAPIRouting RoutingProvider = "gatewayapi"
	// ReplicasRouting rolls out a worker that serves no requests (a queue
	// consumer, a stream processor): the canary's weight is its share of
	// the target's replicas, the primary runs the rest, and serin
	// generates no Service and no route.
	ReplicasRouting RoutingProvider = "replicas"
)

// CanaryRouting selects the traffic router.
// +kubebuilder:validation:XValidation:rule="self.provider != 'gatewayapi' || (has(self.gatewayRefs) && size(self.gatewayRefs) > 0) || (has(self.routeRefs) && size(self.routeRefs) > 0)",message="routing.gatewayRefs must name at least one Gateway when routing.provider is gatewayapi (or routing.routeRefs the HTTPRoutes and GRPCRoutes you keep)"
// +kubebuilder:validation:XValidation:rule="!has(self.routeRefs) || size(self.routeRefs) == 0 || self.provider == 'gatewayapi'",message="routing.routeRefs names HTTPRoutes and GRPCRoutes whose weights serin moves: it needs routing.provider gatewayapi"
// +kubebuilder:validation:XValidation:rule="!has(self.routeRefs) || size(self.routeRefs) == 0 || !(has(self.gatewayRefs) || has(self.hosts) || has(self.match) || has(self.timeout) || has(self.backendTimeout) || has(self.retries) || has(self.headers) || has(self.rewrite) || has(self.corsPolicy) || has(self.mirrors))",message="routing.routeRefs steers the routes you keep, as you wrote them: set parents, hostnames, matches, timeouts and filters in those routes, and remove routing.gatewayRefs, hosts, match, timeout, backendTimeout, retries, headers, rewrite, corsPolicy and mirrors (they shape the route serin generates)"
// +kubebuilder:validation:XValidation:rule="self.provider == 'gatewayapi' || !(has(self.match) || has(self.timeout) || has(self.backendTimeout) || has(self.retries) || has(self.headers) || has(self.rewrite) || has(self.corsPolicy) || has(self.mirrors))",message="routing.match, timeout, backendTimeout, retries, headers, rewrite, corsPolicy and mirrors configure the HTTPRoute and need routing.provider gatewayapi"
// +kubebuilder:validation:XValidation:rule="!has(self.timeout) || !has(self.backendTimeout) || duration(self.timeout) == duration('0s') || duration(self.backendTimeout) <= duration(self.timeout)",message="routing.backendTimeout must not exceed routing.timeout: the request's timeout covers its backend requests"
// +kubebuilder:validation:XValidation:rule="!has(self.rewrite) || !has(self.rewrite.path) || self.rewrite.path.type != 'ReplacePrefixMatch' || !has(self.match) || (size(self.match) == 1 && has(self.match[0].path) && self.match[0].path.type == 'PathPrefix')",message="routing.rewrite.path of type ReplacePrefixMatch needs exactly one routing.match, with a path of type PathPrefix (or no routing.match: all paths, prefix /)"
type CanaryRouting struct {
	// Provider is kubernetes (blue/green), gatewayapi (weighted HTTPRoute)
	// or replicas (a worker: the canary's weight is its share of the
	// target's replicas; no Service, no route).
	// +kubebuilder:default=kubernetes
	// +optional
	Provider RoutingProvider `json:"provider,omitempty"`

	// RouteRefs are HTTPRoutes and GRPCRoutes of the Canary's namespace that
	// you keep (in Git, applied by Flux): instead of generating a route,
	// serin moves the weights of the rules that send to the apex Service,
	// and changes nothing else in them. Between rollouts each such rule is as you wrote
	// it; during one, its backend to the apex Service becomes the primary
	// and canary Services with their weights (every other field of the
	// backend kept), in lockstep across the routes. With gatewayapi only,
	// instead of gatewayRefs and the settings of the generated route.
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=kind
	// +listMapKey=name
	// +optional
	RouteRefs []RouteReference `json:"routeRefs,omitempty"`

	// GatewayRefs are the parents the generated HTTPRoute attaches to:
	// Gateways, or Services for a mesh's east-west traffic (GAMMA).
	// +optional
	// +kubebuilder:validation:MaxItems=16
	GatewayRefs []GatewayReference `json:"gatewayRefs,omitempty"`

	// Hosts are the hostnames of the generated HTTPRoute.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Hosts []string `json:"hosts,omitempty"`

	// DataPlane is the proxy or mesh that serves the canary's traffic: the
	// built-in checks (request-success-rate, request-duration, grpc-success-rate) query its
	// metrics. Defaults to the agent's --data-plane.
	// +optional
	DataPlane DataPlane `json:"dataPlane,omitempty"`

	// Match selects the requests the generated HTTPRoute sends to the
	// primary and canary (a request matching any entry); none means all
	// requests. With gatewayapi only.
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Match []HTTPRouteMatch `json:"match,omitempty"`

	// Timeout is the HTTPRoute's request timeout (timeouts.request), a
	// Gateway API Duration such as 15s or 1m30s. With gatewayapi only.
	// +kubebuilder:validation:Pattern=`^([0-9]{1,5}(h|m|s|ms)){1,4}$`
	// +optional
	Timeout string `json:"timeout,omitempty"`

	// BackendTimeout is the HTTPRoute's timeout of one request from the
	// gateway to the primary or canary (timeouts.backendRequest), a
	// Gateway API Duration, at most Timeout when both are set (a retry
	// is such a request too). With gatewayapi only.
	// +kubebuilder:validation:Pattern=`^([0-9]{1,5}(h|m|s|ms)){1,4}$`
	// +optional
	BackendTimeout string `json:"backendTimeout,omitempty"`

	// Retries is the HTTPRoute's retry policy. Gateway API has it in its
	// experimental channel only: with the standard channel's HTTPRoute CRD
	// the API server drops it. With gatewayapi only.
	// +optional
	Retries *HTTPRouteRetry `json:"retries,omitempty"`

	// Headers changes request and response headers (the HTTPRoute's
	// RequestHeaderModifier and ResponseHeaderModifier filters). With
	// gatewayapi only.
	// +optional
	Headers *HTTPHeaderModifiers `json:"headers,omitempty"`

	// Rewrite changes the host and path the backends see (the HTTPRoute's
	// URLRewrite filter). With gatewayapi only.
	// +optional
	Rewrite *HTTPURLRewrite `json:"rewrite,omitempty"`

	// CorsPolicy makes the gateway answer CORS requests (the HTTPRoute's
	// CORS filter). With gatewayapi only.
	// +optional
	CorsPolicy *HTTPCORSFilter `json:"corsPolicy,omitempty"`

	// Mirrors copy the route's requests to other Services of the Canary's
	// namespace, whose answers the gateway discards (the HTTPRoute's
	// RequestMirror filters), all the time, as Flagger's service.mirror: a
	// shadow deployment, a traffic recorder. Unlike analysis.mirror, which
	// copies requests to the canary during its analysis. With gatewayapi
	// only.
	// +kubebuilder:validation:MaxItems=4
	// +listType=map
	// +listMapKey=name
	// +optional
	Mirrors []RouteMirror `json:"mirrors,omitempty"`
}

// RouteMirror is a Service the route's requests are copied to.
type RouteMirror struct {
	// Name of the Service, in the Canary's namespace.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="routing.mirrors[].name must be a Service name: a DNS-1123 label"
	Name string `json:"name"`

	// Port of the Service.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port"`

	// Percent of the requests copied, from 1 to 100 (Gateway API's
	// extended feature HTTPRouteRequestPercentageMirror); every request
	// when unset.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	Percent *int32 `json:"percent,omitempty"`
}

// DataPlane names the proxy or mesh whose metrics the built-in checks
// query. Each value selects the metric names and labels of one data plane.
// +kubebuilder:validation:Enum=traefik;envoy-gateway;istio;nginx-gateway-fabric;cilium;contour;kuma;linkerd;application
type DataPlane string

const (
	// TraefikDataPlane selects Traefik v3 (kubernetesGateway provider): its
	// per-backend series traefik_service_requests_total and
	// traefik_service_request_duration_seconds.
	TraefikDataPlane DataPlane = "traefik"
	// EnvoyGatewayDataPlane selects Envoy Gateway: Envoy's per-endpoint
	// stats (envoy_cluster_endpoint_rq_*) of the canary Service's pods.
	EnvoyGatewayDataPlane DataPlane = "envoy-gateway"
	// IstioDataPlane selects Istio's standard metrics istio_requests_total
	// and istio_request_duration_milliseconds, reported by the sidecars and
	// gateways that send requests to the canary Service.
	IstioDataPlane DataPlane = "istio"
	// NGINXGatewayFabricDataPlane selects NGINX Gateway Fabric with NGINX
	// Plus: its per-upstream series nginx_http_upstream_peer_responses_total.
	NGINXGatewayFabricDataPlane DataPlane = "nginx-gateway-fabric"
	// CiliumDataPlane selects Cilium's Hubble HTTP metrics (httpV2)
	// hubble_http_requests_total and hubble_http_request_duration_seconds of
	// the canary's workload.
	CiliumDataPlane DataPlane = "cilium"
	// ContourDataPlane selects Contour (HTTPRoutes or HTTPProxies): Envoy's
	// cluster stats envoy_cluster_upstream_rq and
	// envoy_cluster_upstream_rq_time of the canary Service's port, which
	// Contour names <namespace>_<service>_<port>.
	ContourDataPlane DataPlane = "contour"
	// KumaDataPlane selects Kuma: the Envoy cluster stats
	// envoy_cluster_upstream_rq and envoy_cluster_upstream_rq_time of the
	// canary pods' own proxies, whose Kuma service
	// (<service>_<namespace>_svc_<port>) Prometheus' kuma_sd_configs puts in
	// a service label, as Flagger's kuma provider queries them.
	KumaDataPlane DataPlane = "kuma"
	// LinkerdDataPlane selects Linkerd: the proxy metrics response_total
	// (classification success or failure) and response_latency_ms of what
	// the canary Deployment's own proxies received (direction inbound),
	// labelled with the pod's namespace and deployment by Linkerd's
	// Prometheus configuration, as Flagger's linkerd provider queries them.
	LinkerdDataPlane DataPlane = "linkerd"
	// ApplicationDataPlane selects no proxy: the canary's own pods'
	// http_request_duration_seconds histogram (with a status label), as
	// podinfo exports it and as Flagger's kubernetes and gatewayapi
	// providers query it; for blue/green without a mesh, and DaemonSets.
	ApplicationDataPlane DataPlane = "application"
)

// ParentKind is the kind of object an HTTPRoute attaches to.
// +kubebuilder:validation:Enum=Gateway;Service
type ParentKind string

const (
	// GatewayParent is a Gateway API Gateway (group
	// gateway.networking.k8s.io): north-south traffic through it.
	GatewayParent ParentKind = "Gateway"
	// ServiceParent is a Service (core group) that a service mesh routes
	// by the HTTPRoutes attached to it (the Gateway API's GAMMA): the
	// east-west traffic of the mesh's clients of that Service.
	ServiceParent ParentKind = "Service"
)

// GatewayReference names a parent of the generated HTTPRoute: a Gateway,
// or, for a service mesh that implements the Gateway API for east-west
// traffic (GAMMA: Istio, Linkerd, Cilium, Kuma…), a Service, usually the
// Canary's apex Service, whose callers then see the weights.
type GatewayReference struct {
	// Kind of the parent: Gateway (the default) or Service (GAMMA).
	// +optional
	Kind ParentKind `json:"kind,omitempty"`

	// Name of the Gateway or Service.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// Namespace of the parent; defaults to the Canary's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// SectionName is the Gateway listener to attach to, or the name of
	// the Service port.
	// +optional
	SectionName string `json:"sectionName,omitempty"`

	// Port is the Gateway listener port, or the Service port, to attach
	// to; all of them when not set.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port *int32 `json:"port,omitempty"`
}

// The kinds of route routing.routeRefs steers (gateway.networking.k8s.io/v1).
const (
	HTTPRouteKind = "HTTPRoute"
	GRPCRouteKind = "GRPCRoute"
)

// RouteReference names a route of the Canary's namespace whose weights the
// Canary moves (routing.routeRefs).
type RouteReference struct {
	// Kind of the route: HTTPRoute or GRPCRoute (gateway.networking.k8s.io/v1).
	// +kubebuilder:validation:Enum=HTTPRoute;GRPCRoute
	// +kubebuilder:default=HTTPRoute
	// +optional
	Kind string `json:"kind,omitempty"`

	// Name of the route, in the Canary's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="routing.routeRefs[].name must be an object name: a DNS-1123 subdomain"
	// +required
	Name string `json:"name"`
}

// CanaryPin pins the requests it matches to the canary during a weighted
// analysis (analysis.pin).
type CanaryPin struct {
	// Match selects the pinned requests: those matching any entry (all of
	// its headers and query parameters, within routing.match). A cookie is
	// a RegularExpression on the Cookie header, e.g.
	// ^(.*?;\s*)?(canary=always)(;.*)?$.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +required
	Match []AnalysisMatch `json:"match"`

	// FromWeight is the canary weight from which the pinned requests go to
	// the canary: a step of analysis.stepWeight or stepWeights. From the
	// first step when unset.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	FromWeight *int32 `json:"fromWeight,omitempty"`
}

// GetKind returns the route's kind, HTTPRoute when not set.
func (in RouteReference) GetKind() string {
	if in.Kind == "" {
		return HTTPRouteKind
	}
	return in.Kind
}

// GetKind returns the parent's kind, Gateway when not set.
func (in GatewayReference) GetKind() ParentKind {
	if in.Kind == "" {
		return GatewayParent
	}
	return in.Kind
}

// CanaryAnalysis defines the steps, checks and gates of a rollout.
// +kubebuilder:validation:XValidation:rule="!has(self.mirrorWeight) || (has(self.mirror) && self.mirror)",message="analysis.mirrorWeight is the share of the requests mirrored to the canary: it needs analysis.mirror: true"
// +kubebuilder:validation:XValidation:rule="!(has(self.stepWeight) && self.stepWeight > 0 && has(self.stepWeights))",message="analysis.stepWeight and analysis.stepWeights are exclusive: set one of them"
// +kubebuilder:validation:XValidation:rule="!has(self.maxWeight) || self.maxWeight <= 100",message="analysis.maxWeight is a percentage and must be at most 100"
// +kubebuilder:validation:XValidation:rule="!has(self.stepWeights) || (self.stepWeights.all(w, w > 0 && w <= 100) && self.stepWeights.isSorted())",message="analysis.stepWeights must be ascending percentages between 1 and 100"
// +kubebuilder:validation:XValidation:rule="!has(self.stepWeight) || !has(self.maxWeight) || self.stepWeight <= self.maxWeight",message="analysis.stepWeight must not exceed analysis.maxWeight"
// +kubebuilder:validation:XValidation:rule="!has(self.metrics) || !self.metrics.exists(m, has(m.judge)) || !has(self.iterations) || self.iterations == 0 || (has(self.match) && size(self.match) > 0) || (has(self.mirror) && self.mirror)",message="metrics[].judge compares the canary with the primary (or its baseline) on the same traffic at the same time: a blue/green analysis (analysis.iterations without match or mirror) sends every request to the canary and none to the primary; shift weights (stepWeight, routing.provider gatewayapi), run an A/B test (match) or mirror, or judge with thresholdRange only"
// +kubebuilder:validation:XValidation:rule="!has(self.judge) || (has(self.metrics) && self.metrics.exists(m, has(m.judge)))",message="analysis.judge scores the metrics that have a judge block, and none has one: add metrics[].judge, or remove analysis.judge"
// +kubebuilder:validation:XValidation:rule="!has(self.judge) || !has(self.judge.baseline) || !self.judge.baseline || ((!has(self.iterations) || self.iterations == 0) && !has(self.sessionAffinity) && (!has(self.maxWeight) || self.maxWeight <= 50) && (!has(self.stepWeights) || self.stepWeights.all(w, w <= 50)))",message="analysis.judge.baseline gives the baseline the canary's weight, taken from the primary's share: it needs weights (stepWeight or stepWeights, not iterations) of at most 50 (maxWeight, stepWeights; maxWeight defaults to 50), and no sessionAffinity; change them, or remove baseline"
type CanaryAnalysis struct {
	// Interval between two analysis steps, from 1s to 24h; defaults to 1m.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$') || (duration(self) >= duration('1s') && duration(self) <= duration('24h'))",message="analysis.interval must be between 1s and 24h"
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`

	// Threshold is the number of failed checks after which the canary is
	// rolled back, from 1 to 1000; defaults to 5.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Threshold int `json:"threshold,omitempty"`

	// StepWeight is the traffic percentage added to the canary at each step
	// (gatewayapi); defaults to 10 unless stepWeights is set.
	// +kubebuilder:validation:Minimum=0
	// +optional
	StepWeight int `json:"stepWeight,omitempty"`

	// StepWeights lists the canary's traffic percentages step by step
	// (gatewayapi), instead of stepWeight; at most 100, one per percentage.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	StepWeights []int `json:"stepWeights,omitempty"`

	// StepWeightPromotion is the traffic percentage moved to the primary at
	// each step of the promotion; 0 (the default) moves it all at once.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	StepWeightPromotion int `json:"stepWeightPromotion,omitempty"`

	// MaxWeight is the canary's traffic percentage at which the analysis
	// ends and the promotion starts (gatewayapi); defaults to 50.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxWeight int `json:"maxWeight,omitempty"`

	// Iterations is the number of analysis steps of blue/green (with
	// routing.provider kubernetes, or gatewayapi, whose HTTPRoute then
	// keeps every request on the primary until the promotion) and of an
	// A/B test (analysis.match), at most 1000. Excludes the weights
	// (stepWeight, stepWeights, maxWeight, stepWeightPromotion).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Iterations int `json:"iterations,omitempty"`

	// PrimaryReadyThreshold is the percentage of the primary Deployment's
	// updated replicas that must be available for the primary to count as
	// ready, from 1 to 100; defaults to 100 (every replica). It applies
	// wherever serin waits for the primary: at initialization, before the
	// target's pods go; in the promotion's verification (the primary runs
	// the promoted template on enough available replicas within
	// progressDeadlineSeconds, or the promotion halts); before traffic goes
	// back to it; and when it is restored after a halt. The count is
	// rounded up and never below one replica; every replica must still run
	// the current template, with no old one pending termination. 0 is
	// refused: serin never sends traffic to a side without a ready pod, so
	// no threshold can make a Deployment with no available replica ready.
	// Deployment targets only (a Service target is judged by its ready
	// endpoints; the API server refuses the field there).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	PrimaryReadyThreshold *int `json:"primaryReadyThreshold,omitempty"`

	// CanaryReadyThreshold is the percentage of the canary (target)
	// Deployment's updated replicas that must be available for the canary
	// to count as ready, from 1 to 100; defaults to 100 (every replica). It
	// gates the analysis: no step runs, and no traffic shifts, until the
	// canary is ready, and a canary not ready within progressDeadlineSeconds
	// is rolled back; it also gates the target taking over when the Canary
	// is deleted with revertOnDeletion. Rounded up, never below one
	// replica, with every replica on the current template, as
	// primaryReadyThreshold. 0 is refused for the same reason: a side
	// without a ready pod never receives traffic. Deployment targets only.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	CanaryReadyThreshold *int `json:"canaryReadyThreshold,omitempty"`

	// SessionAffinity keeps a user who reached the canary on the canary for
	// the rest of the rollout (gatewayapi weights), as Flagger's Gateway
	// API router does: the canary's answers set a cookie, and requests with
	// it go to the canary whatever the weights.
	// +optional
	SessionAffinity *SessionAffinity `json:"sessionAffinity,omitempty"`

	// Mirror copies every request the primary serves to the canary during
	// a blue/green analysis on gatewayapi (analysis.iterations), with the
	// HTTPRoute's RequestMirror filter: the canary is judged on real
	// requests whose answers the gateway discards. Data planes without the
	// filter stall the Canary (UnsupportedByDataPlane).
	// +optional
	Mirror bool `json:"mirror,omitempty"`

	// MirrorWeight is the share of the primary's requests copied to the
	// canary while it mirrors, in percent, as Flagger's mirrorWeight: the
	// RequestMirror filter's percent (Gateway API's extended feature
	// HTTPRouteRequestPercentageMirror). Every request when unset or 100.
	// Needs mirror.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	MirrorWeight *int32 `json:"mirrorWeight,omitempty"`

	// Match makes the analysis an A/B test (gatewayapi): the requests that
	// match any entry (all its headers and query parameters, within
	// routing.match) go to the canary, every other request to the
	// primary, for analysis.iterations steps; then the canary is promoted.
	// The generated HTTPRoute gets a rule per entry and routing.match (the
	// more specific match wins, by Gateway API's precedence) ahead of the
	// rule that keeps every other request on the primary. status.canaryWeight
	// is then the matched requests' share: 100 while the test runs.
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Match []AnalysisMatch `json:"match,omitempty"`

	// Pin sends the requests it matches (testers with a header, a cookie
	// or a query parameter) to the canary alone while every other request
	// follows the weights, from the step you name to the end of the
	// analysis; the promotion and a rollback remove it. With gatewayapi
	// weights: a rule of the generated route, or, with routing.routeRefs,
	// an HTTPRoute serin generates next to each of yours (ROUTE-serin-pin,
	// owned by the Canary) with your steered rules' matches, filters,
	// parents and hostnames; yours gets no rule.
	// +optional
	Pin *CanaryPin `json:"pin,omitempty"`

	// Metrics are the checks run at every step.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	Metrics []CanaryMetric `json:"metrics,omitempty"`

	// Webhooks are the gates and hooks called during the rollout.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	Webhooks []CanaryWebhook `json:"webhooks,omitempty"`

	// Judge sets how the metrics with a judge block are scored together at
	// each step: the score bounds, the significance level and the
	// resolution of the series. Optional: every field has a default. It
	// needs at least one metric with a judge block.
	// +optional
	Judge *AnalysisJudge `json:"judge,omitempty"`
}

// The defaults of analysis.judge.
const (
	// DefaultJudgePassScore is the score a step's judgement passes with.
	DefaultJudgePassScore = 95
	// DefaultJudgeMarginalScore is the score under which it fails outright.
	DefaultJudgeMarginalScore = 75
	// DefaultJudgeAlpha is the significance level of the judge's test.
	DefaultJudgeAlpha = 0.05
	// DefaultJudgeStep is the time between two values of a judged series.
	DefaultJudgeStep = 30 * time.Second
)

// AnalysisJudge scores the judged metrics of a step together, as Spinnaker
// Kayenta does: the score is 100 times the weight of the metrics whose
// canary is not significantly worse than the primary, over the weight of
// all the judged metrics. A score of at least passScore passes the
// step's checks; below it (Marginal, from marginalScore, or Fail) the
// step counts one failed check, as a metric out of its thresholdRange
// does: analysis.threshold decides how many are tolerated.
// +kubebuilder:validation:XValidation:rule="(has(self.marginalScore) ? self.marginalScore : 75) <= (has(self.passScore) ? self.passScore : 95)",message="analysis.judge.marginalScore must not exceed passScore (defaults: passScore 95, marginalScore 75)"
type AnalysisJudge struct {
	// PassScore is the lowest score that passes, from 1 to 100; defaults
	// to 95.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	PassScore *int `json:"passScore,omitempty"`

	// MarginalScore is the lowest score that is Marginal rather than
	// Fail, from 1 to passScore; defaults to 75. Marginal fails the step's
	// checks too: it tells a near miss from a clear failure in the
	// message, and, as a Marginal interval in Spinnaker lets the run go
	// on, a threshold above 1 judges the step again at the same weight.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	MarginalScore *int `json:"marginalScore,omitempty"`

	// Alpha is the significance level of the Mann-Whitney test of each
	// judged metric, strictly between 0 and 0.5; defaults to 0.05. A
	// difference between the canary and the primary counts only when its
	// p-value is below alpha.
	// +kubebuilder:validation:XValidation:rule="self > 0.0 && self < 0.5",message="analysis.judge.alpha is a significance level: more than 0 and less than 0.5 (0.05 by default)"
	// +optional
	Alpha *float64 `json:"alpha,omitempty"`

	// Step is the time between two values of a judged metric's series,
	// from 1s to 1h; defaults to 30s. Each value is the metric's query
	// with {{ interval }} set to the step, so that the values cover
	// distinct windows: make it at least twice Prometheus' scrape
	// interval, and give the metric an interval of at least four steps
	// (ten give the test some power).
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$') || (duration(self) >= duration('1s') && duration(self) <= duration('1h'))",message="analysis.judge.step, the time between two values of a judged series, must be between 1s and 1h"
	// +optional
	Step *metav1.Duration `json:"step,omitempty"`

	// Window is the time each step's judgement looks back over. Sliding,
	// the default: each metric's interval. Growing: everything since the
	// analysis of this revision started, as Spinnaker's canary analysis
	// does by default, so that each step judges more requests than the
	// last; the thresholdRange of a metric keeps reading its interval.
	// +kubebuilder:validation:Enum=Sliding;Growing
	// +optional
	Window JudgeWindow `json:"window,omitempty"`

	// Baseline, when true, runs <target>-baseline during each analysis:
	// a Deployment of the primary's pod template (the last promoted
	// revision) at the canary's replicas, created when the analysis
	// starts and removed when it ends, behind the Service
	// <service>-baseline. The HTTPRoute gives it the canary's weight,
	// taken from the primary's share, once it has a ready pod, and the
	// judge compares the canary with it rather than with the primary:
	// pods as young as the canary's, on as much traffic. It needs a
	// Deployment target, routing.provider gatewayapi and weights of at
	// most 50. Defaults to false: the judge compares with the primary.
	// +optional
	Baseline bool `json:"baseline,omitempty"`
}

// JudgeWindow is the time a judgement looks back over.
type JudgeWindow string

const (
	// JudgeWindowSliding: each judged metric's interval, up to now.
	JudgeWindowSliding JudgeWindow = "Sliding"
	// JudgeWindowGrowing: from the start of the analysis up to now.
	JudgeWindowGrowing JudgeWindow = "Growing"
)

// GetWindow is the judgement's window, Sliding when unset.
func (in *AnalysisJudge) GetWindow() JudgeWindow {
	if in == nil || in.Window == "" {
		return JudgeWindowSliding
	}
	return in.Window
}

// GetPassScore is the pass score, DefaultJudgePassScore when unset.
func (in *AnalysisJudge) GetPassScore() int {
	if in == nil || in.PassScore == nil {
		return DefaultJudgePassScore
	}
	return *in.PassScore
}

// GetMarginalScore is the marginal score, DefaultJudgeMarginalScore when
// unset.
func (in *AnalysisJudge) GetMarginalScore() int {
	if in == nil || in.MarginalScore == nil {
		return DefaultJudgeMarginalScore
	}
	return *in.MarginalScore
}

// GetAlpha is the significance level, DefaultJudgeAlpha when unset.
func (in *AnalysisJudge) GetAlpha() float64 {
	if in == nil || in.Alpha == nil {
		return DefaultJudgeAlpha
	}
	return *in.Alpha
}

// GetStep is the time between two values of a judged series,
// DefaultJudgeStep when unset.
func (in *AnalysisJudge) GetStep() time.Duration {
	if in == nil || in.Step == nil || in.Step.Duration <= 0 {
		return DefaultJudgeStep
	}
	return in.Step.Duration
}

// SessionAffinity is the cookie that pins a user to the side that served
// them during a rollout with weights (Flagger's sessionAffinity). The
// cookie's value is the revision under analysis, so each rollout has its
// own; once the rollout ends, requests that carry it are told to drop it.
// +kubebuilder:validation:XValidation:rule="!has(self.primaryCookieName) || self.primaryCookieName != self.cookieName",message="sessionAffinity.primaryCookieName must differ from cookieName"
type SessionAffinity struct {
	// CookieName is the cookie set by the canary's answers; requests with
	// it go to the canary.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9!#$%&'*+\-.^_\x60|~]+$`
	// +required
	CookieName string `json:"cookieName"`

	// PrimaryCookieName, when set, is a cookie set by the primary's answers
	// during the rollout (for one analysis interval): requests with it stay
	// on the primary, so that a user who reached the primary is not sent to
	// the canary by a later weight.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9!#$%&'*+\-.^_\x60|~]+$`
	// +optional
	PrimaryCookieName string `json:"primaryCookieName,omitempty"`

	// MaxAge is the canary cookie's lifetime in seconds; defaults to 86400
	// (a day).
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxAge int `json:"maxAge,omitempty"`

	// Domain is the cookie's Domain attribute.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Domain string `json:"domain,omitempty"`

	// Path is the cookie's Path attribute.
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/[^;]*$`
	// +optional
	Path string `json:"path,omitempty"`

	// HTTPOnly sets the cookie's HttpOnly attribute.
	// +optional
	HTTPOnly bool `json:"httpOnly,omitempty"`

	// Secure sets the cookie's Secure attribute.
	// +optional
	Secure bool `json:"secure,omitempty"`

	// SameSite is the cookie's SameSite attribute.
	// +kubebuilder:validation:Enum=Strict;Lax;None
	// +optional
	SameSite string `json:"sameSite,omitempty"`

	// Partitioned sets the cookie's Partitioned attribute.
	// +optional
	Partitioned bool `json:"partitioned,omitempty"`
}

// GetMaxAge returns the canary cookie's lifetime in seconds.
func (s *SessionAffinity) GetMaxAge() int {
	if s.MaxAge > 0 {
		return s.MaxAge
	}
	return 86400
}

// Names of the built-in checks, Flagger's: they need no MetricTemplate.
const (
	// RequestSuccessRateCheck is the percentage of non-5xx responses the
	// canary served in the metric's interval (thresholdRange.min, e.g. 99).
	RequestSuccessRateCheck = "request-success-rate"
	// RequestDurationCheck is the 99th percentile of the canary's response
	// times in the metric's interval, in milliseconds (thresholdRange.max).
	RequestDurationCheck = "request-duration"
	// GRPCSuccessRateCheck is the percentage of the gRPC calls the canary
	// answered in the metric's interval without a server error (a code gRPC
	// maps to HTTP 5xx: Unknown, DeadlineExceeded, Unimplemented, Internal,
	// Unavailable, DataLoss): from Traefik's gRPC codes on the traefik data
	// plane, else from the canary pods' own grpc_server_handled_total, since
	// most proxies count a gRPC error as an HTTP 200 (thresholdRange.min,
	// e.g. 99).
	GRPCSuccessRateCheck = "grpc-success-rate"
	// PodRestartsCheck is the number of container restarts of the
	// canary's pods, read from the API server when the step runs (an OOM
	// kill or a crash loop is a restart): it needs no data plane and no
	// Prometheus. thresholdRange.max, 0 when no thresholdRange is set.
	PodRestartsCheck = "pod-restarts"
)

// CanaryMetric is one metric check of the analysis: a MetricTemplate's
// query, or, without templateRef, one of the built-in checks.
// +kubebuilder:validation:XValidation:rule="has(self.templateRef) || self.name in ['request-success-rate', 'request-duration', 'grpc-success-rate', 'pod-restarts']",message="templateRef is required unless name is a built-in check: request-success-rate, request-duration, grpc-success-rate or pod-restarts"
// +kubebuilder:validation:XValidation:rule="has(self.templateRef) || self.name != 'pod-restarts' || !has(self.judge)",message="pod-restarts counts the restarts of the side's pods from the API server, a number and not a series: hold it to thresholdRange.max (none means no restart at all) and remove judge"
type CanaryMetric struct {
	// Name of the check, shown in events and status. Without templateRef,
	// request-success-rate and request-duration name the built-in checks
	// that query the data plane's metrics (routing.dataPlane),
	// grpc-success-rate the one that queries the canary pods' gRPC codes,
	// and pod-restarts the one that counts the canary pods' container
	// restarts (OOM kills, crash loops) from the API server.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// TemplateRef names the MetricTemplate that holds the provider and query.
	// Required unless name is a built-in check; when set, the template's
	// query runs, whatever the name.
	// +optional
	TemplateRef *TemplateReference `json:"templateRef,omitempty"`

	// TemplateVariables are available to the query as {{ variables.NAME }}
	// (MetricTemplates only): at most 32, names of at most 63 characters,
	// values of at most 1024.
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 63 && size(self[k]) <= 1024)",message="templateVariables names are at most 63 characters and values at most 1024: a query variable is a label value or a short expression, not a document"
	// +optional
	TemplateVariables map[string]string `json:"templateVariables,omitempty"`

	// ThresholdRange is the range the query result must lie in.
	// +optional
	ThresholdRange *ThresholdRange `json:"thresholdRange,omitempty"`

	// Interval is the query's range window, {{ interval }} in the template,
	// from 1s to 24h; defaults to the analysis interval.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$') || (duration(self) >= duration('1s') && duration(self) <= duration('24h'))",message="metrics[].interval, the query's range window, must be between 1s and 24h"
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`

	// Judge compares the canary with the primary on this metric, over the
	// metric's interval, instead of (or as well as) holding it to a fixed
	// range: the query runs for each side as a series, and a Mann-Whitney
	// test says whether the canary is significantly and substantially
	// worse (analysis.judge scores the judged metrics together). With a
	// thresholdRange too, both must pass: the range is a hard floor, the
	// judge a relative bound. The query must tell the sides apart: the
	// built-in checks do, and a MetricTemplate must select the workload
	// with {{ target }} (the primary's is {{ target }}-primary) and use the
	// prometheus provider; otherwise the check fails saying so.
	// +optional
	Judge *MetricJudge `json:"judge,omitempty"`
}

// JudgeDirection is which change of a judged metric is bad.
// +kubebuilder:validation:Enum=Increase;Decrease;Either
type JudgeDirection string

const (
	// JudgeIncrease: a canary higher than the primary is bad (an error
	// rate, a latency).
	JudgeIncrease JudgeDirection = "Increase"
	// JudgeDecrease: a canary lower than the primary is bad (a success
	// rate, a throughput).
	JudgeDecrease JudgeDirection = "Decrease"
	// JudgeEither: a change either way is bad. The default.
	JudgeEither JudgeDirection = "Either"
)

// MetricJudge says how the judge compares the canary with the primary on
// one metric.
// +kubebuilder:validation:XValidation:rule="!has(self.maxIncreasePercent) || !has(self.direction) || self.direction != 'Decrease'",message="judge.maxIncreasePercent tolerates an increase, which direction Decrease never counts as bad: remove it, or change the direction"
// +kubebuilder:validation:XValidation:rule="!has(self.maxDecreasePercent) || !has(self.direction) || self.direction != 'Increase'",message="judge.maxDecreasePercent tolerates a decrease, which direction Increase never counts as bad: remove it, or change the direction"
type MetricJudge struct {
	// Direction is which change of the canary against the primary is bad:
	// Increase (an error rate, a latency), Decrease (a success rate) or
	// Either; defaults to Either. A significant change the other way
	// passes, and is reported.
	// +optional
	Direction JudgeDirection `json:"direction,omitempty"`

	// MaxIncreasePercent is how much higher, in percent, the canary's mean
	// may be than the primary's before a significant increase is bad: 10
	// tolerates 10 % more. From 0 to 1000; defaults to 0 (any significant
	// increase is bad). For a metric tested on its requests, as
	// MaxDecreasePercent says.
	// +kubebuilder:validation:XValidation:rule="self >= 0.0 && self <= 1000.0",message="judge.maxIncreasePercent must be between 0 and 1000 (percent)"
	// +optional
	MaxIncreasePercent *float64 `json:"maxIncreasePercent,omitempty"`

	// MaxDecreasePercent is how much lower, in percent, the canary's mean
	// may be than the primary's before a significant decrease is bad: 10
	// tolerates 10 % less. From 0 to less than 100; defaults to 0 (any
	// significant decrease is bad). For the built-in success rate, tested
	// on its requests, the tolerance is held against the far end of the
	// change's confidence interval: a significant decrease passes only when
	// the data show it is within.
	// +kubebuilder:validation:XValidation:rule="self >= 0.0 && self < 100.0",message="judge.maxDecreasePercent must be at least 0 and less than 100 (percent)"
	// +optional
	MaxDecreasePercent *float64 `json:"maxDecreasePercent,omitempty"`

	// Weight of the metric in the step's score, from 1 to 100; defaults
	// to 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	Weight *int `json:"weight,omitempty"`

	// Critical makes the metric, when bad, fail the step's judgement
	// whatever the score.
	// +optional
	Critical bool `json:"critical,omitempty"`
}

// TemplateReference names a MetricTemplate.
type TemplateReference struct {
	// Name of the MetricTemplate.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// Namespace of the MetricTemplate; defaults to the Canary's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// ThresholdRange bounds a metric's value. A value outside it fails the check.
// +kubebuilder:validation:XValidation:rule="has(self.min) || has(self.max)",message="thresholdRange needs min, max or both"
// +kubebuilder:validation:XValidation:rule="!has(self.min) || !has(self.max) || self.min <= self.max",message="thresholdRange.min must not exceed thresholdRange.max"
type ThresholdRange struct {
	// Min is the lowest passing value.
	// +optional
	Min *float64 `json:"min,omitempty"`

	// Max is the highest passing value.
	// +optional
	Max *float64 `json:"max,omitempty"`
}

// HookType is when a webhook is called, with Flagger's semantics.
// +kubebuilder:validation:Enum=confirm-rollout;pre-rollout;rollout;confirm-traffic-increase;confirm-promotion;post-rollout;rollback;event
type HookType string

const (
	// ConfirmRolloutHook gates the start of a rollout until it returns 2xx.
	ConfirmRolloutHook HookType = "confirm-rollout"
	// PreRolloutHook runs before traffic shifts; a failure counts as a failed check.
	PreRolloutHook HookType = "pre-rollout"
	// RolloutHook runs at every step; a failure counts as a failed check.
	RolloutHook HookType = "rollout"
	// ConfirmTrafficIncreaseHook gates every weight increase until it returns 2xx.
	ConfirmTrafficIncreaseHook HookType = "confirm-traffic-increase"
	// ConfirmPromotionHook gates the promotion until it returns 2xx.
	ConfirmPromotionHook HookType = "confirm-promotion"
	// PostRolloutHook runs after promotion or rollback; its result is logged.
	PostRolloutHook HookType = "post-rollout"
	// RollbackHook is polled during the analysis; a 2xx rolls back at once.
	RollbackHook HookType = "rollback"
	// EventHook receives every event, fire-and-forget.
	EventHook HookType = "event"
)

// IsLong reports whether a hook type may run for minutes (up to
// MaxLongHookTimeout): pre-rollout, rollout (the default type) and
// post-rollout, a load test's kinds.
func (t HookType) IsLong() bool {
	return t == PreRolloutHook || t == RolloutHook || t == PostRolloutHook || t == ""
}

// CanaryWebhook is a gate or hook called during the rollout.
// +kubebuilder:validation:XValidation:rule="!has(self.timeout) || !self.timeout.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$') || !has(self.type) || self.type in ['pre-rollout', 'rollout', 'post-rollout'] || duration(self.timeout) <= duration('30s')",message="webhooks[].timeout is at most 30s for confirm-rollout, confirm-traffic-increase, confirm-promotion, rollback and event hooks; pre-rollout, rollout and post-rollout hooks may take up to 30m"
type CanaryWebhook struct {
	// Name of the webhook, shown in events and status.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// Type says when the webhook is called; defaults to rollout.
	// +kubebuilder:default=rollout
	// +optional
	Type HookType `json:"type,omitempty"`

	// URL the payload is POSTed to: an absolute http or https URL of at
	// most 2048 characters.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHostname() != ''",message="webhooks[].url must be an absolute http:// or https:// URL"
	// +required
	URL string `json:"url"`

	// Timeout of one call; defaults to 10s. At most 30m for pre-rollout,
	// rollout and post-rollout hooks (load tests run for minutes), at most
	// 30s for the others. It bounds each attempt; the agent also bounds an
	// analysis step as a whole, retries included, by
	// --analysis-step-timeout or, when a hook's timeout is longer, by that.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$') || (duration(self) > duration('0s') && duration(self) <= duration('30m'))",message="webhooks[].timeout bounds one call and must be more than 0s and at most 30m"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// Retries of a failed call within one step, from 0 to 3.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3
	// +optional
	Retries int `json:"retries,omitempty"`

	// Metadata is sent in the payload's metadata field: at most 32 entries,
	// keys of at most 253 characters, values of at most 4096.
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 253 && size(self[k]) <= 4096)",message="webhooks[].metadata keys are at most 253 characters and values at most 4096: every event of the Canary carries them"
	// +optional
	Metadata map[string]string `json:"metadata,omitempty"`

	// SigningSecretRef names a Secret in the Canary's namespace whose
	// `token` key (surrounding whitespace trimmed) signs each call: serin
	// sends the header X-Serin-Timestamp, the time of the call in Unix
	// seconds, and X-Serin-Signature-256: sha256=<hex>, the lowercase hex
	// HMAC-SHA256, keyed with the token, of the timestamp, a dot and the
	// request body as sent ("<timestamp>.<body>"). A receiver recomputes it,
	// compares in constant time and refuses old timestamps
	// (docs/security.md#signed-webhooks). The Secret is read as the
	// Canary's service account; a missing Secret or key fails the call.
	// +optional
	SigningSecretRef *meta.LocalObjectReference `json:"signingSecretRef,omitempty"`
}

// FailurePolicy is what serin does when the primary fails during promotion.
// +kubebuilder:validation:Enum=Halt;RestorePrimary
type FailurePolicy string

const (
	// HaltPolicy stops with phase Halted: routing is left as it is and the
	// canary keeps serving until a person or a new Git revision acts.
	HaltPolicy FailurePolicy = "Halt"
	// RestorePrimaryPolicy also rolls the primary back to its last known good
	// template, then routes back to it and scales the canary down.
	RestorePrimaryPolicy FailurePolicy = "RestorePrimary"
)

// PromotionPolicy defines the handling of a failed promotion.
type PromotionPolicy struct {
	// FailurePolicy is Halt (default) or RestorePrimary.
	// +kubebuilder:default=Halt
	// +optional
	FailurePolicy FailurePolicy `json:"failurePolicy,omitempty"`
}

// RevertTrigger is a phase that triggers a GitOps revert.
// +kubebuilder:validation:Enum=Halted;Failed
type RevertTrigger string

// RevertMode is how a revert reaches the Git repository.
// +kubebuilder:validation:Enum=PullRequest;Push
type RevertMode string

const (
	// PullRequestRevert pushes a branch and opens a pull request.
	PullRequestRevert RevertMode = "PullRequest"
	// PushRevert pushes the revert commit to the tracked branch (fast-forward only).
	PushRevert RevertMode = "Push"
)

// GitOpsSpec configures serin's writes to the target's Git source.
type GitOpsSpec struct {
	// Revert configures the revert of a bad revision.
	// +optional
	Revert *RevertSpec `json:"revert,omitempty"`

	// Promote lists the next stages of the wave: where a revision this
	// Canary promoted goes next, through Git. Each stage gets one pull
	// request (or push) per revision, with the promoted images written in
	// its kustomization's images:, and reports the verdict of its own
	// Canary back through the Git host's commit statuses.
	// +listType=map
	// +listMapKey=stage
	// +kubebuilder:validation:MaxItems=5
	// +optional
	Promote []PromotionTarget `json:"promote,omitempty"`
}

// PromotionTarget is the next stage of a wave.
// +kubebuilder:validation:XValidation:rule="!self.path.split('/').exists(s, s == '..')",message="promote[].path must stay inside the repository: no '..' segment"
// +kubebuilder:validation:XValidation:rule="!self.path.startsWith('/')",message="promote[].path is relative to the repository's root, as a Kustomization's spec.path: no leading '/'"
// +kubebuilder:validation:XValidation:rule="!self.path.split('/').exists(s, s.lowerAscii() == '.git')",message="promote[].path must not name a '.git' segment: Git's own directory is never a stage"
// +kubebuilder:validation:XValidation:rule="!has(self.soak) || duration(self.soak) <= duration('24h')",message="promote[].soak must be at most 24h"
type PromotionTarget struct {
	// Stage names the next stage, e.g. production: the branch, the
	// commit's trailers and `serin promote --to` use it.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
	// +required
	Stage string `json:"stage"`

	// Path is the next stage's Kustomization spec.path in the repository:
	// the directory whose kustomization.yaml gets the promoted images.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +required
	Path string `json:"path"`

	// SourceRef names a GitRepository, in the Canary's namespace, whose
	// URL, branch and credentials the promotion uses; defaults to the
	// GitRepository behind this stage's Kustomization.
	// +optional
	SourceRef *meta.LocalObjectReference `json:"sourceRef,omitempty"`

	// Branch of the next stage; defaults to the source's branch. A branch
	// name as Git accepts it (git check-ref-format --branch): no space,
	// control character or any of ~ ^ : ? * [ \, no '..', '@{' or '//', no
	// component that starts with '.' or ends with '.lock', neither
	// starting with '-' or '/' nor ending with '/' or '.'.
	// +kubebuilder:validation:MaxLength=250
	// +kubebuilder:validation:XValidation:rule="!self.matches(r'[\\x00-\\x20\\x7f~^:?*\\[\\\\]')",message="promote[].branch must be a Git branch name: no space, control character or any of ~ ^ : ? * [ \\"
	// +kubebuilder:validation:XValidation:rule="!self.contains('..') && !self.contains('@{') && !self.contains('//') && self != '@'",message="promote[].branch must be a Git branch name: no '..', '@{' or '//', and not '@'"
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('-') && !self.startsWith('/') && !self.endsWith('/') && !self.endsWith('.') && !self.split('/').exists(c, c.startsWith('.') || c.endsWith('.lock'))",message="promote[].branch must be a Git branch name: not starting with '-' or '/', not ending with '/' or '.', no component starting with '.' or ending with '.lock'"
	// +optional
	Branch string `json:"branch,omitempty"`

	// TargetName is the name of the next stage's workload (of this
	// Canary's target kind); defaults to this Canary's target's name.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	TargetName string `json:"targetName,omitempty"`

	// Canary names the next stage's Canary, whose commit status
	// (context serin/[CLUSTER/]NAMESPACE/NAME, posted by its spec.alerts'
	// commit status Provider) is read back as the stage's verdict;
	// defaults to a Canary of this Canary's name and namespace.
	// +optional
	Canary *PromotionCanaryReference `json:"canary,omitempty"`

	// Mode is PullRequest (default) or Push, as for reverts.
	// +kubebuilder:default=PullRequest
	// +optional
	Mode RevertMode `json:"mode,omitempty"`

	// Soak is how long the promoted primary keeps serving, with this
	// Canary's metric checks passing on it at every analysis interval,
	// before the promotion is written: the soak ends once a check made
	// within an interval of its end passed. As many failed checks as the
	// analysis threshold stop the wave (Stopped) and alert. A soak holds
	// the primary to the metrics' thresholdRange (a judge block compares
	// a canary with the primary, and there is no canary during a soak), so
	// at least one of analysis.metrics needs a thresholdRange.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +optional
	Soak *metav1.Duration `json:"soak,omitempty"`
}

// PromotionCanaryReference names the next stage's Canary.
type PromotionCanaryReference struct {
	// Name of the Canary.
	// +kubebuilder:validation:MaxLength=63
	// +required
	Name string `json:"name"`
	// Namespace of the Canary; defaults to this Canary's.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Cluster is the --cluster-name of the agent that runs the Canary,
	// when the stage runs in another cluster: its verdict is read under
	// the context serin/CLUSTER/NAMESPACE/NAME, so that two clusters
	// applying the same path never overwrite each other's. Empty reads
	// serin/NAMESPACE/NAME (an agent without --cluster-name).
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
	// +optional
	Cluster string `json:"cluster,omitempty"`
}

// CommitStatusContext is the context of the commit statuses a Canary
// posts (its spec.alerts' commit-status Providers) and a wave reads: its
// agent's cluster name (--cluster-name), when set, its namespace and its
// name.
func CommitStatusContext(cluster, namespace, name string) string {
	if cluster == "" {
		return "serin/" + namespace + "/" + name
	}
	return "serin/" + cluster + "/" + namespace + "/" + name
}

// Phases of a stage of a wave (status.promotions[].phase).
const (
	// WaveSoaking: the promoted primary serves with its checks passing
	// until soakUntil.
	WaveSoaking = "Soaking"
	// WavePromoting: the promotion is being written to Git (retried with
	// backoff while the Git host fails).
	WavePromoting = "Promoting"
	// WaveOpened: the pull request is open, waiting for a merge.
	WaveOpened = "Opened"
	// WaveMerged: the promotion is in the stage's branch; its Canary has
	// not reported yet.
	WaveMerged = "Merged"
	// WaveProgressing: the stage's Canary reports a rollout in progress.
	WaveProgressing = "Progressing"
	// WaveSucceeded: the stage's Canary promoted the revision.
	WaveSucceeded = "Succeeded"
	// WaveFailed: the stage's Canary failed the revision.
	WaveFailed = "Failed"
	// WaveStopped: a check failed on the primary during the soak; nothing
	// was written.
	WaveStopped = "Stopped"
	// WaveError: the promotion cannot be written, or its pull request was
	// closed without a merge (the message says which); a person must act.
	WaveError = "Error"
	// WaveUpToDate: the stage already ran the promoted images; nothing was
	// written and no verdict is awaited.
	WaveUpToDate = "UpToDate"
)

// CommitStatusDelivery is a verdict's commit status on its way to the
// commit-status Providers of spec.alerts.
type CommitStatusDelivery struct {
	// Revision is the Flux revision whose commit gets the status.
	Revision string `json:"revision"`
	// Phase is the verdict: Succeeded, Failed or Halted.
	Phase CanaryPhase `json:"phase"`
	// Severity is the verdict event's (info, warn, error).
	Severity string `json:"severity"`
	// Message is the verdict event's message, the status's description.
	Message string `json:"message,omitempty"`
	// Providers are the Providers (NAMESPACE/NAME) that have not
	// acknowledged it yet; empty once every one did.
	// +optional
	Providers []string `json:"providers,omitempty"`
	// Attempts counts the failed deliveries in a row.
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// NextAttemptTime is when a failed delivery is tried again.
	// +optional
	NextAttemptTime *metav1.Time `json:"nextAttemptTime,omitempty"`
	// LastError is why the last delivery failed.
	// +optional
	LastError string `json:"lastError,omitempty"`
}

// PromotionStatus is where one revision stands in one stage of the wave.
type PromotionStatus struct {
	// Stage is the stage's name (spec.gitops.promote[].stage).
	Stage string `json:"stage"`
	// Revision is this Canary's promoted Flux revision being promoted.
	Revision string `json:"revision"`
	// Images are the promoted images written to the stage.
	// +optional
	Images []string `json:"images,omitempty"`
	// Phase is Soaking, Promoting, Opened, Merged, Progressing,
	// Succeeded, Failed, Stopped, Error or UpToDate.
	Phase string `json:"phase"`
	// Message explains the phase.
	// +optional
	Message string `json:"message,omitempty"`
	// Overdue is true once the stage waited in its phase past the
	// phase's bound (Opened 24h, Merged 30m, Progressing 2h) and warned.
	// +optional
	Overdue bool `json:"overdue,omitempty"`
	// StartedAt is when the wave of this revision started for the stage,
	// or when a person last promoted it by hand: in mode Push, a change
	// to the stage's path after it that serin did not write refuses the
	// promotion (Error), so that serin never writes over it.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// SoakUntil is when the soak ends.
	// +optional
	SoakUntil *metav1.Time `json:"soakUntil,omitempty"`
	// CheckedAt is when the last check of the soak was made.
	// +optional
	CheckedAt *metav1.Time `json:"checkedAt,omitempty"`
	// Checks counts the checks made during the soak: one per analysis
	// interval of the soak must be made (a check missed while the agent
	// was down is made late) before the stage is promoted.
	// +optional
	Checks int32 `json:"checks,omitempty"`
	// FailedChecks counts the checks that failed in a row during the
	// soak; at the analysis threshold (analysis.threshold, default 5) the
	// wave stops.
	// +optional
	FailedChecks int32 `json:"failedChecks,omitempty"`
	// Branch the promotion commit was pushed to.
	// +optional
	Branch string `json:"branch,omitempty"`
	// Commit is the promotion commit.
	// +optional
	Commit string `json:"commit,omitempty"`
	// PullRequestURL is the promotion's pull request.
	// +optional
	PullRequestURL string `json:"pullRequestURL,omitempty"`
	// StageCommit is the commit of the stage's branch whose commit status
	// gave the verdict.
	// +optional
	StageCommit string `json:"stageCommit,omitempty"`
	// URL is the link the stage's Canary gave with its status.
	// +optional
	URL string `json:"url,omitempty"`
	// Attempts is how many times writing the promotion failed in a way a
	// retry may fix.
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// NextAttemptTime is when the Git host is asked again.
	// +optional
	NextAttemptTime *metav1.Time `json:"nextAttemptTime,omitempty"`
	// LastTransitionTime is when the phase last changed.
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
	// Covers names the other members of the CanaryGroup's release whose
	// images this Canary's promotion of the stage carries too: one pull
	// request (or push) for the release.
	// +optional
	Covers []string `json:"covers,omitempty"`
	// CoveredBy names the member of the CanaryGroup's release whose
	// promotion of the stage carries this Canary's images; this entry
	// shows that promotion's state.
	// +optional
	CoveredBy string `json:"coveredBy,omitempty"`
	// CoveredImages are the images of the members in Covers as this
	// promotion wrote them: its verdict is read on those, whatever a
	// member promoted since (a newer commit that changed it alone).
	// +optional
	CoveredImages []MemberImages `json:"coveredImages,omitempty"`
}

// MemberImages are the images of one member of a CanaryGroup's release,
// as a promotion of the release wrote them.
type MemberImages struct {
	// Canary is the member's name.
	Canary string `json:"canary"`
	// Images are its primary's images the promotion wrote.
	// +optional
	Images []string `json:"images,omitempty"`
}

// RevertSpec configures the revert of a bad revision in Git.
type RevertSpec struct {
	// On lists the phases that trigger a revert; defaults to [Halted].
	// +kubebuilder:validation:MaxItems=2
	// +optional
	On []RevertTrigger `json:"on,omitempty"`

	// Mode is PullRequest (default) or Push.
	// +kubebuilder:default=PullRequest
	// +optional
	Mode RevertMode `json:"mode,omitempty"`
}

// AlertSeverity filters the events sent to a Provider.
// +kubebuilder:validation:Enum=info;warn;error
type AlertSeverity string

// CanaryAlert sends this Canary's events to a Flux notification Provider.
type CanaryAlert struct {
	// Name of the alert, for people.
	// +optional
	Name string `json:"name,omitempty"`

	// ProviderRef names a notification.toolkit.fluxcd.io Provider; its
	// namespace defaults to the Canary's.
	// +required
	ProviderRef meta.NamespacedObjectReference `json:"providerRef"`

	// Severity is info (every event), warn (waits and failures) or error
	// (failures only); defaults to info.
	// +kubebuilder:default=info
	// +optional
	Severity AlertSeverity `json:"severity,omitempty"`
}

// CanaryPhase is the step of the rollout state machine a Canary is in.
type CanaryPhase string

const (
	// PhaseInitializing: the primary copy and Services are being created.
	PhaseInitializing CanaryPhase = "Initializing"
	// PhaseInitialized: the primary serves; no rollout is running.
	PhaseInitialized CanaryPhase = "Initialized"
	// PhaseWaiting: a new revision waits at the confirm-rollout gate.
	PhaseWaiting CanaryPhase = "Waiting"
	// PhaseProgressing: the analysis of a new revision is running.
	PhaseProgressing CanaryPhase = "Progressing"
	// PhaseWaitingPromotion: the analysis passed; the confirm-promotion gate holds.
	PhaseWaitingPromotion CanaryPhase = "WaitingPromotion"
	// PhasePromoting: the primary is being updated to the new revision.
	PhasePromoting CanaryPhase = "Promoting"
	// PhaseFinalising: traffic returns to the promoted primary and the canary scales down.
	PhaseFinalising CanaryPhase = "Finalising"
	// PhaseSucceeded: the last revision was promoted.
	PhaseSucceeded CanaryPhase = "Succeeded"
	// PhaseFailed: the last revision was rolled back.
	PhaseFailed CanaryPhase = "Failed"
	// PhaseHalted: the primary failed during promotion; routing is frozen and
	// the canary keeps serving until a person or a new Git revision acts.
	PhaseHalted CanaryPhase = "Halted"
)

// CanaryStatus is the observed state of a Canary. It stores only what cannot
// be observed again: the rest is derived from the cluster at every reconcile.
type CanaryStatus struct {
	// ObservedGeneration is the last generation reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Phase of the rollout state machine.
	// +optional
	Phase CanaryPhase `json:"phase,omitempty"`

	// CanaryWeight is the traffic percentage currently routed to the canary.
	// +optional
	CanaryWeight int `json:"canaryWeight"`

	// FailedChecks counts the failed checks of the current analysis.
	// +optional
	FailedChecks int `json:"failedChecks"`

	// Iterations counts the analysis steps taken (blue/green).
	// +optional
	Iterations int `json:"iterations,omitempty"`

	// LastAppliedSpec is the hash of the target spec under analysis.
	// +optional
	LastAppliedSpec string `json:"lastAppliedSpec,omitempty"`

	// LastPromotedSpec is the hash of the target spec the primary runs.
	// +optional
	LastPromotedSpec string `json:"lastPromotedSpec,omitempty"`

	// LastAttemptedRevision is the Flux source revision (e.g. main@sha1:…)
	// of the target spec under analysis, when a Flux object applied it.
	// +optional
	LastAttemptedRevision string `json:"lastAttemptedRevision,omitempty"`

	// LastPromotedRevision is the Flux source revision of the promoted spec.
	// +optional
	LastPromotedRevision string `json:"lastPromotedRevision,omitempty"`

	// TrackedConfigs maps the ConfigMaps and Secrets the target mounts
	// (kind/name) to the hash of their data.
	// +optional
	TrackedConfigs map[string]string `json:"trackedConfigs,omitempty"`

	// Revert is the state of the GitOps revert of the last bad revision.
	// +optional
	Revert *RevertStatus `json:"revert,omitempty"`

	// Group is the Canary's place in its CanaryGroup's release, when a
	// CanaryGroup lists it.
	// +optional
	Group *GroupStatus `json:"group,omitempty"`

	// Promotions is where the last promoted revision stands in each stage
	// of the wave (spec.gitops.promote).
	// +listType=map
	// +listMapKey=stage
	// +kubebuilder:validation:MaxItems=5
	// +optional
	Promotions []PromotionStatus `json:"promotions,omitempty"`

	// CommitStatus is the commit status the last verdict (Succeeded,
	// Failed, Halted) owes the commit of its revision, through the
	// commit-status Providers of spec.alerts: kept until each of them
	// acknowledged it, retried with backoff, across restarts. The next
	// stage of a wave reads it.
	// +optional
	CommitStatus *CommitStatusDelivery `json:"commitStatus,omitempty"`

	// Analyses records the analysis of the last rollouts, newest first:
	// each step's weight, check values against their ranges and webhook
	// answers, and how the rollout ended. Bounded: MaxAnalysisRecords
	// rollouts, MaxAnalysisSteps steps in the newest and
	// MaxPastAnalysisSteps in the older ones.
	// +optional
	// +kubebuilder:validation:MaxItems=3
	Analyses []AnalysisRecord `json:"analyses,omitempty"`

	// LastTransitionTime is when the phase or the weight last changed; the
	// next analysis step is due one interval after it (microseconds, so
	// that sub-second schedules hold across restarts).
	// +optional
	LastTransitionTime *metav1.MicroTime `json:"lastTransitionTime,omitempty"`

	// HandledRequests records the promote, abort, retry and revert requests
	// (annotations) the agent acted on.
	// +optional
	HandledRequests HandledRequests `json:"handledRequests,omitempty"`

	// Conditions are Ready, Reconciling, Stalled and Promoted.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	meta.ReconcileRequestStatus `json:",inline"`
}

// RevertStatus records the GitOps revert of a bad revision.
type RevertStatus struct {
	// Revision is the bad Flux revision being reverted.
	Revision string `json:"revision"`
	// Branch the revert commit was pushed to.
	// +optional
	Branch string `json:"branch,omitempty"`
	// Commit is the revert commit's hash.
	// +optional
	Commit string `json:"commit,omitempty"`
	// PullRequestURL is the URL of the opened pull request.
	// +optional
	PullRequestURL string `json:"pullRequestURL,omitempty"`
	// State is Pending, Opened, Pushed, Merged, Retrying (the Git host
	// failed in a way a retry may fix: it is tried again at
	// nextAttemptTime) or Failed (a person must act: the message says
	// what).
	// +optional
	State string `json:"state,omitempty"`
	// Message explains the state; while Retrying, the last error.
	// +optional
	Message string `json:"message,omitempty"`
	// Attempts is how many times the revert of this revision failed in a
	// way a retry may fix.
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// NextAttemptTime is when a Retrying revert is tried again.
	// +optional
	NextAttemptTime *metav1.Time `json:"nextAttemptTime,omitempty"`
	// Covered are the members of the CanaryGroup's release this revert
	// restores (this Canary's repository and branch); a member applied
	// from another opens the revert of its own.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Covered []string `json:"covered,omitempty"`
}

// Canary drives the progressive delivery of a Deployment or Service. Its
// name labels every object serin generates (serin.dev/canary), so it is at
// most 63 characters, a label value's limit.
// +kubebuilder:validation:XValidation:rule="!has(self.metadata.name) || size(self.metadata.name) <= 63",message="metadata.name of a Canary must be at most 63 characters: serin labels the objects it generates with serin.dev/canary: <name>"
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=cn
// +kubebuilder:printcolumn:name="Status",type="string",JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="Weight",type="integer",JSONPath=".status.canaryWeight"
// +kubebuilder:printcolumn:name="Revision",type="string",JSONPath=".status.lastAttemptedRevision"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="FailedChecks",type="integer",JSONPath=".status.failedChecks",priority=1
// +kubebuilder:printcolumn:name="Interval",type="string",JSONPath=".spec.analysis.interval",priority=1
// +kubebuilder:printcolumn:name="StepWeight",type="integer",JSONPath=".spec.analysis.stepWeight",priority=1
// +kubebuilder:printcolumn:name="MaxWeight",type="integer",JSONPath=".spec.analysis.maxWeight",priority=1
// +kubebuilder:printcolumn:name="Suspended",type="boolean",JSONPath=".spec.suspend",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:selectablefield:JSONPath=".spec.targetRef.name"
type Canary struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec CanarySpec `json:"spec,omitempty"`
	// +kubebuilder:default={"observedGeneration":-1}
	Status CanaryStatus `json:"status,omitempty"`
}

// CanaryList contains a list of Canary.
// +kubebuilder:object:root=true
type CanaryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Canary `json:"items"`
}

func init() {
	knownTypes = append(knownTypes, &Canary{}, &CanaryList{})
}
