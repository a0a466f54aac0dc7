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

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/notifier"
	"github.com/serin-dev/serin/routing"
)

// restartAnalysis sends all traffic back to the primary and starts the
// analysis of the target's new revision from the first step.
func (r *CanaryReconciler) restartAnalysis(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	return r.restartAnalysisBecause(ctx, obj, obs, fmt.Sprintf("new revision %s detected during the analysis of %s",
		obs.Target.SpecHash, obj.Status.LastAppliedSpec))
}

// supersedeRelease restarts the analysis of a member whose release another
// member left for a newer one, in that release: it is never promoted into
// a release its peers left.
func (r *CanaryReconciler) supersedeRelease(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, a rollout.SupersedeRelease) (ctrl.Result, error) {
	return r.restartAnalysisBecause(ctx, obj, obs, fmt.Sprintf("release %s superseded by release %s (%s moved on to it)",
		releaseOf(obj), a.Release, a.By))
}

// restartAnalysisBecause sends all traffic back to the primary and starts
// the analysis of the target's revision from the first step, in the
// group's newest release, saying why.
func (r *CanaryReconciler) restartAnalysisBecause(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, why string) (ctrl.Result, error) {
	if err := r.setRoutes(ctx, obj, routing.AllPrimary); err != nil {
		return ctrl.Result{}, err
	}
	st := &obj.Status
	r.emit(ctx, obj, notifier.SeverityInfo, v1alpha1.AnalysisRestartedReason,
		"%s: traffic back to the primary, analysis restarted", why)
	st.LastAppliedSpec = obs.Target.SpecHash
	st.LastAttemptedRevision = obs.Target.Revision
	st.CanaryWeight, st.FailedChecks, st.Iterations = 0, 0, 0
	if pending := joinRelease(obj, obs); len(pending) > 0 {
		return r.waitForDependencies(ctx, obj, obs, pending, false)
	}
	transition(obj, v1alpha1.PhaseProgressing, obs.Now, v1alpha1.ProgressingReason, "analysis restarted for revision %s", obs.Target.SpecHash)
	return ctrl.Result{RequeueAfter: requeueAtNextStep(obj, obs.Now)}, nil
}
