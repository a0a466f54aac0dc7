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
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// A load test as a pre-rollout hook, as flagger-k6-webhook runs one: it
// answers after 40 s, longer than the agent's 30 s step deadline, within
// its own 2m timeout. The Canary waits for it and then rolls out; another
// Canary of the same namespace steps every 5 s meanwhile, on schedule.
// Before long hooks, every call was cut at 30 s and the load test failed
// the check.
func TestWebhooks_LoadTestLongerThanTheStepDeadline(t *testing.T) {
	alone(t, "bounds the step lag of a Canary on the shared agent")
	const (
		loadTest     = 40 * time.Second
		stepInterval = 5 * time.Second
		// heldLag is how late a step of the other Canary would be had it
		// waited for the load test.
		heldLag = 10 * time.Second
	)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	var calls, answered atomic.Int64
	k6 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		calls.Add(1)
		select {
		case <-time.After(loadTest):
			answered.Add(1)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(k6.Close)
	quick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) }))
	t.Cleanup(quick.Close)

	tested := testobj.MakeCanary("load-tested", ns).ProgressDeadlineSeconds(600).Analysis(v1alpha1.CanaryAnalysis{
		Interval: &metav1.Duration{Duration: stepInterval}, Iterations: 2, Threshold: 1,
		Webhooks: []v1alpha1.CanaryWebhook{{Name: "k6", Type: v1alpha1.PreRolloutHook, URL: k6.URL,
			Timeout: &metav1.Duration{Duration: 2 * time.Minute}}},
	}).Obj()
	other := testobj.MakeCanary("other", ns).ProgressDeadlineSeconds(600).Analysis(v1alpha1.CanaryAnalysis{
		Interval: &metav1.Duration{Duration: stepInterval}, Iterations: 1000, Threshold: 2,
		Webhooks: []v1alpha1.CanaryWebhook{{Name: "smoke", Type: v1alpha1.RolloutHook, URL: quick.URL}},
	}).Obj()
	for _, c := range []*v1alpha1.Canary{tested, other} {
		g.Expect(k8s.Create(ctx, testobj.MakeDeployment(c.Name, ns).Replicas(1).Obj())).To(Succeed())
		g.Expect(k8s.Create(ctx, c)).To(Succeed())
		waitForPhase(g, c, v1alpha1.PhaseInitialized, time.Minute)
	}
	steps := watchSteps(t, ns, stepInterval)
	setImage(g, ns, other.Name, "podinfo:v2")
	waitForPhase(g, other, v1alpha1.PhaseProgressing, time.Minute)
	started := time.Now()
	setImage(g, ns, tested.Name, "podinfo:v2")
	opened := time.Now()

	waitForPhase(g, tested, v1alpha1.PhaseSucceeded, 3*time.Minute)
	took := time.Since(started)
	closed := time.Now()
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(tested), tested)).To(Succeed())
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(other), other)).To(Succeed())
	lags := steps.lags("other")
	counts := steps.countBetween(opened, closed)
	fmt.Printf("long_hook load_test_s=%.0f step_deadline_s=30 rollout_s=%.1f load_test_calls=%d answered=%d other_steps=%d other_steps_due=%d other_step_lag_p50_ms=%.0f other_step_lag_max_ms=%.0f\n",
		loadTest.Seconds(), took.Seconds(), calls.Load(), answered.Load(), counts["other"], int(closed.Sub(opened)/stepInterval),
		quantileMs(lags, 0.5), quantileMs(lags, 1))

	g.Expect(calls.Load()).To(Equal(int64(1)), "the load test ran once, to its end")
	g.Expect(answered.Load()).To(Equal(int64(1)))
	g.Expect(tested.Status.FailedChecks).To(BeZero(), "the load test failed no check")
	g.Expect(took).To(BeNumerically(">", loadTest), "the rollout waited for the load test")
	g.Expect(other.Status.FailedChecks).To(BeZero())
	g.Expect(lags).NotTo(BeEmpty())
	g.Expect(quantileMs(lags, 1)).To(BeNumerically("<", float64(heldLag.Milliseconds())), "the other Canary's longest step lag (ms): none waited for the load test")
}
