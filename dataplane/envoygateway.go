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

package dataplane

import "github.com/serin-dev/serin/api/v1alpha1"

// canaryEndpoints keeps the series of a rate (one per Envoy endpoint,
// envoy_endpoint_address="<ip>:<port>") whose endpoint is a pod of the
// canary Service, from kube-state-metrics' kube_endpoint_address.
func canaryEndpoints(rate string) string {
	return `label_replace(` + rate + `, "ip", "$1", "envoy_endpoint_address", "\\[?(.+?)\\]?:[0-9]+")` +
		` * on (ip) group_left () group by (ip) (kube_endpoint_address{namespace="{{ namespace }}",endpoint="{{ service }}"})`
}

// Envoy Gateway keeps one upstream cluster per HTTPRoute rule, shared by
// all its backends: its cluster stats cannot tell the canary from the
// primary. The per-endpoint stats can, once joined with the canary
// Service's pod IPs; they count requests (rq_success is non-5xx) but have
// no latency.
var _ = register(DataPlane{
	Name: v1alpha1.EnvoyGatewayDataPlane,
	Checks: map[string]Check{
		v1alpha1.RequestSuccessRateCheck: {PromQL: `100 * (sum(` + canaryEndpoints(`rate(envoy_cluster_endpoint_rq_success[{{ interval }}])`) + `) or vector(0))` +
			` / sum(` + canaryEndpoints(`rate(envoy_cluster_endpoint_rq_total[{{ interval }}])`) + `)`,
			Requests: `sum(` + canaryEndpoints(`increase(envoy_cluster_endpoint_rq_total[{{ interval }}])`) + `)`},
		v1alpha1.RequestDurationCheck: {Unavailable: "Envoy Gateway keeps one upstream cluster for all the backends of an HTTPRoute rule, " +
			"so its latency histograms mix the primary and the canary, and Envoy's per-endpoint stats have no latency: " +
			"measure the canary's latency in a MetricTemplate (from the application's own histogram, for instance)"},
	},
})
