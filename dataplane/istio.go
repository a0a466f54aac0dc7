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

// istioClients selects what the sidecars and gateways that sent requests to
// the canary Service report (reporter="source"): the data plane that routed
// them knows the backend Service, which the canary's own sidecar cannot
// tell when several Services select its pods.
const istioClients = `reporter="source",destination_service_namespace="{{ namespace }}",destination_service_name="{{ service }}"`

var _ = register(DataPlane{
	Name: v1alpha1.IstioDataPlane,
	Checks: map[string]Check{
		v1alpha1.RequestSuccessRateCheck: successRate("istio_requests_total", istioClients, `response_code!~"5.."`),
		v1alpha1.RequestDurationCheck:    {PromQL: p99("istio_request_duration_milliseconds_bucket", istioClients, "")},
	},
})
