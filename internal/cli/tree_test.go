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

package cli

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// ownedBy makes canary the controller of o, as the agent does.
func ownedBy[T client.Object](o T, canary *v1alpha1.Canary) T {
	o.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(canary, v1alpha1.GroupVersion.WithKind(v1alpha1.CanaryKind))})
	return o
}

// treeDeployment is a Deployment with replicas, all available when ready.
func treeDeployment(name string, ready bool) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name, Generation: 1},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "ghcr.io/stefanprodan/podinfo:6.9.0"}}},
			},
		},
	}
	if ready {
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"}}}
	} else {
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 1, AvailableReplicas: 1}
	}
	return d
}

func treeService(name string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 9898}}}}
}

// treeObjects are the Canary podinfo with what the agent generated for
// it, objects with generated names that it does not control, and the
// Canary backend, which has no target yet.
func treeObjects() []client.Object {
	podinfo := makeCanary("apps", "podinfo").ready(metav1.ConditionTrue, "Succeeded", "promotion completed").generation(1, 1).obj()
	backend := makeCanary("apps", "backend").obj()
	return []client.Object{
		podinfo, backend,
		treeDeployment("podinfo", true),
		ownedBy(treeDeployment("podinfo-primary", false), podinfo),
		ownedBy(treeService("podinfo"), podinfo),
		ownedBy(treeService("podinfo-primary"), podinfo),
		ownedBy(treeService("podinfo-canary"), podinfo),
		ownedBy(&autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo-primary"},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 4,
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "podinfo-primary"}}}, podinfo),
		ownedBy(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo-config-primary"}}, podinfo),
		ownedBy(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo-token-primary"}, Data: map[string][]byte{"token": []byte("s3cret")}}, podinfo),
		// Named like generated objects, not generated for podinfo.
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo-env-primary"}},
		ownedBy(treeService("backend-primary"), backend),
	}
}

func TestTreeCanary(t *testing.T) {
	ctx := context.Background()
	env := newTestEnvironment(t, newFakeClient(treeObjects()...))

	assertRun(t, runCommand(ctx, env, "tree", "canary", "podinfo"), "", "", "tree", "canary.txt")
	assertRun(t, runCommand(ctx, env, "tree", "canary", "backend"), "", "", "tree", "canary-without-target.txt")
	assertRun(t, runCommand(ctx, env, "tree", "canary", "nope"), `Canary object 'nope' not found in "apps" namespace`, "", "", "")

	got := runCommand(ctx, env, "tree", "canary", "podinfo", "-o", "json")
	var tree treeNode
	if err := json.Unmarshal([]byte(got.stdout), &tree); got.err != nil || err != nil {
		t.Fatalf("-o json: %v, %v:\n%s", got.err, err, got.stdout)
	}
	if len(tree.Resources) != 8 || tree.Resources[0].Role != roleTarget || tree.Resources[1].Name != "podinfo-primary" ||
		tree.Resources[1].Status != "InProgress" || tree.Resources[1].Role != roleGenerated {
		t.Errorf("-o json: %+v", tree)
	}
	assertGolden(t, "tree/canary.yaml", runCommand(ctx, env, "tree", "canary", "podinfo", "-o", "yaml").stdout)
}

func TestTreeGroup(t *testing.T) {
	ctx := context.Background()
	objects := append(treeObjects(), makeGroup("apps", "storefront", "podinfo", "gone").obj())
	env := newTestEnvironment(t, newFakeClient(objects...))
	assertRun(t, runCommand(ctx, env, "tree", "group", "storefront"), "", "", "tree", "group.txt")
}

// An initialized Canary shows the objects it must have and has not: a
// generated object deleted by hand is NotFound, one of the same name that
// the Canary does not control is Failed, so that an operator sees what
// the agent will recreate and what blocks it.
func TestTreeCanary_MissingObjects(t *testing.T) {
	ctx := context.Background()
	orders := makeCanary("apps", "orders").phase(v1alpha1.PhaseProgressing, 10).obj()
	env := newTestEnvironment(t, newFakeClient(orders,
		treeDeployment("orders", true),
		ownedBy(treeDeployment("orders-primary", true), orders),
		ownedBy(treeService("orders"), orders),
		// Deleted by hand: orders-primary; put there by someone else:
		// orders-canary.
		treeService("orders-canary"),
	))
	assertRun(t, runCommand(ctx, env, "tree", "canary", "orders"), "", "", "tree", "canary-missing.txt")

	got := runCommand(ctx, env, "tree", "canary", "orders", "-o", "json")
	var tree treeNode
	if err := json.Unmarshal([]byte(got.stdout), &tree); got.err != nil || err != nil {
		t.Fatalf("-o json: %v, %v:\n%s", got.err, err, got.stdout)
	}
	status := map[string]string{}
	for _, n := range tree.Resources {
		status[n.Kind+"/"+n.Name] = n.Status
	}
	want := map[string]string{
		"Deployment/orders": "Current", "Deployment/orders-primary": "Current", "Service/orders": "Current",
		"Service/orders-canary": "Failed", "Service/orders-primary": "NotFound", "HTTPRoute/orders": "NotFound",
	}
	if !cmp.Equal(want, status) {
		t.Errorf("-o json statuses (-want +got):\n%s", cmp.Diff(want, status))
	}
}

// A worker (routing.provider replicas) has its primary and no Service: the
// tree expects none, where a Canary behind a route would show its three
// Services missing.
func TestTreeCanary_WorkerExpectsNoService(t *testing.T) {
	ctx := context.Background()
	worker := makeCanary("apps", "worker").phase(v1alpha1.PhaseProgressing, 50).obj()
	worker.Spec.Routing.Provider = v1alpha1.ReplicasRouting
	worker.Spec.Service = v1alpha1.CanaryService{}
	env := newTestEnvironment(t, newFakeClient(worker,
		treeDeployment("worker", true),
		ownedBy(treeDeployment("worker-primary", true), worker),
	))
	got := runCommand(ctx, env, "tree", "canary", "worker", "-o", "json")
	var tree treeNode
	if err := json.Unmarshal([]byte(got.stdout), &tree); got.err != nil || err != nil {
		t.Fatalf("-o json: %v, %v:\n%s", got.err, err, got.stdout)
	}
	var names []string
	for _, r := range tree.Resources {
		names = append(names, r.Kind+"/"+r.Name+" "+r.Status)
		if r.Kind == "Service" {
			t.Errorf("a worker's tree shows a Service: %+v", r)
		}
	}
	if len(tree.Resources) != 2 || tree.Resources[1].Name != "worker-primary" {
		t.Errorf("resources %v, want the target and worker-primary", names)
	}
}
