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
	"regexp"

	"github.com/fluxcd/pkg/apis/meta"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// metricTemplateManifest is a serin MetricTemplate as written by convert.
type metricTemplateManifest struct {
	APIVersion string                      `json:"apiVersion"`
	Kind       string                      `json:"kind"`
	Metadata   manifestMetadata            `json:"metadata"`
	Spec       v1alpha1.MetricTemplateSpec `json:"spec"`
}

// flaggerOnlyQueryFunctions matches the template functions of Flagger's
// queries that serin's do not define ({{ name }}, {{ service }},
// {{ ingress }}); {{ namespace }}, {{ target }}, {{ interval }} and
// {{ variables.x }} are the same.
var flaggerOnlyQueryFunctions = regexp.MustCompile(`\{\{-?\s*(name|service|ingress)\s*-?\}\}`)

func (r *Result) convertMetricTemplate(jsonDocument []byte) error {
	var in flaggerMetricTemplate
	strictErrors, err := decodeStrict(jsonDocument, &in)
	if err != nil {
		return err
	}
	report := newObjectReport(in.Kind, in.Metadata)
	report.dropUnknown(strictErrors)
	spec, ok := convertMetricTemplateSpec(in.Spec, report)
	r.Dropped = append(r.Dropped, report.dropped...)
	if ok {
		r.Manifests = append(r.Manifests, Manifest{Kind: v1alpha1.MetricTemplateKind, Converted: true, Object: metricTemplateManifest{
			APIVersion: v1alpha1.GroupVersion.String(),
			Kind:       v1alpha1.MetricTemplateKind,
			Metadata:   convertMetadata(in.Metadata),
			Spec:       spec,
		}})
	}
	return nil
}

func convertMetricTemplateSpec(in flaggerMetricTemplateSpec, report *objectReport) (v1alpha1.MetricTemplateSpec, bool) {
	provider := in.Provider
	if provider.Type != string(v1alpha1.PrometheusProvider) {
		report.drop("spec.provider.type", "%s is not supported: serin queries Prometheus; the MetricTemplate was left out", provider.Type)
		return v1alpha1.MetricTemplateSpec{}, false
	}
	if provider.Address == "" {
		report.drop("spec.provider.address", "not set, so Flagger used its -metrics-server flag: serin needs the Prometheus URL here")
	}
	if provider.Region != "" {
		report.drop("spec.provider.region", "used by cloud providers only, not by Prometheus")
	}
	for _, match := range flaggerOnlyQueryFunctions.FindAllStringSubmatch(in.Query, -1) {
		report.drop("spec.query", "{{ %s }} is not defined in serin's query templates: replace it "+
			"(serin has {{ namespace }}, {{ target }}, {{ interval }} and {{ variables.NAME }})", match[1])
	}
	out := v1alpha1.MetricTemplateSpec{
		Provider: v1alpha1.MetricProvider{
			Type:               v1alpha1.PrometheusProvider,
			Address:            provider.Address,
			InsecureSkipVerify: provider.InsecureSkipVerify,
		},
		Query: in.Query,
	}
	if provider.SecretRef != nil {
		out.Provider.SecretRef = &meta.LocalObjectReference{Name: provider.SecretRef.Name}
	}
	return out, true
}
