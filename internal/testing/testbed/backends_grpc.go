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

package testbed

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// grpcServer is the app's gRPC server, on the same ports as its HTTP one
// (HTTP/2 without TLS): the standard health service grpc.health.v1.Health,
// answering SERVING, as a gRPC app's canary test calls it. The pod's
// behaviour applies to each call as to an HTTP request, with the call's
// path (/grpc.health.v1.Health/Check) as the request path: a failed call
// ends with the gRPC code UNAVAILABLE. Each answer carries the pod's
// version and name in its header metadata (x-app-version, x-app-pod), and
// the x-app-tag the call arrived with, and counts in
// grpc_server_handled_total.
func (be *backend) grpcServer(served *atomic.Uint64) *grpc.Server {
	srv := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		bh := be.behaviour.Load()
		failed := be.fails(bh, info.FullMethod)
		served.Add(1)
		if bh.latency > 0 {
			select {
			case <-time.After(bh.latency):
			case <-ctx.Done():
				return nil, status.FromContextError(ctx.Err()).Err()
			}
		}
		md := metadata.Pairs(strings.ToLower(VersionHeader), be.version, strings.ToLower(PodHeader), be.pod)
		if in, ok := metadata.FromIncomingContext(ctx); ok && len(in.Get(TagHeader)) > 0 {
			md.Set(TagHeader, in.Get(TagHeader)[0])
		}
		_ = grpc.SetHeader(ctx, md)
		service, method, _ := strings.Cut(strings.TrimPrefix(info.FullMethod, "/"), "/")
		code := codes.OK
		if failed {
			code = codes.Unavailable
		}
		if be.grpcHandled != nil {
			be.grpcHandled.WithLabelValues("unary", service, method, code.String()).Inc()
		}
		if failed {
			return nil, status.Errorf(codes.Unavailable, "injected by %s", ErrorPercentAnnotation)
		}
		return handler(ctx, req)
	}))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	return srv
}
