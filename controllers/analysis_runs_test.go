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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/analysis"
	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// A step whose rollout hook does not answer never holds the reconcile: it
// returns with the call in flight and the status as it was, as often as it
// is asked, and the outcome brings the step once the hook answers, or once
// the step deadline fails the check. The assertions are on what the hook
// server and the status saw, in order, not on durations.
func TestStepDoesNotHoldTheReconcile(t *testing.T) {
	tests := map[string]struct {
		// answer: the hook answers once the reconciles returned; else it
		// hangs past the step deadline.
		answer      bool
		stepTimeout time.Duration
		// reconciles while the hook runs: one only when the deadline is
		// short, since its outcome is then read by the next reconcile.
		reconciles int
		check      func(t *testing.T, c *v1alpha1.Canary, events []string)
	}{
		"the hook answers: the step passes and promotes": {
			answer: true, stepTimeout: time.Minute, reconciles: 3,
			check: func(t *testing.T, c *v1alpha1.Canary, _ []string) {
				if c.Status.Phase != v1alpha1.PhasePromoting || c.Status.FailedChecks != 0 {
					t.Errorf("phase %s, failed checks %d; want Promoting, 0", c.Status.Phase, c.Status.FailedChecks)
				}
			},
		},
		"the hook hangs: the step deadline fails the check": {
			stepTimeout: 200 * time.Millisecond, reconciles: 1,
			check: func(t *testing.T, c *v1alpha1.Canary, events []string) {
				want := "CheckFailed rollout check failed: webhook smoke-test: no answer within 200ms: analysis step deadline exceeded (failed checks 1/2)"
				if c.Status.FailedChecks != 1 || !containsPrefix(events, want) {
					t.Errorf("failed checks %d, events %q; want 1 and %q", c.Status.FailedChecks, events, want)
				}
			},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			arrived, release := make(chan struct{}, 10), make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				arrived <- struct{}{}
				select {
				case <-release:
				case <-r.Context().Done():
				}
			}))
			t.Cleanup(srv.Close)
			released := false
			t.Cleanup(func() {
				if !released {
					close(release)
				}
			})
			c := testobj.MakeCanary("podinfo", "apps").Analysis(v1alpha1.CanaryAnalysis{
				Interval: &metav1.Duration{Duration: 10 * time.Second}, Iterations: 2, Threshold: 2,
				Webhooks: []v1alpha1.CanaryWebhook{{Name: "smoke-test", Type: v1alpha1.RolloutHook, URL: srv.URL}},
			}).Obj()
			c.Finalizers = []string{v1alpha1.CanaryFinalizer}
			w := newFaultWorld(t, 0, c, &testobj.MakeDeployment("podinfo", "apps").Replicas(2).Deployment)
			w.r.Analysis = analysis.NewRunner(w.r.Webhooks, w.r.Checks, analysis.RunnerOptions{StepTimeout: tt.stepTimeout})
			done := make(chan types.NamespacedName, 10)
			w.r.Analysis.OnDone(func(k types.NamespacedName) { done <- k })
			w.runUntil("initialized", func(c *v1alpha1.Canary) bool { return c.Status.Phase == v1alpha1.PhaseInitialized })
			w.setImage("podinfo", "ghcr.io/stefanprodan/podinfo:6.1.0")
			// The first step sends no traffic and calls no rollout hook.
			w.runUntil("first step", func(c *v1alpha1.Canary) bool { return c.Status.Iterations == 1 })

			w.now = w.now.Add(10 * time.Second) // the second step is due
			before := w.canary().Status
			for i := range tt.reconciles {
				res, err := w.r.Reconcile(ctrl.LoggerInto(context.Background(), ctrl.Log), ctrl.Request{NamespacedName: w.key})
				if err != nil || res.RequeueAfter != tt.stepTimeout+time.Second {
					t.Fatalf("reconcile %d while the hook runs: %v, %+v", i, err, res)
				}
				if i == 0 {
					<-arrived // the call is in flight, the reconcile has returned
				}
				if st := w.canary().Status; st.Iterations != before.Iterations || st.FailedChecks != 0 || !st.LastTransitionTime.Equal(before.LastTransitionTime) {
					t.Fatalf("reconcile %d changed the status while the hook runs: %+v", i, st)
				}
			}
			if tt.answer {
				released = true
				close(release)
			}
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("no outcome")
			}
			if _, err := w.r.Reconcile(ctrl.LoggerInto(context.Background(), ctrl.Log), ctrl.Request{NamespacedName: w.key}); err != nil {
				t.Fatal(err)
			}
			tt.check(t, w.canary(), recorded(w.r.EventRecorder.(*record.FakeRecorder)))
		})
	}
}

// recorded drains a FakeRecorder: "Type Reason Message" becomes "Reason Message".
func recorded(r *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			_, rest, _ := strings.Cut(e, " ")
			out = append(out, rest)
		default:
			return out
		}
	}
}

func containsPrefix(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}
