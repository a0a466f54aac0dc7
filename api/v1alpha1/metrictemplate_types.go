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
)

// MetricTemplateKind is the kind of the MetricTemplate object.
const MetricTemplateKind = "MetricTemplate"

// DefaultMetricTimeout bounds one query to a metrics provider.
const DefaultMetricTimeout = 10 * time.Second

// MaxMetricTimeout is the longest provider.timeout the API server accepts.
const MaxMetricTimeout = 30 * time.Second

// MetricProviderType names a metrics backend.
// +kubebuilder:validation:Enum=prometheus
type MetricProviderType string

// PrometheusProvider queries the Prometheus HTTP API (/api/v1/query).
const PrometheusProvider MetricProviderType = "prometheus"

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
type MetricProvider struct {
	// Type of the provider.
	// +kubebuilder:default=prometheus
	// +optional
	Type MetricProviderType `json:"type,omitempty"`

	// Address is the provider's base URL, e.g. http://prometheus.monitoring:9090.
	// +kubebuilder:validation:Pattern="^https?://"
	// +required
	Address string `json:"address"`

	// SecretRef names a Secret in the MetricTemplate's namespace with
	// `username` and `password` (basic auth) or `token` (bearer auth).
	// +optional
	SecretRef *meta.LocalObjectReference `json:"secretRef,omitempty"`

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
