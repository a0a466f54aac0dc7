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

// contourCluster selects the Envoy cluster Contour keeps for one Service
// port: its stats name (alt_stat_name) is <namespace>_<service>_<port>
// (Contour's internal/envoy cluster builder, the same for HTTPRoutes and
// HTTPProxies; Flagger's contour observer matches it too).
const contourCluster = `envoy_cluster_name="{{ namespace }}_{{ service }}_{{ port }}"`

// Envoy's upstream_rq_time is in milliseconds.
var _ = register(DataPlane{
	Name: v1alpha1.ContourDataPlane,
	Checks: map[string]Check{
		v1alpha1.RequestSuccessRateCheck: successRate("envoy_cluster_upstream_rq", contourCluster, `envoy_response_code!~"5.."`),
		v1alpha1.RequestDurationCheck:    {PromQL: p99("envoy_cluster_upstream_rq_time_bucket", contourCluster, "")},
	},
})
