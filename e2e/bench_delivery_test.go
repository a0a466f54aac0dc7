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

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	notificationv1beta3 "github.com/fluxcd/notification-controller/api/v1beta3"
	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// BenchmarkNotificationLatency measures how long a Canary's transition
// takes to reach a receiver: from the transition (status.lastTransitionTime,
// microseconds, written by the agent) to the arrival of the event that tells
// of it at an HTTP receiver standing for Slack or a webhook. Two paths:
//   - owner: agent → Flux's notification-controller (the real one) → a
//     generic Provider, matched by an Alert on the Kustomization;
//   - direct: agent → the generic Provider the Canary names.
//
// Three canaries per path roll a revision through a two-step analysis at
// once; every event of that rollout counts.
func BenchmarkNotificationLatency(b *testing.B) {
	type path struct {
		name string
		lat  []time.Duration
	}
	paths := []*path{{name: "owner"}, {name: "direct"}}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, p := range paths {
		for i := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lat := deliveryRun(b, p.name, fmt.Sprint(i))
				mu.Lock()
				p.lat = append(p.lat, lat...)
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	fmt.Printf("\n%-48s %8s %8s %8s %7s\n", "NOTIFICATION DELIVERY", "p50", "p99", "max", "events")
	for _, p := range paths {
		sort.Slice(p.lat, func(i, j int) bool { return p.lat[i] < p.lat[j] })
		if len(p.lat) == 0 {
			b.Fatalf("%s: no event arrived", p.name)
		}
		label := map[string]string{"owner": "transition → notification-controller → receiver", "direct": "transition → Provider (direct mode)"}[p.name]
		fmt.Printf("%-48s %6.0fms %6.0fms %6.0fms %7d\n", label, quantileMs(p.lat, 0.5), quantileMs(p.lat, 0.99), quantileMs(p.lat, 1), len(p.lat))
		fmt.Printf("notification_latency_%s_p50_ms=%.0f notification_latency_%s_p99_ms=%.0f notification_latency_%s_max_ms=%.0f events=%d\n",
			p.name, quantileMs(p.lat, 0.5), p.name, quantileMs(p.lat, 0.99), p.name, quantileMs(p.lat, 1), len(p.lat))
	}
}

// deliveryRun rolls one revision in a namespace of its own and returns, for
// every event the receiver got about it, the time from the transition it
// tells of to its arrival.
func deliveryRun(b *testing.B, mode, suffix string) []time.Duration {
	g := NewWithT(b)
	ctx := context.Background()
	ns := newNamespace(b)
	sink := newEventSink(b)
	nc := notifyClient(b)
	revision := notifyRevision(suffix)
	ks := notifyKustomization(b, g, ns, "apps", notifyRevision("a"))
	var c *v1alpha1.Canary
	if mode == "owner" {
		notifyAlert(b, g, nc, ns, "all", sink.URL, "info")
		c = notifyCanary(b, g, ns, ks, nil)
	} else {
		g.Expect(nc.Create(ctx, &notificationv1beta3.Provider{ObjectMeta: metav1.ObjectMeta{Name: "hook", Namespace: ns},
			Spec: notificationv1beta3.ProviderSpec{Type: "generic", Address: sink.URL}})).To(Succeed())
		c = notifyCanary(b, g, ns, ks, func(c *v1alpha1.Canary) {
			c.Annotations = map[string]string{v1alpha1.NotificationModeAnnotation: "direct"}
			c.Spec.Alerts = []v1alpha1.CanaryAlert{{Name: "hook", ProviderRef: meta.NamespacedObjectReference{Name: "hook"}, Severity: "info"}}
		})
	}

	transitions := watchTransitions(b, c)
	setLastAppliedRevision(g, ks, revision)
	setImage(g, ns, "podinfo", "podinfo:v2")
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 60*time.Second)
	g.Eventually(func(g Gomega) {
		g.Expect(rolloutEvents(sink.events(b), revision)).To(ContainElement(HaveField("Metadata", HaveKeyWithValue("phase", "Succeeded"))))
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	times := transitions()

	var out []time.Duration
	for _, r := range sink.requests() {
		var ev eventv1.Event
		if json.Unmarshal(r.body, &ev) != nil || ev.Metadata["revision"] != revision {
			continue
		}
		// The transition an event tells of is the last one before it arrived.
		var last time.Time
		for _, t := range times {
			if t.Before(r.at) {
				last = t
			}
		}
		if !last.IsZero() {
			out = append(out, r.at.Sub(last))
		}
	}
	return out
}

// watchTransitions records every status.lastTransitionTime of a Canary
// until the returned function is called, which returns them in order.
func watchTransitions(b *testing.B, c *v1alpha1.Canary) func() []time.Time {
	ctx, cancel := context.WithCancel(context.Background())
	w, err := k8s.(client.WithWatch).Watch(ctx, &v1alpha1.CanaryList{}, client.InNamespace(c.Namespace),
		client.MatchingFields{"metadata.name": c.Name})
	if err != nil {
		b.Fatal(err)
	}
	seen := map[time.Time]bool{}
	var times []time.Time
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if obj, ok := ev.Object.(*v1alpha1.Canary); ok && obj.Status.LastTransitionTime != nil {
				if t := obj.Status.LastTransitionTime.Time; !seen[t] {
					seen[t] = true
					times = append(times, t)
				}
			}
		}
	}()
	return func() []time.Time {
		cancel()
		w.Stop()
		<-done
		sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
		return times
	}
}

// BenchmarkHaltToPullRequest measures the GitOps revert: from the moment
// serin halts a promotion (status.lastTransitionTime of Halted) to the moment
// the revert pull request exists on the Git host (real Gitea, polled every
// 50 ms), for three fleets at once, each its own repository applied by the
// real source-controller and kustomize-controller.
func BenchmarkHaltToPullRequest(b *testing.B) {
	const runs = 3
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		lat []time.Duration
	)
	for range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := haltToPullRequest(b)
			mu.Lock()
			lat = append(lat, d)
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	fmt.Printf("\n%-40s %8s %8s %6s\n", "GITOPS REVERT", "p50", "max", "runs")
	fmt.Printf("%-40s %6.0fms %6.0fms %6d\n", "Halted → pull request opened", quantileMs(lat, 0.5), quantileMs(lat, 1), len(lat))
	fmt.Printf("halt_to_pr_p50_ms=%.0f halt_to_pr_max_ms=%.0f runs=%d\n", quantileMs(lat, 0.5), quantileMs(lat, 1), len(lat))
}

func haltToPullRequest(b *testing.B) time.Duration {
	g := NewWithT(b)
	ctx := context.Background()
	ns := newNamespace(b)
	f := newFleet(b, g, ns, podinfoApp(ns, "v1", v1alpha1.PullRequestRevert))
	pollCtx, stop := context.WithCancel(ctx)
	defer stop()
	opened := watchPullRequests(pollCtx, f.name)
	_, canary, _, _ := haltBadRevisionOf(b, g, f, ns, v1alpha1.PullRequestRevert)
	var at time.Time
	select {
	case at = <-opened:
	case <-time.After(60 * time.Second):
		b.Fatalf("%s: no pull request 60 s after Halted", ns)
	}
	return at.Sub(canary.Status.LastTransitionTime.Time)
}

// watchPullRequests polls Gitea every 50 ms until the repository has a
// pull request, then sends when it saw it.
func watchPullRequests(ctx context.Context, repo string) <-chan time.Time {
	opened := make(chan time.Time, 1)
	go func() {
		for ctx.Err() == nil {
			var prs []pullRequest
			if gitea.API(ctx, "GET", fmt.Sprintf("/repos/%s/%s/pulls?state=all", gitea.User, repo), nil, &prs) == nil && len(prs) > 0 {
				opened <- time.Now()
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return opened
}
