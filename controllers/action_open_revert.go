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
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/notifier"
)

// openRevert reverts the bad revision in its Git source and records the
// branch, commit and pull request in status.revert. A revert that cannot be
// made (not configured, nothing to revert, cannot be verified) is recorded
// as Failed and alerted, and not retried for that revision; a new request
// (serin revert) tries again.
func (r *CanaryReconciler) openRevert(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	st := &obj.Status
	reason := conditions.GetMessage(obj, meta.StalledCondition)
	res, err := r.Reverter.Revert(ctx, gitops.RevertRequest{
		Canary:       obj,
		BadRevision:  st.LastAttemptedRevision,
		GoodRevision: st.LastPromotedRevision,
		Reason:       reason,
	})
	if errors.Is(err, gitops.ErrBusy) {
		// Nothing recorded, the worker given back: asked again shortly.
		ctrl.LoggerFrom(ctx).Info("revert waits for its turn", "revision", st.LastAttemptedRevision, "reason", err.Error())
		return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
	}
	if v := obs.Requests.Revert; v != "" {
		st.HandledRequests.Revert = v
	}
	st.Revert = &v1alpha1.RevertStatus{
		Revision:       st.LastAttemptedRevision,
		Branch:         res.Branch,
		Commit:         res.Commit,
		PullRequestURL: res.PullRequestURL,
		State:          res.State,
		Message:        res.Message,
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
