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

import (
	"strings"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// appPods selects the series the canary's own pods export, with the
// namespace and pod labels their scrape adds: namespace and pod (Prometheus'
// kubernetes_sd example configuration, the Prometheus Operator's
// PodMonitors), or kubernetes_namespace and kubernetes_pod_name (the older
// example configuration, which Flagger's Prometheus keeps). The query of a
// check is asked of each in turn (appQuery).
var appPods = []string{
	`namespace="{{ namespace }}",pod=~"{{ pods }}"`,
	`kubernetes_namespace="{{ namespace }}",kubernetes_pod_name=~"{{ pods }}"`,
}

// appQuery is query for the first of the appPods label conventions that has
// series: PromQL's or keeps its left side when it has any.
func appQuery(query func(selector string) string) string {
	parts := make([]string, len(appPods))
	for i, selector := range appPods {
		parts[i] = "(" + query(selector) + ")"
	}
	return strings.Join(parts, " or ")
}

// appHistogram is the histogram of request durations, in seconds, that the
// application exports with the HTTP code in its status label (podinfo's,
// and what Flagger's kubernetes and gatewayapi providers query).
const appHistogram = "http_request_duration_seconds"

// grpcAnswered selects the gRPC codes of an answer: every code but those
// of a server error, which gRPC maps to an HTTP 5xx.
const grpcAnswered = `grpc_code!~"Unknown|DeadlineExceeded|Unimplemented|Internal|Unavailable|DataLoss"`

// appChecks are the built-in checks on what the canary's pods export
// themselves, for a data plane that does not answer them: the gRPC codes of
// grpc_server_handled_total (go-grpc-prometheus' name, which most gRPC
// servers' exporters keep). Most proxies count a gRPC error as the HTTP
// 200 it travels in (a grpc-status trailer); Traefik, which labels a gRPC
// call with its gRPC code, answers grpc-success-rate itself.
var appChecks = map[string]Check{
	v1alpha1.GRPCSuccessRateCheck: {
		PromQL: appQuery(func(selector string) string {
			return successRatePromQL("grpc_server_handled_total", selector, grpcAnswered)
		}),
		Requests: appQuery(func(selector string) string { return requests("grpc_server_handled_total", selector) }),
	},
}

// No proxy: what the canary's pods say they served. Requests that never
// reached a pod (refused connections, a proxy's timeouts) are not counted.
var _ = register(DataPlane{
	Name: v1alpha1.ApplicationDataPlane,
	Checks: map[string]Check{
		v1alpha1.RequestSuccessRateCheck: {
			PromQL: appQuery(func(selector string) string {
				return successRatePromQL(appHistogram+"_count", selector, `status!~"5.."`)
			}),
			Requests: appQuery(func(selector string) string { return requests(appHistogram+"_count", selector) }),
		},
		v1alpha1.RequestDurationCheck: {PromQL: appQuery(func(selector string) string {
			return p99(appHistogram+"_bucket", selector, "1000 * ")
		})},
	},
})
