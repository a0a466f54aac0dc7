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
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// PrimaryAutoscalerName is the name of the primary's copy of the target's
// HorizontalPodAutoscaler.
func PrimaryAutoscalerName(canary *v1alpha1.Canary) string {
	return canary.Spec.AutoscalerRef.Name + v1alpha1.PrimarySuffix
}

// MutatePrimaryAutoscaler makes hpa the primary's copy of the target's
// autoscaler: the same bounds, metrics and behavior, scaling the primary
// Deployment. The target's own autoscaler keeps scaling the canary during
// an analysis (the autoscaler controller leaves a Deployment scaled to
// zero alone, so it does not wake the idle canary).
func MutatePrimaryAutoscaler(canary *v1alpha1.Canary, target, hpa *autoscalingv2.HorizontalPodAutoscaler) {
	hpa.Labels, hpa.Annotations = mergeGenerated(canary, hpa, target.Labels, target.Annotations)
	spec := *target.Spec.DeepCopy()
	spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: canary.GetPrimaryName()}
	hpa.Spec = spec
}

// PrimaryAutoscalerInSync reports whether the primary's autoscaler has the
// spec MutatePrimaryAutoscaler gives it.
func PrimaryAutoscalerInSync(canary *v1alpha1.Canary, target, primary *autoscalingv2.HorizontalPodAutoscaler) bool {
	want := primary.DeepCopy()
	MutatePrimaryAutoscaler(canary, target, want)
	return equality.Semantic.DeepEqual(want.Spec, primary.Spec)
}
