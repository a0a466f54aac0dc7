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

package notifier

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	notificationv1 "github.com/fluxcd/notification-controller/api/v1beta3"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// states are the commit states a sink received, in order.
func states(t *testing.T, got []received) []string {
	t.Helper()
	var out []string
	for _, r := range got {
		var body struct {
			State string `json:"state"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatalf("commit status body %q: %v", r.body, err)
		}
		out = append(out, body.State)
	}
	return out
}

// giteaStatuses is a Bridge whose Canary names a Gitea Provider that
// posts to the sink (Gitea's wire format, checked in
// TestCommitStatusWireFormat), and that Canary.
func giteaStatuses(t *testing.T, s *sink) (*Bridge, *v1alpha1.Canary) {
	t.Helper()
	typ := notificationv1.GiteaProvider
	b := testBridge(t, Options{Mode: ModeDirect, Reader: fakeReader(t, commitStatusProvider(typ, s.URL+"/owner/repo"),
		secret(typ+"-token", map[string]string{"token": testToken}))})
	return b, withAlerts(testCanary(), alertFor(typ, "info"))
}

// A pending status that waited in the Provider's queue while the Canary
// posted its verdict is not sent after it: the verdict stays the
// commit's last word. A pending of a later event (a new analysis of the
// same commit) is sent. Gitea's wire format (a sink checks it in
// TestCommitStatusWireFormat).
func TestCommitStatus_AnOlderPendingNeverFollowsTheVerdict(t *testing.T) {
	s := newSink(t, func(int) int { return http.StatusCreated })
	b, canary := giteaStatuses(t, s)
	ctx := context.Background()
	progressing := phaseChange(v1alpha1.PhaseProgressing, SeverityInfo, "advance podinfo canary weight 50")
	verdict := promoted()

	for _, p := range b.CommitStatusProviders(canary, verdict) {
		if err := b.DeliverCommitStatus(ctx, canary, p, verdict, testTime); err != nil {
			t.Fatal(err)
		}
	}
	// The pending queued a second before the verdict, delivered after it.
	if !b.deliver(ctx, job{canary: canary.DeepCopy(), event: progressing, at: testTime.Add(-time.Second)}) {
		t.Fatal("the late pending's delivery failed")
	}
	if got := states(t, s.got()); len(got) != 1 || got[0] != commitSuccess {
		t.Fatalf("states posted %v, want only the verdict's success", got)
	}
	// A new analysis of the commit, later: its pending is posted.
	if !b.deliver(ctx, job{canary: canary.DeepCopy(), event: progressing, at: testTime.Add(time.Minute)}) {
		t.Fatal("the new analysis' pending failed")
	}
	if got := states(t, s.got()); len(got) != 2 || got[1] != commitPending {
		t.Errorf("states posted %v, want success, then the new analysis' pending", got)
	}
}

// A verdict that comes while an older pending is on the wire waits for
// it, so that the Git host receives them in their order.
func TestCommitStatus_AVerdictWaitsForThePendingOnTheWire(t *testing.T) {
	unblock := make(chan struct{})
	arrived := make(chan struct{}, 2)
	s := newSink(t, func(n int) int {
		arrived <- struct{}{}
		if n == 1 {
			<-unblock
		}
		return http.StatusCreated
	})
	b, canary := giteaStatuses(t, s)
	ctx := context.Background()
	progressing := phaseChange(v1alpha1.PhaseProgressing, SeverityInfo, "advance podinfo canary weight 50")

	pendingDone := make(chan bool)
	go func() {
		pendingDone <- b.deliver(ctx, job{canary: canary.DeepCopy(), event: progressing, at: testTime.Add(-time.Second)})
	}()
	<-arrived // the pending is at the Git host, unanswered
	verdictDone := make(chan error)
	go func() {
		verdictDone <- b.DeliverCommitStatus(ctx, canary, b.CommitStatusProviders(canary, promoted())[0], promoted(), testTime)
	}()
	select {
	case <-arrived:
		t.Fatal("the verdict reached the Git host while the older pending was on the wire")
	case err := <-verdictDone:
		t.Fatalf("the verdict returned (%v) while the older pending was on the wire", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(unblock)
	if !<-pendingDone {
		t.Fatal("the pending's delivery failed")
	}
	if err := <-verdictDone; err != nil {
		t.Fatal(err)
	}
	if got := states(t, s.got()); len(got) != 2 || got[0] != commitPending || got[1] != commitSuccess {
		t.Errorf("states posted %v, want pending, then success", got)
	}
}

// A verdict whose Provider is busy with another post of the same commit
// gives up when its context ends, and the lock is left to the others.
func TestStatusOrder_AcquireHonoursTheContext(t *testing.T) {
	o := newStatusOrder()
	k := statusKey{sha: "abc", context: "serin/apps/podinfo"}
	release, err := o.acquire(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := o.acquire(ctx, k); err == nil {
		t.Fatal("acquire under a cancelled context succeeded while the key was held")
	}
	release()
	release2, err := o.acquire(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	release2()
	if len(o.locks) != 0 {
		t.Errorf("%d locks kept after every post released its own", len(o.locks))
	}
	// Another key is never held up by a busy one.
	busy, err := o.acquire(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	defer busy()
	if _, err := o.acquire(ctx, statusKey{sha: "def", context: "serin/apps/podinfo"}); err != nil {
		t.Errorf("another commit's post waited for a busy one: %v", err)
	}
}
