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
	"k8s.io/apimachinery/pkg/types"
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
	var served atomic.Uint64
	be := serveTestBackend(t, pod, &served)
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

// serveTestBackend runs the backend of pod on a free loopback port until
// the test ends.
func serveTestBackend(t *testing.T, pod *corev1.Pod, served *atomic.Uint64) *backend {
	t.Helper()
	be, err := newBackend(pod)
	if err != nil {
		t.Fatal(err)
	}
	if err := be.listen("127.0.0.1", []int32{0}, served); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(be.stop)
	return be
}

func TestBackendRejectsBadAnnotations(t *testing.T) {
	for k, v := range map[string]string{
		ErrorPercentAnnotation: "110", LatencyAnnotation: "soon", FaultErrorPercentAnnotation: "-1",
		ErrorPercentOfPathAnnotation: "/checkout", ErrorPercentOfAnnotation: "v3=ten",
	} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{k: v}}}
		if _, err := newBackend(pod); err == nil {
			t.Errorf("%s=%q accepted", k, v)
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{LatencyAnnotation: "20ms"}}}
	be, err := newBackend(pod)
	if err != nil || be.behaviour.Load().latency != 20*time.Millisecond {
		t.Errorf("latency %v, %v", be, err)
	}
}

// A running backend reads its pod's annotations again when the pod
// changes: a test makes every pod of a namespace err (a downstream fault,
// at random) or slow down (a latency drift) mid-analysis by patching them,
// and a release breaks one endpoint only with error-percent-of-path.
func TestBackendFollowsItsPod(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo-abc", UID: "uid-1",
			Annotations: map[string]string{ErrorPercentOfPathAnnotation: "/checkout=7.5"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: "podinfo:v2"}}},
	}
	be := serveTestBackend(t, pod, new(atomic.Uint64))
	b := &Backends{running: map[types.UID]*backend{pod.UID: be}}
	count := func(path string, n int) (failed int, slowest time.Duration) {
		t.Helper()
		for range n {
			start := time.Now()
			resp, err := http.Get("http://" + be.addrs[0] + path)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			slowest = max(slowest, time.Since(start))
			if resp.StatusCode == http.StatusInternalServerError {
				failed++
			}
		}
		return failed, slowest
	}
	if failed, _ := count("/checkout", 400); failed != 30 {
		t.Errorf("/checkout: %d of 400 failed, want 30 (7.5 %%)", failed)
	}
	if failed, _ := count("/", 400); failed != 0 {
		t.Errorf("/: %d of 400 failed, want none: only /checkout is broken", failed)
	}

	pod.Annotations = map[string]string{FaultErrorPercentAnnotation: "30", ErrorPercentAnnotation: "1.5"}
	if err := b.update(pod); err != nil {
		t.Fatal(err)
	}
	// 1.5 % spread evenly (6) or 30 % at random: 120 expected, 4 standard
	// deviations either side.
	if failed, _ := count("/", 400); failed < 80 || failed > 160 {
		t.Errorf("with a 30 %% fault: %d of 400 failed, want about 120", failed)
	}

	pod.Annotations = map[string]string{LatencyAnnotation: "20ms"}
	if err := b.update(pod); err != nil {
		t.Fatal(err)
	}
	if _, slowest := count("/", 5); slowest < 20*time.Millisecond {
		t.Errorf("the slowest answer took %v, want the 20ms latency the pod now has", slowest)
	}

	pod.Annotations = map[string]string{ErrorPercentAnnotation: "1.5"}
	if err := b.update(pod); err != nil {
		t.Fatal(err)
	}
	if failed, _ := count("/", 400); failed != 6 {
		t.Errorf("the fault gone: %d of 400 failed, want 6 (1.5 %%, spread evenly)", failed)
	}

	pod.Annotations = map[string]string{ErrorPercentAnnotation: "lots"}
	if err := b.update(pod); err == nil {
		t.Error("an annotation that does not parse was accepted")
	}
	if got := be.behaviour.Load().errorPercent; got != 1.5 {
		t.Errorf("after a bad annotation the error percent is %v, want 1.5 kept", got)
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
