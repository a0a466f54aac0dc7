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

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/routing"
)

// shield takes all traffic off the side with no pod ready, onto the other
// one, and records the weight; the phase and its clock stay as they are.
func TestShield(t *testing.T) {
	darkPrimary := rollout.Shield{Side: rollout.PrimarySide, Reason: "podinfo-primary has no pod ready"}
	darkCanary := rollout.Shield{Side: rollout.CanarySide, Reason: "podinfo has no pod ready"}
	// shielding is the row of a promotion at weight whose routes carry
	// routes (none when nil) and that a shield takes off a side.
	shielding := func(weight int, routes *routing.Weights, a rollout.Shield, want actionWant) actionCase {
		return actionCase{
			canary: weightedPodinfo().Phase(v1alpha1.PhasePromoting).Applied("v2", "main@sha1:v2").Weight(weight).TransitionedAt(actionNow.Add(-time.Minute)).Obj(),
			objs:   []client.Object{podinfoTarget(0)},
			routes: routes,
			obs:    observed("v2", weight),
			action: a,
			want:   want,
		}
	}
	// shielded is what a shield that wrote written leaves.
	shielded := func(weight int, written ...routing.Weights) actionWant {
		return actionWant{
			result:  ctrl.Result{RequeueAfter: 10 * time.Millisecond},
			status:  func(st *v1alpha1.CanaryStatus) { st.CanaryWeight = weight },
			weights: written,
			events:  []string{"Warning " + v1alpha1.ShieldedReason},
		}
	}
	down := shielding(50, weights(routing.Canary(50)), darkPrimary, routesDown)
	down.routerDown = true
	cases := map[string]actionCase{
		"the primary has no pod ready: all traffic to the canary": shielding(50, weights(routing.Canary(50)), darkPrimary,
			shielded(100, routing.Canary(100))),
		"the canary has no pod ready: all traffic to the primary": shielding(50, weights(routing.Canary(50)), darkCanary,
			shielded(0, routing.AllPrimary)),
		"the routes are already shielded: no route write": shielding(100, weights(routing.Canary(100)), darkPrimary,
			shielded(100)),
		"the routes cannot be written: an error, no event, the weight as it was": down,
		"the routes are gone": shielding(50, nil, darkPrimary, actionWant{err: errContaining("not found")}),
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, _ rollout.Observation, a rollout.Action) (ctrl.Result, error) {
		return r.shield(ctx, obj, a.(rollout.Shield))
	})
}
