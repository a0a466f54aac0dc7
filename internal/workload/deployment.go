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
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// ValidateTarget returns an error that says what to fix when a Deployment
// cannot be rolled out by a Canary.
func ValidateTarget(target *appsv1.Deployment) error {
	sel := target.Spec.Selector
	if sel != nil && len(sel.MatchExpressions) > 0 {
		return fmt.Errorf("deployment %s uses spec.selector.matchExpressions: serin supports spec.selector.matchLabels only", target.Name)
	}
	if sel == nil || len(sel.MatchLabels) == 0 {
		return fmt.Errorf("deployment %s has no spec.selector.matchLabels: serin needs label selectors to tell primary and canary pods apart", target.Name)
	}
	if len(sel.MatchExpressions) > 0 {
		return fmt.Errorf("deployment %s uses spec.selector.matchExpressions: serin supports spec.selector.matchLabels only", target.Name)
	}
	return nil
}

// PrimarySelector returns the label selector of the primary's pods.
func PrimarySelector(target *appsv1.Deployment) map[string]string {
	return primarySelector(target.Spec.Selector.MatchLabels)
}

// SpecHashAnnotation records on the primary, and on its pod template (so on
// each of its ReplicaSets), which target revision it was copied from: the
// primary's ReplicaSet history is how serin finds the last good template.
const SpecHashAnnotation = "serin.dev/spec-hash"

// PrimaryPodTemplate returns the target's pod template with the primary's
// selector labels and the revision's spec hash, as the primary runs it.
func PrimaryPodTemplate(target *appsv1.Deployment, tracked map[string]string) corev1.PodTemplateSpec {
	return primaryPodTemplate(&target.Spec.Template, target.Spec.Selector.MatchLabels, tracked)
}

// primaryPodTemplate returns a copy of a target's pod template (as Git has
// it) with the primary's selector labels, the primary's copies of the
// tracked configs and the revision's spec hash.
func primaryPodTemplate(target *corev1.PodTemplateSpec, selector, tracked map[string]string) corev1.PodTemplateSpec {
	tpl := *target.DeepCopy()
	UsePrimaryConfigs(&tpl.Spec, tracked)
	labels := copyWithoutFlux(tpl.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range primarySelector(selector) {
		labels[k] = v
	}
	tpl.Labels = labels
	tpl.Annotations = copyWithoutFlux(tpl.Annotations)
	if tpl.Annotations == nil {
		tpl.Annotations = map[string]string{}
	}
	tpl.Annotations[SpecHashAnnotation] = SpecHash(target, tracked)
	return tpl
}

// LastGoodTemplate returns the pod template of the primary's ReplicaSet that
// ran the revision with specHash, as `kubectl rollout undo` would restore it.
func LastGoodTemplate(replicaSets []appsv1.ReplicaSet, specHash string) (*corev1.PodTemplateSpec, bool) {
	for i := range replicaSets {
		rs := &replicaSets[i]
		if rs.Spec.Template.Annotations[SpecHashAnnotation] != specHash {
			continue
		}
		tpl := rs.Spec.Template.DeepCopy()
		delete(tpl.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
		return tpl, true
	}
	return nil, false
}

// MutatePrimary sets on primary everything serin owns of it: metadata, the
// selector, and, when promote is true, the target's pod template using the
// primary's copies of the tracked configs and, without an autoscaler, the
// target's replicas. Otherwise the replicas are set only on creation
// (replicas == nil): they belong to the primary's autoscaler.
func MutatePrimary(canary *v1alpha1.Canary, target, primary *appsv1.Deployment, promote bool, tracked map[string]string) {
	primary.Labels, primary.Annotations = mergeGenerated(canary, primary, target.Labels, target.Annotations)
	if primary.Spec.Selector == nil {
		// The selector of a Deployment is immutable; set it once.
		primary.Spec.Selector = &metav1.LabelSelector{MatchLabels: PrimarySelector(target)}
	}
	if primary.Spec.Replicas == nil {
		primary.Spec.Replicas = ptr.To(TargetReplicas(target))
	}
	if promote || primary.CreationTimestamp.IsZero() {
		primary.Spec.Template = PrimaryPodTemplate(target, tracked)
	}
	if promote && canary.Spec.AutoscalerRef == nil && !canary.RoutesByReplicas() && target.Spec.Replicas != nil && *target.Spec.Replicas > 0 {
		// The canary ran the promoted revision with the replicas Git asks
		// for; with an autoscaler, the primary's copy of it decides; with
		// routing.provider replicas the canary ran its share, and the
		// router gives the primary the rest back.
		primary.Spec.Replicas = ptr.To(*target.Spec.Replicas)
	}
	primary.Spec.Strategy = target.Spec.Strategy
	primary.Spec.MinReadySeconds = target.Spec.MinReadySeconds
	primary.Spec.RevisionHistoryLimit = target.Spec.RevisionHistoryLimit
	// The primary keeps the target's own deadline, so the deployment
	// controller reports ProgressDeadlineExceeded as the user configured it;
	// the Canary's progressDeadlineSeconds is serin's separate verification
	// of the promoted state.
	primary.Spec.ProgressDeadlineSeconds = target.Spec.ProgressDeadlineSeconds
}

// TargetReplicas is the number of replicas the target asks for (1 when unset),
// or, when serin scaled it to zero, the primary's to come.
func TargetReplicas(target *appsv1.Deployment) int32 {
	if target.Spec.Replicas == nil {
		return 1
	}
	if *target.Spec.Replicas == 0 {
		return 1
	}
	return *target.Spec.Replicas
}

// mergeGenerated keeps labels and annotations that others set on the object
// and overwrites those that serin derives from the source.
func mergeGenerated(canary *v1alpha1.Canary, obj metav1.Object, labels, annotations map[string]string) (map[string]string, map[string]string) {
	l, a := generatedMeta(canary, labels, annotations)
	for k, v := range obj.GetLabels() {
		if _, ok := l[k]; !ok && !isFluxKey(k) {
			l[k] = v
		}
	}
	for k, v := range obj.GetAnnotations() {
		if _, ok := a[k]; !ok && !isFluxKey(k) {
			a[k] = v
		}
	}
	return l, a
}
