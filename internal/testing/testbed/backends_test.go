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
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestImageTag(t *testing.T) {
	for image, want := range map[string]string{
		"podinfo:v2":                          "v2",
		"ghcr.io/stefanprodan/podinfo:6.0.0":  "6.0.0",
		"registry:5000/podinfo":               "latest",
		"registry:5000/podinfo:v3":            "v3",
		"podinfo:v4@sha256:0123456789abcdef0": "v4",
		"podinfo":                             "latest",
	} {
		if got := imageTag(image); got != want {
			t.Errorf("imageTag(%q) = %q, want %q", image, got, want)
		}
	}
}

// A backend answers its version and pod, and exactly errorPercent of every
// hundred requests with 500, spread evenly.
func TestBackendServesItsPodTemplate(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo-abc", Annotations: map[string]string{ErrorPercentAnnotation: "10"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Image: "podinfo:v3"}}},
	}
	be, err := newBackend(pod)
	if err != nil {
		t.Fatal(err)
	}
	var served atomic.Uint64
	if err := be.listen("127.0.0.1", []int32{0}, &served); err != nil {
		t.Fatal(err)
	}
	defer be.stop()
	// Port 0 picked a free port: find it from the listener's server.
	addr := be.addrs[0]
	codes := map[int]int{}
	longestRun := 0
	run := 0
	for range 200 {
		resp, err := http.Get("http://" + addr + "/")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		codes[resp.StatusCode]++
		if got := resp.Header.Get(VersionHeader); got != "v3" {
			t.Fatalf("version %q, want v3", got)
		}
		if got := resp.Header.Get(PodHeader); got != "apps/podinfo-abc" {
			t.Fatalf("pod %q", got)
		}
		if resp.StatusCode == 500 {
			run++
			longestRun = max(longestRun, run)
		} else {
			run = 0
		}
	}
	if codes[500] != 20 || codes[200] != 180 {
		t.Errorf("codes %v, want 20×500 and 180×200", codes)
	}
	if longestRun > 1 {
		t.Errorf("errors come in runs of %d: not spread evenly", longestRun)
	}
	if served.Load() != 200 {
		t.Errorf("served %d", served.Load())
	}
}

func TestBackendRejectsBadAnnotations(t *testing.T) {
	for k, v := range map[string]string{ErrorPercentAnnotation: "110", LatencyAnnotation: "soon"} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{k: v}}}
		if _, err := newBackend(pod); err == nil {
			t.Errorf("%s=%q accepted", k, v)
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{LatencyAnnotation: "20ms"}}}
	be, err := newBackend(pod)
	if err != nil || be.latency != 20*time.Millisecond {
		t.Errorf("latency %v, %v", be, err)
	}
}

// Target ports resolve as the endpoint controller resolves them.
func TestSlicePorts(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Ports: []corev1.ContainerPort{
		{Name: "http", ContainerPort: 9898}, {Name: "grpc", ContainerPort: 9999},
	}}}}}
	svc := &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
		{Name: "http", Port: 80, TargetPort: intstr.FromString("http")},
		{Name: "grpc", Port: 9999},
		{Name: "metrics", Port: 8080, TargetPort: intstr.FromInt32(9797)},
		{Name: "missing", Port: 81, TargetPort: intstr.FromString("admin")},
	}}}
	got := map[string]int32{}
	for _, p := range slicePorts(svc, pod) {
		got[*p.Name] = *p.Port
	}
	want := map[string]int32{"http": 9898, "grpc": 9999, "metrics": 9797}
	if len(got) != len(want) {
		t.Fatalf("ports %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("port %s = %d, want %d", k, got[k], v)
		}
	}
}
