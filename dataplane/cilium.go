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

// hubbleServer selects the HTTP flows Hubble saw arrive at the canary's
// workload (reporter="server"): Hubble's labels name workloads, not Services.
const hubbleServer = `reporter="server",destination_namespace="{{ namespace }}",destination_workload="{{ workload }}"`

var _ = register(DataPlane{
	Name: v1alpha1.CiliumDataPlane,
	Checks: map[string]Check{
		v1alpha1.RequestSuccessRateCheck: successRate("hubble_http_requests_total", hubbleServer, `status!~"5.."`),
		v1alpha1.RequestDurationCheck:    {PromQL: p99("hubble_http_request_duration_seconds_bucket", hubbleServer, "1000 * ")},
	},
})
