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

package analysis

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// DefaultDataPlane is the data plane of the built-in checks when neither the
// Canary (routing.dataPlane) nor the agent (--data-plane) names one:
// Traefik, the data plane serin's testbed runs and the one its presets are
// verified against.
const DefaultDataPlane = v1alpha1.TraefikDataPlane

// The built-in checks measure the canary's backend Service, <apex>-canary,
// with both routing providers: with gatewayapi it is the canary's backend of
// the HTTPRoute; with kubernetes (blue/green) the apex Service keeps
// selecting the primary during the analysis, so the canary's traffic is the
// one a tester or a route of your own sends to <apex>-canary, as in Flagger.
//
// Each data plane's query is a Go template with {{ namespace }},
// {{ service }} (the canary's backend Service), {{ port }} (its port),
// {{ workload }} (the canary Deployment, for a Deployment target),
// {{ pods }} (the regular expression of the canary workload's pod names)
// and {{ interval }}, the names escaped for PromQL string literals as a
// MetricTemplate's are (EscapePromQL). A success rate is 100 × non-5xx / all responses, the
// non-5xx sum counting as 0 when the canary answered only 5xx; a duration is
// the 99th percentile in milliseconds. No requests give no data (or NaN),
// which fails the check.

// traefikBackend selects the per-backend series Traefik v3's
// kubernetesGateway provider keeps for one Service port of an HTTPRoute:
// service="<namespace>-<service>-http-<port>@kubernetesgateway" ("http" is
// the route kind; Traefik v3.6 pkg/provider/kubernetes/gateway, checked on
// the testbed).
const traefikBackend = `service="{{ namespace }}-{{ service }}-http-{{ port }}@kubernetesgateway"`

// istioClients selects what the sidecars and gateways that sent requests to
// the canary Service report (reporter="source"): the data plane that routed
// them knows the backend Service, which the canary's own sidecar cannot
// tell when several Services select its pods.
const istioClients = `reporter="source",destination_service_namespace="{{ namespace }}",destination_service_name="{{ service }}"`

// nginxUpstream selects NGINX Gateway Fabric's upstream of the canary
// Service port, which it names <namespace>_<service>_<port>.
const nginxUpstream = `nginx_upstream_name="{{ namespace }}_{{ service }}_{{ port }}"`

// contourCluster selects the Envoy cluster Contour keeps for one Service
// port: its stats name (alt_stat_name) is <namespace>_<service>_<port>
// (Contour's internal/envoy cluster builder, the same for HTTPRoutes and
// HTTPProxies; Flagger's contour observer matches it too).
const contourCluster = `envoy_cluster_name="{{ namespace }}_{{ service }}_{{ port }}"`

// kumaCanaryProxy selects the series of the canary pods' own Kuma data
// plane proxies: Prometheus' kuma_sd_configs (Kuma's monitoring assign
// service) labels each proxy's metrics with its Kuma service,
// <service>_<namespace>_svc_<port>, in a label named service (Prometheus'
// example relabelling, and what Flagger's kuma provider matches).
const kumaCanaryProxy = `service=~"{{ service }}_{{ namespace }}_svc_[0-9]+"`

// hubbleServer selects the HTTP flows Hubble saw arrive at the canary's
// workload (reporter="server"): Hubble's labels name workloads, not Services.
const hubbleServer = `reporter="server",destination_namespace="{{ namespace }}",destination_workload="{{ workload }}"`

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

// canaryEndpoints keeps the series of a rate (one per Envoy endpoint,
// envoy_endpoint_address="<ip>:<port>") whose endpoint is a pod of the
// canary Service, from kube-state-metrics' kube_endpoint_address.
func canaryEndpoints(rate string) string {
	return `label_replace(` + rate + `, "ip", "$1", "envoy_endpoint_address", "\\[?(.+?)\\]?:[0-9]+")` +
		` * on (ip) group_left () group by (ip) (kube_endpoint_address{namespace="{{ namespace }}",endpoint="{{ service }}"})`
}

// successRate is the percentage of non-5xx responses of a counter.
func successRate(counter, selector, non5xx string) string {
	return `100 * (sum(rate(` + counter + `{` + selector + `,` + non5xx + `}[{{ interval }}])) or vector(0))` +
		` / sum(rate(` + counter + `{` + selector + `}[{{ interval }}]))`
}

// p99 is the 99th percentile of a histogram, times scale (1000 for seconds).
func p99(histogram, selector, scale string) string {
	return scale + `histogram_quantile(0.99, sum by (le) (rate(` + histogram + `{` + selector + `}[{{ interval }}])))`
}

// builtinQuery is the query of one built-in check on one data plane, or why
// that data plane cannot answer it.
type builtinQuery struct {
	promQL      string
	unavailable string
}

// builtinQueries are the presets: for each data plane, the query of each
// built-in check. docs/spec/v1alpha1/canaries.md lists what each needs
// enabled in its data plane.
var builtinQueries = map[v1alpha1.DataPlane]map[string]builtinQuery{
	v1alpha1.TraefikDataPlane: {
		v1alpha1.RequestSuccessRateCheck: {promQL: successRate("traefik_service_requests_total", traefikBackend, `code!~"5.."`)},
		v1alpha1.RequestDurationCheck:    {promQL: p99("traefik_service_request_duration_seconds_bucket", traefikBackend, "1000 * ")},
	},
	// Envoy Gateway keeps one upstream cluster per HTTPRoute rule, shared by
	// all its backends: its cluster stats cannot tell the canary from the
	// primary. The per-endpoint stats can, once joined with the canary
	// Service's pod IPs; they count requests (rq_success is non-5xx) but
	// have no latency.
	v1alpha1.EnvoyGatewayDataPlane: {
		v1alpha1.RequestSuccessRateCheck: {promQL: `100 * (sum(` + canaryEndpoints(`rate(envoy_cluster_endpoint_rq_success[{{ interval }}])`) + `) or vector(0))` +
			` / sum(` + canaryEndpoints(`rate(envoy_cluster_endpoint_rq_total[{{ interval }}])`) + `)`},
		v1alpha1.RequestDurationCheck: {unavailable: "Envoy Gateway keeps one upstream cluster for all the backends of an HTTPRoute rule, " +
			"so its latency histograms mix the primary and the canary, and Envoy's per-endpoint stats have no latency: " +
			"measure the canary's latency in a MetricTemplate (from the application's own histogram, for instance)"},
	},
	v1alpha1.IstioDataPlane: {
		v1alpha1.RequestSuccessRateCheck: {promQL: successRate("istio_requests_total", istioClients, `response_code!~"5.."`)},
		v1alpha1.RequestDurationCheck:    {promQL: p99("istio_request_duration_milliseconds_bucket", istioClients, "")},
	},
	// NGINX Gateway Fabric reports an average response time per upstream
	// peer, not a histogram.
	v1alpha1.NGINXGatewayFabricDataPlane: {
		v1alpha1.RequestSuccessRateCheck: {promQL: successRate("nginx_http_upstream_peer_responses_total", nginxUpstream, `nginx_status_range!="5xx"`)},
		v1alpha1.RequestDurationCheck: {unavailable: "NGINX Gateway Fabric reports only the average response time of each upstream peer, " +
			"not a histogram, so no 99th percentile can be computed: measure the canary's latency in a MetricTemplate"},
	},
	v1alpha1.CiliumDataPlane: {
		v1alpha1.RequestSuccessRateCheck: {promQL: successRate("hubble_http_requests_total", hubbleServer, `status!~"5.."`)},
		v1alpha1.RequestDurationCheck:    {promQL: p99("hubble_http_request_duration_seconds_bucket", hubbleServer, "1000 * ")},
	},
	// Envoy's upstream_rq_time is in milliseconds.
	v1alpha1.ContourDataPlane: {
		v1alpha1.RequestSuccessRateCheck: {promQL: successRate("envoy_cluster_upstream_rq", contourCluster, `envoy_response_code!~"5.."`)},
		v1alpha1.RequestDurationCheck:    {promQL: p99("envoy_cluster_upstream_rq_time_bucket", contourCluster, "")},
	},
	// Kuma's proxies are Envoy; upstream_rq_time is in milliseconds. The
	// canary's proxy counts what it sent to the application and anything the
	// application called through it, as Flagger's kuma provider does.
	v1alpha1.KumaDataPlane: {
		v1alpha1.RequestSuccessRateCheck: {promQL: successRate("envoy_cluster_upstream_rq", kumaCanaryProxy, `envoy_response_code!~"5.."`)},
		v1alpha1.RequestDurationCheck:    {promQL: p99("envoy_cluster_upstream_rq_time_bucket", kumaCanaryProxy, "")},
	},
	// No proxy: what the canary's pods say they served. Requests that
	// never reached a pod (refused connections, a proxy's timeouts) are
	// not counted.
	v1alpha1.ApplicationDataPlane: {
		v1alpha1.RequestSuccessRateCheck: {promQL: appQuery(func(selector string) string {
			return successRate(appHistogram+"_count", selector, `status!~"5.."`)
		})},
		v1alpha1.RequestDurationCheck: {promQL: appQuery(func(selector string) string {
			return p99(appHistogram+"_bucket", selector, "1000 * ")
		})},
	},
}

// podNamePattern is the regular expression of the names of a workload's
// pods: <deployment>-<pod-template-hash>-<suffix>, <daemonset>-<suffix>.
// Neither matches the pods of <name>-primary, whose names have one more
// dash than the pattern allows.
func podNamePattern(target v1alpha1.TargetReference) (string, error) {
	name := regexp.QuoteMeta(target.Name)
	switch target.Kind {
	case "Deployment":
		return name + "-[a-z0-9]+-[a-z0-9]+", nil
	case "DaemonSet":
		return name + "-[a-z0-9]+", nil
	}
	return "", errNoWorkload
}

// errNoWorkload: a data plane whose metrics name workloads, not Services,
// cannot find the canary of a Service target.
var errNoWorkload = errors.New("its metrics name the canary by its workload, and a Service target has none: use a MetricTemplate")

// DataPlaneOf returns the data plane of a Canary's built-in checks: its
// routing.dataPlane, else fallback (the agent's --data-plane), else
// DefaultDataPlane.
func DataPlaneOf(canary *v1alpha1.Canary, fallback v1alpha1.DataPlane) v1alpha1.DataPlane {
	switch {
	case canary.Spec.Routing.DataPlane != "":
		return canary.Spec.Routing.DataPlane
	case fallback != "":
		return fallback
	}
	return DefaultDataPlane
}

// ParseDataPlane checks the name of a data plane (the agent's --data-plane).
func ParseDataPlane(name string) (v1alpha1.DataPlane, error) {
	if _, ok := builtinQueries[v1alpha1.DataPlane(name)]; ok {
		return v1alpha1.DataPlane(name), nil
	}
	names := make([]string, 0, len(builtinQueries))
	for dataPlane := range builtinQueries {
		names = append(names, string(dataPlane))
	}
	slices.Sort(names)
	return "", fmt.Errorf("data plane %q is not supported: use one of %s", name, strings.Join(names, ", "))
}

// BuiltinQuery renders the PromQL of a built-in check (request-success-rate
// or request-duration) for a Canary on a data plane.
func BuiltinQuery(canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric, dataPlane v1alpha1.DataPlane) (string, error) {
	presets, ok := builtinQueries[dataPlane]
	if !ok {
		return "", fmt.Errorf("data plane %q has no built-in checks", dataPlane)
	}
	q, ok := presets[metric.Name]
	if !ok {
		return "", fmt.Errorf("%q is not a built-in check: use %s or %s, or a MetricTemplate (templateRef)",
			metric.Name, v1alpha1.RequestSuccessRateCheck, v1alpha1.RequestDurationCheck)
	}
	if q.promQL == "" {
		return "", fmt.Errorf("%s is not available with data plane %s: %s", metric.Name, dataPlane, q.unavailable)
	}
	funcs := template.FuncMap{
		"namespace": func() string { return EscapePromQL(canary.Namespace) },
		"service":   func() string { return EscapePromQL(canary.GetCanaryServiceName()) },
		"port":      func() int32 { return canary.Spec.Service.Port },
		"interval":  func() string { return promDuration(metricInterval(canary, metric)) },
		"pods": func() (string, error) {
			pattern, err := podNamePattern(canary.Spec.TargetRef)
			return EscapePromQL(pattern), err
		},
		"workload": func() (string, error) {
			if canary.Spec.TargetRef.Kind != "Deployment" {
				return "", errNoWorkload
			}
			return EscapePromQL(canary.Spec.TargetRef.Name), nil
		},
	}
	t, err := template.New(metric.Name).Funcs(funcs).Parse(q.promQL)
	if err != nil {
		return "", fmt.Errorf("built-in query of %s for %s: %w", metric.Name, dataPlane, err)
	}
	var b strings.Builder
	if err := t.Execute(&b, nil); err != nil {
		if errors.Is(err, errNoWorkload) {
			err = errNoWorkload
		}
		return "", fmt.Errorf("%s is not available with data plane %s: %w", metric.Name, dataPlane, err)
	}
	return b.String(), nil
}
