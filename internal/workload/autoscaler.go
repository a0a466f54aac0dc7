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
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// PrimaryAutoscalerName is the name of the primary's copy of the target's
// HorizontalPodAutoscaler.
func PrimaryAutoscalerName(canary *v1alpha1.Canary) string {
	return canary.Spec.AutoscalerRef.Name + v1alpha1.PrimarySuffix
}

// MutatePrimaryAutoscaler makes hpa the primary's copy of the target's
// autoscaler: the same bounds (or autoscalerRef.primaryScalerReplicas),
// metrics and behavior, scaling the primary Deployment. The target's own autoscaler keeps scaling the canary during
// an analysis (the autoscaler controller leaves a Deployment scaled to
// zero alone, so it does not wake the idle canary).
func MutatePrimaryAutoscaler(canary *v1alpha1.Canary, target, hpa *autoscalingv2.HorizontalPodAutoscaler) {
	hpa.Labels, hpa.Annotations = mergeGenerated(canary, hpa, target.Labels, target.Annotations)
	spec := *target.Spec.DeepCopy()
	spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: canary.GetPrimaryName()}
	if r := canary.Spec.AutoscalerRef.PrimaryScalerReplicas; r != nil {
		if r.MinReplicas != nil {
			spec.MinReplicas = r.MinReplicas
		}
		if r.MaxReplicas != nil {
			spec.MaxReplicas = *r.MaxReplicas
		}
	}
	hpa.Spec = spec
}

// PrimaryAutoscalerInSync reports whether the primary's autoscaler has the
// spec MutatePrimaryAutoscaler gives it.
func PrimaryAutoscalerInSync(canary *v1alpha1.Canary, target, primary *autoscalingv2.HorizontalPodAutoscaler) bool {
	want := primary.DeepCopy()
	MutatePrimaryAutoscaler(canary, target, want)
	return equality.Semantic.DeepEqual(want.Spec, primary.Spec)
}

// ScaledObjectGVK is KEDA's ScaledObject, read and written unstructured:
// serin does not depend on KEDA's Go module, and works without its CRD.
var ScaledObjectGVK = schema.GroupVersionKind{Group: "keda.sh", Version: "v1alpha1", Kind: "ScaledObject"}

// The annotations by which KEDA pauses a ScaledObject: at a number of
// replicas, or where it is.
const (
	KEDAPausedReplicasAnnotation = "autoscaling.keda.sh/paused-replicas"
	KEDAPausedAnnotation         = "autoscaling.keda.sh/paused"
)

// NewScaledObject returns an empty ScaledObject named name in namespace.
func NewScaledObject(namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(ScaledObjectGVK)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// MutatePrimaryScaledObject makes primary the primary's copy of the
// target's ScaledObject, as Flagger makes it: the same spec scaling the
// primary Deployment; each trigger's metadata.query replaced by
// autoscalerRef.primaryScalerQueries[trigger name], or, without those, with
// the target's name replaced by the primary's (<target>-canary too); the
// HorizontalPodAutoscaler KEDA makes for it named <name>-primary when the
// target's names its own; the bounds of primaryScalerReplicas. Its
// annotations leave out the pause serin sets on the target.
func MutatePrimaryScaledObject(canary *v1alpha1.Canary, target, primary *unstructured.Unstructured) {
	annotations := target.GetAnnotations()
	if _, paused := annotations[KEDAPausedReplicasAnnotation]; paused {
		annotations = copyWithout(annotations, KEDAPausedReplicasAnnotation)
	}
	labels, annotations := mergeGenerated(canary, primary, target.GetLabels(), annotations)
	delete(annotations, KEDAPausedReplicasAnnotation)
	primary.SetLabels(labels)
	primary.SetAnnotations(annotations)

	spec, _, _ := unstructured.NestedMap(target.Object, "spec")
	if spec == nil {
		spec = map[string]any{}
	}
	spec = runtimeDeepCopy(spec)
	_ = unstructured.SetNestedField(spec, canary.GetPrimaryName(), "scaleTargetRef", "name")
	ref := canary.Spec.AutoscalerRef
	if triggers, ok := spec["triggers"].([]any); ok {
		for _, t := range triggers {
			trigger, ok := t.(map[string]any)
			if !ok {
				continue
			}
			metadata, _ := trigger["metadata"].(map[string]any)
			if metadata == nil {
				continue
			}
			name, _ := trigger["name"].(string)
			switch query, named := ref.PrimaryScalerQueries[name]; {
			case named && name != "":
				metadata["query"] = query
			case len(ref.PrimaryScalerQueries) == 0:
				if query, ok := metadata["query"].(string); ok {
					metadata["query"] = primaryQuery(canary, query)
				}
			}
		}
	}
	if name, found, _ := unstructured.NestedString(spec, "advanced", "horizontalPodAutoscalerConfig", "name"); found && name != "" {
		_ = unstructured.SetNestedField(spec, name+v1alpha1.PrimarySuffix, "advanced", "horizontalPodAutoscalerConfig", "name")
	}
	if r := ref.PrimaryScalerReplicas; r != nil {
		if r.MinReplicas != nil {
			spec["minReplicaCount"] = int64(*r.MinReplicas)
		}
		if r.MaxReplicas != nil {
			spec["maxReplicaCount"] = int64(*r.MaxReplicas)
		}
	}
	primary.Object["spec"] = spec
}

// primaryQuery is a trigger's query of the target made the primary's: the
// target's name (and <target>-canary) replaced by <target>-primary.
func primaryQuery(canary *v1alpha1.Canary, query string) string {
	target := canary.Spec.TargetRef.Name
	const placeholder = "\x00primary\x00"
	query = strings.ReplaceAll(query, canary.GetPrimaryName(), placeholder)
	query = strings.ReplaceAll(query, target+"-canary", placeholder)
	query = strings.ReplaceAll(query, target, placeholder)
	return strings.ReplaceAll(query, placeholder, canary.GetPrimaryName())
}

// PrimaryScaledObjectInSync reports whether the primary's ScaledObject has
// the spec MutatePrimaryScaledObject gives it.
func PrimaryScaledObjectInSync(canary *v1alpha1.Canary, target, primary *unstructured.Unstructured) bool {
	want := primary.DeepCopy()
	MutatePrimaryScaledObject(canary, target, want)
	return equality.Semantic.DeepEqual(want.Object["spec"], primary.Object["spec"])
}

// ScaledObjectPaused tells whether serin's pause is on a ScaledObject.
func ScaledObjectPaused(so *unstructured.Unstructured) bool {
	return so.GetAnnotations()[KEDAPausedReplicasAnnotation] == "0"
}

func copyWithout(m map[string]string, key string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// runtimeDeepCopy copies an unstructured map.
func runtimeDeepCopy(m map[string]any) map[string]any {
	return (&unstructured.Unstructured{Object: m}).DeepCopy().Object
}
