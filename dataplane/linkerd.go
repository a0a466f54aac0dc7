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

// linkerdInbound selects what the canary Deployment's own Linkerd proxies
// received (direction="inbound"), by the namespace and deployment labels
// Linkerd's Prometheus configuration (linkerd-viz, or its documented
// scrape configuration for your own Prometheus) takes from the pods'
// linkerd.io/proxy-deployment label: what Flagger's linkerd provider
// queries. The primary's pods belong to <target>-primary and never match.
const linkerdInbound = `namespace="{{ namespace }}",deployment="{{ workload }}",direction="inbound"`

// Linkerd's proxies classify each response: failure for a 5xx (or a gRPC
// error), success otherwise; their latency histogram is in milliseconds.
var _ = register(DataPlane{
	Name: v1alpha1.LinkerdDataPlane,
	Checks: map[string]Check{
		v1alpha1.RequestSuccessRateCheck: successRate("response_total", linkerdInbound, `classification!="failure"`),
		v1alpha1.RequestDurationCheck:    {PromQL: p99("response_latency_ms_bucket", linkerdInbound, "")},
	},
})
