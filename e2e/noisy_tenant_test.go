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
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	notificationv1beta3 "github.com/fluxcd/notification-controller/api/v1beta3"
	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// A noisy tenant, on the agent as users run it (32 analysis workers, 256
// steps in flight, 64 of them per namespace): tenant B rolls out 300
// Canaries whose rollout webhook is a black hole (each step hangs until
// the 30 s step deadline) and whose alerts go to a Provider that is a
// black hole too (spec.timeout 10m). Meanwhile tenant A rolls out three
// Canaries: two healthy ones stepping every 5 s, one whose webhook fails
// and which rolls back. A's steps keep their schedule, and A's Failed
// alert reaches A's Provider a moment after the rollback. Before the
// analysis queue served namespaces in turn, A's steps waited behind B's
// 300 (first in, first out, 256 in flight); before each Provider had a
// queue of its own with serin's 15 s cap on a delivery, A's alert waited
// behind B's 600 events on two serial workers.
//
// It prints A's step lag and alert latency as key=value lines, and judges
// only that nothing of A waited for one of B's hangs. The alert's latency
// is counted from when the test saw the Failed status (polled every 20 ms):
// the agent sends the alert as it writes the status, so a few tens of ms
// below zero mean the alert came first.
func TestTenancy_NoisyTenantDelaysNoOtherTenant(t *testing.T) {
	alone(t, "300 hanging Canaries on the shared agent; bounds step lag and alert latency")
	const (
		noisy        = 300
		stepInterval = 5 * time.Second
		window       = time.Minute
		// heldLag is how late a step of A is when it waited for one of
		// B's hangs (the step deadline is 30 s): no step of A may be.
		heldLag = 10 * time.Second
		// alertBound is serin's cap on one delivery (15 s): A's alert
		// arrives sooner unless it waited behind a delivery of B's.
		alertBound = 15 * time.Second
	)
	g := NewWithT(t)
	ctx := context.Background()
	nc := notifyClient(t)
	nsA, nsB := newNamespace(t), newNamespace(t)
	t.Cleanup(func() {
		if err := deleteNamespace(ctx, nsB, 3*time.Minute); err != nil {
			t.Log(err)
		}
	})
	blackHole := startBlackHole(t)
	quick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	t.Cleanup(quick.Close)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		http.Error(w, "the smoke test failed", http.StatusInternalServerError)
	}))
	t.Cleanup(failing.Close)
	sinkA := newEventSink(t)

	// Tenant B: a black-hole Provider, with the longest timeout Flux allows.
	g.Expect(nc.Create(ctx, &notificationv1beta3.Provider{ObjectMeta: metav1.ObjectMeta{Name: "black-hole", Namespace: nsB},
		Spec: notificationv1beta3.ProviderSpec{Type: "generic", Address: "http://" + blackHole + "/", Timeout: &metav1.Duration{Duration: 10 * time.Minute}}})).To(Succeed())
	g.Expect(nc.Create(ctx, &notificationv1beta3.Provider{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Namespace: nsA},
		Spec: notificationv1beta3.ProviderSpec{Type: "generic", Address: sinkA.URL}})).To(Succeed())
	direct := map[string]string{v1alpha1.NotificationModeAnnotation: "direct"}
	alert := func(provider string) []v1alpha1.CanaryAlert {
		return []v1alpha1.CanaryAlert{{Name: provider, ProviderRef: meta.NamespacedObjectReference{Name: provider}, Severity: "info"}}
	}
	g.Expect(forEach(noisy, func(i int) error {
		name := fmt.Sprintf("noisy-%03d", i)
		if err := k8s.Create(ctx, testobj.MakeDeployment(name, nsB).Replicas(1).Obj()); err != nil {
			return err
		}
		c := testobj.MakeCanary(name, nsB).ProgressDeadlineSeconds(600).Analysis(v1alpha1.CanaryAnalysis{
			Interval: &metav1.Duration{Duration: stepInterval}, Iterations: 1000, Threshold: 100,
			Webhooks: []v1alpha1.CanaryWebhook{{Name: "black-hole", Type: v1alpha1.RolloutHook, URL: "http://" + blackHole + "/",
				Timeout: &metav1.Duration{Duration: 20 * time.Second}, Retries: 3}},
		}).Obj()
		c.Annotations, c.Spec.Alerts = direct, alert("black-hole")
		return k8s.Create(ctx, c)
	})).To(Succeed())

	// Tenant A: two healthy Canaries and one that fails.
	namesA := []string{"healthy-0", "healthy-1", "failing"}
	for _, name := range namesA {
		hook := quick.URL
		a := v1alpha1.CanaryAnalysis{Interval: &metav1.Duration{Duration: stepInterval}, Iterations: 1000, Threshold: 2}
		if name == "failing" {
			hook = failing.URL
		}
		a.Webhooks = []v1alpha1.CanaryWebhook{{Name: "smoke-test", Type: v1alpha1.RolloutHook, URL: hook}}
		g.Expect(k8s.Create(ctx, testobj.MakeDeployment(name, nsA).Replicas(1).Obj())).To(Succeed())
		c := testobj.MakeCanary(name, nsA).ProgressDeadlineSeconds(600).Analysis(a).Obj()
		c.Annotations, c.Spec.Alerts = direct, alert("team-a")
		g.Expect(k8s.Create(ctx, c)).To(Succeed())
	}
	initialized := func(s canaryState) bool { return s.phase == string(v1alpha1.PhaseInitialized) }
	g.Expect(waitCount(ctx, v1alpha1.GroupVersion.WithKind("Canary"), nsB, noisy, 3*time.Minute, "Initialized", initialized)).To(Succeed())
	g.Expect(waitCount(ctx, v1alpha1.GroupVersion.WithKind("Canary"), nsA, len(namesA), time.Minute, "Initialized", initialized)).To(Succeed())

	// B's rollouts start first; once each took its first step (which
	// calls no rollout hook), every next step of theirs hangs.
	g.Expect(forEach(noisy, func(i int) error { return setImageErr(ctx, nsB, fmt.Sprintf("noisy-%03d", i), "podinfo:v2") })).To(Succeed())
	g.Expect(waitCount(ctx, v1alpha1.GroupVersion.WithKind("Canary"), nsB, noisy, 2*time.Minute, "took a first step",
		func(s canaryState) bool { return s.iterations >= 1 })).To(Succeed())
	stepsA := watchSteps(t, nsA, stepInterval)
	for _, name := range namesA {
		g.Expect(setImageErr(ctx, nsA, name, "podinfo:v2")).To(Succeed())
	}
	phase := sample(t, func() string {
		c := &v1alpha1.Canary{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: nsA, Name: "failing"}, c); err != nil {
			return "get error"
		}
		return string(c.Status.Phase)
	})
	opened := time.Now()
	time.Sleep(window)
	closed := time.Now()

	counts := stepsA.countBetween(opened, closed)
	lags := stepsA.lags("healthy-")
	var inFlightB int
	var listB v1alpha1.CanaryList
	g.Expect(k8s.List(ctx, &listB, client.InNamespace(nsB))).To(Succeed())
	for _, c := range listB.Items {
		if c.Status.Phase == v1alpha1.PhaseProgressing {
			inFlightB++
		}
	}
	fmt.Printf("noisy_tenant noisy_canaries=%d noisy_progressing_at_end=%d interval_s=%.0f window_s=%.0f a_steps_due=%d a_healthy_steps=%d,%d "+
		"a_step_lag_p50_ms=%.0f a_step_lag_max_ms=%.0f a_steps_timed=%d\n",
		noisy, inFlightB, stepInterval.Seconds(), window.Seconds(), int(window/stepInterval), counts["healthy-0"], counts["healthy-1"],
		quantileMs(lags, 0.5), quantileMs(lags, 1), len(lags))

	// When A's failing Canary turned Failed, and when its alert came.
	var failedAt, alertedAt time.Time
	g.Eventually(func(g Gomega) {
		failedAt = phase.firstAt(string(v1alpha1.PhaseFailed))
		g.Expect(failedAt).NotTo(BeZero(), "A's failing Canary rolled back; phases %v", phase.seen())
		for _, r := range sinkA.requests() {
			var ev eventv1.Event
			if json.Unmarshal(r.body, &ev) == nil && ev.Metadata["phase"] == string(v1alpha1.PhaseFailed) && ev.InvolvedObject.Name == "failing" {
				alertedAt = r.at
				break
			}
		}
		g.Expect(alertedAt).NotTo(BeZero(), "A's Failed alert arrived")
	}, 2*time.Minute, 200*time.Millisecond).Should(Succeed())
	fmt.Printf("noisy_tenant a_failed_alert_after_status_ms=%d\n", alertedAt.Sub(failedAt).Milliseconds())

	g.Expect(inFlightB).To(Equal(noisy), "B's rollouts still hang at the end of the window")
	g.Expect(lags).NotTo(BeEmpty())
	g.Expect(quantileMs(lags, 1)).To(BeNumerically("<", float64(heldLag.Milliseconds())), "the longest step lag of A's healthy Canaries (ms): none waited for B")
	g.Expect(alertedAt.Sub(failedAt)).To(BeNumerically("<", alertBound), "A's Failed alert waited for none of B's deliveries")
}
