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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/serin-dev/serin/internal/testing/testobj"
)

// The baseline runs the primary's template with labels of its own (no
// two of primary, baseline and canary select each other's pods), the
// analysed revision on its template, the canary's replicas, and the
// target's metadata without Flux's; its selector is set once.
func TestDesiredBaseline(t *testing.T) {
	canary := testobj.MakeCanary("podinfo", "apps").Obj()
	target := testobj.MakeDeployment("podinfo", "apps").Replicas(3).Image("podinfo:v2").
		Label("kustomize.toolkit.fluxcd.io/name", "apps").Label("team", "web").Obj()
	old := testobj.MakeDeployment("podinfo", "apps").Replicas(2).Image("podinfo:v1").Obj()
	primary := &appsv1.Deployment{}
	MutatePrimary(canary, old, primary, true, nil)

	b := DesiredBaseline(canary, target, primary, 3, "v2-hash")
	if b.Name != "podinfo-baseline" || *b.Spec.Replicas != 3 {
		t.Errorf("baseline %s at %d replicas, want podinfo-baseline at the canary's 3", b.Name, *b.Spec.Replicas)
	}
	selectors := []map[string]string{target.Spec.Selector.MatchLabels, primary.Spec.Selector.MatchLabels, b.Spec.Selector.MatchLabels}
	if diff := cmp.Diff([]map[string]string{{"app": "podinfo"}, {"app": "podinfo-primary"}, {"app": "podinfo-baseline"}}, selectors); diff != "" {
		t.Errorf("selectors (-want +got):\n%s", diff)
	}
	if got := b.Spec.Template.Labels["app"]; got != "podinfo-baseline" {
		t.Errorf("pod label app=%s, want podinfo-baseline", got)
	}
	if got := b.Spec.Template.Spec.Containers[0].Image; got != "podinfo:v1" {
		t.Errorf("image %s, want the primary's podinfo:v1", got)
	}
	if got := b.Spec.Template.Annotations[AnalysedSpecAnnotation]; got != "v2-hash" {
		t.Errorf("analysed spec %q, want v2-hash", got)
	}
	if primary.Spec.Template.Labels["app"] != "podinfo-primary" || primary.Spec.Template.Annotations[AnalysedSpecAnnotation] != "" {
		t.Errorf("the primary's template changed: %v %v", primary.Spec.Template.Labels, primary.Spec.Template.Annotations)
	}
	if b.Labels["team"] != "web" || b.Labels[CanaryNameLabel] != "podinfo" || b.Labels["kustomize.toolkit.fluxcd.io/name"] != "" || b.Annotations[ReconcileAnnotation] != ReconcileDisabled {
		t.Errorf("metadata: %v %v", b.Labels, b.Annotations)
	}

	// An existing baseline keeps its selector (immutable) and the labels
	// others set; the rest is put back.
	existing := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"other": "x"}},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "podinfo-baseline"}}, Replicas: ptr.To(int32(1))}}
	if BaselineInSync(existing, b) {
		t.Error("a baseline at 1 replica without the template is in sync")
	}
	MutateBaseline(canary, existing, b)
	if !BaselineInSync(existing, b) || existing.Labels["other"] != "x" {
		t.Errorf("after MutateBaseline: in sync %v, labels %v", BaselineInSync(existing, b), existing.Labels)
	}
}
