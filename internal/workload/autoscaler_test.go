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
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/serin-dev/serin/api/v1alpha1"
)

func autoscaledCanary(ref v1alpha1.AutoscalerReference) *v1alpha1.Canary {
	return &v1alpha1.Canary{
		ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: "apps"},
		Spec: v1alpha1.CanarySpec{
			TargetRef:     v1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "podinfo"},
			AutoscalerRef: &ref,
		},
	}
}

// The primary's HorizontalPodAutoscaler scales the primary, with the
// target's spec but the bounds of primaryScalerReplicas.
func TestMutatePrimaryAutoscaler(t *testing.T) {
	target := &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		MinReplicas: ptr.To[int32](2), MaxReplicas: 4,
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "podinfo"},
	}}
	canary := autoscaledCanary(v1alpha1.AutoscalerReference{Kind: "HorizontalPodAutoscaler", Name: "podinfo",
		PrimaryScalerReplicas: &v1alpha1.ScalerReplicas{MaxReplicas: ptr.To[int32](10)}})
	hpa := &autoscalingv2.HorizontalPodAutoscaler{}
	MutatePrimaryAutoscaler(canary, target, hpa)
	want := autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: ptr.To[int32](2), MaxReplicas: 10,
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "podinfo-primary"}}
	if diff := cmp.Diff(want, hpa.Spec); diff != "" {
		t.Errorf("primary's HPA (-want +got):\n%s", diff)
	}
	if !PrimaryAutoscalerInSync(canary, target, hpa) {
		t.Error("the copy is not in sync with itself")
	}
}

// scaledObject reads a ScaledObject from YAML.
func scaledObject(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil { // numbers as the API server's client reads them: int64
		t.Fatal(err)
	}
	return u
}

// The primary's ScaledObject, as Flagger makes it: scaling the primary; a
// trigger's query from primaryScalerQueries, or, without those, the
// target's with its name made the primary's; KEDA's HPA renamed; the
// bounds of primaryScalerReplicas; never serin's pause of the target.
func TestMutatePrimaryScaledObject(t *testing.T) {
	target := scaledObject(t, `
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: podinfo-so
  namespace: apps
  labels: {team: web}
  annotations: {autoscaling.keda.sh/paused-replicas: "0", owner: web}
spec:
  scaleTargetRef: {name: podinfo}
  minReplicaCount: 1
  maxReplicaCount: 3
  advanced: {horizontalPodAutoscalerConfig: {name: podinfo-hpa}}
  triggers:
  - name: prom-trigger
    type: prometheus
    metadata: {serverAddress: "http://prometheus:9090", threshold: "5", query: 'sum(rate(http_requests_total{app="podinfo"}[2m]))'}
  - name: cpu
    type: cpu
    metadata: {value: "60"}
`)
	tests := map[string]struct {
		ref       v1alpha1.AutoscalerReference
		wantQuery string
		wantMin   int64
		wantMax   int64
	}{
		"the target's query, made the primary's": {
			ref:       v1alpha1.AutoscalerReference{Kind: "ScaledObject", Name: "podinfo-so"},
			wantQuery: `sum(rate(http_requests_total{app="podinfo-primary"}[2m]))`, wantMin: 1, wantMax: 3,
		},
		"primaryScalerQueries and primaryScalerReplicas": {
			ref: v1alpha1.AutoscalerReference{Kind: "ScaledObject", Name: "podinfo-so",
				PrimaryScalerQueries:  map[string]string{"prom-trigger": "sum(up)"},
				PrimaryScalerReplicas: &v1alpha1.ScalerReplicas{MinReplicas: ptr.To[int32](0), MaxReplicas: ptr.To[int32](9)}},
			wantQuery: "sum(up)", wantMin: 0, wantMax: 9,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			canary := autoscaledCanary(tc.ref)
			primary := NewScaledObject("apps", "podinfo-so-primary")
			MutatePrimaryScaledObject(canary, target, primary)
			if got, _, _ := unstructured.NestedString(primary.Object, "spec", "scaleTargetRef", "name"); got != "podinfo-primary" {
				t.Errorf("scaleTargetRef.name = %q, want podinfo-primary", got)
			}
			triggers, _, _ := unstructured.NestedSlice(primary.Object, "spec", "triggers")
			if got := triggers[0].(map[string]any)["metadata"].(map[string]any)["query"]; got != tc.wantQuery {
				t.Errorf("query = %v, want %s", got, tc.wantQuery)
			}
			if got := triggers[1].(map[string]any)["metadata"].(map[string]any)["value"]; got != "60" {
				t.Errorf("the cpu trigger changed: %v", got)
			}
			if got, _, _ := unstructured.NestedString(primary.Object, "spec", "advanced", "horizontalPodAutoscalerConfig", "name"); got != "podinfo-hpa-primary" {
				t.Errorf("KEDA's HPA of the primary = %q, want podinfo-hpa-primary", got)
			}
			minReplicas, _, _ := unstructured.NestedInt64(primary.Object, "spec", "minReplicaCount")
			maxReplicas, _, _ := unstructured.NestedInt64(primary.Object, "spec", "maxReplicaCount")
			if minReplicas != tc.wantMin || maxReplicas != tc.wantMax {
				t.Errorf("replicas %d..%d, want %d..%d", minReplicas, maxReplicas, tc.wantMin, tc.wantMax)
			}
			if _, paused := primary.GetAnnotations()[KEDAPausedReplicasAnnotation]; paused {
				t.Error("the primary's copy carries the target's pause")
			}
			if primary.GetAnnotations()["owner"] != "web" || primary.GetLabels()["team"] != "web" || primary.GetLabels()[CanaryNameLabel] != "podinfo" {
				t.Errorf("metadata: %v %v", primary.GetLabels(), primary.GetAnnotations())
			}
			if !PrimaryScaledObjectInSync(canary, target, primary) {
				t.Error("the copy is not in sync with itself")
			}
			edited := primary.DeepCopy()
			_ = unstructured.SetNestedField(edited.Object, int64(50), "spec", "maxReplicaCount")
			if PrimaryScaledObjectInSync(canary, target, edited) {
				t.Error("an edited copy is in sync")
			}
			// The target is left as it was.
			if got, _, _ := unstructured.NestedString(target.Object, "spec", "scaleTargetRef", "name"); got != "podinfo" {
				t.Errorf("the target changed: %s", got)
			}
		})
	}
}

// A query that names the primary already keeps it.
func TestPrimaryQuery(t *testing.T) {
	canary := autoscaledCanary(v1alpha1.AutoscalerReference{Kind: "ScaledObject", Name: "so"})
	for in, want := range map[string]string{
		`up{app="podinfo"}`:         `up{app="podinfo-primary"}`,
		`up{app="podinfo-canary"}`:  `up{app="podinfo-primary"}`,
		`up{app="podinfo-primary"}`: `up{app="podinfo-primary"}`,
		`up{app="other"}`:           `up{app="other"}`,
	} {
		if got := primaryQuery(canary, in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
