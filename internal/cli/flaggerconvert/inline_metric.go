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
	"regexp"
	"strings"
	"time"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// legacyBuiltinMetrics are the names Flagger's built-in checks had before
// 1.0, and the built-in check each is now.
var legacyBuiltinMetrics = map[string]string{
	"istio_requests_total":                  v1alpha1.RequestSuccessRateCheck,
	"http_requests_total":                   v1alpha1.RequestSuccessRateCheck,
	"istio_request_duration_seconds_bucket": v1alpha1.RequestDurationCheck,
	"http_request_duration_seconds_bucket":  v1alpha1.RequestDurationCheck,
}

// notDNSLabel matches what a generated name may not hold.
var notDNSLabel = regexp.MustCompile(`[^a-z0-9-]+`)

// generatedTemplateName is the name of the MetricTemplate generated for a
// Canary's inline query: <canary>-<metric>, as a DNS-1123 name.
func generatedTemplateName(canary, metric string) string {
	name := notDNSLabel.ReplaceAllString(strings.ToLower(canary+"-"+metric), "-")
	name = strings.Trim(name, "-")
	if len(name) > 253 {
		name = strings.TrimRight(name[:253], "-")
	}
	return name
}

// inlineMetric converts a metric with an inline query, Flagger's older
// form, which Flagger sent to the Canary's spec.metricsServer or its own
// -metrics-server: to a MetricTemplate generated next to the Canary,
// querying that Prometheus, which the metric references. Without the
// Prometheus's address (serin convert --metrics-server), the metric is
// left out and reported.
func (c canaryConverter) inlineMetric(in flaggerMetric, field string, analysisInterval time.Duration) (v1alpha1.CanaryMetric, bool) {
	address := c.in.Spec.MetricsServer
	if address == "" {
		address = c.opts.MetricsServer
	}
	if address == "" {
		c.report.drop(field+".query", "an inline query, which Flagger sent to its -metrics-server: pass that Prometheus's URL as "+
			"serin convert --metrics-server to convert it to a MetricTemplate, or put the query of %q in one; the metric was left out", in.Name)
		return v1alpha1.CanaryMetric{}, false
	}
	// A name no MetricTemplate of the input, nor one generated before,
	// holds: "error rate" and "error-rate" would make the same.
	base := generatedTemplateName(c.in.Metadata.Name, in.Name)
	name := base
	for i := 2; c.templates[c.in.Metadata.Namespace+"/"+name]; i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	meta := manifestMetadata{Name: name, Namespace: c.in.Metadata.Namespace}
	*c.generated = append(*c.generated, Manifest{Kind: v1alpha1.MetricTemplateKind, Converted: true,
		Ref: "MetricTemplate " + meta.Namespace + "/" + name, Object: metricTemplateManifest{
			APIVersion: v1alpha1.GroupVersion.String(),
			Kind:       v1alpha1.MetricTemplateKind,
			Metadata:   meta,
			Spec: v1alpha1.MetricTemplateSpec{
				Provider: v1alpha1.MetricProvider{Type: v1alpha1.PrometheusProvider, Address: address},
				Query:    in.Query,
			},
		}})
	c.report.note(field+".query", "an inline query: converted to the MetricTemplate %s/%s, generated next to the Canary, "+
		"querying %s", meta.Namespace, name, address)
	in.TemplateRef = &flaggerObjectReference{Name: name}
	in.Query = ""
	c.templates[meta.Namespace+"/"+name] = true
	return c.templateMetric(in, field, analysisInterval), true
}
