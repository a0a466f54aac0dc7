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
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/notifier"
)

// A verdict (Succeeded, Failed, Halted) owes its commit a status through
// the commit-status Providers of spec.alerts: it is what the previous
// stage of a wave reads, and a pull request's check. The notifier's queue
// is best effort (a bounded queue, 15 s of retries, lost on restart), so
// the verdict's status is kept in status.commitStatus until each Provider
// acknowledged it, delivered off the reconcile workers and retried with
// the reverts' backoff, across restarts of the agent.

// commitStatusJobs deliver the Canaries' owed commit statuses: the
// Providers that did not take it.
type commitStatusJobs = gitJobs[[]string]

// oweCommitStatus records the commit status a verdict event owes, when
// the agent can deliver it and the Canary's alerts name a Provider that
// admits it. A newer verdict replaces an older one not yet delivered: a
// commit carries the Canary's last word.
func (r *CanaryReconciler) oweCommitStatus(obj *v1alpha1.Canary, e notifier.Event) {
	d, ok := r.Notifier.(notifier.CommitStatusDeliverer)
	if !ok || !notifier.IsVerdict(e) || !strings.Contains(e.Revision, "sha1:") {
		return
	}
	providers := d.CommitStatusProviders(obj, e)
	if len(providers) == 0 {
		return
	}
	obj.Status.CommitStatus = &v1alpha1.CommitStatusDelivery{
		Revision: e.Revision, Phase: e.Phase, Severity: string(e.Severity), Message: e.Message, Providers: providers,
	}
}

// deliverCommitStatus delivers the owed commit status when it is due: it
// starts the delivery job, or records the job's outcome (the Providers
// that did not take it are tried again with backoff, with one warning per
// outage). It returns when to look again (0: nothing waits).
func (r *CanaryReconciler) deliverCommitStatus(ctx context.Context, obj *v1alpha1.Canary) time.Duration {
	owed := obj.Status.CommitStatus
	d, ok := r.Notifier.(notifier.CommitStatusDeliverer)
	if !ok || owed == nil || len(owed.Providers) == 0 {
		return 0
	}
	now := r.now()
	if next := owed.NextAttemptTime; next != nil && now.Before(next.Time) {
		return next.Sub(now)
	}
	snapshot := obj.DeepCopy()
	sent := *owed.DeepCopy()
	e := notifier.Event{Severity: notifier.Severity(sent.Severity), Reason: string(sent.Phase), Message: sent.Message, Phase: sent.Phase, Revision: sent.Revision, Final: true}
	failed, err, done := r.commitStatuses.result(ctx, client.ObjectKeyFromObject(obj), "commit-status",
		fmt.Sprintf("%s/%s#%d", sent.Revision, sent.Phase, sent.Attempts),
		func(ctx context.Context) ([]string, error) {
			var failed []string
			var errs []error
			for _, p := range sent.Providers {
				if err := d.DeliverCommitStatus(ctx, snapshot, p, e, now); err != nil {
					failed = append(failed, p)
					errs = append(errs, fmt.Errorf("%s: %w", p, err))
				}
			}
			return failed, errors.Join(errs...)
		})
	if !done {
		return time.Minute // the job's end reconciles
	}
	if owed.Revision != sent.Revision || owed.Phase != sent.Phase {
		return time.Millisecond // a newer verdict came meanwhile
	}
	if err == nil {
		owed.Providers, owed.Attempts, owed.NextAttemptTime, owed.LastError = nil, 0, nil, ""
		return 0
	}
	owed.Providers = failed
	owed.Attempts++
	wait := rollout.GitRetryDelay(owed.Attempts)
	at := metav1.NewTime(now.Add(wait))
	owed.NextAttemptTime, owed.LastError = &at, err.Error()
	if owed.Attempts == 1 {
		r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.CommitStatusRetryingReason,
			"commit status %s of %s not delivered, retrying with backoff: %s", sent.Phase, sent.Revision, err.Error())
	}
	return wait
}
