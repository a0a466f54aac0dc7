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
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// The baseline (analysis.judge.baseline) is <target>-baseline, a
// Deployment of the primary's pod template at the canary's replicas,
// which lives as long as one analysis: the judge compares the canary
// with pods as young as its own, of the revision it replaces.

// AnalysedSpecAnnotation records on the baseline's pod template the
// revision under analysis when it was made: a new analysis (a restart)
// rolls new pods, as young as the new canary's.
const AnalysedSpecAnnotation = "serin.dev/analysed-spec"

// BaselineSelector returns the label selector of the baseline's pods: the
// target's selector with each value suffixed -baseline, as the primary's
// are with -primary, so that no two of the three select each other's pods.
func BaselineSelector(target *appsv1.Deployment) map[string]string {
	out := make(map[string]string, len(target.Spec.Selector.MatchLabels))
	for k, v := range target.Spec.Selector.MatchLabels {
		out[k] = v + v1alpha1.BaselineSuffix
	}
	return out
}

// DesiredBaseline returns the baseline serin wants for the analysis of
// revision analysed: the primary's pod template and rollout settings, the
// baseline's selector and labels, replicas pods, and the target's
// metadata as the primary has it.
func DesiredBaseline(canary *v1alpha1.Canary, target, primary *appsv1.Deployment, replicas int32, analysed string) *appsv1.Deployment {
	selector := BaselineSelector(target)
	tpl := *primary.Spec.Template.DeepCopy()
	tpl.Labels = maps.Clone(tpl.Labels)
	if tpl.Labels == nil {
		tpl.Labels = map[string]string{}
	}
	delete(tpl.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	maps.Copy(tpl.Labels, selector)
	tpl.Annotations = maps.Clone(tpl.Annotations)
	if tpl.Annotations == nil {
		tpl.Annotations = map[string]string{}
	}
	tpl.Annotations[AnalysedSpecAnnotation] = analysed
	b := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: canary.Namespace, Name: canary.GetBaselineName()}}
	b.Labels, b.Annotations = generatedMeta(canary, target.Labels, target.Annotations)
	b.Spec = appsv1.DeploymentSpec{
		Replicas:                ptr.To(replicas),
		Selector:                &metav1.LabelSelector{MatchLabels: selector},
		Template:                tpl,
		Strategy:                primary.Spec.Strategy,
		MinReadySeconds:         primary.Spec.MinReadySeconds,
		RevisionHistoryLimit:    primary.Spec.RevisionHistoryLimit,
		ProgressDeadlineSeconds: primary.Spec.ProgressDeadlineSeconds,
	}
	return b
}

// MutateBaseline sets on baseline what serin owns of it, from want
// (DesiredBaseline): its labels and annotations (others' kept), the
// selector on creation (it is immutable), the replicas, template and
// rollout settings.
func MutateBaseline(canary *v1alpha1.Canary, baseline, want *appsv1.Deployment) {
	baseline.Labels, baseline.Annotations = mergeGenerated(canary, baseline, want.Labels, want.Annotations)
	selector := baseline.Spec.Selector
	baseline.Spec = *want.Spec.DeepCopy()
	if selector != nil {
		baseline.Spec.Selector = selector
	}
}

// BaselineInSync reports whether a baseline runs what want asks for: the
// selector, the replicas and the pod template (compared semantically, as
// the API server returns it: want is built from the primary it returned).
func BaselineInSync(got, want *appsv1.Deployment) bool {
	return equality.Semantic.DeepEqual(got.Spec.Selector, want.Spec.Selector) &&
		ptr.Deref(got.Spec.Replicas, 1) == ptr.Deref(want.Spec.Replicas, 1) &&
		equality.Semantic.DeepEqual(got.Spec.Template, want.Spec.Template)
}
