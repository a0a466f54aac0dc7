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
	"cmp"
	"maps"
	"regexp"
	"slices"
	"strings"

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
// queries that serin's do not define ({{ ingress }}, {{ route }});
// {{ name }}, {{ namespace }}, {{ target }}, {{ service }}, {{ interval }}
// and {{ variables.x }} are the same.
var flaggerOnlyQueryFunctions = regexp.MustCompile(`\{\{-?\s*(ingress|route)\s*-?\}\}`)

// The providers' needs, as serin's API checks them.
var (
	// defaultAddress: the providers whose address may be left out.
	defaultAddress = map[v1alpha1.MetricProviderType]bool{v1alpha1.DatadogProvider: true, v1alpha1.NewRelicProvider: true,
		v1alpha1.CloudWatchProvider: true, v1alpha1.StackdriverProvider: true, v1alpha1.ExternalMetricsProvider: true}
	// needsSecret: the providers that cannot query without a Secret.
	needsSecret = map[v1alpha1.MetricProviderType]bool{v1alpha1.DatadogProvider: true, v1alpha1.NewRelicProvider: true,
		v1alpha1.DynatraceProvider: true, v1alpha1.SplunkProvider: true}
	// supportedProviders: Flagger's providers that serin queries.
	supportedProviders = []v1alpha1.MetricProviderType{v1alpha1.PrometheusProvider, v1alpha1.DatadogProvider,
		v1alpha1.NewRelicProvider, v1alpha1.GraphiteProvider, v1alpha1.InfluxDBProvider, v1alpha1.DynatraceProvider,
		v1alpha1.SplunkProvider, v1alpha1.CloudWatchProvider, v1alpha1.StackdriverProvider, v1alpha1.ExternalMetricsProvider}
)

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
	r.Notes = append(r.Notes, report.notes...)
	if ok {
		r.Manifests = append(r.Manifests, Manifest{Kind: v1alpha1.MetricTemplateKind, Converted: true, Ref: report.object, Object: metricTemplateManifest{
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
	providerType := v1alpha1.MetricProviderType(cmp.Or(provider.Type, string(v1alpha1.PrometheusProvider)))
	if !slices.Contains(supportedProviders, providerType) {
		report.drop("spec.provider.type", "%s is not supported: serin queries %s; the MetricTemplate was left out",
			providerType, joinProviders(supportedProviders))
		return v1alpha1.MetricTemplateSpec{}, false
	}
	out := v1alpha1.MetricTemplateSpec{
		Provider: v1alpha1.MetricProvider{
			Type:               providerType,
			Address:            convertProviderAddress(providerType, provider.Address),
			InsecureSkipVerify: provider.InsecureSkipVerify,
		},
		Query: in.Query,
	}
	switch {
	case provider.Address == "" && providerType == v1alpha1.PrometheusProvider:
		report.drop("spec.provider.address", "not set, so Flagger used its -metrics-server flag: serin needs the Prometheus URL here")
	case provider.Address == "" && !defaultAddress[providerType]:
		report.drop("spec.provider.address", "not set: a %s provider needs its URL here (Flagger failed without it too)", providerType)
	}
	if providerType == v1alpha1.CloudWatchProvider {
		convertCloudWatchProvider(provider, &out.Provider, report)
	} else if provider.Region != "" {
		report.drop("spec.provider.region", "used by cloudwatch only, not by %s", providerType)
	}
	if providerType == v1alpha1.StackdriverProvider {
		convertStackdriverProvider(provider, &out.Provider, report)
	}
	if providerType == v1alpha1.ExternalMetricsProvider {
		out.Query = convertExternalMetricsQuery(in.Query, provider.Address != "" && provider.SecretRef == nil, report)
	}
	out.Provider.Headers = convertProviderHeaders(providerType, provider.Headers, report)
	if provider.SecretRef != nil {
		out.Provider.SecretRef = &meta.LocalObjectReference{Name: provider.SecretRef.Name}
	} else if needsSecret[providerType] {
		report.drop("spec.provider.secretRef", "not set: a %s provider needs its API keys from a Secret (Flagger failed without it too)", providerType)
	}
	for _, match := range flaggerOnlyQueryFunctions.FindAllStringSubmatch(in.Query, -1) {
		report.drop("spec.query", "{{ %s }} is not defined in serin's query templates: replace it "+
			"(serin has {{ name }}, {{ namespace }}, {{ target }}, {{ service }}, {{ interval }} and {{ variables.NAME }})", match[1])
	}
	return out, true
}

// convertCloudWatchProvider carries a cloudwatch provider's region over
// to out. Flagger's cloudwatch provider ignores address, which serin
// would query, so it is left out; and it signs with the AWS identity of
// Flagger's pod, which serin does not use: without a secretRef, serin's
// needs one with an access key.
func convertCloudWatchProvider(in flaggerMetricProvider, out *v1alpha1.MetricProvider, report *objectReport) {
	out.Region = in.Region
	if in.Region == "" {
		report.drop("spec.provider.region", "not set: a cloudwatch provider needs its AWS region (Flagger failed without it too)")
	}
	leaveOutIgnoredAddress(v1alpha1.CloudWatchProvider, "its region's endpoint", in, out, report)
	if in.SecretRef == nil {
		report.drop("spec.provider.secretRef", "not set: Flagger signed with the AWS identity of its own pod (IRSA, an instance role, "+
			"environment variables), which serin does not use: it needs a Secret with aws_access_key_id and aws_secret_access_key "+
			"(and aws_session_token for temporary credentials)")
	}
}

// convertStackdriverProvider converts a stackdriver provider: the query
// is reported, since Flagger sent MQL to Cloud Monitoring's
// QueryTimeSeries, which Google has deprecated, and serin sends PromQL to
// its Prometheus API. Flagger's stackdriver ignores address, which serin
// would query, so it is left out. The Secret holds Flagger's project;
// serin also needs serviceAccountKey, which Flagger did without when its
// pod had a Google identity (Workload Identity): a note, since convert
// cannot read the Secret.
func convertStackdriverProvider(in flaggerMetricProvider, out *v1alpha1.MetricProvider, report *objectReport) {
	report.drop("spec.query", "MQL, which Flagger sent to Cloud Monitoring's QueryTimeSeries (deprecated by Google): serin's "+
		"stackdriver sends PromQL to Cloud Monitoring's Prometheus API: rewrite the query in PromQL "+
		"(https://cloud.google.com/monitoring/promql/promql-mapping); it was kept as it is")
	leaveOutIgnoredAddress(v1alpha1.StackdriverProvider, "Google's API", in, out, report)
	if in.SecretRef == nil {
		report.drop("spec.provider.secretRef", "not set: a stackdriver provider needs a Secret with project and "+
			"serviceAccountKey (a service account's JSON key); Flagger needed its project there too")
		return
	}
	report.note("spec.provider.secretRef", "serin reads project and serviceAccountKey (a service account's JSON key) "+
		"from Secret %s: without serviceAccountKey, Flagger used its pod's Google identity (Workload Identity), which serin does not use", in.SecretRef.Name)
}

// leaveOutIgnoredAddress leaves out the address of a provider of type t
// whose Flagger implementation ignores it and queries where: serin would
// send the queries there.
func leaveOutIgnoredAddress(t v1alpha1.MetricProviderType, where string, in flaggerMetricProvider, out *v1alpha1.MetricProvider, report *objectReport) {
	if in.Address == "" {
		return
	}
	out.Address = ""
	report.drop("spec.provider.address", "ignored by Flagger's %s provider, which queries %s; "+
		"serin would send the queries there, so it was left out", t, where)
}

// convertProviderAddress is a provider's address in serin: Flagger's
// splunk provider also takes the realm's SignalFlow WebSocket address
// (wss://stream.REALM.signalfx.com), which serin reaches over HTTPS.
func convertProviderAddress(t v1alpha1.MetricProviderType, address string) string {
	if t != v1alpha1.SplunkProvider {
		return address
	}
	if rest, ok := strings.CutPrefix(address, "wss://"); ok {
		return "https://" + rest
	}
	if rest, ok := strings.CutPrefix(address, "ws://"); ok {
		return "http://" + rest
	}
	return address
}

// convertProviderHeaders keeps the headers of a prometheus provider but
// Authorization, which serin takes from the Secret only; Flagger sent
// them to Prometheus only too.
func convertProviderHeaders(t v1alpha1.MetricProviderType, headers map[string][]string, report *objectReport) map[string][]string {
	if len(headers) == 0 {
		return nil
	}
	if t != v1alpha1.PrometheusProvider {
		report.drop("spec.provider.headers", "sent to prometheus only, by Flagger as by serin")
		return nil
	}
	out := map[string][]string{}
	for _, name := range slices.Sorted(maps.Keys(headers)) {
		if strings.EqualFold(name, "Authorization") {
			report.drop("spec.provider.headers."+name, "serin takes credentials from the Secret of secretRef only: "+
				"put a bearer token under the key token, or username and password")
			continue
		}
		out[name] = headers[name]
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// joinProviders writes the providers' names as a list.
func joinProviders(types []v1alpha1.MetricProviderType) string {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = string(t)
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// convertExternalMetricsQuery keeps Flagger's externalmetrics query
// (NAMESPACE/NAME?labelSelector=…), with default/ written in where it names
// no namespace: Flagger read those in default, serin in the Canary's. A
// metrics server at an address without a token Secret is noted: Flagger
// sent its own credentials there, serin sends none.
func convertExternalMetricsQuery(query string, addressWithoutToken bool, report *objectReport) string {
	path, _, _ := strings.Cut(strings.TrimSpace(query), "?")
	if !strings.Contains(path, "/") {
		query = "default/" + strings.TrimSpace(query)
		report.note("spec.query", "names no namespace, so Flagger read the metric in default, where serin reads the Canary's: "+
			"default/ was written in")
	}
	if addressWithoutToken {
		report.note("spec.provider.address", "Flagger called this metrics server with its own credentials when no Secret "+
			"gave a token; serin sends none there: add a secretRef with a token if it needs one")
	}
	return query
}
