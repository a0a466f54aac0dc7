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
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/internal/rollout"
)

// fakeReverter answers every revert with its result and error, and keeps
// the requests.
type fakeReverter struct {
	result   gitops.RevertResult
	err      error
	requests []gitops.RevertRequest
}

func (r *fakeReverter) Revert(_ context.Context, req gitops.RevertRequest) (gitops.RevertResult, error) {
	r.requests = append(r.requests, req)
	return r.result, r.err
}

// openRevert asks the Reverter to revert the bad revision in Git and
// records what it did in status.revert, with an event; a revert that
// cannot be made is recorded as Failed and alerted, not retried. A busy
// Reverter records nothing: the revert is asked again shortly.
func TestOpenRevert(t *testing.T) {
	const why = "rolled back revision v2: failed checks threshold reached 2"
	stalled := metav1.Condition{Type: meta.StalledCondition, Status: metav1.ConditionTrue, Reason: v1alpha1.FailedReason}
	// rolledBack is the Canary that rolled v2 back, with a reverter that
	// answers result and err.
	rolledBack := func(result gitops.RevertResult, err error, want actionWant) actionCase {
		c := weightedPodinfo().Phase(v1alpha1.PhaseFailed).Applied("v2", "main@sha1:v2").Promoted("v1", "main@sha1:v1").Obj()
		conditions.MarkStalled(c, v1alpha1.FailedReason, "%s", why)
		want.conditions = []metav1.Condition{stalled}
		reverter := &fakeReverter{result: result, err: err}
		return actionCase{
			canary: c,
			obs:    observed("v2", 0),
			setup:  func(f *actionFixture) { f.r.Reverter = reverter },
			want:   want,
			check: func(t *testing.T, _ *actionFixture, obj *v1alpha1.Canary) {
				// The request holds a copy of the Canary as it was asked.
				want := []gitops.RevertRequest{{BadRevision: "main@sha1:v2", GoodRevision: "main@sha1:v1", Reason: why}}
				got := reverter.requests
				for i := range got {
					if got[i].Canary == nil || got[i].Canary.Name != obj.Name || got[i].Canary == obj {
						t.Errorf("request %d names the Canary %v, want a copy of %s", i, got[i].Canary, obj.Name)
					}
					got[i].Canary = nil
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("revert requests (-want +got):\n%s", diff)
				}
			},
		}
	}
	recorded := func(rs v1alpha1.RevertStatus) func(st *v1alpha1.CanaryStatus) {
		return func(st *v1alpha1.CanaryStatus) { st.Revert = &rs }
	}
	opened := gitops.RevertResult{Branch: "serin/revert-v2", PullRequestURL: "https://git.example.com/fleet/pulls/7", State: gitops.StateOpened, Message: "pull request #7"}
	pushed := gitops.RevertResult{Branch: "main", Commit: "c0ffee", State: gitops.StatePushed}
	merged := gitops.RevertResult{Branch: "main", Commit: "c0ffee", State: gitops.StateMerged, Message: "v2 is reverted in main already"}

	requested := rolledBack(opened, nil, actionWant{
		status: func(st *v1alpha1.CanaryStatus) {
			recorded(v1alpha1.RevertStatus{Revision: "main@sha1:v2", Branch: opened.Branch, PullRequestURL: opened.PullRequestURL, State: gitops.StateOpened, Message: opened.Message})(st)
			st.HandledRequests.Revert = "now"
		},
		events: []string{"Warning " + v1alpha1.RevertOpenedReason},
	})
	requested.obs.Requests.Revert = "now"
	notConfigured := rolledBack(gitops.RevertResult{}, gitops.ErrNotConfigured, actionWant{
		status: recorded(v1alpha1.RevertStatus{Revision: "main@sha1:v2", State: gitops.StateFailed,
			Message: "spec.gitops.revert is set but this agent runs without GitOps revert (--gitops-revert): " + gitops.ErrNotConfigured.Error()}),
		events: []string{"Warning " + v1alpha1.RevertFailedReason},
	})
	notConfigured.setup = func(f *actionFixture) { f.r.Reverter = gitops.Disabled{} }
	notConfigured.check = nil

	cases := map[string]actionCase{
		"a pull request opened": rolledBack(opened, nil, actionWant{
			status: recorded(v1alpha1.RevertStatus{Revision: "main@sha1:v2", Branch: opened.Branch, PullRequestURL: opened.PullRequestURL, State: gitops.StateOpened, Message: opened.Message}),
			events: []string{"Warning " + v1alpha1.RevertOpenedReason},
		}),
		"a commit pushed": rolledBack(pushed, nil, actionWant{
			status: recorded(v1alpha1.RevertStatus{Revision: "main@sha1:v2", Branch: "main", Commit: "c0ffee", State: gitops.StatePushed}),
			events: []string{"Warning " + v1alpha1.RevertPushedReason},
		}),
		"already reverted in Git": rolledBack(merged, nil, actionWant{
			status: recorded(v1alpha1.RevertStatus{Revision: "main@sha1:v2", Branch: "main", Commit: "c0ffee", State: gitops.StateMerged, Message: merged.Message}),
			events: []string{"Normal " + v1alpha1.RevertMergedReason},
		}),
		"a revert request: handled": requested,
		"the reverter is busy: still Pending, asked again shortly": rolledBack(gitops.RevertResult{}, fmt.Errorf("%w: fleet@main", gitops.ErrBusy), actionWant{
			status: recorded(v1alpha1.RevertStatus{Revision: "main@sha1:v2", State: gitops.StatePending, Message: "reverting revision main@sha1:v2 in Git"}),
			result: ctrl.Result{RequeueAfter: 5 * time.Second},
		}),
		"the revert fails: Failed with the error, alerted, not retried": rolledBack(gitops.RevertResult{}, fmt.Errorf("no commit of v2 touches podinfo"), actionWant{
			status: recorded(v1alpha1.RevertStatus{Revision: "main@sha1:v2", State: gitops.StateFailed, Message: "no commit of v2 touches podinfo"}),
			events: []string{"Warning " + v1alpha1.RevertFailedReason},
		}),
		"the agent runs without GitOps revert: Failed, saying so": notConfigured,
		"the Git host is down: Retrying, alerted once, tried again after 5s": rolledBack(gitops.RevertResult{}, fmt.Errorf("failed to clone: %w", syscall.ECONNREFUSED), actionWant{
			status: recorded(v1alpha1.RevertStatus{Revision: "main@sha1:v2", State: gitops.StateRetrying, Attempts: 1,
				NextAttemptTime: ptr.To(metav1.NewTime(actionNow.Add(5 * time.Second))),
				Message:         "attempt 1 failed, next in 5s: failed to clone: connection refused"}),
			events: []string{"Warning " + v1alpha1.RevertRetryingReason},
			result: ctrl.Result{RequeueAfter: 5 * time.Second},
		}),
		"still down at the third attempt: backoff doubles, no new alert": func() actionCase {
			tc := rolledBack(gitops.RevertResult{}, fmt.Errorf("opening the pull request: %w", &net.OpError{Op: "dial", Err: syscall.ECONNRESET}), actionWant{
				status: recorded(v1alpha1.RevertStatus{Revision: "main@sha1:v2", State: gitops.StateRetrying, Attempts: 3,
					NextAttemptTime: ptr.To(metav1.NewTime(actionNow.Add(20 * time.Second))),
					Message:         "attempt 3 failed, next in 20s: opening the pull request: dial: connection reset by peer"}),
				result: ctrl.Result{RequeueAfter: 20 * time.Second},
			})
			tc.canary.Status.Revert = &v1alpha1.RevertStatus{Revision: "main@sha1:v2", State: gitops.StateRetrying, Attempts: 2}
			return tc
		}(),
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, _ rollout.Action) (ctrl.Result, error) {
		return openRevertToTheEnd(ctx, r, obj, obs)
	})
}

// openRevertToTheEnd is openRevert reconciled again until the revert job
// it started ended, as the job's end would enqueue the Canary.
func openRevertToTheEnd(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		res, err := r.openRevert(ctx, obj, obs)
		if err != nil || !r.reverts.running(client.ObjectKeyFromObject(obj)) || time.Now().After(end) {
			return res, err
		}
	}
}

// A revert runs off the reconcile: the first reconcile starts it and
// records Pending, with what a retry counted; the Canary is reconciled
// again when the job ends, and records its result.
func TestOpenRevert_RunsOffTheReconcile(t *testing.T) {
	release := make(chan struct{})
	reverter := &blockingReverter{release: release, result: gitops.RevertResult{Branch: "serin/revert-v2", PullRequestURL: "https://git.example.com/fleet/pulls/7", State: gitops.StateOpened}}
	f := newActionReconciler(t)
	f.r.Reverter = reverter
	ended := make(chan types.NamespacedName, 1)
	f.r.reverts.notify = func(k types.NamespacedName) { ended <- k }
	c := weightedPodinfo().Phase(v1alpha1.PhaseFailed).Applied("v2", "main@sha1:v2").Promoted("v1", "main@sha1:v1").Obj()
	c.Status.Revert = &v1alpha1.RevertStatus{Revision: "main@sha1:v2", State: gitops.StateRetrying, Attempts: 2}
	ctx := context.Background()
	res, err := f.r.openRevert(ctx, c, observed("v2", 0))
	if err != nil {
		t.Fatal(err)
	}
	if got := *c.Status.Revert; got.State != gitops.StatePending || got.Attempts != 2 || res.RequeueAfter != time.Minute {
		t.Fatalf("while the revert runs: %+v, requeue %s; want Pending with 2 attempts kept, a fallback requeue", got, res.RequeueAfter)
	}
	for reverter.started.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	if _, err := f.r.openRevert(ctx, c, observed("v2", 0)); err != nil || c.Status.Revert.State != gitops.StatePending {
		t.Fatalf("a second reconcile: %v, %+v; want the job still running", err, c.Status.Revert)
	}
	close(release)
	defer func() {
		if n := reverter.started.Load(); n != 1 {
			t.Errorf("%d reverts started, want one job for the revision", n)
		}
	}()
	select {
	case k := <-ended:
		if k.Name != c.Name {
			t.Errorf("the job's end enqueued %s", k)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the job's end enqueued nothing")
	}
	if _, err := f.r.openRevert(ctx, c, observed("v2", 0)); err != nil {
		t.Fatal(err)
	}
	if got := *c.Status.Revert; got.State != gitops.StateOpened || got.PullRequestURL != reverter.result.PullRequestURL {
		t.Errorf("after the job: %+v, want the pull request recorded", got)
	}
}

// blockingReverter answers its result once release is closed.
type blockingReverter struct {
	release chan struct{}
	result  gitops.RevertResult
	started atomic.Int32
}

func (r *blockingReverter) Revert(ctx context.Context, _ gitops.RevertRequest) (gitops.RevertResult, error) {
	r.started.Add(1)
	select {
	case <-r.release:
		return r.result, nil
	case <-ctx.Done():
		return gitops.RevertResult{}, ctx.Err()
	}
}
