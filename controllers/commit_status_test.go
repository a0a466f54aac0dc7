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
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/notifier"
)

// statusHost stands for the commit-status Providers: down until up, then
// it records what it was given. (The notifier's own tests check the wire
// format against HTTP servers; the e2e waves tests against Gitea.)
type statusHost struct {
	recordingNotifier
	mu        sync.Mutex
	up        bool
	attempts  int
	delivered []string
}

func (h *statusHost) CommitStatusProviders(*v1alpha1.Canary, notifier.Event) []string {
	return []string{"flux-system/gitea"}
}

func (h *statusHost) DeliverCommitStatus(_ context.Context, _ *v1alpha1.Canary, p string, e notifier.Event, _ time.Time) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.attempts++
	if !h.up {
		return errors.New("dial tcp: connection refused")
	}
	h.delivered = append(h.delivered, p+" "+string(e.Phase)+" "+e.Revision)
	return nil
}

// A verdict's commit status stays in the Canary's status until its
// Provider takes it: a Git host down when the Canary succeeded, and the
// agent restarted meanwhile, still get it, with one warning.
func TestCommitStatus_KeptUntilDelivered(t *testing.T) {
	c := weightedPodinfo().Phase(v1alpha1.PhaseSucceeded).Applied("v2", "main@sha1:c0ffee").Promoted("v2", "main@sha1:c0ffee").Obj()
	f := newActionReconciler(t, c)
	host := &statusHost{}
	f.r.Notifier = host
	now := actionNow
	f.r.Clock = func() time.Time { return now }
	ctx := context.Background()

	f.r.oweCommitStatus(c, notifier.Event{Severity: notifier.SeverityInfo, Reason: "Succeeded", Message: "promoted", Phase: v1alpha1.PhaseSucceeded, Revision: "main@sha1:c0ffee"})
	if owed := c.Status.CommitStatus; owed == nil || len(owed.Providers) != 1 {
		t.Fatalf("owed = %+v", owed)
	}
	deliver := func() time.Duration {
		t.Helper()
		for range 500 {
			d := f.r.deliverCommitStatus(ctx, c)
			if !f.r.commitStatuses.running(client.ObjectKeyFromObject(c)) && d != time.Minute {
				return d
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatal("the delivery never ended")
		return 0
	}
	if d := deliver(); d != 5*time.Second || c.Status.CommitStatus.Attempts != 1 || c.Status.CommitStatus.LastError == "" {
		t.Fatalf("host down: retry in %s, owed %+v", d, c.Status.CommitStatus)
	}
	// Still down at the next attempt: backoff, no second warning.
	now = now.Add(5 * time.Second)
	if d := deliver(); d != 10*time.Second {
		t.Fatalf("second failure: retry in %s", d)
	}
	// The agent restarts (its jobs are gone; the status is not), and the
	// host is back.
	f.r.commitStatuses = newGitJobs[[]string]()
	host.up = true
	now = now.Add(10 * time.Second)
	if d := deliver(); d != 0 || len(c.Status.CommitStatus.Providers) != 0 {
		t.Fatalf("after the restart: %s, owed %+v", d, c.Status.CommitStatus)
	}
	if len(host.delivered) != 1 || host.delivered[0] != "flux-system/gitea Succeeded main@sha1:c0ffee" || host.attempts != 3 {
		t.Errorf("delivered %v in %d attempts", host.delivered, host.attempts)
	}
	warnings := 0
	for _, e := range f.events() {
		if e.Reason == v1alpha1.CommitStatusRetryingReason {
			warnings++
		}
	}
	if warnings != 1 {
		t.Errorf("%d CommitStatusRetrying warnings, want one per outage", warnings)
	}
	// Delivered: nothing more is sent.
	if d := deliver(); d != 0 || host.attempts != 3 {
		t.Errorf("after the delivery: %s, %d attempts", d, host.attempts)
	}
}
