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

package workload

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/serin-dev/serin/internal/testing/testobj"
)

func TestMutatePrimary(t *testing.T) {
	canary := testobj.MakeCanary("podinfo", "apps").ProgressDeadlineSeconds(60).Obj()
	target := testobj.MakeDeployment("podinfo", "apps").Replicas(3).ProgressDeadlineSeconds(30).
		Label("kustomize.toolkit.fluxcd.io/name", "apps").Label("team", "web").Obj()
	target.Annotations = map[string]string{"kustomize.toolkit.fluxcd.io/checksum": "x", "owner": "web"}

	primary := &appsv1.Deployment{}
	MutatePrimary(canary, target, primary, false, nil)

	if diff := cmp.Diff(map[string]string{"app": "podinfo", "team": "web", CanaryNameLabel: "podinfo"}, primary.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"owner": "web", ReconcileAnnotation: ReconcileDisabled}, primary.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"app": "podinfo-primary"}, primary.Spec.Selector.MatchLabels); diff != "" {
		t.Errorf("selector (-want +got):\n%s", diff)
	}
	if got := primary.Spec.Template.Annotations[SpecHashAnnotation]; got != SpecHash(&target.Spec.Template, nil) {
		t.Errorf("pod template spec hash = %q, want the target's revision", got)
	}
	if diff := cmp.Diff(map[string]string{"app": "podinfo-primary", "team": "web"}, primary.Spec.Template.Labels); diff != "" {
		t.Errorf("pod labels (-want +got):\n%s", diff)
	}
	if got := *primary.Spec.Replicas; got != 3 {
		t.Errorf("replicas = %d, want 3", got)
	}
	if got := *primary.Spec.ProgressDeadlineSeconds; got != 30 {
		t.Errorf("progressDeadlineSeconds = %d, want the target's 30", got)
	}

	// Once created, the template changes only on promotion.
	primary.CreationTimestamp = metav1.Now()
	newer := target.DeepCopy()
	newer.Spec.Template.Spec.Containers[0].Image = "podinfo:v2"
	MutatePrimary(canary, newer, primary, false, nil)
	if got := primary.Spec.Template.Spec.Containers[0].Image; got == "podinfo:v2" {
		t.Error("template updated without promotion")
	}
	MutatePrimary(canary, newer, primary, true, nil)
	if got := primary.Spec.Template.Spec.Containers[0].Image; got != "podinfo:v2" {
		t.Errorf("promoted image = %s, want podinfo:v2", got)
	}
}

func TestServicePorts(t *testing.T) {
	tpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Ports: []corev1.ContainerPort{
			{Name: "http", ContainerPort: 9898},
			{Name: "grpc", ContainerPort: 9999},
			{ContainerPort: 8125, Protocol: corev1.ProtocolUDP},
			{ContainerPort: 7070},
		},
	}}}}
	tests := map[string]struct {
		discovery  bool
		port       int32
		tpl        *corev1.PodTemplateSpec
		targetPort *intstr.IntOrString
		want       []corev1.ServicePort
	}{
		// A Service refuses two ports of one name or number.
		"a discovered port named like the service port is renamed": {
			discovery: true, port: 80,
			tpl: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 9898}}}}}},
			want: []corev1.ServicePort{
				{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(80)},
				{Name: "tcp-9898", Protocol: corev1.ProtocolTCP, Port: 9898, TargetPort: intstr.FromInt32(9898)},
			},
		},
		"two containers exposing one port number: once": {
			discovery: true,
			tpl: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
				{Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9797}}},
				{Ports: []corev1.ContainerPort{{Name: "sidecar-metrics", ContainerPort: 9797}, {Name: "metrics", ContainerPort: 9796}}},
			}}},
			want: []corev1.ServicePort{
				{Name: "http", Protocol: corev1.ProtocolTCP, Port: 9898, TargetPort: intstr.FromInt32(9898)},
				{Name: "metrics", Protocol: corev1.ProtocolTCP, Port: 9797, TargetPort: intstr.FromInt32(9797)},
				{Name: "tcp-9796", Protocol: corev1.ProtocolTCP, Port: 9796, TargetPort: intstr.FromInt32(9796)},
			},
		},
		"service port only": {
			want: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 9898, TargetPort: intstr.FromInt32(9898)}},
		},
		"named target port": {
			targetPort: ptr.To(intstr.FromString("http")),
			want:       []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 9898, TargetPort: intstr.FromString("http")}},
		},
		"discovery adds other TCP ports": {
			discovery: true,
			want: []corev1.ServicePort{
				{Name: "http", Protocol: corev1.ProtocolTCP, Port: 9898, TargetPort: intstr.FromInt32(9898)},
				{Name: "grpc", Protocol: corev1.ProtocolTCP, Port: 9999, TargetPort: intstr.FromInt32(9999)},
				{Name: "tcp-7070", Protocol: corev1.ProtocolTCP, Port: 7070, TargetPort: intstr.FromInt32(7070)},
			},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			canary := testobj.MakeCanary("podinfo", "apps").Obj()
			canary.Spec.Service.PortDiscovery = tt.discovery
			if tt.port != 0 {
				canary.Spec.Service.Port = tt.port
			}
			tpl := tpl
			if tt.tpl != nil {
				tpl = tt.tpl
			}
			canary.Spec.Service.TargetPort = tt.targetPort
			if diff := cmp.Diff(tt.want, ServicePorts(canary, tpl)); diff != "" {
				t.Errorf("ports (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeploymentHealth(t *testing.T) {
	base := func(mut func(*appsv1.Deployment)) *appsv1.Deployment {
		d := testobj.MakeDeployment("p", "apps").Replicas(2).Obj()
		d.Generation, d.Status.ObservedGeneration = 2, 2
		d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.AvailableReplicas = 2, 2, 2
		mut(d)
		return d
	}
	tests := map[string]struct {
		d *appsv1.Deployment
		// threshold is the readyThreshold; 0 stands for the default, 100.
		threshold int
		want      Health
	}{
		"ready": {
			d:    base(func(*appsv1.Deployment) {}),
			want: Health{Ready: true, Message: "deployment p: 2 of 2 replicas available"},
		},
		"generation not observed": {
			d:    base(func(d *appsv1.Deployment) { d.Generation = 3 }),
			want: Health{Message: "deployment p: waiting for the deployment controller to observe generation 3"},
		},
		"rolling": {
			d:    base(func(d *appsv1.Deployment) { d.Status.UpdatedReplicas = 1 }),
			want: Health{Message: "deployment p: 1 of 2 replicas updated"},
		},
		"old replicas terminating": {
			d:    base(func(d *appsv1.Deployment) { d.Status.Replicas = 3 }),
			want: Health{Message: "deployment p: 1 old replicas pending termination"},
		},
		"not available": {
			d:    base(func(d *appsv1.Deployment) { d.Status.AvailableReplicas = 0 }),
			want: Health{Message: "deployment p: 0 of 2 updated replicas available"},
		},
		"progress deadline exceeded": {
			d: base(func(d *appsv1.Deployment) {
				d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
					Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "p-1" has timed out progressing.`}}
			}),
			want: Health{Failed: true, Message: `deployment p exceeded its progress deadline: ReplicaSet "p-1" has timed out progressing.`},
		},
		"replica failure (quota)": {
			d: base(func(d *appsv1.Deployment) {
				d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue,
					Reason: "FailedCreate", Message: "exceeded quota"}}
			}),
			want: Health{Failed: true, Message: "deployment p cannot create pods: exceeded quota"},
		},
		"100%: one of two unavailable is not ready": {
			d:         base(func(d *appsv1.Deployment) { d.Status.AvailableReplicas, d.Status.ReadyReplicas = 1, 1 }),
			threshold: 100,
			want:      Health{Serving: 1, Message: "deployment p: 1 of 2 updated replicas available"},
		},
		"50%: half of four available is ready": {
			d:         base(quarters(2)),
			threshold: 50,
			want:      Health{Ready: true, Serving: 2, Message: "deployment p: 2 of 4 replicas available (readyThreshold 50%)"},
		},
		"50%: one of four is not": {
			d:         base(quarters(1)),
			threshold: 50,
			want:      Health{Serving: 1, Message: "deployment p: 1 of 4 updated replicas available, 2 needed (readyThreshold 50%)"},
		},
		"50% of three rounds up to two": {
			d: base(func(d *appsv1.Deployment) {
				d.Spec.Replicas = ptr.To[int32](3)
				d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.AvailableReplicas, d.Status.ReadyReplicas = 3, 3, 1, 1
			}),
			threshold: 50,
			want:      Health{Serving: 1, Message: "deployment p: 1 of 3 updated replicas available, 2 needed (readyThreshold 50%)"},
		},
		"90% of four rounds up to all four": {
			d:         base(quarters(3)),
			threshold: 90,
			want:      Health{Serving: 3, Message: "deployment p: 3 of 4 updated replicas available (readyThreshold 90%)"},
		},
		"1%: one of four available is ready": {
			d:         base(quarters(1)),
			threshold: 1,
			want:      Health{Ready: true, Serving: 1, Message: "deployment p: 1 of 4 replicas available (readyThreshold 1%)"},
		},
		"1%: no available replica is never ready": {
			d:         base(quarters(0)),
			threshold: 1,
			want:      Health{Message: "deployment p: 0 of 4 updated replicas available, 1 needed (readyThreshold 1%)"},
		},
		"1%: every replica must still be updated": {
			d: base(func(d *appsv1.Deployment) {
				quarters(3)(d)
				d.Status.UpdatedReplicas = 3
			}),
			threshold: 1,
			want:      Health{Serving: 3, Message: "deployment p: 3 of 4 replicas updated"},
		},
		"1%: old replicas must be gone": {
			d: base(func(d *appsv1.Deployment) {
				quarters(3)(d)
				d.Status.Replicas = 5
			}),
			threshold: 1,
			want:      Health{Serving: 3, Message: "deployment p: 1 old replicas pending termination"},
		},
		"1%: a failed deployment stays failed": {
			d: base(func(d *appsv1.Deployment) {
				quarters(3)(d)
				d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
					Reason: "ProgressDeadlineExceeded", Message: "timed out"}}
			}),
			threshold: 1,
			want:      Health{Failed: true, Serving: 3, Message: "deployment p exceeded its progress deadline: timed out"},
		},
		"50% of zero replicas: ready as at 100%": {
			d: base(func(d *appsv1.Deployment) {
				d.Spec.Replicas = ptr.To[int32](0)
				d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.AvailableReplicas = 0, 0, 0
			}),
			threshold: 50,
			want:      Health{Ready: true, Message: "deployment p: 0 of 0 replicas available (readyThreshold 50%)"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			threshold := tt.threshold
			if threshold == 0 {
				threshold = 100
			}
			if diff := cmp.Diff(tt.want, DeploymentHealth(tt.d, threshold)); diff != "" {
				t.Errorf("health (-want +got):\n%s", diff)
			}
		})
	}
}

// quarters makes a Deployment of four replicas, all updated, available of
// them ready and available.
func quarters(available int32) func(*appsv1.Deployment) {
	return func(d *appsv1.Deployment) {
		d.Spec.Replicas = ptr.To[int32](4)
		d.Status.Replicas, d.Status.UpdatedReplicas = 4, 4
		d.Status.AvailableReplicas, d.Status.ReadyReplicas = available, available
	}
}

func TestAvailableNeeded(t *testing.T) {
	tests := []struct {
		updated   int32
		threshold int
		want      int32
	}{
		{updated: 4, threshold: 100, want: 4},
		{updated: 4, threshold: 50, want: 2},
		{updated: 4, threshold: 51, want: 3},
		{updated: 4, threshold: 25, want: 1},
		{updated: 4, threshold: 1, want: 1},
		{updated: 3, threshold: 50, want: 2},
		{updated: 3, threshold: 34, want: 2},
		{updated: 3, threshold: 33, want: 1},
		{updated: 1, threshold: 1, want: 1},
		{updated: 1, threshold: 99, want: 1},
		{updated: 200, threshold: 1, want: 2},
		{updated: 10, threshold: 0, want: 1},
		{updated: 0, threshold: 50, want: 0},
		{updated: 0, threshold: 100, want: 0},
	}
	for _, tt := range tests {
		if got := AvailableNeeded(tt.updated, tt.threshold); got != tt.want {
			t.Errorf("AvailableNeeded(%d, %d%%) = %d, want %d", tt.updated, tt.threshold, got, tt.want)
		}
	}
}

func TestSpecHash(t *testing.T) {
	a := testobj.MakeDeployment("p", "apps").Obj().Spec.Template
	b := *a.DeepCopy()
	b.Labels["kustomize.toolkit.fluxcd.io/name"] = "apps"
	if SpecHash(&a, nil) != SpecHash(&b, nil) {
		t.Error("Flux labels changed the hash")
	}
	b.Spec.Containers[0].Image = "v2"
	if SpecHash(&a, nil) == SpecHash(&b, nil) {
		t.Error("an image change kept the hash")
	}
	if SpecHash(&a, map[string]string{"ConfigMap/x": "1"}) == SpecHash(&a, map[string]string{"ConfigMap/x": "2"}) {
		t.Error("a tracked config change kept the hash")
	}
}

func TestLastGoodTemplate(t *testing.T) {
	rs := func(hash, image string) appsv1.ReplicaSet {
		return appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{
				Labels:      map[string]string{"app": "p-primary", appsv1.DefaultDeploymentUniqueLabelKey: "abc"},
				Annotations: map[string]string{SpecHashAnnotation: hash},
			},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: image}}},
		}}}
	}
	history := []appsv1.ReplicaSet{rs("bad", "v4"), rs("good", "v1")}
	tpl, ok := LastGoodTemplate(history, "good")
	if !ok || tpl.Spec.Containers[0].Image != "v1" {
		t.Fatalf("LastGoodTemplate() = %v, %v; want the v1 template", tpl, ok)
	}
	if _, has := tpl.Labels[appsv1.DefaultDeploymentUniqueLabelKey]; has {
		t.Error("the pod-template-hash label must be dropped, the deployment controller sets it")
	}
	if _, ok := LastGoodTemplate(history, "gone"); ok {
		t.Error("found a template for a revision no ReplicaSet ran")
	}
}

func TestMayLoseAllReadyPods(t *testing.T) {
	rolling := func(replicas int32, maxUnavailable *intstr.IntOrString) *appsv1.Deployment {
		d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: &replicas}}
		if maxUnavailable != nil {
			d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: maxUnavailable}}
		}
		return d
	}
	pct := func(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
	num := func(n int) *intstr.IntOrString { v := intstr.FromInt(n); return &v }
	recreate := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}}}
	for name, tt := range map[string]struct {
		d    *appsv1.Deployment
		want bool
	}{
		"recreate":                       {recreate, true},
		"default rolling update":         {rolling(2, nil), false},
		"maxUnavailable 100%":            {rolling(2, pct("100%")), true},
		"maxUnavailable 50% of 2":        {rolling(2, pct("50%")), false},
		"maxUnavailable 2 of 2":          {rolling(2, num(2)), true},
		"maxUnavailable 1 of 1":          {rolling(1, num(1)), true},
		"maxUnavailable 99% rounds down": {rolling(1, pct("99%")), false},
	} {
		if got := MayLoseAllReadyPods(tt.d); got != tt.want {
			t.Errorf("%s: MayLoseAllReadyPods = %v, want %v", name, got, tt.want)
		}
	}
}
