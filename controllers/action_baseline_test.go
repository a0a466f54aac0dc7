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
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
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

// baselinePodinfo is podinfo's weighted Canary with analysis.judge.baseline,
// analysing v2 over a primary on v1.
func baselinePodinfo(phase v1alpha1.CanaryPhase) *v1alpha1.Canary {
	c := weightedPodinfo().Phase(phase).Obj()
	c.Spec.Analysis.Metrics = []v1alpha1.CanaryMetric{{Name: v1alpha1.RequestDurationCheck, Judge: &v1alpha1.MetricJudge{}}}
	c.Spec.Analysis.Judge = &v1alpha1.AnalysisJudge{Baseline: true}
	c.Status.LastAppliedSpec, c.Status.LastPromotedSpec = "v2", "v1"
	return c
}

// baselineWorld is the target on v2 at replicas, its primary on v1 (a
// template of its own: image 6.0.0 where the target runs 6.1.0).
func baselineWorld(c *v1alpha1.Canary, replicas int32) (*appsv1.Deployment, *appsv1.Deployment) {
	old := podinfoTarget(2)
	target := testobj.MakeDeployment("podinfo", "apps").Replicas(replicas).Image("ghcr.io/stefanprodan/podinfo:6.1.0").Obj()
	return target, primaryOf(c, old, "v1")
}

// baselineOf is the baseline serin makes for c's analysis of analysed, at
// replicas, its controller c.
func baselineOf(c *v1alpha1.Canary, target, primary *appsv1.Deployment, replicas int32, analysed string) *appsv1.Deployment {
	want, _ := desiredBaseline(c, target, primary, replicas, analysed)
	b := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: want.Name}}
	workload.MutateBaseline(c, b, want)
	if err := workload.Claim(c, b, canaryScheme()); err != nil {
		panic(err)
	}
	return b
}

// baselineServiceOf is the baseline's Service, its controller c.
func baselineServiceOf(c *v1alpha1.Canary, target *appsv1.Deployment) *corev1.Service {
	_, want := desiredBaseline(c, target, target, 1, "")
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: want.name}}
	workload.MutateService(c, svc, want.selector, want.ports, nil)
	if err := workload.Claim(c, svc, canaryScheme()); err != nil {
		panic(err)
	}
	return svc
}

// cmpIgnoreHealthMessage compares Healths without their messages.
var cmpIgnoreHealthMessage = cmpopts.IgnoreFields(workload.Health{}, "Message")

// withStatus is d with readyReplicas ready pods of its generation.
func withStatus(d *appsv1.Deployment, ready int32) *appsv1.Deployment {
	d = d.DeepCopy()
	d.Status = appsv1.DeploymentStatus{Replicas: ready, UpdatedReplicas: ready, ReadyReplicas: ready, AvailableReplicas: ready}
	return d
}

// syncBaseline makes <target>-baseline of the primary's template at the
// canary's replicas, selected by labels of its own, behind
// <service>-baseline, and puts back what drifted; a baseline of another
// controller is never taken over.
func TestSyncBaseline(t *testing.T) {
	c := baselinePodinfo(v1alpha1.PhaseProgressing)
	target, primary := baselineWorld(c, 3)
	progressing := []metav1.Condition{{Type: meta.ReadyCondition, Status: metav1.ConditionFalse, Reason: v1alpha1.ProgressingReason}}
	made := func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
		b := &appsv1.Deployment{}
		if !f.get("podinfo-baseline", b) {
			t.Fatal("no baseline")
		}
		if !metav1.IsControlledBy(b, c) || *b.Spec.Replicas != 3 {
			t.Errorf("baseline: controlled %v, replicas %d; want controlled by the Canary, 3 (the canary's)", metav1.IsControlledBy(b, c), *b.Spec.Replicas)
		}
		if diff := cmp.Diff(map[string]string{"app": "podinfo-baseline"}, b.Spec.Selector.MatchLabels); diff != "" {
			t.Errorf("selector (-want +got):\n%s", diff)
		}
		if got := b.Spec.Template.Labels["app"]; got != "podinfo-baseline" {
			t.Errorf("pod label app=%s, want podinfo-baseline (neither primary's nor canary's)", got)
		}
		if got := b.Spec.Template.Spec.Containers[0].Image; got != primary.Spec.Template.Spec.Containers[0].Image {
			t.Errorf("image %s, want the primary's %s", got, primary.Spec.Template.Spec.Containers[0].Image)
		}
		if got := b.Spec.Template.Annotations[workload.AnalysedSpecAnnotation]; got != "v2" {
			t.Errorf("analysed spec %q, want v2", got)
		}
		svc := &corev1.Service{}
		if !f.get("podinfo-baseline", svc) || !metav1.IsControlledBy(svc, c) || svc.Spec.Selector["app"] != "podinfo-baseline" || svc.Spec.Ports[0].Port != 9898 {
			t.Errorf("baseline service: %+v", svc)
		}
	}
	edited := baselineOf(c, target, primary, 3, "v2")
	edited.Spec.Template.Spec.Containers[0].Image = "ghcr.io/stefanprodan/podinfo:broken"
	edited.Spec.Replicas = ptr.To(int32(1))
	foreign := baselineOf(c, target, primary, 3, "v2")
	foreign.OwnerReferences = nil
	cases := map[string]actionCase{
		"the analysis starts: the baseline and its Service are made": {
			canary: c.DeepCopy(), objs: []client.Object{target, primary}, obs: rollout.Observation{Target: rollout.Target{Replicas: 3}},
			want:  actionWant{result: ctrl.Result{RequeueAfter: time.Second}, conditions: progressing, writes: []string{"create Service/podinfo-baseline", "create Deployment/podinfo-baseline"}},
			check: made,
		},
		"the canary not scaled up yet: the primary's replicas": {
			canary: c.DeepCopy(), objs: []client.Object{target, primary, baselineServiceOf(c, target)},
			want: actionWant{result: ctrl.Result{RequeueAfter: time.Second}, conditions: progressing, writes: []string{"create Deployment/podinfo-baseline"}},
			check: func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
				if got := f.replicas("podinfo-baseline"); got != 2 {
					t.Errorf("replicas %d, want the primary's 2", got)
				}
			},
		},
		"edited mid-analysis: put back": {
			canary: c.DeepCopy(), objs: []client.Object{target, primary, edited, baselineServiceOf(c, target)}, obs: rollout.Observation{Target: rollout.Target{Replicas: 3}},
			want:  actionWant{result: ctrl.Result{RequeueAfter: time.Second}, conditions: progressing, writes: []string{"update Deployment/podinfo-baseline"}},
			check: made,
		},
		"made for the last analysis: new pods for this one": {
			canary: c.DeepCopy(), objs: []client.Object{target, primary, baselineOf(c, target, primary, 3, "v1"), baselineServiceOf(c, target)},
			obs:   rollout.Observation{Target: rollout.Target{Replicas: 3}},
			want:  actionWant{result: ctrl.Result{RequeueAfter: time.Second}, conditions: progressing, writes: []string{"update Deployment/podinfo-baseline"}},
			check: made,
		},
		"a Deployment of that name serin did not make: refused, left as it is": {
			canary: c.DeepCopy(), objs: []client.Object{target, primary, foreign, baselineServiceOf(c, target)}, obs: rollout.Observation{Target: rollout.Target{Replicas: 3}},
			want: actionWant{err: refused("Deployment", "podinfo-baseline")},
		},
		"the create fails: retried": {
			canary: c.DeepCopy(), objs: []client.Object{target, primary, baselineServiceOf(c, target)}, obs: rollout.Observation{Target: rollout.Target{Replicas: 3}},
			fail: []string{"create Deployment/podinfo-baseline"},
			want: actionWant{err: injected, writes: []string{"create Deployment/podinfo-baseline"}},
		},
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, _ rollout.Action) (ctrl.Result, error) {
		return r.syncBaseline(ctx, obj, obs)
	})
}

// What syncBaseline made is what observe finds in sync; an edit, a
// deletion of its Service or a new analysis is not.
func TestObserveBaseline(t *testing.T) {
	c := baselinePodinfo(v1alpha1.PhaseProgressing)
	target, primary := baselineWorld(c, 3)
	ready := withStatus(baselineOf(c, target, primary, 3, "v2"), 3)
	tests := map[string]struct {
		objs []client.Object
		want rollout.Baseline
	}{
		"made and ready": {objs: []client.Object{ready, baselineServiceOf(c, target)},
			want: rollout.Baseline{Exists: true, InSync: true, Health: workload.Health{Ready: true, Serving: 3}}},
		"its Service deleted": {objs: []client.Object{ready},
			want: rollout.Baseline{Exists: true, Health: workload.Health{Ready: true, Serving: 3}}},
		"for another analysis": {objs: []client.Object{withStatus(baselineOf(c, target, primary, 3, "v1"), 3), baselineServiceOf(c, target)},
			want: rollout.Baseline{Exists: true, Health: workload.Health{Ready: true, Serving: 3}}},
		"at other replicas": {objs: []client.Object{withStatus(baselineOf(c, target, primary, 1, "v2"), 1), baselineServiceOf(c, target)},
			want: rollout.Baseline{Exists: true, Health: workload.Health{Ready: true, Serving: 1}}},
		"none": {},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			f := newActionReconciler(t, append([]client.Object{target, primary}, tt.objs...)...)
			obs, err := f.r.observe(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, obs.Baseline, cmpIgnoreHealthMessage); diff != "" {
				t.Errorf("baseline (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("syncBaseline's baseline is in sync", func(t *testing.T) {
		f := newActionReconciler(t, target, primary)
		ctx := context.Background()
		obs, err := f.r.observe(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.r.syncBaseline(ctx, c, obs); err != nil {
			t.Fatal(err)
		}
		if obs, err = f.r.observe(ctx, c); err != nil || !obs.Baseline.Exists || !obs.Baseline.InSync {
			t.Errorf("after syncBaseline: %+v, %v; want it in sync", obs.Baseline, err)
		}
	})
}

// routeBaseline writes the weights the routes carry again, the baseline
// in them only while it has a ready pod during an analysis.
func TestRouteBaseline(t *testing.T) {
	c := baselinePodinfo(v1alpha1.PhaseProgressing)
	target, primary := baselineWorld(c, 3)
	ready := withStatus(baselineOf(c, target, primary, 3, "v2"), 3)
	notReady := withStatus(baselineOf(c, target, primary, 3, "v2"), 0)
	routed := func(want bool) func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
		return func(t *testing.T, f *actionFixture, obj *v1alpha1.Canary) {
			rt := routing.Target{ApexService: "podinfo", BaselineService: "podinfo-baseline"}
			if got, _ := f.router.GetRoutes(context.Background(), obj, rt); got.Baseline != want || got.Weights != routing.Canary(25) {
				t.Errorf("routes %+v, want the canary at 25, the baseline routed %v", got, want)
			}
		}
	}
	at25 := rollout.Observation{CanaryWeight: 25}
	promoting := c.DeepCopy()
	promoting.Status.Phase = v1alpha1.PhasePromoting
	cases := map[string]actionCase{
		"a ready baseline: routed at the canary's weight": {
			canary: c.DeepCopy(), objs: []client.Object{target, primary, ready}, routes: ptr.To(routing.Canary(25)), obs: at25,
			want:  actionWant{result: ctrl.Result{RequeueAfter: 10 * time.Millisecond}, weights: []routing.Weights{routing.Canary(25)}},
			check: routed(true),
		},
		"a baseline without a ready pod: taken off": {
			canary: c.DeepCopy(), objs: []client.Object{target, primary, notReady}, obs: at25,
			setup: func(f *actionFixture) { f.router.SetBaseline("apps", "podinfo", routing.Canary(25), true) },
			want:  actionWant{result: ctrl.Result{RequeueAfter: 10 * time.Millisecond}, weights: []routing.Weights{routing.Canary(25)}},
			check: routed(false),
		},
		"a deleted baseline: taken off": {
			canary: c.DeepCopy(), objs: []client.Object{target, primary}, obs: at25,
			setup: func(f *actionFixture) { f.router.SetBaseline("apps", "podinfo", routing.Canary(25), true) },
			want:  actionWant{result: ctrl.Result{RequeueAfter: 10 * time.Millisecond}, weights: []routing.Weights{routing.Canary(25)}},
			check: routed(false),
		},
		"the analysis ended: taken off, ready or not": {
			canary: promoting, objs: []client.Object{target, primary, ready}, obs: at25,
			setup: func(f *actionFixture) { f.router.SetBaseline("apps", "podinfo", routing.Canary(25), true) },
			want:  actionWant{result: ctrl.Result{RequeueAfter: 10 * time.Millisecond}, weights: []routing.Weights{routing.Canary(25)}},
			check: routed(false),
		},
		"the router is down: retried": {
			canary: c.DeepCopy(), objs: []client.Object{target, primary, ready}, routes: ptr.To(routing.Canary(25)), obs: at25, routerDown: true,
			want: actionWant{err: errContaining("routes unreachable")},
		},
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, a rollout.Action) (ctrl.Result, error) {
		return r.routeBaseline(ctx, obj, obs, rollout.RouteBaseline{Reason: "test"})
	})
}

// removeBaseline scales the baseline to zero and keeps it and its Service
// for the next analysis (the agent deletes no Deployment or Service; the
// garbage collector deletes them with the Canary); what the Canary does
// not control is left alone.
func TestRemoveBaseline(t *testing.T) {
	c := baselinePodinfo(v1alpha1.PhaseSucceeded)
	target, primary := baselineWorld(c, 3)
	baseline := withStatus(baselineOf(c, target, primary, 3, "v2"), 3)
	foreign := baseline.DeepCopy()
	foreign.OwnerReferences = nil
	scaledDown := func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
		if got := f.replicas("podinfo-baseline"); got != 0 || !f.get("podinfo-baseline", &corev1.Service{}) {
			t.Errorf("replicas %d, want 0, the Service kept", got)
		}
	}
	cases := map[string]actionCase{
		"scaled to zero, kept with its Service": {
			canary: c.DeepCopy(), objs: []client.Object{target, primary, baseline, baselineServiceOf(c, target)},
			want: actionWant{result: ctrl.Result{RequeueAfter: 10 * time.Millisecond},
				writes: []string{"patch Deployment/podinfo-baseline"}},
			check: scaledDown,
		},
		"already at zero: nothing written": {
			canary: c.DeepCopy(), objs: []client.Object{target, primary, withStatus(baselineOf(c, target, primary, 0, "v2"), 0), baselineServiceOf(c, target)},
			want:  actionWant{result: ctrl.Result{RequeueAfter: 10 * time.Millisecond}},
			check: scaledDown,
		},
		"another controller's: left alone": {
			canary: c.DeepCopy(), objs: []client.Object{target, primary, foreign},
			want: actionWant{result: ctrl.Result{RequeueAfter: 10 * time.Millisecond}},
			check: func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
				if got := f.replicas("podinfo-baseline"); got != 3 {
					t.Errorf("replicas %d, want 3: not serin's", got)
				}
			},
		},
		"the scale-down fails: retried": {
			canary: c.DeepCopy(), objs: []client.Object{target, primary, baseline, baselineServiceOf(c, target)},
			fail: []string{"patch Deployment/podinfo-baseline"},
			want: actionWant{err: injected, writes: []string{"patch Deployment/podinfo-baseline"}},
		},
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, _ rollout.Observation, _ rollout.Action) (ctrl.Result, error) {
		return r.removeBaseline(ctx, obj)
	})
}

// A Canary deleted mid-analysis leaves no baseline serving: taken off the
// routes first (they are handed back or orphaned as they are), then, once
// the data plane applies them, scaled to zero, however the target and
// primary stand (the garbage collector deletes it with the Canary).
func TestDropBaselineOnDeletion(t *testing.T) {
	c := baselinePodinfo(v1alpha1.PhaseProgressing)
	target, primary := baselineWorld(c, 3)
	baseline := withStatus(baselineOf(c, target, primary, 3, "v2"), 3)
	cases := map[string]actionCase{
		"routed: off the routes, not removed yet": {
			canary: c.DeepCopy(), objs: []client.Object{target, primary, baseline, baselineServiceOf(c, target)},
			setup: func(f *actionFixture) { f.router.SetBaseline("apps", "podinfo", routing.Canary(25), true) },
			want:  actionWant{result: ctrl.Result{RequeueAfter: 100 * time.Millisecond}, weights: []routing.Weights{routing.Canary(25)}},
			check: func(t *testing.T, f *actionFixture, obj *v1alpha1.Canary) {
				got, _ := f.router.GetRoutes(context.Background(), obj, routing.Target{ApexService: "podinfo", BaselineService: "podinfo-baseline"})
				if got.Baseline || !f.get("podinfo-baseline", &appsv1.Deployment{}) {
					t.Errorf("routes %+v, want off them; the baseline kept until the gateway applies them", got)
				}
			},
		},
		"off the routes, which the gateway has not applied yet: kept": {
			canary: c.DeepCopy(), objs: []client.Object{target, primary, baseline, baselineServiceOf(c, target)},
			routes: ptr.To(routing.Canary(25)),
			setup:  func(f *actionFixture) { f.router.Status = &routing.RouteStatus{Message: "waiting for the gateway"} },
			want:   actionWant{result: ctrl.Result{RequeueAfter: 100 * time.Millisecond}},
		},
		"off the routes the gateway applies: scaled to zero": {
			canary: c.DeepCopy(), objs: []client.Object{target, primary, baseline, baselineServiceOf(c, target)},
			routes: ptr.To(routing.Canary(25)),
			want:   actionWant{writes: []string{"patch Deployment/podinfo-baseline"}},
			check: func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
				if got := f.replicas("podinfo-baseline"); got != 0 {
					t.Errorf("the baseline runs %d replicas, want 0", got)
				}
			},
		},
		"the target and primary gone: scaled to zero all the same": {
			canary: c.DeepCopy(), objs: []client.Object{baseline},
			routes: ptr.To(routing.Canary(25)),
			want:   actionWant{writes: []string{"patch Deployment/podinfo-baseline"}},
		},
		"without analysis.judge.baseline: nothing read, nothing written": {
			canary: weightedPodinfo().Phase(v1alpha1.PhaseProgressing).Obj(), objs: []client.Object{target, primary},
		},
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, _ rollout.Observation, _ rollout.Action) (ctrl.Result, error) {
		if done, err := r.dropBaseline(ctx, obj); err != nil || !done {
			return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, err
		}
		return ctrl.Result{}, nil
	})
}
