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
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	notificationv1 "github.com/fluxcd/notification-controller/api/v1beta3"
	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// TestDestinationsAreIsolated: tenant b's Provider never answers (a black
// hole with spec.timeout 10m) and b's Canaries announce 50 events; then
// tenant a's Canary halts. With one worker, a's Halted alert still reaches
// a's Provider while b's hang: each Provider has its own queue.
func TestDestinationsAreIsolated(t *testing.T) {
	release := make(chan struct{})
	var hanging atomic.Int64
	blackHole := newSink(t, func(int) int { hanging.Add(1); <-release; return 200 })
	t.Cleanup(func() { close(release) })
	slack := newSink(t, nil)
	b := testBridge(t, Options{Mode: ModeDirect, Workers: 1, QueueSize: 100, Reader: fakeReader(t,
		provider("tenant-b", "generic", func(p *notificationv1.Provider) {
			p.Spec.Address = blackHole.URL
			p.Spec.Timeout = &metav1.Duration{Duration: 10 * time.Minute}
		}),
		provider("tenant-a", "generic", func(p *notificationv1.Provider) { p.Spec.Address = slack.URL }),
	)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = b.Start(ctx) }()

	for i := range 50 {
		c := withAlerts(testCanary(), alertFor("tenant-b", "info"))
		c.Namespace, c.Name = "tenant-b", fmt.Sprintf("app-%d", i)
		b.Notify(ctx, c, promoted())
	}
	for hanging.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	a := withAlerts(testCanary(), alertFor("tenant-a", "info"))
	a.Namespace = "tenant-a"
	b.Notify(ctx, a, halted())

	deadline := time.Now().Add(10 * time.Second)
	for len(slack.got()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if len(slack.got()) != 1 {
		t.Fatalf("tenant a's Provider got %d requests while tenant b's hangs, want its Halted alert", len(slack.got()))
	}
	var e eventv1.Event
	if err := json.Unmarshal(slack.got()[0].body, &e); err != nil {
		t.Fatal(err)
	}
	if e.Reason != "Halted" || e.InvolvedObject.Namespace != "tenant-a" {
		t.Errorf("tenant a got %s of %s/%s, want its Halted alert", e.Reason, e.InvolvedObject.Namespace, e.InvolvedObject.Name)
	}
	if n := hanging.Load(); n != 1 {
		t.Errorf("tenant b's Provider got %d requests at once, want its events one at a time", n)
	}
}

// A Provider's spec.timeout is capped by the Bridge's MaxProviderTimeout
// (15 s unless set): a black hole with spec.timeout 10m gives up at the cap.
func TestProviderTimeoutIsCapped(t *testing.T) {
	release := make(chan struct{})
	blackHole := newSink(t, func(int) int { <-release; return 200 })
	t.Cleanup(func() { close(release) })
	b := testBridge(t, Options{Mode: ModeDirect, MaxProviderTimeout: 200 * time.Millisecond, Reader: fakeReader(t,
		provider("black-hole", "generic", func(p *notificationv1.Provider) {
			p.Spec.Address = blackHole.URL
			p.Spec.Timeout = &metav1.Duration{Duration: 10 * time.Minute}
		}),
	)})
	done := make(chan bool)
	go func() { done <- deliverNow(b, withAlerts(testCanary(), alertFor("black-hole", "info")), halted()) }()
	select {
	case ok := <-done:
		if ok {
			t.Error("a delivery to a black hole succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the delivery outlived the cap on the Provider's timeout")
	}
	if New(Options{}).opts.MaxProviderTimeout != 15*time.Second {
		t.Error("the default cap is not 15s")
	}
}
