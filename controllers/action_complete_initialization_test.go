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

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
)

// completeInitialization scales the target down once the primary serves,
// and only then records the target's revision as applied and promoted.
func TestCompleteInitialization(t *testing.T) {
	initializing := func() *v1alpha1.Canary { return podinfoCanary().Phase(v1alpha1.PhaseInitializing).Obj() }
	initialized := func(st *v1alpha1.CanaryStatus) {
		st.Phase = v1alpha1.PhaseInitialized
		st.LastAppliedSpec, st.LastPromotedSpec = "v1", "v1"
		st.LastAttemptedRevision, st.LastPromotedRevision = "main@sha1:v1", "main@sha1:v1"
		st.LastTransitionTime = at(actionNow)
	}
	cases := map[string]actionCase{
		"the primary serves: the target scaled to zero, v1 promoted": {
			canary: initializing(),
			objs:   []client.Object{podinfoTarget(2)},
			obs:    observed("v1", 0),
			want:   actionWant{status: initialized, writes: []string{"patch Deployment/podinfo"}},
			check: func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
				if got := f.replicas("podinfo"); got != 0 {
					t.Errorf("target replicas %d, want 0", got)
				}
			},
		},
		"the counters of an earlier analysis are reset": {
			canary: podinfoCanary().Phase(v1alpha1.PhaseInitializing).Weight(100).Checks(2, 1).Obj(),
			objs:   []client.Object{podinfoTarget(0)},
			obs:    observed("v1", 0),
			want: actionWant{status: func(st *v1alpha1.CanaryStatus) {
				initialized(st)
				st.CanaryWeight, st.Iterations, st.FailedChecks = 0, 0, 0
			}},
		},
		"the scale write fails: nothing recorded": {
			canary: initializing(),
			objs:   []client.Object{podinfoTarget(2)},
			fail:   []string{"patch Deployment/podinfo"},
			obs:    observed("v1", 0),
			want:   actionWant{err: injected, writes: []string{"patch Deployment/podinfo"}},
		},
		"the target is gone: nothing recorded": {
			canary: initializing(),
			obs:    observed("v1", 0),
			want:   actionWant{err: notFound},
		},
		"a Service target: nothing to scale": {
			canary: podinfoCanary().Target("v1", "Service", "podinfo").Phase(v1alpha1.PhaseInitializing).Obj(),
			objs:   []client.Object{podinfoTarget(2)},
			obs:    observed("v1", 0),
			want:   actionWant{status: initialized},
		},
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, _ rollout.Action) (ctrl.Result, error) {
		return r.completeInitialization(ctx, obj, obs)
	})
}
