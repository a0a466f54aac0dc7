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

	"github.com/fluxcd/pkg/apis/meta"
	appsv1 "k8s.io/api/apps/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/internal/workload"
	"github.com/serin-dev/serin/routing"
)

// The ready thresholds (spec.analysis.primaryReadyThreshold and
// canaryReadyThreshold) act where the reconciler reads the Deployments, so
// these cases run a whole turn on the objects as the cluster holds them:
// observe, decide, act. Each Deployment has four replicas, all on its
// current template, some of them available.
func TestReadyThresholds(t *testing.T) {
	v1Target := func() *appsv1.Deployment { return podinfoTarget(4) }
	v2Target := func() *appsv1.Deployment {
		return testobj.MakeDeployment("podinfo", "apps").Replicas(4).Image(newImage).Obj()
	}
	v1 := workload.SpecHash(&v1Target().Spec.Template, nil)
	v2 := workload.SpecHash(&v2Target().Spec.Template, nil)

	// initializing is podinfo's blue/green Canary whose primary, v1, was
	// created with available of its replicas; the target still serves.
	initializing := func(primaryThreshold, available int32) actionCase {
		c := withReadyThresholds(podinfoCanary().Phase(v1alpha1.PhaseInitializing).Obj(), primaryThreshold, 0)
		return actionCase{
			canary: c,
			objs:   []client.Object{available4(v1Target(), 4), available4(primaryOf(c, v1Target(), v1), available)},
			routes: weights(routing.AllPrimary),
			setup:  generatedServices(c),
		}
	}
	// waitingForPrimary waits an interval for the primary, the error saying
	// why (Ready says it once the reconcile ends).
	waitingForPrimary := func(why string) actionWant {
		return actionWant{err: func(t *testing.T, err error) {
			t.Helper()
			waits(v1alpha1.WaitingForPrimaryReason, 10*time.Second)(t, err)
			if err == nil || err.Error() != why {
				t.Errorf("error %v, want %q", err, why)
			}
		}}
	}

	// analysing is podinfo's Canary on an HTTPRoute analysing v2 at weight
	// 25, the step due, with available of the canary's replicas.
	analysing := func(canaryThreshold, available int32, since time.Duration) actionCase {
		c := withReadyThresholds(weightedPodinfo().Phase(v1alpha1.PhaseProgressing).Applied(v2, "main@sha1:v2").
			Promoted(v1, "main@sha1:v1").Weight(25).TransitionedAt(actionNow.Add(-since)).Obj(), 0, canaryThreshold)
		return actionCase{
			canary: c,
			objs:   []client.Object{available4(v2Target(), available), available4(primaryOf(c, v1Target(), v1), 4)},
			routes: weights(routing.Canary(25)),
			setup:  generatedServices(c),
		}
	}
	progressing := []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.ProgressingReason)}
	waitingForCanary := actionWant{
		result:     ctrl.Result{RequeueAfter: 590*time.Second + 100*time.Millisecond},
		conditions: progressing,
	}

	// promoting is the same Canary once the primary was given v2, since
	// ago, with available of its replicas; the canary serves at 50.
	promoting := func(primaryThreshold, available int32, since time.Duration) actionCase {
		c := withReadyThresholds(weightedPodinfo().Phase(v1alpha1.PhasePromoting).Applied(v2, "main@sha1:v2").
			Promoted(v2, "main@sha1:v2").Weight(50).TransitionedAt(actionNow.Add(-since)).Obj(), primaryThreshold, 0)
		return actionCase{
			canary: c,
			objs:   []client.Object{available4(v2Target(), 4), available4(primaryOf(c, v2Target(), v2), available)},
			routes: weights(routing.Canary(50)),
			setup:  generatedServices(c),
		}
	}

	cases := map[string]actionCase{
		"initialization, primaryReadyThreshold 50, 2 of 4 available: initialized, the target scaled down": with(initializing(50, 2), actionWant{
			status: func(st *v1alpha1.CanaryStatus) {
				st.Phase = v1alpha1.PhaseInitialized
				st.LastAppliedSpec, st.LastPromotedSpec = v1, v1
				st.LastTransitionTime = at(actionNow)
			},
			writes: []string{"patch Deployment/podinfo"},
		}, nil),
		"initialization, default threshold, 2 of 4 available: waits for every replica": with(initializing(0, 2),
			waitingForPrimary("deployment podinfo-primary: 2 of 4 updated replicas available"), nil),
		"initialization, primaryReadyThreshold 50, 1 of 4 available: waits for the second": with(initializing(50, 1),
			waitingForPrimary("deployment podinfo-primary: 1 of 4 updated replicas available, 2 needed (readyThreshold 50%)"), nil),
		"initialization, primaryReadyThreshold 1, no replica available: never ready": with(initializing(1, 0),
			waitingForPrimary("deployment podinfo-primary: 0 of 4 updated replicas available, 1 needed (readyThreshold 1%)"), nil),

		"analysis, canaryReadyThreshold 50, 2 of 4 available: the step runs": with(analysing(50, 2, 10*time.Second), actionWant{
			result: ctrl.Result{RequeueAfter: 10*time.Second + time.Millisecond},
			status: func(st *v1alpha1.CanaryStatus) {
				st.CanaryWeight, st.LastTransitionTime = 50, at(actionNow)
			},
			conditions: progressing,
			weights:    []routing.Weights{routing.Canary(50)},
			notified:   []string{v1alpha1.WeightIncreasedReason},
			records:    []string{v2 + ": 25 Passed"},
		}, nil),
		"analysis, default threshold, 2 of 4 available: waits for the canary": with(analysing(0, 2, 10*time.Second), waitingForCanary,
			readySays("waiting for the canary: deployment podinfo: 2 of 4 updated replicas available")),
		"analysis, canaryReadyThreshold 50, 1 of 4 available: waits for the canary": with(analysing(50, 1, 10*time.Second), waitingForCanary,
			readySays("waiting for the canary: deployment podinfo: 1 of 4 updated replicas available, 2 needed (readyThreshold 50%)")),
		"analysis, canaryReadyThreshold 50, 1 of 4 available past the deadline: rolled back": with(analysing(50, 1, 11*time.Minute), actionWant{
			status: func(st *v1alpha1.CanaryStatus) {
				st.Phase, st.CanaryWeight, st.LastTransitionTime = v1alpha1.PhaseFailed, 0, at(actionNow)
			},
			conditions: []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.FailedReason)},
			weights:    []routing.Weights{routing.AllPrimary},
			events:     []string{"Warning " + v1alpha1.RolledBackReason},
			ended:      "failed",
			result:     ctrl.Result{RequeueAfter: 100 * time.Millisecond},
			// The record keeps the beginning of the reason; Ready says it all.
			records: []string{v2 + " Failed (rolled back revision " + v2 + ": canary not ready within the progress deadline (10m0s): " +
				"deployment podinfo: 1 of 4 updated replicas available, 2 needed…)"},
		}, readySaysAlso("canary not ready within the progress deadline (10m0s): deployment podinfo: 1 of 4 updated replicas available, 2 needed (readyThreshold 50%)")),
		"analysis, canaryReadyThreshold 1, no replica ready: the canary gets no traffic": with(analysing(1, 0, 10*time.Second), actionWant{
			result:  ctrl.Result{RequeueAfter: 10 * time.Millisecond},
			status:  func(st *v1alpha1.CanaryStatus) { st.CanaryWeight = 0 },
			weights: []routing.Weights{routing.AllPrimary},
			events:  []string{"Warning " + v1alpha1.ShieldedReason},
		}, nil),

		"promotion, primaryReadyThreshold 50, 2 of 4 available: traffic moves to the primary": with(promoting(50, 2, time.Minute), actionWant{
			result: ctrl.Result{RequeueAfter: 10 * time.Millisecond},
			status: func(st *v1alpha1.CanaryStatus) {
				st.Phase, st.CanaryWeight, st.LastTransitionTime = v1alpha1.PhaseFinalising, 0, at(actionNow)
			},
			conditions: progressing,
			weights:    []routing.Weights{routing.AllPrimary},
			events:     []string{"Normal " + v1alpha1.FinalisingReason},
		}, nil),
		"promotion, default threshold, 2 of 4 available: waits for the primary": with(promoting(0, 2, time.Minute), actionWant{
			result:     ctrl.Result{RequeueAfter: 9*time.Minute + 100*time.Millisecond},
			conditions: progressing,
		}, readySays("waiting for the promoted primary: deployment podinfo-primary: 2 of 4 updated replicas available")),
		"promotion, primaryReadyThreshold 50, 1 of 4 available past the deadline: halted": with(promoting(50, 1, 11*time.Minute), actionWant{
			result:     ctrl.Result{RequeueAfter: 10 * time.Millisecond},
			status:     func(st *v1alpha1.CanaryStatus) { st.Phase, st.LastTransitionTime = v1alpha1.PhaseHalted, at(actionNow) },
			conditions: []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.HaltedReason)},
			events:     []string{"Warning " + v1alpha1.HaltedReason},
			notified:   []string{v1alpha1.HaltedReason},
			ended:      "failed",
			records: []string{v2 + " Halted (promotion of revision " + v2 + " halted, canary kept serving: " +
				"primary not ready within the progress deadline (10m0s) after promotion: deployment podinf…)"},
		}, readySaysAlso("primary not ready within the progress deadline (10m0s) after promotion: "+
			"deployment podinfo-primary: 1 of 4 updated replicas available, 2 needed (readyThreshold 50%)")),
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, _ rollout.Observation, _ rollout.Action) (ctrl.Result, error) {
		obs, err := r.observe(ctx, obj)
		if err != nil {
			return ctrl.Result{}, err
		}
		return r.act(ctx, obj, obs, rollout.Decide(obj, obs))
	})
}

// generatedServices puts the Services serin generates for c in place, as
// an earlier turn left them; their writes are not the action's.
func generatedServices(c *v1alpha1.Canary) func(f *actionFixture) {
	return func(f *actionFixture) {
		f.t.Helper()
		target := &appsv1.Deployment{}
		if !f.get(c.Spec.TargetRef.Name, target) {
			f.t.Fatal("no target")
		}
		if err := (deploymentTarget{f.r}).syncServices(context.Background(), c, target); err != nil {
			f.t.Fatal(err)
		}
		f.calls.Writes = nil
	}
}

// withReadyThresholds sets the Canary's ready thresholds; 0 leaves one unset.
func withReadyThresholds(c *v1alpha1.Canary, primary, canary int32) *v1alpha1.Canary {
	if primary > 0 {
		p := int(primary)
		c.Spec.Analysis.PrimaryReadyThreshold = &p
	}
	if canary > 0 {
		n := int(canary)
		c.Spec.Analysis.CanaryReadyThreshold = &n
	}
	return c
}

// available4 reports a Deployment of four replicas rolled out to its
// template, available of them available (and ready).
func available4(d *appsv1.Deployment, available int32) *appsv1.Deployment {
	n := int32(4)
	d.Spec.Replicas = &n
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n,
		ReadyReplicas: available, AvailableReplicas: available}
	return d
}

// readySaysAlso checks that the Ready condition's message holds want.
func readySaysAlso(want string) func(t *testing.T, _ *actionFixture, obj *v1alpha1.Canary) {
	return func(t *testing.T, _ *actionFixture, obj *v1alpha1.Canary) {
		t.Helper()
		if got := apimeta.FindStatusCondition(obj.Status.Conditions, meta.ReadyCondition); got == nil || !strings.Contains(got.Message, want) {
			t.Errorf("Ready %v, want a message holding %q", got, want)
		}
	}
}

// with gives a case what it wants and its particular check.
func with(tc actionCase, want actionWant, check func(t *testing.T, f *actionFixture, obj *v1alpha1.Canary)) actionCase {
	tc.want, tc.check = want, check
	return tc
}
