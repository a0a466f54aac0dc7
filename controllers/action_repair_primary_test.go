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

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/routing"
)

// repairPrimary re-creates a deleted primary with the last promoted
// revision as recorded when it was promoted, or from the target when the
// target runs it; with neither, a person must act. The phase goes on.
func TestRepairPrimary(t *testing.T) {
	// The primary of v1 had 3 replicas; the target now runs v2.
	analysing := func() *v1alpha1.Canary {
		return weightedPodinfo().Phase(v1alpha1.PhaseProgressing).Applied("v2", "main@sha1:v2").Promoted("v1", "main@sha1:v1").Weight(25).Obj()
	}
	v2 := func() *appsv1.Deployment {
		return testobj.MakeDeployment("podinfo", "apps").Replicas(2).Image(newImage).Obj()
	}
	recorded := func(c *v1alpha1.Canary) *appsv1.ControllerRevision {
		return recordOf(c, primaryOf(c, podinfoTarget(3), "v1"), "v1", nil)
	}
	repaired := []string{"Warning " + v1alpha1.PrimaryRepairedReason}
	primaryRuns := func(image string, replicas int32) func(t *testing.T, f *actionFixture, obj *v1alpha1.Canary) {
		return func(t *testing.T, f *actionFixture, obj *v1alpha1.Canary) {
			p := &appsv1.Deployment{}
			if !f.get("podinfo-primary", p) {
				t.Fatal("no primary")
			}
			if got := p.Spec.Template.Spec.Containers[0].Image; got != image || *p.Spec.Replicas != replicas || p.Annotations[specHashAnnotation] != "v1" {
				t.Errorf("primary runs %s with %d replicas at %s, want %s with %d at v1", got, *p.Spec.Replicas, p.Annotations[specHashAnnotation], image, replicas)
			}
			if !metav1.IsControlledBy(p, obj) {
				t.Errorf("primary owners %v", p.OwnerReferences)
			}
		}
	}
	// Ready says PrimaryUnavailable from the repair on, until the primary serves.
	repairing := waits(v1alpha1.PrimaryUnavailableReason, time.Second)
	withRecord, createFails, otherRecord, alreadyRepaired := analysing(), analysing(), analysing(), analysing()
	foreignRecord := recorded(otherRecord)
	foreignRecord.OwnerReferences[0].UID = "uid-other"
	cases := map[string]actionCase{
		"the last promoted revision recorded: re-created with its template and replicas": {
			canary: withRecord,
			objs:   []client.Object{v2(), recorded(withRecord)},
			obs:    observed("v2", 25),
			want:   actionWant{err: repairing, writes: []string{"create Deployment/podinfo-primary"}, events: repaired},
			check:  primaryRuns(goodImage, 3),
		},
		"re-created by the reconcile before, not yet in the cache: a wait, no second event": {
			canary: alreadyRepaired,
			objs:   []client.Object{v2(), recorded(alreadyRepaired), primaryOf(alreadyRepaired, podinfoTarget(3), "v1")},
			obs:    observed("v2", 25),
			want:   actionWant{err: repairing, writes: []string{"create Deployment/podinfo-primary"}},
		},
		"not recorded, the target runs v1: re-created from the target, and recorded": {
			canary: podinfoCanary().Phase(v1alpha1.PhaseSucceeded).Applied("v1", "main@sha1:v1").Promoted("v1", "main@sha1:v1").Obj(),
			objs:   []client.Object{podinfoTarget(2)},
			obs:    observed("v1", 0),
			want: actionWant{err: repairing,
				writes: []string{"create ControllerRevision/podinfo-primary-v1", "create Deployment/podinfo-primary"}, events: repaired},
			check: primaryRuns(goodImage, 2),
		},
		"not recorded, the target runs v2: a person must act, nothing written": {
			canary: analysing(),
			objs:   []client.Object{v2()},
			obs:    observed("v2", 25),
			want:   actionWant{err: stalls(v1alpha1.InvalidTargetReason)},
		},
		"a record another Canary made does not count": {
			canary: otherRecord,
			objs:   []client.Object{v2(), foreignRecord},
			obs:    observed("v2", 25),
			want:   actionWant{err: stalls(v1alpha1.InvalidTargetReason)},
		},
		"the create fails: no event": {
			canary: createFails,
			objs:   []client.Object{v2(), recorded(createFails)},
			fail:   []string{"create Deployment/podinfo-primary"},
			obs:    observed("v2", 25),
			want:   actionWant{err: injected, writes: []string{"create Deployment/podinfo-primary"}},
		},
		"the target is gone": {
			canary: analysing(),
			obs:    observed("v2", 25),
			want:   actionWant{err: notFound},
		},
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, _ rollout.Action) (ctrl.Result, error) {
		return r.repairPrimary(ctx, obj, obs)
	})
}

// primaryUnavailable keeps Ready False outside a rollout while the primary
// has no pod ready, and looks again a minute later; recordWeights records
// the weights the routes carry when a status write was lost, and restarts
// the step clock. Neither writes anything.
func TestPrimaryUnavailableAndRecordWeights(t *testing.T) {
	cases := map[string]actionCase{
		"the primary has no pod ready: a wait": {
			canary: podinfoCanary().Phase(v1alpha1.PhaseSucceeded).Obj(),
			action: rollout.PrimaryUnavailable{Message: "podinfo-primary has 0 of 2 replicas ready"},
			want:   actionWant{err: waits(v1alpha1.PrimaryUnavailableReason, time.Minute)},
		},
		"the routes carry 50, the status says 25: 50 recorded, judged a whole interval": {
			canary: weightedPodinfo().Phase(v1alpha1.PhaseProgressing).Applied("v2", "main@sha1:v2").Weight(25).TransitionedAt(actionNow.Add(-time.Minute)).Obj(),
			routes: weights(routing.Canary(50)),
			obs:    observed("v2", 50),
			action: rollout.RecordWeights{},
			want: actionWant{
				result:     ctrl.Result{RequeueAfter: 10*time.Second + time.Millisecond},
				status:     func(st *v1alpha1.CanaryStatus) { st.CanaryWeight, st.LastTransitionTime = 50, at(actionNow) },
				conditions: []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.ProgressingReason)},
			},
			check: readySays("analysing revision v2"),
		},
	}
	runActionCases(t, cases, func(_ context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, a rollout.Action) (ctrl.Result, error) {
		if a, ok := a.(rollout.PrimaryUnavailable); ok {
			return r.primaryUnavailable(a)
		}
		return r.recordWeights(obj, obs)
	})
}
