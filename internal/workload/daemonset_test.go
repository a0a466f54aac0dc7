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
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serin-dev/serin/internal/testing/testobj"
)

// Scaling a DaemonSet to zero is a node selector no node carries; the
// revision (spec hash) and the primary's template never see it.
func TestScaleDaemonSet(t *testing.T) {
	ds := testobj.MakeDaemonSet("podinfo", "apps").NodeSelector("kubernetes.io/os", "linux").Obj()
	hash := SpecHash(DaemonSetTemplate(ds), nil)
	if !ScaleDaemonSet(ds, true) || ScaleDaemonSet(ds, true) {
		t.Fatal("scaling to zero changes the template once")
	}
	if want := map[string]string{"kubernetes.io/os": "linux", ScaleToZeroNodeSelector: "true"}; !cmp.Equal(want, ds.Spec.Template.Spec.NodeSelector) {
		t.Errorf("node selector at zero: %v, want %v", ds.Spec.Template.Spec.NodeSelector, want)
	}
	if !DaemonSetScaledToZero(ds) || DaemonSetReplicas(ds) != 0 {
		t.Errorf("scaled to zero: %v, replicas %d", DaemonSetScaledToZero(ds), DaemonSetReplicas(ds))
	}
	if got := SpecHash(DaemonSetTemplate(ds), nil); got != hash {
		t.Errorf("spec hash at zero %s, want the revision's %s", got, hash)
	}
	if _, ok := PrimaryDaemonSetTemplate(ds, nil).Spec.NodeSelector[ScaleToZeroNodeSelector]; ok {
		t.Error("the primary's template carries the scale-to-zero node selector")
	}
	if !ScaleDaemonSet(ds, false) || ScaleDaemonSet(ds, false) {
		t.Fatal("scaling up changes the template once")
	}
	if want := map[string]string{"kubernetes.io/os": "linux"}; !cmp.Equal(want, ds.Spec.Template.Spec.NodeSelector) {
		t.Errorf("node selector scaled up: %v, want %v", ds.Spec.Template.Spec.NodeSelector, want)
	}
	if got := DaemonSetReplicas(ds); got != 1 {
		t.Errorf("replicas scaled up, before the controller counted nodes: %d, want 1", got)
	}

	// A template without node selector gets none back: Git's template and
	// the one serin scaled up hash alike.
	bare := testobj.MakeDaemonSet("podinfo", "apps").Obj()
	ScaleDaemonSet(bare, true)
	ScaleDaemonSet(bare, false)
	if bare.Spec.Template.Spec.NodeSelector != nil {
		t.Errorf("node selector after a round trip: %#v, want nil", bare.Spec.Template.Spec.NodeSelector)
	}
}

func TestMutatePrimaryDaemonSet(t *testing.T) {
	canary := testobj.MakeCanary("podinfo", "apps").Target("apps/v1", "DaemonSet", "podinfo").Obj()
	target := testobj.MakeDaemonSet("podinfo", "apps").Label("kustomize.toolkit.fluxcd.io/name", "apps").Label("team", "web").Obj()
	target.Annotations = map[string]string{"kustomize.toolkit.fluxcd.io/checksum": "x", "owner": "web", "deprecated.daemonset.template.generation": "4"}
	target.Spec.MinReadySeconds = 5
	ScaleDaemonSet(target, true)

	primary := &appsv1.DaemonSet{}
	MutatePrimaryDaemonSet(canary, target, primary, false, nil)

	if diff := cmp.Diff(map[string]string{"app": "podinfo", "team": "web", CanaryNameLabel: "podinfo"}, primary.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"owner": "web", ReconcileAnnotation: ReconcileDisabled}, primary.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"app": "podinfo-primary"}, primary.Spec.Selector.MatchLabels); diff != "" {
		t.Errorf("selector (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"app": "podinfo-primary", "team": "web"}, primary.Spec.Template.Labels); diff != "" {
		t.Errorf("pod labels (-want +got):\n%s", diff)
	}
	if got, want := primary.Spec.Template.Annotations[SpecHashAnnotation], SpecHash(DaemonSetTemplate(target), nil); got != want {
		t.Errorf("pod template spec hash = %q, want the target's revision %q", got, want)
	}
	if primary.Spec.Template.Spec.NodeSelector != nil {
		t.Errorf("the primary runs on %v, want every node", primary.Spec.Template.Spec.NodeSelector)
	}
	if primary.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType || primary.Spec.MinReadySeconds != 5 {
		t.Errorf("strategy %v, minReadySeconds %d: want the target's", primary.Spec.UpdateStrategy, primary.Spec.MinReadySeconds)
	}

	// Once created, the template changes only on promotion.
	primary.CreationTimestamp = metav1.Now()
	newer := target.DeepCopy()
	newer.Spec.Template.Spec.Containers[0].Image = "podinfo:v2"
	MutatePrimaryDaemonSet(canary, newer, primary, false, nil)
	if got := primary.Spec.Template.Spec.Containers[0].Image; got == "podinfo:v2" {
		t.Error("template updated without promotion")
	}
	MutatePrimaryDaemonSet(canary, newer, primary, true, nil)
	if got := primary.Spec.Template.Spec.Containers[0].Image; got != "podinfo:v2" {
		t.Errorf("promoted image = %s, want podinfo:v2", got)
	}
}

func TestValidateDaemonSetTarget(t *testing.T) {
	tests := map[string]struct {
		ds      *appsv1.DaemonSet
		wantErr string
	}{
		"rolling update": {ds: testobj.MakeDaemonSet("p", "apps").Obj()},
		"default strategy": {ds: func() *appsv1.DaemonSet {
			d := testobj.MakeDaemonSet("p", "apps").Obj()
			d.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{}
			return d
		}()},
		"OnDelete": {ds: testobj.MakeDaemonSet("p", "apps").OnDelete().Obj(), wantErr: "daemonset p uses updateStrategy OnDelete"},
		"no matchLabels": {ds: func() *appsv1.DaemonSet {
			d := testobj.MakeDaemonSet("p", "apps").Obj()
			d.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpExists}}}
			return d
		}(), wantErr: "spec.selector.matchExpressions"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			err := ValidateDaemonSetTarget(tt.ds)
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestDaemonSetHealth(t *testing.T) {
	ds := func(desired, updated, ready int32) *appsv1.DaemonSet {
		return testobj.MakeDaemonSet("p", "apps").Scheduled(desired, updated, ready).Obj()
	}
	tests := map[string]struct {
		d *appsv1.DaemonSet
		// threshold is the readyThreshold; 0 stands for the default, 100.
		threshold int
		want      Health
	}{
		"ready": {
			d:    ds(3, 3, 3),
			want: Health{Ready: true, Serving: 3, Message: "daemonset p: 3 of 3 pods available"},
		},
		"generation not observed": {
			d: func() *appsv1.DaemonSet {
				d := ds(3, 3, 3)
				d.Generation = 5
				return d
			}(),
			want: Health{Serving: 3, Message: "daemonset p: waiting for the daemonset controller to observe generation 5"},
		},
		"rolling": {
			d:    ds(3, 1, 3),
			want: Health{Serving: 3, Message: "daemonset p: 1 of 3 pods updated"},
		},
		"updated, not available": {
			d:    ds(3, 3, 1),
			want: Health{Serving: 1, Message: "daemonset p: 1 of 3 pods available"},
		},
		"50%: two of four available is ready": {
			d:         ds(4, 4, 2),
			threshold: 50,
			want:      Health{Ready: true, Serving: 2, Message: "daemonset p: 2 of 4 pods available (readyThreshold 50%)"},
		},
		"50%: one of four is not": {
			d:         ds(4, 4, 1),
			threshold: 50,
			want:      Health{Serving: 1, Message: "daemonset p: 1 of 4 pods available, 2 needed (readyThreshold 50%)"},
		},
		"1%: never below one pod": {
			d:         ds(4, 4, 0),
			threshold: 1,
			want:      Health{Message: "daemonset p: 0 of 4 pods available, 1 needed (readyThreshold 1%)"},
		},
		"scaled to zero: no node to run on, nothing to wait for": {
			d:    ds(0, 0, 0),
			want: Health{Ready: true, Message: "daemonset p: 0 of 0 pods available"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			threshold := tt.threshold
			if threshold == 0 {
				threshold = 100
			}
			if diff := cmp.Diff(tt.want, DaemonSetHealth(tt.d, threshold)); diff != "" {
				t.Errorf("health (-want +got):\n%s", diff)
			}
		})
	}
}
