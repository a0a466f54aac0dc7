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

// nginxUpstream selects NGINX Gateway Fabric's upstream of the canary
// Service port, which it names <namespace>_<service>_<port>.
const nginxUpstream = `nginx_upstream_name="{{ namespace }}_{{ service }}_{{ port }}"`

// NGINX Gateway Fabric reports an average response time per upstream peer,
// not a histogram.
var _ = register(DataPlane{
	Name: v1alpha1.NGINXGatewayFabricDataPlane,
	Checks: map[string]Check{
		v1alpha1.RequestSuccessRateCheck: successRate("nginx_http_upstream_peer_responses_total", nginxUpstream, `nginx_status_range!="5xx"`),
		v1alpha1.RequestDurationCheck: {Unavailable: "NGINX Gateway Fabric reports only the average response time of each upstream peer, " +
			"not a histogram, so no 99th percentile can be computed: measure the canary's latency in a MetricTemplate"},
	},
})
