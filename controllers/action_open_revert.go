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
	"errors"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/notifier"
)

// openRevert reverts the bad revision in its Git source and records the
// branch, commit and pull request in status.revert. A Git host that failed
// in a way a retry may fix (gitops.IsTransient: unreachable, a timeout, 408,
// 429, a 5xx, a moved branch) leaves the revert Retrying, tried again with
// backoff until it lands. A revert that cannot be made (not configured,
// refused credentials, nothing to revert, cannot be verified) is recorded
// as Failed and alerted, and not retried for that revision; a new request
// (serin revert) tries again.
func (r *CanaryReconciler) openRevert(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	st := &obj.Status
	req := gitops.RevertRequest{
		Canary:       obj.DeepCopy(),
		BadRevision:  st.LastAttemptedRevision,
		GoodRevision: st.LastPromotedRevision,
		Reason:       conditions.GetMessage(obj, meta.StalledCondition),
	}
	if err := r.releaseMembers(ctx, obj, obs, &req); err != nil {
		return ctrl.Result{}, err
	}
	res, err, done := r.reverts.result(ctx, client.ObjectKeyFromObject(obj), "revert", req.BadRevision,
		func(ctx context.Context) (gitops.RevertResult, error) { return r.Reverter.Revert(ctx, req) })
	if !done {
		return r.revertPending(obj), nil
	}
	if errors.Is(err, gitops.ErrBusy) {
		// Nothing recorded, the worker given back: asked again shortly.
		ctrl.LoggerFrom(ctx).Info("revert waits for its turn", "revision", st.LastAttemptedRevision, "reason", err.Error())
		return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
	}
	if v := obs.Requests.Revert; v != "" {
		st.HandledRequests.Revert = v
	}
	prev := st.Revert
	st.Revert = &v1alpha1.RevertStatus{
		Revision:       st.LastAttemptedRevision,
		Branch:         res.Branch,
		Commit:         res.Commit,
		PullRequestURL: res.PullRequestURL,
		State:          res.State,
		Message:        res.Message,
		Covered:        res.Covered,
	}
	if err != nil && gitops.IsTransient(err) {
		return r.retryRevert(ctx, obj, prev, err, obs.Now)
	}
	if err != nil {
		st.Revert.State = gitops.StateFailed
		st.Revert.Message = err.Error()
		if errors.Is(err, gitops.ErrNotConfigured) {
			st.Revert.Message = "spec.gitops.revert is set but this agent runs without GitOps revert (--gitops-revert): " + err.Error()
		}
		r.emit(ctx, obj, notifier.SeverityError, v1alpha1.RevertFailedReason, "revert of revision %s failed: %s", st.LastAttemptedRevision, st.Revert.Message)
		return ctrl.Result{}, nil
	}
	switch res.State {
	case gitops.StateMerged:
		r.emit(ctx, obj, notifier.SeverityInfo, v1alpha1.RevertMergedReason, "revert of revision %s already in Git: %s", st.LastAttemptedRevision, res.Message)
	case gitops.StateOpened:
		r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.RevertOpenedReason, "revert of revision %s proposed: %s", st.LastAttemptedRevision, res.PullRequestURL)
	default:
		r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.RevertPushedReason, "revert of revision %s pushed to %s as %s", st.LastAttemptedRevision, res.Branch, res.Commit)
	}
	return ctrl.Result{}, nil
}

// revertPending records that the revert of the revision runs (off the
// reconcile: revertJobs), keeping what a Retrying revert counted; its end
// reconciles the Canary, the requeue is a fallback.
func (r *CanaryReconciler) revertPending(obj *v1alpha1.Canary) ctrl.Result {
	st := &obj.Status
	pending := &v1alpha1.RevertStatus{Revision: st.LastAttemptedRevision, State: gitops.StatePending,
		Message: "reverting revision " + st.LastAttemptedRevision + " in Git"}
	if prev := st.Revert; prev != nil && prev.Revision == pending.Revision {
		pending.Attempts = prev.Attempts
		if prev.State == gitops.StatePending {
			pending.Message = prev.Message
		}
	}
	st.Revert = pending
	return ctrl.Result{RequeueAfter: time.Minute}
}

// retryRevert records a revert that failed in a way a retry may fix as
// Retrying, with its attempts and the time of the next, and alerts on the
// first failure only (one alert per outage, not one per attempt).
func (r *CanaryReconciler) retryRevert(ctx context.Context, obj *v1alpha1.Canary, prev *v1alpha1.RevertStatus, err error, now time.Time) (ctrl.Result, error) {
	st := &obj.Status
	attempts := int32(1)
	if prev != nil && prev.Revision == st.LastAttemptedRevision && (prev.State == gitops.StateRetrying || prev.State == gitops.StatePending) {
		attempts = prev.Attempts + 1
	}
	wait := rollout.GitRetryDelay(attempts)
	next := metav1.NewTime(now.Add(wait))
	st.Revert.State = gitops.StateRetrying
	st.Revert.Attempts = attempts
	st.Revert.NextAttemptTime = &next
	st.Revert.Message = fmt.Sprintf("attempt %d failed, next in %s: %s", attempts, wait, err.Error())
	ctrl.LoggerFrom(ctx).Info("revert failed, will retry", "revision", st.LastAttemptedRevision, "attempts", attempts, "after", wait.String(), "error", err.Error())
	if attempts == 1 {
		r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.RevertRetryingReason,
			"revert of revision %s failed, retrying with backoff: %s", st.LastAttemptedRevision, err.Error())
	}
	return ctrl.Result{RequeueAfter: wait}, nil
}
