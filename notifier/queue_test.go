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
	"strings"
	"testing"
	"time"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"github.com/google/go-cmp/cmp"
)

// TestJobQueue_ProgressGivesWayFirst: a full queue drops its oldest
// progress event for a newcomer, keeps the order of the rest, and drops
// the newcomer only when nothing but phase changes and failures wait.
func TestJobQueue_ProgressGivesWayFirst(t *testing.T) {
	q := newJobQueue(3)
	ev := func(reason string, progress bool) job {
		return job{event: Event{Reason: reason, Progress: progress}}
	}
	var dropped []string
	push := func(j job) {
		if d := q.push(j); d != nil {
			dropped = append(dropped, d.event.Reason)
		}
	}
	push(ev("step-1", true))
	push(ev("Progressing", false))
	push(ev("step-2", true))
	push(ev("CheckFailed", false)) // step-1 gives way
	push(ev("Failed", false))      // step-2 gives way
	push(ev("step-3", true))       // nothing to give way: dropped
	push(ev("Halted", false))      // dropped too: only alerts wait
	var left []string
	for {
		j, ok := q.pop()
		if !ok {
			break
		}
		left = append(left, j.event.Reason)
	}
	if diff := cmp.Diff([]string{"step-1", "step-2", "step-3", "Halted"}, dropped); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Progressing", "CheckFailed", "Failed"}, left); diff != "" {
		t.Errorf("delivered in order (-want +got):\n%s", diff)
	}
	push(ev("Succeeded", false))
	if j, ok := q.pop(); !ok || j.event.Reason != "Succeeded" {
		t.Errorf("an emptied queue takes events again, got %q, %v", j.event.Reason, ok)
	}
}

// TestNotifyKeepsTheAlertInAFlood: the workers are stuck behind a receiver
// that does not answer while a thousand steps of other Canaries are
// announced, then one Canary fails. Once the receiver answers again, the
// failure reaches it: the steps gave way, not the alert.
func TestNotifyKeepsTheAlertInAFlood(t *testing.T) {
	release := make(chan struct{})
	nc := newSink(t, func(int) int { <-release; return 200 })
	b := testBridge(t, Options{Mode: ModeCanary, EventsAddr: nc.URL, Reader: fakeReader(t), Workers: 2, QueueSize: 5, EventsTimeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = b.Start(ctx) }()

	for i := range 1000 {
		c := testCanary()
		c.Name = "app-" + string(rune('a'+i%26))
		b.Notify(ctx, c, Event{Severity: SeverityInfo, Reason: "WeightIncreased", Message: "advance", Phase: "Progressing", Weight: 20, Progress: true})
	}
	failing := testCanary()
	failing.Name = "app-x"
	b.Notify(ctx, failing, halted())
	close(release)

	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range nc.got() {
			var e eventv1.Event
			if err := json.Unmarshal(r.body, &e); err != nil {
				t.Fatal(err)
			}
			if e.Reason == "Halted" && e.InvolvedObject.Name == "app-x" {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	var reasons []string
	for _, r := range nc.got() {
		reasons = append(reasons, string(r.body[:min(len(r.body), 80)]))
	}
	t.Fatalf("the Halted event of app-x never arrived; %d requests:\n%s", len(reasons), strings.Join(reasons, "\n"))
}
