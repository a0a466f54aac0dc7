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

package controllers

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/internal/workload"
	"github.com/serin-dev/serin/routing"
)

// The actions of a DaemonSet target (target_daemonset.go): the world of
// podinfo, whose target is the DaemonSet podinfo.

// daemonSetCanary is podinfo's blue/green Canary of the DaemonSet podinfo.
func daemonSetCanary() *testobj.CanaryWrapper {
	return podinfoCanary().Target("apps/v1", "DaemonSet", "podinfo")
}

// daemonSetTargetAt is the target DaemonSet running image, scaled to zero
// or not.
func daemonSetTargetAt(image string, zero bool) *appsv1.DaemonSet {
	ds := testobj.MakeDaemonSet("podinfo", "apps").Image(image).Obj()
	workload.ScaleDaemonSet(ds, zero)
	return ds
}

// daemonSetPrimaryOf is the primary DaemonSet serin generated for c from
// target's revision spec.
func daemonSetPrimaryOf(c *v1alpha1.Canary, target *appsv1.DaemonSet, spec string) *appsv1.DaemonSet {
	p := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.GetPrimaryName()}}
	workload.MutatePrimaryDaemonSet(c, target, p, true, nil)
	p.Annotations[specHashAnnotation] = spec
	if err := workload.Claim(c, p, canaryScheme()); err != nil {
		panic(err)
	}
	return p
}

// daemonSetOf reads a DaemonSet of the world back.
func daemonSetOf(t *testing.T, f *actionFixture, name string) *appsv1.DaemonSet {
	t.Helper()
	ds := &appsv1.DaemonSet{}
	if !f.get(name, ds) {
		t.Fatalf("no DaemonSet %s", name)
	}
	return ds
}

// scaledToZero checks whether the target carries the scale-to-zero node
// selector.
func scaledToZero(want bool) func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
	return func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
		if got := workload.DaemonSetScaledToZero(daemonSetOf(t, f, "podinfo")); got != want {
			t.Errorf("target scaled to zero: %v, want %v", got, want)
		}
	}
}

// The canary DaemonSet is scaled by a node selector no node matches: added
// when the rollout ends (scaleDownCanary and the actions that share it),
// removed when one starts, written only when it changes.
func TestDaemonSetScale(t *testing.T) {
	scaleDown := func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, _ rollout.Observation, _ rollout.Action) (ctrl.Result, error) {
		return r.scaleDownCanary(ctx, obj)
	}
	runActionCases(t, map[string]actionCase{
		"the target runs: scaled to zero": {
			canary: daemonSetCanary().Phase(v1alpha1.PhaseSucceeded).Obj(),
			objs:   []client.Object{daemonSetTargetAt(goodImage, false)},
			want:   actionWant{writes: []string{"patch DaemonSet/podinfo"}},
			check:  scaledToZero(true),
		},
		"the target is at zero: nothing written": {
			canary: daemonSetCanary().Phase(v1alpha1.PhaseSucceeded).Obj(),
			objs:   []client.Object{daemonSetTargetAt(goodImage, true)},
			check:  scaledToZero(true),
		},
		"the scale write fails: the target keeps running": {
			canary: daemonSetCanary().Phase(v1alpha1.PhaseSucceeded).Obj(),
			objs:   []client.Object{daemonSetTargetAt(goodImage, false)},
			fail:   []string{"patch DaemonSet/podinfo"},
			want:   actionWant{err: injected, writes: []string{"patch DaemonSet/podinfo"}},
			check:  scaledToZero(false),
		},
	}, scaleDown)

	target := daemonSetTargetAt(goodImage, false)
	c := daemonSetCanary().Phase(v1alpha1.PhaseSucceeded).Promoted("v1", "main@sha1:v1").Applied("v1", "main@sha1:v1").Obj()
	runActionCases(t, map[string]actionCase{
		"a new revision: the canary scaled up, no traffic yet": {
			canary: c,
			objs:   []client.Object{daemonSetTargetAt(newImage, true), daemonSetPrimaryOf(c, target, "v1")},
			obs:    observed("v2", 0),
			want: actionWant{
				result: ctrl.Result{RequeueAfter: 1e9},
				status: func(st *v1alpha1.CanaryStatus) {
					st.Phase, st.LastAppliedSpec, st.LastAttemptedRevision, st.LastTransitionTime = v1alpha1.PhaseProgressing, "v2", "main@sha1:v2", at(actionNow)
				},
				conditions: []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.ProgressingReason)},
				writes:     []string{"patch DaemonSet/podinfo"},
				events:     []string{"Normal NewRevision"},
			},
			check: scaledToZero(false),
		},
	}, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, _ rollout.Action) (ctrl.Result, error) {
		return r.startRollout(ctx, obj, obs, rollout.StartRollout{})
	})
}

// initialize creates the Services, the routes, then the primary DaemonSet
// from the target's template as Git has it; promote sends all traffic to
// the canary, then copies its template to the primary.
func TestDaemonSetInitializeAndPromote(t *testing.T) {
	c := daemonSetCanary().Obj()
	runActionCases(t, map[string]actionCase{
		"a new Canary: the Services, the routes, then the primary DaemonSet": {
			canary: c,
			objs:   []client.Object{daemonSetTargetAt(goodImage, false)},
			obs:    observed("v1", 0),
			want: actionWant{
				status: func(st *v1alpha1.CanaryStatus) {
					st.Phase, st.LastTransitionTime = v1alpha1.PhaseInitializing, at(actionNow)
				},
				conditions: []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.InitializingReason)},
				writes: []string{"create Service/podinfo", "create Service/podinfo-primary", "create Service/podinfo-canary",
					"create ControllerRevision/podinfo-primary-v1", "create DaemonSet/podinfo-primary"},
			},
			check: func(t *testing.T, f *actionFixture, obj *v1alpha1.Canary) {
				p := daemonSetOf(t, f, "podinfo-primary")
				if !metav1.IsControlledBy(p, obj) || p.Annotations[specHashAnnotation] != "v1" || p.Spec.Template.Spec.Containers[0].Image != goodImage {
					t.Errorf("primary: owners %v, spec %s, image %s", p.OwnerReferences, p.Annotations[specHashAnnotation], p.Spec.Template.Spec.Containers[0].Image)
				}
				if got := p.Spec.Selector.MatchLabels["app"]; got != "podinfo-primary" {
					t.Errorf("primary selects app=%s", got)
				}
				if obj.Status.Conditions[0].Message != "created the services and primary daemonset podinfo-primary" {
					t.Errorf("message %q", obj.Status.Conditions[0].Message)
				}
			},
		},
	}, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, _ rollout.Action) (ctrl.Result, error) {
		return r.initialize(ctx, obj, obs)
	})

	good := daemonSetTargetAt(goodImage, true)
	analysed := daemonSetCanary().Phase(v1alpha1.PhaseProgressing).Promoted("v1", "main@sha1:v1").Applied("v2", "main@sha1:v2").Checks(3, 0).Obj()
	runActionCases(t, map[string]actionCase{
		"analysis passed: all traffic to the canary, then its template to the primary": {
			canary: analysed,
			objs:   []client.Object{daemonSetTargetAt(newImage, false), daemonSetPrimaryOf(analysed, good, "v1")},
			routes: weights(routing.AllPrimary),
			obs:    observed("v2", 0),
			action: rollout.Promote{Reason: "analysis passed"},
			want: actionWant{
				result: ctrl.Result{RequeueAfter: analysed.GetProgressDeadline()},
				status: func(st *v1alpha1.CanaryStatus) {
					st.Phase, st.CanaryWeight, st.LastTransitionTime = v1alpha1.PhasePromoting, 100, at(actionNow)
				},
				conditions: []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.ProgressingReason)},
				writes:     []string{"create ControllerRevision/podinfo-primary-v2", "update DaemonSet/podinfo-primary"},
				weights:    []routing.Weights{routing.Canary(100)},
				events:     []string{"Normal Promoting"},
			},
			check: func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
				p := daemonSetOf(t, f, "podinfo-primary")
				if p.Annotations[specHashAnnotation] != "v2" || p.Spec.Template.Spec.Containers[0].Image != newImage || p.Spec.Template.Spec.NodeSelector != nil {
					t.Errorf("primary at %s runs %s on %v, want v2, %s, every node", p.Annotations[specHashAnnotation],
						p.Spec.Template.Spec.Containers[0].Image, p.Spec.Template.Spec.NodeSelector, newImage)
				}
			},
		},
	}, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, a rollout.Action) (ctrl.Result, error) {
		return r.promote(ctx, obj, obs, a.(rollout.Promote))
	})
}

// After a halted promotion, the primary DaemonSet goes back to the
// template recorded when the last promoted revision was promoted; a
// deleted primary is re-created from it.
func TestDaemonSetRestoreAndRepairPrimary(t *testing.T) {
	good := daemonSetTargetAt(goodImage, true)
	halted := func() *v1alpha1.Canary {
		return daemonSetCanary().Phase(v1alpha1.PhaseHalted).Promoted("v1", "main@sha1:v1").Applied("v2", "main@sha1:v2").Obj()
	}
	goodPrimary := daemonSetPrimaryOf(halted(), good, "v1")
	badPrimary := daemonSetPrimaryOf(halted(), daemonSetTargetAt(newImage, false), "v2")
	record := recordOf(halted(), &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: goodPrimary.Spec.Template}}, "v1", nil)
	primaryRuns := func(image string) func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
		return func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
			p := daemonSetOf(t, f, "podinfo-primary")
			if p.Annotations[specHashAnnotation] != "v1" || p.Spec.Template.Spec.Containers[0].Image != image {
				t.Errorf("primary at %s runs %s, want v1 and %s", p.Annotations[specHashAnnotation], p.Spec.Template.Spec.Containers[0].Image, image)
			}
		}
	}
	runActionCases(t, map[string]actionCase{
		"recorded: the primary restored, the canary keeps serving": {
			canary: halted(),
			objs:   []client.Object{daemonSetTargetAt(newImage, false), badPrimary, record},
			obs:    observed("v2", 100),
			want: actionWant{
				result:     ctrl.Result{RequeueAfter: halted().GetProgressDeadline()},
				writes:     []string{"patch DaemonSet/podinfo-primary"},
				events:     []string{"Warning RestoringPrimary"},
				conditions: []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.ProgressingReason)},
			},
			check: primaryRuns(goodImage),
		},
		"not recorded: stalls": {
			canary: halted(),
			objs:   []client.Object{daemonSetTargetAt(newImage, false), badPrimary},
			obs:    observed("v2", 100),
			want:   actionWant{err: stalls(v1alpha1.HaltedReason)},
		},
	}, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, _ rollout.Action) (ctrl.Result, error) {
		return r.restorePrimary(ctx, obj, obs)
	})

	idle := daemonSetCanary().Phase(v1alpha1.PhaseSucceeded).Promoted("v1", "main@sha1:v1").Applied("v1", "main@sha1:v1").Obj()
	runActionCases(t, map[string]actionCase{
		"deleted: re-created from the record": {
			canary: idle,
			objs:   []client.Object{daemonSetTargetAt(newImage, true), recordOf(idle, &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: goodPrimary.Spec.Template}}, "v1", nil)},
			obs:    observed("v2", 0),
			want: actionWant{
				err:    waits(v1alpha1.PrimaryUnavailableReason, 1e9),
				writes: []string{"create DaemonSet/podinfo-primary"},
				events: []string{"Warning PrimaryRepaired"},
			},
			check: primaryRuns(goodImage),
		},
	}, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, _ rollout.Action) (ctrl.Result, error) {
		return r.repairPrimary(ctx, obj, obs)
	})
}

// observe reads a DaemonSet target scaled to zero as a Deployment at zero
// replicas, with the spec hash of its template as Git has it, and judges
// both DaemonSets from their status with the ready thresholds.
func TestDaemonSetObserve(t *testing.T) {
	git := daemonSetTargetAt(goodImage, false)
	target := daemonSetTargetAt(goodImage, true)
	target.Status = appsv1.DaemonSetStatus{}
	c := daemonSetCanary().Phase(v1alpha1.PhaseSucceeded).Obj()
	primary := daemonSetPrimaryOf(c, git, "v1")
	primary.Generation = 2
	primary.Status = appsv1.DaemonSetStatus{ObservedGeneration: 2, DesiredNumberScheduled: 4, UpdatedNumberScheduled: 4, NumberAvailable: 2, NumberReady: 2}
	c.Spec.Analysis.PrimaryReadyThreshold = ptr.To(50)
	f := newActionReconciler(t, target, primary)
	obs, err := f.r.observe(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if want := workload.SpecHash(&git.Spec.Template, nil); obs.Target.SpecHash != want || obs.Target.Replicas != 0 || !obs.Target.Found {
		t.Errorf("target: %+v, want found at zero with spec %s", obs.Target, want)
	}
	if !obs.Primary.Exists || obs.Primary.SpecHash != "v1" || !obs.Primary.Health.Ready || obs.Primary.Health.Serving != 2 {
		t.Errorf("primary: %+v, want v1, ready at 50%% with 2 of 4 serving", obs.Primary)
	}
}
