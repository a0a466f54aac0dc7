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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/routing"
)

// halt freezes a promotion whose primary failed: it writes nothing, not
// even the routes, so that the canary keeps serving; it ends the rollout
// as failed and asks for the next decision at once.
func TestHalt(t *testing.T) {
	const reason = "primary podinfo-primary exceeded its progress deadline"
	haltedWant := actionWant{
		result:     ctrl.Result{RequeueAfter: 10 * time.Millisecond},
		status:     func(st *v1alpha1.CanaryStatus) { st.Phase, st.LastTransitionTime = v1alpha1.PhaseHalted, at(actionNow) },
		conditions: []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.HaltedReason)},
		events:     []string{"Warning " + v1alpha1.HaltedReason},
		ended:      "failed",
		records:    []string{"v2 Halted (promotion of revision v2 halted, canary kept serving: " + reason + ")"},
	}
	saysWhy := func(t *testing.T, _ *actionFixture, obj *v1alpha1.Canary) {
		if msg := obj.Status.Conditions[0].Message; !strings.Contains(msg, "revision v2") || !strings.Contains(msg, reason) {
			t.Errorf("Ready message %q names neither the revision nor the reason", msg)
		}
	}
	cases := map[string]actionCase{
		"the primary failed while promoting: routing frozen at the canary's weight": {
			canary: weightedPodinfo().Phase(v1alpha1.PhasePromoting).Applied("v2", "main@sha1:v2").Weight(50).Obj(),
			objs:   []client.Object{podinfoTarget(2)},
			routes: weights(routing.Canary(50)),
			obs:    observed("v2", 50),
			action: rollout.Halt{Reason: reason},
			want:   haltedWant,
			check:  saysWhy,
		},
		"the routes cannot be reached: it halts all the same, having nothing to write": {
			canary:     weightedPodinfo().Phase(v1alpha1.PhaseFinalising).Applied("v2", "main@sha1:v2").Weight(20).Obj(),
			routes:     weights(routing.Canary(20)),
			routerDown: true,
			obs:        observed("v2", 20),
			action:     rollout.Halt{Reason: reason},
			want:       haltedWant,
			check:      saysWhy,
		},
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, a rollout.Action) (ctrl.Result, error) {
		return r.halt(ctx, obj, obs, a.(rollout.Halt))
	})
}
