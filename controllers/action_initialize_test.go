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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/routing"
)

// initialize creates the generated Services and the routes first, then
// records the target's revision and creates the primary from it; the
// target keeps its replicas. An object of a generated name that the Canary
// did not create is refused, and nothing after it is written.
func TestInitialize(t *testing.T) {
	initializing := func(st *v1alpha1.CanaryStatus) {
		st.Phase, st.LastTransitionTime = v1alpha1.PhaseInitializing, at(actionNow)
	}
	initialized := []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.InitializingReason)}
	services := []string{"create Service/podinfo", "create Service/podinfo-primary", "create Service/podinfo-canary"}
	created := append(services[:3:3], "create ControllerRevision/podinfo-primary-v1", "create Deployment/podinfo-primary")
	// primaryRuns checks the primary: the Canary's, running image with
	// the target's replicas, and the target left as it was.
	primaryRuns := func(image string) func(t *testing.T, f *actionFixture, obj *v1alpha1.Canary) {
		return func(t *testing.T, f *actionFixture, obj *v1alpha1.Canary) {
			p := &appsv1.Deployment{}
			if !f.get("podinfo-primary", p) {
				t.Fatal("no primary")
			}
			if !metav1.IsControlledBy(p, obj) {
				t.Errorf("primary owners %v: not the Canary's", p.OwnerReferences)
			}
			if got := p.Spec.Template.Spec.Containers[0].Image; got != image || p.Annotations[specHashAnnotation] != "v1" || *p.Spec.Replicas != 2 {
				t.Errorf("primary runs %s at %s with %d replicas, want %s at v1 with 2", got, p.Annotations[specHashAnnotation], *p.Spec.Replicas, image)
			}
			if got := f.replicas("podinfo"); got != 2 {
				t.Errorf("target replicas %d: the target serves until the primary is ready", got)
			}
			if routes, err := f.router.GetRoutes(context.Background(), obj, routing.Target{ApexService: "podinfo"}); err != nil || !routes.Found || routes.Weights != routing.AllPrimary {
				t.Errorf("routes %+v, %v: want all traffic on the primary", routes, err)
			}
		}
	}
	// untouched checks that an object someone else made is as it was.
	untouched := func(name string, o client.Object, label string) func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
		return func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
			if !f.get(name, o) || o.GetLabels()["team"] != label || len(o.GetOwnerReferences()) != 0 {
				t.Errorf("%s changed: labels %v, owners %v", name, o.GetLabels(), o.GetOwnerReferences())
			}
		}
	}
	withConfig := testobj.MakeDeployment("podinfo", "apps").Replicas(2).EnvFromConfigMap("podinfo-config").Obj()
	config := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo-config"}, Data: map[string]string{"level": "debug"}}
	configObserved := observed("v1", 0)
	configObserved.Target.TrackedConfigs = map[string]string{"ConfigMap/podinfo-config": "c1"}

	cases := map[string]actionCase{
		"a new Canary: the Services, the routes, then the primary": {
			canary: weightedPodinfo().Obj(),
			objs:   []client.Object{podinfoTarget(2)},
			obs:    observed("v1", 0),
			want:   actionWant{status: initializing, conditions: initialized, writes: created},
			check:  primaryRuns(goodImage),
		},
		"a tracked ConfigMap: the primary's copy before the primary": {
			canary: weightedPodinfo().Obj(),
			objs:   []client.Object{withConfig, config},
			obs:    configObserved,
			want: actionWant{status: initializing, conditions: initialized, writes: append(services[:3:3],
				"create ConfigMap/podinfo-config-primary", "create ControllerRevision/podinfo-primary-v1", "create Deployment/podinfo-primary")},
			check: func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
				copied, p := &corev1.ConfigMap{}, &appsv1.Deployment{}
				if !f.get("podinfo-config-primary", copied) || copied.Data["level"] != "debug" {
					t.Errorf("the primary's copy holds %v", copied.Data)
				}
				if f.get("podinfo-primary", p) && p.Spec.Template.Spec.Containers[0].EnvFrom[0].ConfigMapRef.Name != "podinfo-config-primary" {
					t.Errorf("the primary reads %s, want its copy", p.Spec.Template.Spec.Containers[0].EnvFrom[0].ConfigMapRef.Name)
				}
			},
		},
		"a primary someone else made: refused before its revision is recorded": {
			canary: weightedPodinfo().Obj(),
			objs:   []client.Object{podinfoTarget(2), legacyPrimary()},
			obs:    observed("v1", 0),
			want:   actionWant{err: refused("Deployment", "podinfo-primary"), writes: services},
			check:  untouched("podinfo-primary", &appsv1.Deployment{}, "payments"),
		},
		"a primary annotated serin.dev/adopt=true: taken over": {
			canary: weightedPodinfo().Obj(),
			objs:   []client.Object{podinfoTarget(2), adoptable(legacyPrimary())},
			obs:    observed("v1", 0),
			want: actionWant{status: initializing, conditions: initialized,
				writes: append(services[:3:3], "create ControllerRevision/podinfo-primary-v1", "update Deployment/podinfo-primary")},
			check: primaryRuns(goodImage),
		},
		"a canary Service someone else made: nothing after it written": {
			canary: weightedPodinfo().Obj(),
			objs:   []client.Object{podinfoTarget(2), legacyService("podinfo-canary")},
			obs:    observed("v1", 0),
			want:   actionWant{err: refused("Service", "podinfo-canary"), writes: services[:2]},
			check:  untouched("podinfo-canary", &corev1.Service{}, "payments"),
		},
		"the routes cannot be reconciled: no primary yet": {
			canary:     weightedPodinfo().Obj(),
			objs:       []client.Object{podinfoTarget(2)},
			routerDown: true,
			obs:        observed("v1", 0),
			want:       actionWant{err: errContaining("routes unreachable"), writes: services},
		},
		"the primary cannot be created: not Initializing": {
			canary: weightedPodinfo().Obj(),
			objs:   []client.Object{podinfoTarget(2)},
			fail:   []string{"create Deployment/podinfo-primary"},
			obs:    observed("v1", 0),
			want:   actionWant{err: injected, writes: created},
		},
		"the target is gone: nothing written": {
			canary: weightedPodinfo().Obj(),
			obs:    observed("v1", 0),
			want:   actionWant{err: notFound},
		},
		"a Service target: its canary and primary copies, and the routes": {
			canary: weightedPodinfo().Target("v1", "Service", "podinfo").Obj(),
			objs:   []client.Object{testobj.MakeService("podinfo", "apps").Obj()},
			obs:    observed("v1", 0),
			want: actionWant{status: initializing, conditions: initialized,
				writes: []string{"create Service/podinfo-canary", "create Service/podinfo-primary"}},
			check: func(t *testing.T, f *actionFixture, obj *v1alpha1.Canary) {
				for _, name := range []string{"podinfo-canary", "podinfo-primary"} {
					svc := &corev1.Service{}
					if !f.get(name, svc) || svc.Spec.Selector["app"] != "podinfo" || !metav1.IsControlledBy(svc, obj) {
						t.Errorf("%s selects %v, owners %v: want the target's pods, the Canary's", name, svc.Spec.Selector, svc.OwnerReferences)
					}
				}
			},
		},
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, _ rollout.Action) (ctrl.Result, error) {
		return r.initialize(ctx, obj, obs)
	})
}
