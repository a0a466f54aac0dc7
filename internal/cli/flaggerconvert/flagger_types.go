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
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// The types below mirror the parts of Flagger's flagger.app/v1beta1 API
// (pkg/apis/flagger/v1beta1) that a manifest can set, written from its
// documentation so that this package does not import Flagger. Fields serin
// cannot use at all are kept as raw JSON: only their presence matters. A
// field missing here is reported as unknown by the strict decoding.

type flaggerCanary struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       flaggerCanarySpec `json:"spec"`
	Status     json.RawMessage   `json:"status,omitempty"`
}

type flaggerCanarySpec struct {
	Provider                string                 `json:"provider,omitempty"`
	MetricsServer           string                 `json:"metricsServer,omitempty"`
	TargetRef               flaggerObjectReference `json:"targetRef"`
	AutoscalerRef           *flaggerAutoscalerRef  `json:"autoscalerRef,omitempty"`
	IngressRef              json.RawMessage        `json:"ingressRef,omitempty"`
	RouteRef                json.RawMessage        `json:"routeRef,omitempty"`
	UpstreamRef             json.RawMessage        `json:"upstreamRef,omitempty"`
	Service                 flaggerService         `json:"service"`
	Analysis                *flaggerAnalysis       `json:"analysis,omitempty"`
	CanaryAnalysis          *flaggerAnalysis       `json:"canaryAnalysis,omitempty"`
	ProgressDeadlineSeconds *int32                 `json:"progressDeadlineSeconds,omitempty"`
	SkipAnalysis            bool                   `json:"skipAnalysis,omitempty"`
	RevertOnDeletion        bool                   `json:"revertOnDeletion,omitempty"`
	Suspend                 bool                   `json:"suspend,omitempty"`
}

type flaggerObjectReference struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"`
}

type flaggerAutoscalerRef struct {
	APIVersion           string            `json:"apiVersion,omitempty"`
	Kind                 string            `json:"kind,omitempty"`
	Name                 string            `json:"name"`
	PrimaryScalerQueries map[string]string `json:"primaryScalerQueries,omitempty"`
	// PrimaryScalerReplicas are Flagger's ScalerReplicas, serin's too.
	PrimaryScalerReplicas *v1alpha1.ScalerReplicas `json:"primaryScalerReplicas,omitempty"`
}

type flaggerService struct {
	Name           string                   `json:"name,omitempty"`
	Port           int32                    `json:"port"`
	PortName       string                   `json:"portName,omitempty"`
	TargetPort     *intstr.IntOrString      `json:"targetPort,omitempty"`
	AppProtocol    string                   `json:"appProtocol,omitempty"`
	PortDiscovery  bool                     `json:"portDiscovery,omitempty"`
	BackendTimeout string                   `json:"backendTimeout,omitempty"`
	Timeout        string                   `json:"timeout,omitempty"`
	Gateways       []string                 `json:"gateways,omitempty"`
	GatewayRefs    []flaggerParentReference `json:"gatewayRefs,omitempty"`
	Hosts          []string                 `json:"hosts,omitempty"`
	Delegation     bool                     `json:"delegation,omitempty"`
	TrafficPolicy  json.RawMessage          `json:"trafficPolicy,omitempty"`
	Match          []flaggerMatchRequest    `json:"match,omitempty"`
	Rewrite        *flaggerRewrite          `json:"rewrite,omitempty"`
	Retries        *flaggerRetry            `json:"retries,omitempty"`
	Headers        *flaggerHeaders          `json:"headers,omitempty"`
	CorsPolicy     *flaggerCorsPolicy       `json:"corsPolicy,omitempty"`
	Mirror         []flaggerMirror          `json:"mirror,omitempty"`
	MeshName       string                   `json:"meshName,omitempty"`
	Backends       []string                 `json:"backends,omitempty"`
	Apex           *flaggerMetadata         `json:"apex,omitempty"`
	Primary        *flaggerMetadata         `json:"primary,omitempty"`
	Canary         *flaggerMetadata         `json:"canary,omitempty"`
}

// flaggerMetadata is Flagger's CustomMetadata: labels and annotations of a
// generated object.
type flaggerMetadata struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// flaggerMatchRequest is Istio's HTTPMatchRequest, which Flagger's
// gatewayapi router maps to an HTTPRouteMatch: uri, method, headers and
// queryParams; it ignores the rest.
type flaggerMatchRequest struct {
	Name            string                        `json:"name,omitempty"`
	URI             *flaggerStringMatch           `json:"uri,omitempty"`
	Scheme          json.RawMessage               `json:"scheme,omitempty"`
	Method          *flaggerStringMatch           `json:"method,omitempty"`
	Authority       json.RawMessage               `json:"authority,omitempty"`
	Headers         map[string]flaggerStringMatch `json:"headers,omitempty"`
	Port            json.RawMessage               `json:"port,omitempty"`
	SourceLabels    json.RawMessage               `json:"sourceLabels,omitempty"`
	Gateways        json.RawMessage               `json:"gateways,omitempty"`
	QueryParams     map[string]flaggerStringMatch `json:"queryParams,omitempty"`
	IgnoreURICase   json.RawMessage               `json:"ignoreUriCase,omitempty"`
	WithoutHeaders  json.RawMessage               `json:"withoutHeaders,omitempty"`
	SourceNamespace json.RawMessage               `json:"sourceNamespace,omitempty"`
}

// flaggerStringMatch is Istio's StringMatch: one of its fields is set.
type flaggerStringMatch struct {
	Exact  string `json:"exact,omitempty"`
	Prefix string `json:"prefix,omitempty"`
	Suffix string `json:"suffix,omitempty"`
	Regex  string `json:"regex,omitempty"`
}

// flaggerRewrite is Flagger's HTTPRewrite: uri replaces the full path, or
// with type ReplacePrefixMatch the matched prefix; authority the host.
type flaggerRewrite struct {
	URI       string `json:"uri,omitempty"`
	Authority string `json:"authority,omitempty"`
	Type      string `json:"type,omitempty"`
}

// flaggerRetry is Istio's HTTPRetry.
type flaggerRetry struct {
	Attempts      int    `json:"attempts"`
	PerTryTimeout string `json:"perTryTimeout,omitempty"`
	RetryOn       string `json:"retryOn,omitempty"`
}

// flaggerHeaders is Istio's Headers: operations on request and response
// headers.
type flaggerHeaders struct {
	Request  *flaggerHeaderOperations `json:"request,omitempty"`
	Response *flaggerHeaderOperations `json:"response,omitempty"`
}

type flaggerHeaderOperations struct {
	Set    map[string]string `json:"set,omitempty"`
	Add    map[string]string `json:"add,omitempty"`
	Remove []string          `json:"remove,omitempty"`
}

// flaggerMirror is Gateway API's HTTPRequestMirrorFilter (v1beta1), as
// Flagger's gatewayapi router takes it in service.mirror.
type flaggerMirror struct {
	BackendRef struct {
		Group     *string `json:"group,omitempty"`
		Kind      *string `json:"kind,omitempty"`
		Name      string  `json:"name"`
		Namespace *string `json:"namespace,omitempty"`
		Port      *int32  `json:"port,omitempty"`
	} `json:"backendRef"`
}

// flaggerCorsPolicy is Istio's CorsPolicy.
type flaggerCorsPolicy struct {
	AllowOrigin      []string             `json:"allowOrigin,omitempty"`
	AllowOrigins     []flaggerStringMatch `json:"allowOrigins,omitempty"`
	AllowMethods     []string             `json:"allowMethods,omitempty"`
	AllowHeaders     []string             `json:"allowHeaders,omitempty"`
	ExposeHeaders    []string             `json:"exposeHeaders,omitempty"`
	MaxAge           string               `json:"maxAge,omitempty"`
	AllowCredentials bool                 `json:"allowCredentials,omitempty"`
}

// flaggerParentReference is a Gateway API ParentReference.
type flaggerParentReference struct {
	Group       *string `json:"group,omitempty"`
	Kind        *string `json:"kind,omitempty"`
	Namespace   *string `json:"namespace,omitempty"`
	Name        string  `json:"name"`
	SectionName *string `json:"sectionName,omitempty"`
	Port        *int32  `json:"port,omitempty"`
}

type flaggerAnalysis struct {
	Interval              string           `json:"interval,omitempty"`
	Iterations            int              `json:"iterations,omitempty"`
	Mirror                bool             `json:"mirror,omitempty"`
	MirrorWeight          int              `json:"mirrorWeight,omitempty"`
	MaxWeight             int              `json:"maxWeight,omitempty"`
	StepWeight            int              `json:"stepWeight,omitempty"`
	StepWeights           []int            `json:"stepWeights,omitempty"`
	StepWeightPromotion   int              `json:"stepWeightPromotion,omitempty"`
	Threshold             int              `json:"threshold,omitempty"`
	PrimaryReadyThreshold *int             `json:"primaryReadyThreshold,omitempty"`
	CanaryReadyThreshold  *int             `json:"canaryReadyThreshold,omitempty"`
	Alerts                json.RawMessage  `json:"alerts,omitempty"`
	Metrics               []flaggerMetric  `json:"metrics,omitempty"`
	Webhooks              []flaggerWebhook `json:"webhooks,omitempty"`
	Match                 json.RawMessage  `json:"match,omitempty"`
	// SessionAffinity has serin's fields, Flagger's names and types.
	SessionAffinity *v1alpha1.SessionAffinity `json:"sessionAffinity,omitempty"`
}

type flaggerMetric struct {
	Name              string                  `json:"name"`
	Interval          string                  `json:"interval,omitempty"`
	Threshold         *float64                `json:"threshold,omitempty"`
	ThresholdRange    *flaggerThresholdRange  `json:"thresholdRange,omitempty"`
	Query             string                  `json:"query,omitempty"`
	TemplateRef       *flaggerObjectReference `json:"templateRef,omitempty"`
	TemplateVariables map[string]string       `json:"templateVariables,omitempty"`
}

type flaggerThresholdRange struct {
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
}

type flaggerWebhook struct {
	Type      string            `json:"type,omitempty"`
	Name      string            `json:"name"`
	URL       string            `json:"url"`
	MuteAlert bool              `json:"muteAlert,omitempty"`
	Timeout   string            `json:"timeout,omitempty"`
	Retries   int               `json:"retries,omitempty"`
	Metadata  map[string]string `json:"metadata,omitempty"`
}

type flaggerMetricTemplate struct {
	APIVersion string                    `json:"apiVersion"`
	Kind       string                    `json:"kind"`
	Metadata   metav1.ObjectMeta         `json:"metadata"`
	Spec       flaggerMetricTemplateSpec `json:"spec"`
	Status     json.RawMessage           `json:"status,omitempty"`
}

type flaggerMetricTemplateSpec struct {
	Provider flaggerMetricProvider `json:"provider"`
	Query    string                `json:"query,omitempty"`
}

type flaggerMetricProvider struct {
	Type               string                  `json:"type,omitempty"`
	Address            string                  `json:"address,omitempty"`
	Headers            map[string][]string     `json:"headers,omitempty"`
	SecretRef          *flaggerSecretReference `json:"secretRef,omitempty"`
	Region             string                  `json:"region,omitempty"`
	InsecureSkipVerify bool                    `json:"insecureSkipVerify,omitempty"`
}

type flaggerSecretReference struct {
	Name string `json:"name"`
}

// present tells whether a raw field was set to something other than null.
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// refName is the name of a reference (an ingressRef, a routeRef); "" when
// it names none.
func refName(raw json.RawMessage) string {
	var ref struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(raw, &ref)
	return ref.Name
}
