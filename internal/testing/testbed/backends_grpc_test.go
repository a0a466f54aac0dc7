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
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A backend answers the gRPC health check on its HTTP port (HTTP/2
// without TLS) with its version, pod and the tag it received, fails
// errorPercent of the calls with UNAVAILABLE, and counts each call in
// grpc_server_handled_total; a gRPC load counts what its client saw.
func TestBackendAnswersGRPC(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo-abc", Annotations: map[string]string{ErrorPercentAnnotation: "25"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Image: "podinfo:v4"}}},
	}
	handled := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "grpc_server_handled_total"},
		[]string{"namespace", "pod", "grpc_type", "grpc_service", "grpc_method", "grpc_code"})
	be, err := newBackend(pod)
	if err != nil {
		t.Fatal(err)
	}
	be.grpcHandled = handled.MustCurryWith(prometheus.Labels{"namespace": "apps", "pod": "podinfo-abc"})
	var served atomic.Uint64
	if err := be.listen("127.0.0.1", []int32{0}, &served); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(be.stop)

	start := time.Now()
	load := StartLoad(context.Background(), LoadOptions{URL: "http://" + be.addrs[0], Host: "grpc.example.com", GRPC: true,
		Rate: 200, Duration: time.Second, Header: http.Header{TagHeader: {"tester"}}})
	<-load.done // the whole second of calls
	load.Stop()
	c := load.Counts(start, time.Time{})
	if c.Total < 100 {
		t.Fatalf("%d calls in 1 s at 200/s", c.Total)
	}
	if c.ByCode[http.StatusOK]+c.ByCode[http.StatusServiceUnavailable] != c.Total {
		t.Fatalf("codes %v: want OK (200) and UNAVAILABLE (503) only", c.ByCode)
	}
	if failed := c.ByCode[http.StatusServiceUnavailable]; failed < c.Total/4-1 || failed > c.Total/4+1 {
		t.Errorf("%d of %d calls failed; want 25 %%", failed, c.Total)
	}
	if c.ByVersion["v4"] != c.Total || c.ByTag["tester"] != c.ByCode[http.StatusOK] {
		t.Errorf("by version %v, by tag %v: want every answer from v4, every OK one with the tag it was sent", c.ByVersion, c.ByTag)
	}
	ok := testutil.ToFloat64(handled.WithLabelValues("apps", "podinfo-abc", "unary", "grpc.health.v1.Health", "Check", "OK"))
	unavailable := testutil.ToFloat64(handled.WithLabelValues("apps", "podinfo-abc", "unary", "grpc.health.v1.Health", "Check", "Unavailable"))
	if int(ok) != c.ByCode[http.StatusOK] || int(unavailable) != c.ByCode[http.StatusServiceUnavailable] {
		t.Errorf("grpc_server_handled_total OK=%v Unavailable=%v; the client saw %v", ok, unavailable, c.ByCode)
	}
	if int(served.Load()) != c.Total {
		t.Errorf("served %d, the client counted %d", served.Load(), c.Total)
	}
}
