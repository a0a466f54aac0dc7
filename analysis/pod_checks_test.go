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

package analysis

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// pod is a pod of app whose one container restarted restarts times, the
// last one for reason (OOMKilled, Error), waiting in CrashLoopBackOff when
// looping.
func pod(name, app string, restarts int32, reason string, looping bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name, Labels: map[string]string{"app": app}}}
	st := corev1.ContainerStatus{Name: "app", RestartCount: restarts}
	if reason != "" {
		code := int32(1)
		if reason == "OOMKilled" {
			code = 137
		}
		st.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: reason, ExitCode: code}
	}
	if looping {
		st.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{st}
	return p
}

// pod-restarts counts the restarts of the judged side's pods only (the
// canary's, or the primary's in a soak), holds them to thresholdRange.max
// (0 without one), and names the pods and causes behind a failure.
func TestPodRestartsCheck(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = appsv1.AddToScheme(scheme)
	objs := []client.Object{
		testobj.MakeDeployment("worker", "apps").Obj(),
		testobj.MakeDeployment("worker-primary", "apps").Obj(),
	}
	objs[1].(*appsv1.Deployment).Spec.Selector.MatchLabels = map[string]string{"app": "worker-primary"}
	c := testobj.MakeCanary("worker", "apps").Obj()
	tests := map[string]struct {
		pods        []client.Object
		side        side
		max         *float64
		wantPassed  bool
		wantValue   float64
		wantMessage string
	}{
		"no restart": {
			pods:       []client.Object{pod("worker-a-1", "worker", 0, "", false), pod("worker-primary-b-1", "worker-primary", 7, "Error", false)},
			wantPassed: true, wantMessage: "0 restarts of the canary's 1 pods",
		},
		"an OOM kill and a crash loop": {
			pods: []client.Object{pod("worker-a-1", "worker", 2, "OOMKilled", false), pod("worker-a-2", "worker", 5, "Error", true),
				pod("worker-a-3", "worker", 0, "", false)},
			wantValue: 7, wantMessage: "7 restarts of the canary's 3 pods > 0 (no restart allowed without thresholdRange.max); " +
				"OOMKilled: worker-a-1; CrashLoopBackOff: worker-a-2",
		},
		"within thresholdRange.max": {
			pods: []client.Object{pod("worker-a-1", "worker", 1, "Error", false)}, max: ptr.To(1.0),
			wantPassed: true, wantValue: 1, wantMessage: "1 restarts of the canary's 1 pods",
		},
		"the primary's pods in a soak": {
			pods: []client.Object{pod("worker-a-1", "worker", 9, "Error", false), pod("worker-primary-b-1", "worker-primary", 1, "Error", false)},
			side: primarySide, wantValue: 1, wantMessage: "1 restarts of the primary's 1 pods > 0 (no restart allowed without thresholdRange.max); exited with an error: worker-primary-b-1",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			cl := fake.NewClientBuilder().WithScheme(scheme).WithObjects(append(append([]client.Object{}, objs...), tt.pods...)...).Build()
			m := &Metrics{Reader: cl, Pods: cl}
			metric := v1alpha1.CanaryMetric{Name: v1alpha1.PodRestartsCheck}
			if tt.max != nil {
				metric.ThresholdRange = &v1alpha1.ThresholdRange{Max: tt.max}
			}
			res := m.check(context.Background(), c, metric, tt.side)
			if res.Passed != tt.wantPassed || res.Value != tt.wantValue || !res.HasValue {
				t.Errorf("passed %v value %v (has %v), want passed %v value %v: %s", res.Passed, res.Value, res.HasValue, tt.wantPassed, tt.wantValue, res.Message)
			}
			if !strings.Contains(res.Message, tt.wantMessage) {
				t.Errorf("message %q, want it to say %q", res.Message, tt.wantMessage)
			}
		})
	}
}

// A Service target has no pods of its own to count: the check fails and
// says so (CEL refuses it at admission too).
func TestPodRestartsCheck_ServiceTarget(t *testing.T) {
	c := testobj.MakeCanary("web", "apps").Target("v1", "Service", "web").Obj()
	m := &Metrics{Reader: fakeReader(t), Pods: fakeReader(t)}
	res := m.Check(context.Background(), c, v1alpha1.CanaryMetric{Name: v1alpha1.PodRestartsCheck})
	if res.Passed || !strings.Contains(res.Message, "counts the pods of a Deployment, a DaemonSet or a StatefulSet") {
		t.Errorf("got %+v", res)
	}
}

// {{ pods }} of a StatefulSet: the ordinals from the partition up are the
// canary's (the update revision's), those below the primary's; with one
// revision everywhere, every pod is the primary's.
func TestStatefulSetPodPattern(t *testing.T) {
	sts := func(replicas, partition int32, same bool) *appsv1.StatefulSet {
		s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db.x"}}
		s.Spec.Replicas = ptr.To(replicas)
		s.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To(partition)}
		s.Status.CurrentRevision, s.Status.UpdateRevision = "db-1", "db-2"
		if same {
			s.Status.UpdateRevision = "db-1"
		}
		return s
	}
	for _, tt := range []struct {
		sts             *appsv1.StatefulSet
		canary, primary string
	}{
		{sts(4, 3, false), `db\.x-(3)`, `db\.x-(2|1|0)`},
		{sts(4, 2, false), `db\.x-(3|2)`, `db\.x-(1|0)`},
		{sts(4, 0, false), `db\.x-(3|2|1|0)`, `db\.x-none`},
		{sts(4, 4, false), `db\.x-none`, `db\.x-(3|2|1|0)`},
		{sts(4, 0, true), `db\.x-none`, `db\.x-(3|2|1|0)`},
		{sts(2, 9, false), `db\.x-none`, `db\.x-(1|0)`},
	} {
		if got := StatefulSetPodPattern(tt.sts, true); got != tt.canary {
			t.Errorf("canary of %d/%d: %q, want %q", *tt.sts.Spec.Replicas, *tt.sts.Spec.UpdateStrategy.RollingUpdate.Partition, got, tt.canary)
		}
		if got := StatefulSetPodPattern(tt.sts, false); got != tt.primary {
			t.Errorf("primary of %d/%d: %q, want %q", *tt.sts.Spec.Replicas, *tt.sts.Spec.UpdateStrategy.RollingUpdate.Partition, got, tt.primary)
		}
	}
}
