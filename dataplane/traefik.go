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

// traefikBackend selects the per-backend series Traefik v3's
// kubernetesGateway provider keeps for one Service port of an HTTPRoute:
// service="<namespace>-<service>-http-<port>@kubernetesgateway" ("http" is
// the route kind; Traefik v3.6 pkg/provider/kubernetes/gateway, checked on
// the testbed).
const traefikBackend = `service="{{ namespace }}-{{ service }}-http-{{ port }}@kubernetesgateway"`

// traefikGRPCBackend selects the series of one Service port of a
// GRPCRoute: service="<namespace>-<service>-<port>-grpc@kubernetesgateway"
// (pkg/provider/kubernetes/gateway/grpcroute.go, checked on the testbed).
// For a gRPC call Traefik's code label is the call's gRPC code (0 for OK,
// 14 for UNAVAILABLE; 2, Unknown, without a grpc-status), not the HTTP
// status (pkg/middlewares/metrics).
const traefikGRPCBackend = `service="{{ namespace }}-{{ service }}-{{ port }}-grpc@kubernetesgateway"`

// traefikGRPCAnswered selects the gRPC codes of an answer in Traefik's
// code label: all but those of a server error (Unknown 2, DeadlineExceeded
// 4, Unimplemented 12, Internal 13, Unavailable 14, DataLoss 15).
const traefikGRPCAnswered = `code!~"2|4|12|13|14|15"`

// Traefik, the testbed's data plane. Its gaps, as read in its source:
// Traefik v3.6's Gateway API provider
// (pkg/provider/kubernetes/gateway/httproute.go) implements the header
// modifiers, redirects, URL rewrites and its own ExtensionRef filters, and
// routes every request of a rule with any other filter to a service that
// answers 500, with the route still Accepted; it reads no backendRef's
// filters.
var _ = register(DataPlane{
	Name: v1alpha1.TraefikDataPlane,
	Checks: map[string]Check{
		v1alpha1.RequestSuccessRateCheck: successRate("traefik_service_requests_total", traefikBackend, `code!~"5.."`),
		v1alpha1.RequestDurationCheck:    {PromQL: p99("traefik_service_request_duration_seconds_bucket", traefikBackend, "1000 * ")},
		v1alpha1.GRPCSuccessRateCheck:    successRate("traefik_service_requests_total", traefikGRPCBackend, traefikGRPCAnswered),
	},
	Gaps: []Gap{
		{CORSFeature, "Traefik (v3.6) has no CORS filter and answers every request of the route with a 500"},
		{MirrorFeature, "Traefik (v3.6) has no RequestMirror filter and would answer every request of the route with a 500 while the analysis mirrors"},
		{RouteMirrorFeature, "Traefik (v3.6) has no RequestMirror filter and answers every request of the route with a 500"},
		{SessionAffinityFeature, "Traefik (v3.6) ignores the filters of a backendRef, so the canary's answers would never set the cookie and no user would be pinned"},
	},
})
