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
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
)

// completePromotion scales the canary down once the primary serves all
// traffic, and only then records the revision as promoted, ends the
// rollout as Succeeded and calls the post-rollout hooks, off the reconcile.
func TestCompletePromotion(t *testing.T) {
	// finalising is the row of a Canary whose primary serves v2, with a
	// post-rollout hook at hookURL ("": none).
	finalising := func(hookURL string, want actionWant) actionCase {
		c := weightedPodinfo().Phase(v1alpha1.PhaseFinalising).Applied("v2", "main@sha1:v2").Promoted("v1", "main@sha1:v1").Checks(0, 1)
		if hookURL != "" {
			c.Webhook(v1alpha1.CanaryWebhook{Name: "notify-cmdb", Type: v1alpha1.PostRolloutHook, URL: hookURL})
		}
		return actionCase{canary: c.Obj(), objs: []client.Object{podinfoTarget(2)}, obs: observed("v2", 0), want: want}
	}
	succeeded := actionWant{
		status: func(st *v1alpha1.CanaryStatus) {
			st.LastPromotedSpec, st.LastPromotedRevision = "v2", "main@sha1:v2"
			st.FailedChecks = 0
			st.Phase, st.LastTransitionTime = v1alpha1.PhaseSucceeded, at(actionNow)
		},
		conditions: []metav1.Condition{ready(metav1.ConditionTrue, v1alpha1.SucceededReason)},
		writes:     []string{"patch Deployment/podinfo"},
		events:     []string{"Normal " + v1alpha1.PromotedReason},
		ended:      "succeeded",
		records:    []string{"v2 Succeeded (revision v2 promoted)"},
		// Decided again at once: the wave's soak, whatever the kind.
		result: ctrl.Result{RequeueAfter: 10 * time.Millisecond},
	}

	promoted := finalising("", succeeded)
	promoted.check = func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
		if got := f.replicas("podinfo"); got != 0 {
			t.Errorf("target replicas %d, want 0", got)
		}
	}

	passingHook, passed := hookServer(t, http.StatusOK, nil)
	hooked := finalising(passingHook, succeeded)
	hooked.check = func(t *testing.T, _ *actionFixture, _ *v1alpha1.Canary) {
		p := awaitCall(t, passed)
		if p.Name != "podinfo" || p.Phase != string(v1alpha1.PhaseSucceeded) || p.Checksum != "v2" || p.Type != string(v1alpha1.PostRolloutHook) {
			t.Errorf("post-rollout payload %+v, want podinfo Succeeded at v2", p)
		}
	}

	// The failing hook answers once the action's own events are checked.
	answer := make(chan struct{})
	failingHook, _ := hookServer(t, http.StatusInternalServerError, answer)
	hookFailed := finalising(failingHook, succeeded)
	hookFailed.check = func(t *testing.T, f *actionFixture, obj *v1alpha1.Canary) {
		close(answer)
		if e := f.awaitEvent(); e.Type != "Warning" || e.Reason != v1alpha1.PostRolloutFailedReason {
			t.Errorf("event %+v, want a PostRolloutFailed warning", e)
		}
		if obj.Status.Phase != v1alpha1.PhaseSucceeded {
			t.Errorf("phase %s after the hook failed", obj.Status.Phase)
		}
	}

	notCalledHook, notCalled := hookServer(t, http.StatusOK, nil)
	scaleFailed := finalising(notCalledHook, actionWant{err: injected, writes: []string{"patch Deployment/podinfo"}})
	scaleFailed.fail = []string{"patch Deployment/podinfo"}
	scaleFailed.check = func(t *testing.T, _ *actionFixture, _ *v1alpha1.Canary) {
		select {
		case p := <-notCalled:
			t.Errorf("post-rollout hook called with %+v before the promotion completed", p)
		case <-time.After(200 * time.Millisecond):
		}
	}

	cases := map[string]actionCase{
		"the primary serves: the canary scaled down, v2 promoted":    promoted,
		"a post-rollout hook: called with the promoted revision":     hooked,
		"a post-rollout hook fails: a warning, the promotion stands": hookFailed,
		"the scale write fails: not promoted yet, no hook called":    scaleFailed,
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, _ rollout.Action) (ctrl.Result, error) {
		return r.completePromotion(ctx, obj, obs)
	})
}
