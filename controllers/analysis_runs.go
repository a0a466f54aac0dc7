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
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/serin-dev/serin/analysis"
	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
)

// No webhook or metric query runs inside Reconcile: a reconcile that finds
// an analysis step (or a gate) due asks the analysis runner for its outcome
// by a key naming the step. The first ask starts the step's calls in the
// runner's bounded pool and returns; when they are done, the runner
// enqueues the Canary and the next reconcile reads the outcome and acts on
// it as a synchronous step did. A slow or hanging dependency never holds a
// reconcile worker; it holds an analysis worker for a second at most, then
// a place among the steps in flight until the step deadline.

// analysisResults is the source that reconciles a Canary whose analysis
// work has an outcome.
func (r *CanaryReconciler) analysisResults() source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		r.Analysis.OnDone(func(key types.NamespacedName) {
			q.Add(reconcile.Request{NamespacedName: key})
		})
		return nil
	})
}

// analysisKey names the analysis work a Canary asks for: what (a step or a
// gate) for which revision, and the status it was asked from. Any
// transition (phase, weight, iteration, failed check, a new time) or spec
// change makes another key, so an outcome never outlives its step.
func analysisKey(what string, obj *v1alpha1.Canary, weight int, revision string) string {
	st := &obj.Status
	at := ""
	if st.LastTransitionTime != nil {
		at = st.LastTransitionTime.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("%s generation=%d revision=%s phase=%s at=%s weight=%d iterations=%d failed=%d",
		what, obj.Generation, revision, st.Phase, at, weight, st.Iterations, st.FailedChecks)
}

// analysisPending is the result of a reconcile whose analysis runs:
// nothing changes; the outcome enqueues the Canary, and the requeue is
// only a fallback.
func (r *CanaryReconciler) analysisPending(ctx context.Context, what string) (ctrl.Result, error) {
	ctrl.LoggerFrom(ctx).V(1).Info("analysis running", "work", what)
	return ctrl.Result{RequeueAfter: r.Analysis.StepTimeout() + time.Second}, nil
}

// confirmRollout asks the runner for the confirm-rollout gate of the
// revision obs found, with the payload's checksum that revision; asked is
// false while the gate's webhooks run, closed names the first that did not
// answer 2xx.
func (r *CanaryReconciler) confirmRollout(obj *v1alpha1.Canary, obs rollout.Observation) (closed string, asked bool) {
	snapshot := obj.DeepCopy()
	snapshot.Status.LastAppliedSpec = obs.Target.SpecHash
	work := analysis.Work{Canary: snapshot, At: obs.Now, Gate: analysis.Hooks(obj, v1alpha1.ConfirmRolloutHook)}
	out, state := r.Analysis.Result(client.ObjectKeyFromObject(obj), analysisKey("confirm-rollout", obj, obs.CanaryWeight, obs.Target.SpecHash), work)
	return out.GateClosed, state == analysis.Done
}

// stepWork is what the step due now calls: the rollback hooks; the
// pre-rollout hooks before any traffic reached the canary, else the rollout
// hooks and the metric checks; and the gate of what a pass leads to.
func stepWork(obj *v1alpha1.Canary, obs rollout.Observation) analysis.Work {
	w := analysis.Work{Canary: obj.DeepCopy(), At: obs.Now, Rollback: analysis.Hooks(obj, v1alpha1.RollbackHook)}
	if firstStep(obj, obs) {
		w.Hooks = analysis.Hooks(obj, v1alpha1.PreRolloutHook)
	} else {
		w.Hooks = analysis.Hooks(obj, v1alpha1.RolloutHook)
		if obj.Spec.Analysis != nil {
			w.Metrics = obj.Spec.Analysis.Metrics
		}
	}
	switch rollout.PlanStep(obj, obs.CanaryWeight, obj.Status.Iterations).Kind {
	case rollout.IncreaseWeight:
		w.Gate = analysis.Hooks(obj, v1alpha1.ConfirmTrafficIncreaseHook)
	case rollout.ReadyToPromote:
		w.Gate = analysis.Hooks(obj, v1alpha1.ConfirmPromotionHook)
	}
	return w
}

// firstStep reports whether no request has reached the canary yet.
func firstStep(obj *v1alpha1.Canary, obs rollout.Observation) bool {
	return obs.CanaryWeight == 0 && obj.Status.Iterations == 0
}
