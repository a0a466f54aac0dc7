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
	"strings"
	"testing"
	"time"

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

// promote records the analysed revision, then copies it to the primary.
// The canary keeps its weight meanwhile, unless nobody may be served by
// the primary while it rolls out (blue/green, or a strategy that may take
// all its ready pods away): then all traffic goes to the canary first.
func TestPromote(t *testing.T) {
	// analysed is a Canary whose analysis of v2 passed at weight.
	analysed := func(c *testobj.CanaryWrapper, weight int) *v1alpha1.Canary {
		return c.Phase(v1alpha1.PhaseProgressing).Applied("v2", "main@sha1:v2").Promoted("v1", "main@sha1:v1").Weight(weight).Obj()
	}
	v2 := func() *testobj.DeploymentWrapper {
		return testobj.MakeDeployment("podinfo", "apps").Replicas(2).Image(newImage)
	}
	// world is the target at v2 and the primary at v1.
	world := func(c *v1alpha1.Canary, target *appsv1.Deployment) []client.Object {
		return []client.Object{target, primaryOf(c, podinfoTarget(2), "v1")}
	}
	promoting := func(st *v1alpha1.CanaryStatus) {
		st.Phase, st.LastTransitionTime = v1alpha1.PhasePromoting, at(actionNow)
	}
	progressing := []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.ProgressingReason)}
	untilDeadline := ctrl.Result{RequeueAfter: 600 * time.Second}
	copied := []string{"create ControllerRevision/podinfo-primary-v2", "update Deployment/podinfo-primary"}
	began := []string{"Normal " + v1alpha1.PromotingReason}
	// canaryFirst is a promotion that sent all traffic to the canary first.
	canaryFirst := actionWant{
		result:     untilDeadline,
		status:     func(st *v1alpha1.CanaryStatus) { promoting(st); st.CanaryWeight = 100 },
		conditions: progressing,
		weights:    []routing.Weights{routing.Canary(100)},
		writes:     copied,
		events:     began,
	}
	primaryRuns := func(image, spec string) func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
		return func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
			p := &appsv1.Deployment{}
			if !f.get("podinfo-primary", p) {
				t.Fatal("no primary")
			}
			if got := p.Spec.Template.Spec.Containers[0].Image; got != image || p.Annotations[specHashAnnotation] != spec {
				t.Errorf("primary runs %s at %s, want %s at %s", got, p.Annotations[specHashAnnotation], image, spec)
			}
		}
	}

	weighted := analysed(weightedPodinfo(), 50)
	blueGreen := analysed(podinfoCanary(), 0)
	recreate := analysed(weightedPodinfo(), 50)
	again := weightedPodinfo().Phase(v1alpha1.PhasePromoting).Applied("v2", "main@sha1:v2").Promoted("v1", "main@sha1:v1").Weight(50).Obj()
	requested := analysed(weightedPodinfo().Annotation(v1alpha1.PromoteRequestAnnotation, "now"), 50)
	requestObserved := observed("v2", 50)
	requestObserved.Requests.Promote = "now"
	blueGreenDown := analysed(podinfoCanary(), 0)
	foreign := analysed(weightedPodinfo(), 50)
	writeFails := analysed(weightedPodinfo(), 50)

	cases := map[string]actionCase{
		"weights, rolling update: the primary runs v2, the canary keeps its weight": {
			canary: weighted,
			objs:   world(weighted, v2().Obj()),
			routes: weights(routing.Canary(50)),
			obs:    observed("v2", 50),
			action: rollout.Promote{Reason: "analysis passed"},
			want:   actionWant{result: untilDeadline, status: promoting, conditions: progressing, writes: copied, events: began},
			check:  primaryRuns(newImage, "v2"),
		},
		"blue/green: all traffic to the canary first": {
			canary: blueGreen,
			objs:   world(blueGreen, v2().Obj()),
			routes: weights(routing.AllPrimary),
			obs:    observed("v2", 0),
			action: rollout.Promote{Reason: "analysis passed"},
			want:   canaryFirst,
			check:  primaryRuns(newImage, "v2"),
		},
		"a Recreate strategy: all traffic to the canary first": {
			canary: recreate,
			objs:   world(recreate, v2().Recreate().Obj()),
			routes: weights(routing.Canary(50)),
			obs:    observed("v2", 50),
			action: rollout.Promote{Reason: "analysis passed"},
			want:   canaryFirst,
		},
		"a promote request: handled": {
			canary: requested,
			objs:   world(requested, v2().Obj()),
			routes: weights(routing.Canary(50)),
			obs:    requestObserved,
			action: rollout.Promote{Reason: "promotion requested"},
			want: actionWant{
				result:     untilDeadline,
				status:     func(st *v1alpha1.CanaryStatus) { promoting(st); st.HandledRequests.Promote = "now" },
				conditions: progressing,
				writes:     copied,
				events:     began,
			},
		},
		"already promoting, the primary on v2: nothing written, no second event": {
			canary: again,
			objs: func() []client.Object {
				primary := primaryOf(again, v2().Obj(), "v2")
				return []client.Object{v2().Obj(), primary, recordOf(again, primary, "v2", nil)}
			}(),
			routes: weights(routing.Canary(50)),
			obs:    observed("v2", 50),
			action: rollout.Promote{Reason: "analysis passed"},
			want:   actionWant{result: untilDeadline, status: promoting, conditions: progressing},
		},
		"blue/green, the routes cannot be written: the primary not touched": {
			canary:     blueGreenDown,
			objs:       world(blueGreenDown, v2().Obj()),
			routes:     weights(routing.AllPrimary),
			routerDown: true,
			obs:        observed("v2", 0),
			action:     rollout.Promote{Reason: "analysis passed"},
			want:       routesDown,
			check:      primaryRuns(goodImage, "v1"),
		},
		"a primary another Canary controls: refused, its revision not recorded": {
			canary: foreign,
			objs:   []client.Object{v2().Obj(), ownedByOther(primaryOf(foreign, podinfoTarget(2), "v1"))},
			routes: weights(routing.Canary(50)),
			obs:    observed("v2", 50),
			action: rollout.Promote{Reason: "analysis passed"},
			want:   actionWant{err: refused("Deployment", "podinfo-primary")},
			check:  primaryRuns(goodImage, "v1"),
		},
		"the primary write fails: not Promoting": {
			canary: writeFails,
			objs:   world(writeFails, v2().Obj()),
			routes: weights(routing.Canary(50)),
			fail:   []string{"update Deployment/podinfo-primary"},
			obs:    observed("v2", 50),
			action: rollout.Promote{Reason: "analysis passed"},
			want:   actionWant{err: injected, writes: copied},
			check:  primaryRuns(goodImage, "v1"),
		},
		"a Service target: the primary Service takes the target's backend, keeping the one it replaces": func() actionCase {
			c := analysed(weightedPodinfo().Target("v1", "Service", "podinfo"), 50)
			target := testobj.MakeService("podinfo", "apps").Selector(map[string]string{"app": "podinfo", "version": "v2"}).Obj()
			primary := testobj.MakeService("podinfo-primary", "apps").Selector(map[string]string{"app": "podinfo", "version": "v1"}).
				Annotation(specHashAnnotation, "v1").Obj()
			primary.CreationTimestamp = metav1.NewTime(actionNow.Add(-time.Hour))
			primary.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.CanaryKind, Name: "podinfo", UID: c.UID, Controller: ptr.To(true)}}
			return actionCase{
				canary: c,
				objs:   []client.Object{target, primary},
				routes: weights(routing.Canary(50)),
				obs:    observed("v2", 50),
				action: rollout.Promote{Reason: "analysis passed"},
				want:   actionWant{result: untilDeadline, status: promoting, conditions: progressing, writes: []string{"update Service/podinfo-primary"}, events: began},
				check: func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
					got := &corev1.Service{}
					f.get("podinfo-primary", got)
					if got.Spec.Selector["version"] != "v2" || got.Annotations[specHashAnnotation] != "v2" {
						t.Errorf("primary Service selects %v at %s, want version v2 at v2", got.Spec.Selector, got.Annotations[specHashAnnotation])
					}
					if prev := got.Annotations[workload.PreviousSpecAnnotation]; !strings.Contains(prev, `"hash":"v1"`) || !strings.Contains(prev, `"version":"v1"`) {
						t.Errorf("previous spec %q, want v1's backend kept for a restore", prev)
					}
				},
			}
		}(),
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, a rollout.Action) (ctrl.Result, error) {
		return r.promote(ctx, obj, obs, a.(rollout.Promote))
	})
}
