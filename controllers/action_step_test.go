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
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/routing"
)

// step runs one analysis step in the analysis runner (hooks and metric
// checks; the first call only queues them) and acts on its outcome: a
// failure counts a failed check, a rollback hook rolls back, a pass
// increases the weight, counts an iteration or promotes, each behind its
// gate. The transition is dated when the step began.
func TestStep(t *testing.T) {
	// analysing is v2 under analysis at weight after iterations, failed
	// checks failed so far.
	analysing := func(c *testobj.CanaryWrapper, phase v1alpha1.CanaryPhase, weight, iterations, failed int) *testobj.CanaryWrapper {
		return c.Phase(phase).Applied("v2", "main@sha1:v2").Promoted("v1", "main@sha1:v1").Weight(weight).Checks(iterations, failed).
			TransitionedAt(actionNow.Add(-10 * time.Second))
	}
	hook := func(hookType v1alpha1.HookType, status int) v1alpha1.CanaryWebhook {
		url, _ := hookServer(t, status, nil)
		return v1alpha1.CanaryWebhook{Name: string(hookType) + "-hook", Type: hookType, URL: url}
	}
	successRate := v1alpha1.CanaryMetric{Name: v1alpha1.RequestSuccessRateCheck, ThresholdRange: &v1alpha1.ThresholdRange{Min: ptr.To(99.0)}}
	prometheus := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000,"99.5"]}]}}`)
	}))
	t.Cleanup(prometheus.Close)

	// row is a step of c at weight, the target at v2 and the primary at v1.
	row := func(c *v1alpha1.Canary, weight int, want actionWant) actionCase {
		return actionCase{
			canary:   c,
			objs:     []client.Object{testobj.MakeDeployment("podinfo", "apps").Replicas(2).Image(newImage).Obj(), primaryOf(c, podinfoTarget(2), "v1")},
			routes:   weights(routing.Canary(weight)),
			obs:      observed("v2", weight),
			analysed: c.Spec.Analysis != nil && (len(c.Spec.Analysis.Webhooks) > 0 || len(c.Spec.Analysis.Metrics) > 0),
			want:     want,
		}
	}
	nextStep := ctrl.Result{RequeueAfter: 10*time.Second + time.Millisecond}
	progressing := []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.ProgressingReason)}
	// advanced is a pass that moved to weight, or to one more iteration.
	advanced := func(weight, iterations int, written []routing.Weights, event string) actionWant {
		return actionWant{
			result: nextStep,
			status: func(st *v1alpha1.CanaryStatus) {
				st.CanaryWeight, st.Iterations, st.LastTransitionTime = weight, iterations, at(actionNow)
			},
			conditions: progressing,
			weights:    written,
			// The step is in status.analyses; no Kubernetes Event.
			notified: []string{event},
		}
	}
	// failedCheck is a step that counted a failed check, the failed-th.
	failedCheck := func(failed int, result ctrl.Result) actionWant {
		return actionWant{
			result:     result,
			status:     func(st *v1alpha1.CanaryStatus) { st.FailedChecks, st.LastTransitionTime = failed, at(actionNow) },
			conditions: progressing,
			events:     []string{"Warning " + v1alpha1.CheckFailedReason},
		}
	}
	promoted := func(weight int, written []routing.Weights) actionWant {
		return actionWant{
			result: ctrl.Result{RequeueAfter: 600 * time.Second},
			status: func(st *v1alpha1.CanaryStatus) {
				st.Phase, st.CanaryWeight, st.LastTransitionTime = v1alpha1.PhasePromoting, weight, at(actionNow)
			},
			conditions: progressing,
			weights:    written,
			writes:     []string{"create ControllerRevision/podinfo-primary-v2", "update Deployment/podinfo-primary"},
			events:     []string{"Normal " + v1alpha1.PromotingReason},
		}
	}
	waitingPromotion := func(events ...string) actionWant {
		return actionWant{
			result: nextStep,
			status: func(st *v1alpha1.CanaryStatus) {
				st.Phase, st.LastTransitionTime = v1alpha1.PhaseWaitingPromotion, at(actionNow)
			},
			conditions: []metav1.Condition{ready(metav1.ConditionFalse, string(v1alpha1.PhaseWaitingPromotion))},
			events:     events,
		}
	}
	with := func(c *testobj.CanaryWrapper, hooks ...v1alpha1.CanaryWebhook) *testobj.CanaryWrapper {
		for _, h := range hooks {
			c.Webhook(h)
		}
		return c
	}
	weighted := func(weight, failed int, hooks ...v1alpha1.CanaryWebhook) *v1alpha1.Canary {
		return with(analysing(weightedPodinfo(), v1alpha1.PhaseProgressing, weight, 0, failed), hooks...).Obj()
	}

	passingMetric := row(weighted(25, 0), 25, advanced(50, 0, []routing.Weights{routing.Canary(50)}, v1alpha1.WeightIncreasedReason))
	passingMetric.canary.Spec.Analysis.Metrics = []v1alpha1.CanaryMetric{successRate}
	passingMetric.analysed = true
	passingMetric.setup = func(f *actionFixture) { f.checks.MetricsServer = prometheus.URL }
	passingMetric.check = func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
		if msgs := f.notifier.messages(); len(msgs) != 1 || !strings.Contains(msgs[0], "advance podinfo canary weight 50: checks passed (") {
			t.Errorf("notified %q, want the weight increase naming the checks that passed", msgs)
		}
	}
	failingMetric := row(weighted(25, 0), 25, failedCheck(1, nextStep))
	failingMetric.canary.Spec.Analysis.Metrics = []v1alpha1.CanaryMetric{successRate}
	failingMetric.analysed = true
	failingMetric.check = func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
		if len(f.recorded) != 1 || !strings.HasPrefix(f.recorded[0].Message, "halting advancement: metric request-success-rate") {
			t.Errorf("events %+v, want the metric's failure", f.recorded)
		}
	}
	rolledBack := row(weighted(25, 0, hook(v1alpha1.RollbackHook, http.StatusOK)), 25, actionWant{
		status: func(st *v1alpha1.CanaryStatus) {
			st.Phase, st.CanaryWeight, st.LastTransitionTime = v1alpha1.PhaseFailed, 0, at(actionNow)
		},
		conditions: []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.FailedReason)},
		weights:    []routing.Weights{routing.AllPrimary},
		events:     []string{"Warning " + v1alpha1.RolledBackReason},
		ended:      "failed",
		result:     ctrl.Result{RequeueAfter: 100 * time.Millisecond},
	})
	rolledBack.check = eventSays("canary podinfo rolled back: rollback requested by webhook rollback-hook")
	// A step's rollback webhook never rolls back once the promotion began:
	// then the primary is the copy that may be broken.
	haltedInPromotion := row(with(analysing(weightedPodinfo(), v1alpha1.PhasePromoting, 25, 0, 0), hook(v1alpha1.RollbackHook, http.StatusOK)).Obj(), 25, actionWant{
		result: ctrl.Result{RequeueAfter: 10 * time.Millisecond},
		status: func(st *v1alpha1.CanaryStatus) {
			st.Phase, st.LastTransitionTime = v1alpha1.PhaseHalted, at(actionNow)
		},
		conditions: []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.HaltedReason)},
		events:     []string{"Warning " + v1alpha1.HaltedReason},
		ended:      "failed",
	})
	down := row(weighted(0, 0), 0, routesDown)
	down.routerDown = true
	held := row(weighted(25, 0, hook(v1alpha1.ConfirmTrafficIncreaseHook, http.StatusForbidden)), 25, actionWant{
		result:     nextStep,
		status:     func(st *v1alpha1.CanaryStatus) { st.LastTransitionTime = at(actionNow) },
		conditions: progressing,
	})
	preRollout := row(weighted(0, 0, hook(v1alpha1.PreRolloutHook, http.StatusInternalServerError)), 0, failedCheck(1, nextStep))
	preRollout.check = func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
		if len(f.recorded) != 1 || !strings.HasPrefix(f.recorded[0].Message, "pre-rollout check failed: ") {
			t.Errorf("events %+v, want the pre-rollout hook's failure", f.recorded)
		}
	}
	blueGreen := func(iterations int) *v1alpha1.Canary {
		return analysing(podinfoCanary(), v1alpha1.PhaseProgressing, 0, iterations, 0).Obj()
	}

	// The last blue/green iteration counts all iterations done, and sends
	// all traffic to the canary before the primary rolls.
	lastIteration := row(blueGreen(2), 0, promoted(100, []routing.Weights{routing.Canary(100)}))
	promotedStatus := lastIteration.want.status
	lastIteration.want.status = func(st *v1alpha1.CanaryStatus) { promotedStatus(st); st.Iterations = 3 }

	cases := map[string]actionCase{
		"the first step, nothing to call: weight 25": row(weighted(0, 0), 0,
			advanced(25, 0, []routing.Weights{routing.Canary(25)}, v1alpha1.WeightIncreasedReason)),
		"a metric check passes at 25: weight 50":          passingMetric,
		"at the maximum weight: promoted, weight kept":    row(weighted(50, 0), 50, promoted(50, nil)),
		"blue/green: one more iteration":                  row(blueGreen(1), 0, advanced(0, 2, nil, v1alpha1.IterationReason)),
		"blue/green, the last iteration: all to canary":   lastIteration,
		"a rollout hook fails: one failed check":          row(weighted(25, 0, hook(v1alpha1.RolloutHook, http.StatusInternalServerError)), 25, failedCheck(1, nextStep)),
		"the threshold reached: decided again at once":    row(weighted(25, 1, hook(v1alpha1.RolloutHook, http.StatusInternalServerError)), 25, failedCheck(2, ctrl.Result{RequeueAfter: 10 * time.Millisecond})),
		"a pre-rollout hook fails before any traffic":     preRollout,
		"a metric check fails: halting advancement":       failingMetric,
		"a rollback hook answers: rolled back":            rolledBack,
		"a rollback hook while promoting: halted":         haltedInPromotion,
		"confirm-traffic-increase closed: weight stays":   held,
		"confirm-promotion closed: WaitingPromotion":      row(weighted(50, 0, hook(v1alpha1.ConfirmPromotionHook, http.StatusForbidden)), 50, waitingPromotion("Normal "+v1alpha1.WaitingPromotionReason)),
		"confirm-promotion still closed: no second event": row(with(analysing(weightedPodinfo(), v1alpha1.PhaseWaitingPromotion, 50, 0, 0), hook(v1alpha1.ConfirmPromotionHook, http.StatusForbidden)).Obj(), 50, waitingPromotion()),
		"the weight cannot be written: no event":          down,
	}
	// Each step is recorded in status.analyses, with its weight, its
	// checks' values against their ranges and its webhooks' verdicts.
	records := map[string][]string{
		"a metric check fails: halting advancement":       {"v2: 25 Failed [request-success-rate \"\" (min 99) Failed]"},
		"a metric check passes at 25: weight 50":          {"v2: 25 Passed [request-success-rate \"99.5\" (min 99) Passed]"},
		"a pre-rollout hook fails before any traffic":     {"v2: 0 Failed [pre-rollout-hook (pre-rollout) Failed]"},
		"a rollback hook answers: rolled back":            {"v2 Failed (rolled back revision v2: rollback requested by webhook rollback-hook): 25 Rollback [rollback-hook (rollback) Rollback]"},
		"a rollback hook while promoting: halted":         {"v2 Halted (promotion of revision v2 halted, canary kept serving: rollback requested by webhook rollback-hook (no rollback during promotion)): 25 Rollback [rollback-hook (rollback) Rollback]"},
		"a rollout hook fails: one failed check":          {"v2: 25 Failed [rollout-hook (rollout) Failed]"},
		"at the maximum weight: promoted, weight kept":    {"v2: 50 Passed"},
		"blue/green, the last iteration: all to canary":   {"v2: 0 Passed"},
		"blue/green: one more iteration":                  {"v2: 0 Passed"},
		"confirm-promotion closed: WaitingPromotion":      {"v2: 50 Waiting [confirm-promotion-hook (confirm-promotion) Waiting]"},
		"confirm-promotion still closed: no second event": {"v2: 50 Waiting [confirm-promotion-hook (confirm-promotion) Waiting]"},
		"confirm-traffic-increase closed: weight stays":   {"v2: 25 Waiting [confirm-traffic-increase-hook (confirm-traffic-increase) Waiting]"},
		"the first step, nothing to call: weight 25":      {"v2: 0 Passed"},
		"the threshold reached: decided again at once":    {"v2: 25 Failed [rollout-hook (rollout) Failed]"},
		"the weight cannot be written: no event":          {"v2: 0 Passed"},
	}
	for name, tc := range cases {
		want, ok := records[name]
		if !ok {
			t.Fatalf("case %q: no analysis record expected", name)
		}
		tc.want.records = want
		cases[name] = tc
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, _ rollout.Action) (ctrl.Result, error) {
		return r.step(ctx, obj, obs)
	})
}
