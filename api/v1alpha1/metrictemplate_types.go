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
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MetricTemplateKind is the kind of the MetricTemplate object.
const MetricTemplateKind = "MetricTemplate"

// DefaultMetricTimeout bounds one query to a metrics provider.
const DefaultMetricTimeout = 10 * time.Second

// MaxMetricTimeout is the longest provider.timeout the API server accepts.
const MaxMetricTimeout = 30 * time.Second

// MetricProviderType names a metrics backend.
// +kubebuilder:validation:Enum=prometheus;datadog;newrelic;graphite;influxdb;dynatrace;splunk;cloudwatch;stackdriver;externalmetrics
type MetricProviderType string

const (
	// PrometheusProvider queries the Prometheus HTTP API (/api/v1/query).
	PrometheusProvider MetricProviderType = "prometheus"
	// DatadogProvider queries Datadog's timeseries points API
	// (/api/v1/query) over ten times the check's interval.
	DatadogProvider MetricProviderType = "datadog"
	// NewRelicProvider sends NRQL to New Relic's Insights query API
	// (/v1/accounts/ID/query), SINCE the check's interval.
	NewRelicProvider MetricProviderType = "newrelic"
	// GraphiteProvider queries Graphite's render API (/render).
	GraphiteProvider MetricProviderType = "graphite"
	// InfluxDBProvider sends Flux to InfluxDB's v2 query API
	// (/api/v2/query).
	InfluxDBProvider MetricProviderType = "influxdb"
	// DynatraceProvider queries Dynatrace's metrics v2 API
	// (/api/v2/metrics/query) over ten times the check's interval.
	DynatraceProvider MetricProviderType = "dynatrace"
	// SplunkProvider runs a SignalFlow program on Splunk Observability
	// Cloud (/v2/signalflow/execute) over ten times the check's interval.
	SplunkProvider MetricProviderType = "splunk"
	// CloudWatchProvider sends a JSON array of MetricDataQueries to Amazon
	// CloudWatch's GetMetricData (AWS JSON 1.0, signed with AWS Signature
	// Version 4) over ten times the check's interval.
	CloudWatchProvider MetricProviderType = "cloudwatch"
	// StackdriverProvider sends PromQL to Google Cloud Monitoring's
	// Prometheus query API
	// (/v1/projects/PROJECT/location/global/prometheus/api/v1/query) with
	// the OAuth 2.0 access token of a service account key. Flagger's
	// stackdriver sent MQL to QueryTimeSeries, which Google deprecated.
	StackdriverProvider MetricProviderType = "stackdriver"
	// ExternalMetricsProvider reads the Kubernetes external metrics API
	// (external.metrics.k8s.io/v1beta1, served by an adapter such as KEDA's
	// or prometheus-adapter): through the API server, as the Canary's
	// service account when one applies, or from the metrics server at
	// address with the Secret's token (Flagger's way). The query is
	// NAME{SELECTOR}, or Flagger's NAMESPACE/NAME?labelSelector=…; the
	// namespace defaults to the Canary's; the value is the sum of the
	// metric's items.
	ExternalMetricsProvider MetricProviderType = "externalmetrics"
)

// The addresses of the providers whose address is optional: their US
// APIs, as in Flagger, and Google's API.
const (
	DefaultDatadogAddress  = "https://api.datadoghq.com"
	DefaultNewRelicAddress = "https://insights-api.newrelic.com"
	// DefaultStackdriverAddress is Google Cloud Monitoring's API.
	DefaultStackdriverAddress = "https://monitoring.googleapis.com"
)

// CloudWatchAddress is the CloudWatch endpoint of an AWS region:
// https://monitoring.REGION.amazonaws.com, or amazonaws.com.cn in the
// China regions (cn-north-1, cn-northwest-1).
func CloudWatchAddress(region string) string {
	domain := "amazonaws.com"
	if strings.HasPrefix(region, "cn-") {
		domain = "amazonaws.com.cn"
	}
	return "https://monitoring." + region + "." + domain
}

// MetricTemplateSpec holds a metrics provider and a query template.
type MetricTemplateSpec struct {
	// Provider is the metrics backend to query.
	// +required
	Provider MetricProvider `json:"provider"`

	// Query is a Go template that renders to the provider's query language.
	// It can use {{ namespace }}, {{ target }}, {{ interval }} and
	// {{ variables.NAME }} (a Canary metric's templateVariables). The query
	// must return a single number.
	// +kubebuilder:validation:MinLength=1
	// +required
	Query string `json:"query"`
}

// MetricProvider is where a MetricTemplate's query is sent.
// +kubebuilder:validation:XValidation:rule="has(self.address) || (has(self.type) && self.type in ['datadog', 'newrelic', 'cloudwatch', 'stackdriver', 'externalmetrics'])",message="provider.address is required, except for datadog and newrelic (which default to their US API), cloudwatch (its region's endpoint), stackdriver (https://monitoring.googleapis.com) and externalmetrics (the API server)"
// +kubebuilder:validation:XValidation:rule="has(self.secretRef) || !has(self.type) || !(self.type in ['datadog', 'newrelic', 'dynatrace', 'splunk'])",message="provider.secretRef is required for datadog, newrelic, dynatrace and splunk: it holds their API keys"
// +kubebuilder:validation:XValidation:rule="has(self.secretRef) || !has(self.type) || self.type != 'cloudwatch'",message="provider.secretRef is required for cloudwatch: it holds the AWS access key (serin does not use its own AWS identity)"
// +kubebuilder:validation:XValidation:rule="has(self.secretRef) || !has(self.type) || self.type != 'stackdriver'",message="provider.secretRef is required for stackdriver: it holds the project and the service account's JSON key (keys project and serviceAccountKey)"
// +kubebuilder:validation:XValidation:rule="has(self.region) || !has(self.type) || self.type != 'cloudwatch'",message="provider.region is required for cloudwatch: the AWS region of the metrics, such as us-east-1"
// +kubebuilder:validation:XValidation:rule="!has(self.region) || (has(self.type) && self.type == 'cloudwatch')",message="provider.region is used by cloudwatch only"
// +kubebuilder:validation:XValidation:rule="!has(self.headers) || !has(self.type) || self.type == 'prometheus'",message="provider.headers are sent to prometheus only"
type MetricProvider struct {
	// Type of the provider.
	// +kubebuilder:default=prometheus
	// +optional
	Type MetricProviderType `json:"type,omitempty"`

	// Address is the provider's base URL, e.g. http://prometheus.monitoring:9090.
	// It is required, except for datadog (default
	// https://api.datadoghq.com), newrelic (default
	// https://insights-api.newrelic.com), cloudwatch (default
	// https://monitoring.<region>.amazonaws.com) and stackdriver (default
	// https://monitoring.googleapis.com).
	// +kubebuilder:validation:Pattern="^https?://"
	// +optional
	Address string `json:"address,omitempty"`

	// SecretRef names a Secret in the MetricTemplate's namespace with the
	// provider's credentials, under Flagger's keys: `username` and
	// `password` (basic auth) or `token` (bearer auth) for prometheus;
	// `datadog_api_key` and `datadog_application_key`;
	// `newrelic_account_id` and `newrelic_query_key`; `username` and
	// `password` for graphite; `token` and `org` for influxdb;
	// `dynatrace_token`; `sf_token_key` for splunk; `aws_access_key_id`,
	// `aws_secret_access_key` and optionally `aws_session_token` for
	// cloudwatch; `project` and `serviceAccountKey` (a service account's
	// JSON key) for stackdriver. Required for datadog, newrelic,
	// dynatrace, splunk, cloudwatch and stackdriver.
	// +optional
	SecretRef *meta.LocalObjectReference `json:"secretRef,omitempty"`

	// Headers are added to every query of a prometheus provider, as in
	// Flagger (a tenant's X-Scope-OrgID for Mimir, Cortex or Thanos).
	// Credentials belong in the Secret: Authorization is refused.
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(name, name.lowerAscii() != 'authorization')",message="provider.headers cannot set Authorization: put the credentials in the Secret of secretRef"
	// +optional
	Headers map[string][]string `json:"headers,omitempty"`

	// Region is the AWS region of a cloudwatch provider, such as us-east-1:
	// serin signs its queries for that region and sends them to its
	// endpoint (see address). Required for cloudwatch, refused for the
	// other types.
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern="^[a-z0-9]+(-[a-z0-9]+)*$"
	// +optional
	Region string `json:"region,omitempty"`

	// InsecureSkipVerify disables TLS certificate verification.
	// +optional
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`

	// Timeout of one query, more than 0s and at most 30s; defaults to 10s.
	// It bounds each query; the agent also bounds an analysis step as a
	// whole.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$') || (duration(self) > duration('0s') && duration(self) <= duration('30s'))",message="provider.timeout bounds one query and must be more than 0s and at most 30s"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`
}

// GetAddress returns the provider's address, or the default address of
// its type (datadog, newrelic, cloudwatch in its region, stackdriver) when
// it has none.
func (in *MetricProvider) GetAddress() string {
	switch {
	case in.Address != "":
		return in.Address
	case in.Type == DatadogProvider:
		return DefaultDatadogAddress
	case in.Type == NewRelicProvider:
		return DefaultNewRelicAddress
	case in.Type == CloudWatchProvider && in.Region != "":
		return CloudWatchAddress(in.Region)
	case in.Type == StackdriverProvider:
		return DefaultStackdriverAddress
	}
	return ""
}

// GetTimeout returns the timeout of one query.
func (in *MetricTemplate) GetTimeout() time.Duration {
	if t := in.Spec.Provider.Timeout; t != nil && t.Duration > 0 {
		return t.Duration
	}
	return DefaultMetricTimeout
}

// MetricTemplate defines a metric check that Canaries reference.
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=mt
// +kubebuilder:printcolumn:name="Provider",type="string",JSONPath=".spec.provider.type"
// +kubebuilder:printcolumn:name="Address",type="string",JSONPath=".spec.provider.address"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type MetricTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec MetricTemplateSpec `json:"spec,omitempty"`
}

// MetricTemplateList contains a list of MetricTemplate.
// +kubebuilder:object:root=true
type MetricTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MetricTemplate `json:"items"`
}

func init() {
	knownTypes = append(knownTypes, &MetricTemplate{}, &MetricTemplateList{})
}
