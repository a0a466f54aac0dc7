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

// kumaCanaryProxy selects the series of the canary pods' own Kuma data
// plane proxies: Prometheus' kuma_sd_configs (Kuma's monitoring assign
// service) labels each proxy's metrics with its Kuma service,
// <service>_<namespace>_svc_<port>, in a label named service (Prometheus'
// example relabelling, and what Flagger's kuma provider matches).
const kumaCanaryProxy = `service=~"{{ service }}_{{ namespace }}_svc_[0-9]+"`

// Kuma's proxies are Envoy; upstream_rq_time is in milliseconds. The
// canary's proxy counts what it sent to the application and anything the
// application called through it, as Flagger's kuma provider does.
var _ = register(DataPlane{
	Name: v1alpha1.KumaDataPlane,
	Checks: map[string]Check{
		v1alpha1.RequestSuccessRateCheck: successRate("envoy_cluster_upstream_rq", kumaCanaryProxy, `envoy_response_code!~"5.."`),
		v1alpha1.RequestDurationCheck:    {PromQL: p99("envoy_cluster_upstream_rq_time_bucket", kumaCanaryProxy, "")},
	},
})
