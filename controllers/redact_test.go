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
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/internal/rollout"
)

// A revert that fails on a GitRepository whose URL holds credentials (a
// token query, userinfo), its error quoting the URL as net/http does:
// status.revert's message, the Kubernetes event and the notified event
// name the URL redacted, whatever the Reverter's error said.
func TestOpenRevert_NoSecretInStatusOrEvents(t *testing.T) {
	const raw = "https://user:SECRET@git.example/fleet/podinfo.git?token=SECRET123"
	const safe = "https://redacted@git.example/fleet/podinfo.git?token=redacted"
	failed := func(cause error) error {
		return fmt.Errorf("failed to clone branch main of %s: %w", raw, &url.Error{Op: "Get", URL: raw, Err: cause})
	}
	const why = "rolled back revision v2: failed checks threshold reached 2"
	stalled := metav1.Condition{Type: meta.StalledCondition, Status: metav1.ConditionTrue, Reason: v1alpha1.FailedReason}
	rolledBack := func(err error, want actionWant) actionCase {
		c := weightedPodinfo().Phase(v1alpha1.PhaseFailed).Applied("v2", "main@sha1:v2").Promoted("v1", "main@sha1:v1").Obj()
		conditions.MarkStalled(c, v1alpha1.FailedReason, "%s", why)
		want.conditions = []metav1.Condition{stalled}
		return actionCase{
			canary: c,
			obs:    observed("v2", 0),
			setup:  func(f *actionFixture) { f.r.Reverter = &fakeReverter{err: err} },
			want:   want,
			check: func(t *testing.T, f *actionFixture, obj *v1alpha1.Canary) {
				t.Helper()
				texts := []string{obj.Status.Revert.Message}
				for _, e := range f.recorded {
					texts = append(texts, e.Message)
				}
				f.notifier.mu.Lock()
				for _, e := range f.notifier.events {
					texts = append(texts, e.Message)
				}
				f.notifier.mu.Unlock()
				if len(texts) < 3 {
					t.Fatalf("texts %q: want the status, an event and a notification", texts)
				}
				for _, s := range texts {
					if strings.Contains(s, "SECRET") {
						t.Errorf("a secret is written: %s", s)
					}
					if !strings.Contains(s, safe) {
						t.Errorf("the repository is not named, redacted: %s", s)
					}
				}
			},
		}
	}
	cases := map[string]actionCase{
		"a permanent failure: Failed": rolledBack(failed(errors.New("x509: certificate signed by unknown authority")), actionWant{
			status: func(st *v1alpha1.CanaryStatus) {
				st.Revert = &v1alpha1.RevertStatus{Revision: "main@sha1:v2", State: gitops.StateFailed,
					Message: "failed to clone branch main of " + safe + `: Get "` + safe + `": x509: certificate signed by unknown authority`}
			},
			events: []string{"Warning " + v1alpha1.RevertFailedReason},
		}),
		"a transient failure: Retrying": rolledBack(failed(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), actionWant{
			status: func(st *v1alpha1.CanaryStatus) {
				st.Revert = &v1alpha1.RevertStatus{Revision: "main@sha1:v2", State: gitops.StateRetrying, Attempts: 1,
					NextAttemptTime: ptr.To(metav1.NewTime(actionNow.Add(5 * time.Second))),
					Message:         "attempt 1 failed, next in 5s: failed to clone branch main of " + safe + `: Get "` + safe + `": dial tcp: connection refused`}
			},
			events: []string{"Warning " + v1alpha1.RevertRetryingReason},
			result: ctrl.Result{RequeueAfter: 5 * time.Second},
		}),
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, _ rollout.Action) (ctrl.Result, error) {
		return openRevertToTheEnd(ctx, r, obj, obs)
	})
}

// Every Git job's error (a promotion's, a verdict read's, a commit
// status's) comes back redacted, whatever the work returned, and still
// wraps its cause.
func TestGitJobs_ErrorsComeBackRedacted(t *testing.T) {
	jobs := newGitJobs[int]()
	ended := make(chan struct{})
	jobs.notify = func(types.NamespacedName) { close(ended) }
	key := types.NamespacedName{Namespace: "apps", Name: "podinfo"}
	cause := &url.Error{Op: "Get", URL: "https://oauth2:SECRET@git.example/o/r.git", Err: syscall.ECONNRESET}
	work := func(context.Context) (int, error) { return 0, fmt.Errorf("failed to read the verdict: %w", cause) }
	if _, _, done := jobs.result(context.Background(), key, "verdict/production", "rev", work); done {
		t.Fatal("the first ask returned a result")
	}
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the job did not end")
	}
	_, err, done := jobs.result(context.Background(), key, "verdict/production", "rev", work)
	if !done || err == nil {
		t.Fatalf("result: done %v, error %v", done, err)
	}
	if strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "https://redacted@git.example/o/r.git") {
		t.Errorf("error %q, want the URL redacted", err)
	}
	if !errors.Is(err, syscall.ECONNRESET) || !gitops.IsTransient(err) {
		t.Errorf("the redacted error lost its cause: %v", err)
	}
}
