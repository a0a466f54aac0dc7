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

// acceptRevision records a target spec equal to the primary's (a manual
// rollback in Git) as applied, without an analysis, and scales the target
// back down: the primary already runs that spec.
func TestAcceptRevision(t *testing.T) {
	// After a failed v2, Git goes back to v1, which the primary runs.
	failedV2 := func() *v1alpha1.Canary {
		return podinfoCanary().Phase(v1alpha1.PhaseFailed).Applied("v2", "main@sha1:v2").Promoted("v1", "main@sha1:v1").Obj()
	}
	accepted := func(st *v1alpha1.CanaryStatus) {
		st.LastAppliedSpec, st.LastAttemptedRevision = "v1", "main@sha1:v1"
	}
	cases := map[string]actionCase{
		"the target back on the primary's spec: accepted, the target scaled down": {
			canary: failedV2(),
			objs:   []client.Object{podinfoTarget(2)},
			obs:    observed("v1", 0),
			want: actionWant{
				status: accepted,
				writes: []string{"patch Deployment/podinfo"},
				events: []string{"Normal " + v1alpha1.RevisionAcceptedReason},
			},
			check: func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
				if got := f.replicas("podinfo"); got != 0 {
					t.Errorf("target replicas %d, want 0", got)
				}
			},
		},
		"the target already at zero: nothing written": {
			canary: failedV2(),
			objs:   []client.Object{podinfoTarget(0)},
			obs:    observed("v1", 0),
			want: actionWant{
				status: accepted,
				events: []string{"Normal " + v1alpha1.RevisionAcceptedReason},
			},
		},
		"the scale write fails: an error, and no event saying it was accepted": {
			canary: failedV2(),
			objs:   []client.Object{podinfoTarget(2)},
			fail:   []string{"patch Deployment/podinfo"},
			obs:    observed("v1", 0),
			// The reconcile drops the status of a failed action
			// (keepProgressOf); the next one accepts the revision again.
			want: actionWant{err: injected, status: accepted, writes: []string{"patch Deployment/podinfo"}},
		},
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, _ rollout.Action) (ctrl.Result, error) {
		return r.acceptRevision(ctx, obj, obs)
	})
}
