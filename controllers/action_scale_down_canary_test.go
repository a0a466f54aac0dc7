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

// scaleDownCanary (and scaleTarget, which the actions that end a rollout
// share) scales the target to zero, writing only when it runs, and never
// touches the workloads behind a Service target.
func TestScaleDownCanary(t *testing.T) {
	scaledTo := func(want int32) func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
		return func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
			if got := f.replicas("podinfo"); got != want {
				t.Errorf("target replicas %d, want %d", got, want)
			}
		}
	}
	cases := map[string]actionCase{
		"the target runs: scaled to zero": {
			canary: podinfoCanary().Phase(v1alpha1.PhaseSucceeded).Obj(),
			objs:   []client.Object{podinfoTarget(3)},
			want:   actionWant{writes: []string{"patch Deployment/podinfo"}},
			check:  scaledTo(0),
		},
		"the target is at zero: nothing written": {
			canary: podinfoCanary().Phase(v1alpha1.PhaseSucceeded).Obj(),
			objs:   []client.Object{podinfoTarget(0)},
			check:  scaledTo(0),
		},
		"the target is gone": {
			canary: podinfoCanary().Phase(v1alpha1.PhaseSucceeded).Obj(),
			want:   actionWant{err: notFound},
		},
		"the scale write fails: the target keeps running": {
			canary: podinfoCanary().Phase(v1alpha1.PhaseSucceeded).Obj(),
			objs:   []client.Object{podinfoTarget(3)},
			fail:   []string{"patch Deployment/podinfo"},
			want:   actionWant{err: injected, writes: []string{"patch Deployment/podinfo"}},
			check:  scaledTo(3),
		},
		"a Service target: the workloads behind it are not serin's": {
			canary: podinfoCanary().Target("v1", "Service", "podinfo").Phase(v1alpha1.PhaseSucceeded).Obj(),
			objs:   []client.Object{podinfoTarget(3)},
			check:  scaledTo(3),
		},
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, _ rollout.Observation, _ rollout.Action) (ctrl.Result, error) {
		return r.scaleDownCanary(ctx, obj)
	})
}
