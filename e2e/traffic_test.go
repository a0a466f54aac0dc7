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
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/record"
	"github.com/serin-dev/serin/internal/testing/testbed"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// weightChange is a canary weight and when the HTTPRoute got it.
type weightChange struct {
	at     time.Time
	canary int
}

// weightTimeline records when the route's canary weight changes.
type weightTimeline struct {
	mu      sync.Mutex
	changes []weightChange
}

func recordWeights(t *testing.T, ns, name string) *weightTimeline {
	t.Helper()
	tl := &weightTimeline{}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			r := &gatewayv1.HTTPRoute{}
			if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, r); err == nil && len(r.Spec.Rules) > 0 {
				w := 0
				for _, b := range r.Spec.Rules[0].BackendRefs {
					if string(b.Name) == name+"-canary" && b.Weight != nil {
						w = int(*b.Weight)
					}
				}
				tl.mu.Lock()
				if n := len(tl.changes); n == 0 || tl.changes[n-1].canary != w {
					tl.changes = append(tl.changes, weightChange{at: time.Now(), canary: w})
				}
				tl.mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
	return tl
}

// window is the requests the users sent while one weight was in force.
type window struct {
	canary int
	from   time.Time
	to     time.Time
}

// windows returns the periods of each weight up to end, each starting
// settle after the weight was written (the data plane applies a weight
// within ~100 ms) and ending when the next one was written, or at end.
func (tl *weightTimeline) windows(end time.Time, settle time.Duration) []window {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var out []window
	for i, c := range tl.changes {
		to := end
		if i+1 < len(tl.changes) && tl.changes[i+1].at.Before(end) {
			to = tl.changes[i+1].at
		}
		if from := c.at.Add(settle); from.Before(to) {
			out = append(out, window{canary: c.canary, from: from, to: to})
		}
	}
	return out
}

// A good revision on real traffic, judged by the built-in checks: at every
// step the share of the users' requests that v2 answered is the canary's
// weight within 5 points, and no user sees an error during the whole
// rollout.
func TestTraffic_SharesFollowTheWeights(t *testing.T) {
	alone(t, "traffic shares within 5 points of 2 s steps assume Traefik applies weights within 300 ms")
	g := NewWithT(t)
	ns := newNamespace(t)
	c := gatewayCanary(t, g, ns, withBuiltinChecks)
	tl := recordWeights(t, ns, "podinfo")
	phases := samplePhases(t, c)
	start := time.Now()

	setImage(g, ns, "podinfo", "podinfo:v2")
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 90*time.Second)
	time.Sleep(time.Second) // the last requests
	end := time.Now()

	// The shares are the analysis's: once the promotion starts the primary
	// runs v2 too, whatever the weights (it waits there for the old
	// primary pods to leave and the data plane to apply it).
	promoting := phases.firstAt(string(v1alpha1.PhasePromoting))
	g.Expect(promoting).NotTo(BeZero(), "the promotion was seen")
	stepped := map[int]bool{}
	for _, w := range tl.windows(promoting, 300*time.Millisecond) {
		seen := usersIn(ns).Counts(w.from, w.to)
		if seen.Total < 20 {
			continue // too short a window to measure a share
		}
		share := seen.Share("v2")
		t.Logf("weight %3d%%: %4d requests, v2 answered %5.1f%% (by version %v)", w.canary, seen.Total, share, seen.ByVersion)
		if w.canary > 0 && w.canary < 100 {
			stepped[w.canary] = true
			g.Expect(math.Abs(share-float64(w.canary))).To(BeNumerically("<=", 5),
				"at weight %d the canary answered %.1f%% of the requests", w.canary, share)
		}
	}
	g.Expect(stepped).To(HaveLen(3), "20, 40 and 60 were each measured")
	all := usersIn(ns).Counts(start, end)
	t.Logf("whole rollout: %d requests, by version %v, by code %v", all.Total, all.ByVersion, all.ByCode)
	g.Expect(all.Errors).To(BeZero(), "no user saw an error")
	g.Expect(lastVersion(usersIn(ns))).To(Equal("v2"), "the promoted v2 serves every user")
}

// A revision that answers 10% of its requests with 500 fails the built-in
// request-success-rate check on the traffic it served and is rolled back;
// the users' errors never exceed what the weights allowed: 10% of the
// canary's share.
func TestTraffic_ErroringRevisionIsRolledBack(t *testing.T) {
	alone(t, "bounds the canary's errors by the weights of 2 s steps, which Traefik must apply at once")
	g := NewWithT(t)
	ns := newNamespace(t)
	c := gatewayCanary(t, g, ns, withBuiltinChecks)
	tl := recordWeights(t, ns, "podinfo")
	start := time.Now()

	releaseRevision(g, ns, "podinfo", "podinfo:v3", erroring(10))
	waitForPhase(g, c, v1alpha1.PhaseFailed, 90*time.Second)
	time.Sleep(time.Second)
	end := time.Now()

	allowed := 0.0
	for _, w := range tl.windows(end, 0) {
		seen := usersIn(ns).Counts(w.from, w.to)
		allowed += float64(seen.Total) * float64(w.canary) / 100 * 0.10
	}
	all := usersIn(ns).Counts(start, end)
	t.Logf("rollout: %d requests, %d errors (the weights allowed %.1f), by version %v, by code %v",
		all.Total, all.Errors, allowed, all.ByVersion, all.ByCode)
	g.Expect(all.Errors).To(BeNumerically(">", 0), "v3 really errs")
	var failed []string
	var events corev1.EventList
	g.Expect(k8s.List(context.Background(), &events, client.InNamespace(ns), client.MatchingFields{"involvedObject.kind": "Canary"})).To(Succeed())
	for _, e := range events.Items {
		if e.Reason == "CheckFailed" {
			failed = append(failed, e.Message)
		}
	}
	g.Expect(failed).To(ContainElement(MatchRegexp(`metric request-success-rate: \d+(\.\d+)? < 99 \(thresholdRange.min\)`)), "rolled back by request-success-rate")
	g.Expect(all.ByCode).To(HaveLen(2), "200s and the app's 500s, nothing else (%v)", all.ByCode)
	g.Expect(float64(all.Errors)).To(BeNumerically("<=", allowed*1.5+3), "errors beyond the canary's share")
	g.Expect(lastVersion(usersIn(ns))).To(Equal("v1"), "after the rollback the primary (v1) serves every user")
	after := usersIn(ns).Counts(end, time.Time{})
	g.Expect(after.Errors).To(BeZero())

	expectAnalysisRecord(t, g, c, all.Errors > 0)
}

// expectAnalysisRecord checks what a rollback by request-success-rate
// leaves behind, once its events are gone (deleted here, as the API server
// drops them after an hour): the analysis record in the status with the
// measured values against their range, `serin get canary` showing them,
// and the agent's serin_canary_metric_value gauge.
func expectAnalysisRecord(t *testing.T, g Gomega, c *v1alpha1.Canary, erred bool) {
	ctx := context.Background()
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
	g.Expect(c.Status.Analyses).NotTo(BeEmpty(), "status.analyses records the rollout")
	rec := c.Status.Analyses[0]
	g.Expect(rec.Result).To(Equal(v1alpha1.PhaseFailed))
	g.Expect(rec.Spec).To(Equal(c.Status.LastAppliedSpec))
	g.Expect(rec.Message).To(ContainSubstring("rolled back"))
	g.Expect(rec.FinishedAt).NotTo(BeNil())
	var failedValues []float64
	var weights []int
	for _, s := range rec.Steps {
		weights = append(weights, s.Weight)
		for _, check := range s.Checks {
			if check.Name != v1alpha1.RequestSuccessRateCheck {
				continue
			}
			g.Expect(check.Min).To(Equal("99"))
			if check.Verdict == v1alpha1.VerdictFailed && check.Value != "" {
				v, ok := record.ParseValue(check.Value)
				g.Expect(ok).To(BeTrue(), "value %q", check.Value)
				failedValues = append(failedValues, v)
			}
		}
	}
	t.Logf("analysis record: %d steps at weights %v, failed values %v; %s", len(rec.Steps), weights, failedValues, record.Summary(&rec))
	g.Expect(failedValues).NotTo(BeEmpty(), "the failed steps recorded the success rate they measured")
	if erred {
		for _, v := range failedValues {
			// v3 answers 10% of its requests with 500: about 90%.
			g.Expect(v).To(BeNumerically("<", 99))
			g.Expect(v).To(BeNumerically(">", 50))
		}
	}

	// The Failed alert (the phase's event, sent as a Flux event and to
	// the Providers alike) carries the values that decided it.
	var events corev1.EventList
	g.Expect(k8s.List(ctx, &events, client.InNamespace(c.Namespace), client.MatchingFields{"involvedObject.kind": "Canary"})).To(Succeed())
	var alerts []string
	for _, e := range events.Items {
		if e.Reason == string(v1alpha1.PhaseFailed) {
			alerts = append(alerts, e.Message)
		}
	}
	g.Expect(alerts).To(ContainElement(MatchRegexp(`; analysis at weight \d+: request-success-rate \d+(\.\d+)? \(min 99\): Failed`)))

	// An hour later the events are gone; the record is not. (An event
	// the agent's recorder sends late is deleted too.)
	g.Eventually(func() int {
		g.Expect(k8s.DeleteAllOf(ctx, &corev1.Event{}, client.InNamespace(c.Namespace))).To(Succeed())
		var events corev1.EventList
		_ = k8s.List(ctx, &events, client.InNamespace(c.Namespace))
		return len(events.Items)
	}, 10*time.Second, 500*time.Millisecond).Should(BeZero())
	out, stderr, err := runCLI("get", "canary", c.Name, "-n", c.Namespace)
	g.Expect(err).NotTo(HaveOccurred(), stderr)
	t.Logf("serin get canary, the events gone:\n%s", out)
	g.Expect(out).To(MatchRegexp(`Events:\s+<none>`))
	g.Expect(out).To(MatchRegexp(`Decided by:\s+request-success-rate \d+(\.\d+)? \(min 99\): Failed`))
	g.Expect(out).To(MatchRegexp(`REQUEST-SUCCESS-RATE \(min 99\)`))
	g.Expect(out).To(MatchRegexp(`Failed\s+\d+(\.\d+)? ✗`))

	metrics, err := scrape(agent.MetricsURL)
	g.Expect(err).NotTo(HaveOccurred())
	series := fmt.Sprintf(`serin_canary_metric_value{metric="%s",name="%s",namespace="%s"}`, v1alpha1.RequestSuccessRateCheck, c.Name, c.Namespace)
	lastStep := rec.Steps[len(rec.Steps)-1]
	i := slices.IndexFunc(lastStep.Checks, func(c v1alpha1.CheckResult) bool { return c.Name == v1alpha1.RequestSuccessRateCheck })
	g.Expect(i).To(BeNumerically(">=", 0))
	if last := lastStep.Checks[i].Value; last != "" {
		g.Expect(metrics).To(HaveKey(series))
		g.Expect(record.FormatValue(metrics[series])).To(Equal(last), "the gauge holds the last step's value")
	} else {
		g.Expect(metrics).NotTo(HaveKey(series), "a check without a value has no series")
	}
}

// Blue/green through the data plane: a route sends the users to the apex
// Service; while v2 is analysed (on the traffic a tester sends to the
// canary Service) the users see v1 only, then the selector switch makes
// them see v2, without an error.
func TestTraffic_BlueGreenThroughTheApexService(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	g.Expect(k8s.Create(ctx, testobj.MakeDeployment("podinfo", ns).Replicas(2).Image("podinfo:v1").Obj())).To(Succeed())
	c := testobj.MakeCanary("podinfo", ns).ProgressDeadlineSeconds(30).Analysis(v1alpha1.CanaryAnalysis{
		Interval:   &metav1.Duration{Duration: interval},
		Threshold:  2,
		Iterations: 3,
		Metrics:    []v1alpha1.CanaryMetric{errorRateTemplate(t, ns)},
	}).Obj()
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseInitialized, 30*time.Second)
	startBlueGreenTraffic(t, g, ns)

	setImage(g, ns, "podinfo", "podinfo:v2")
	expectV1OnlyDuringIterations(g, c)

	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 60*time.Second)
	g.Eventually(func() string { return lastVersion(usersIn(ns)) }, 5*time.Second).Should(Equal("v2"))
	expectNoUserErrors(t, g, ns)
}

// Blue/green on the HTTPRoute (gatewayapi with iterations): during the
// analysis the route keeps every user on the primary (v1) while the
// canary tester calls the canary; the promotion sends everyone to the
// canary while the primary rolls, then back to the primary, on v2, with
// no client error. The weights walk 100/0 → 0/100 → 100/0 and nothing else.
func TestTraffic_BlueGreenOnTheHTTPRoute(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ns := newNamespace(t)
	c := gatewayCanary(t, g, ns, func(c *v1alpha1.Canary) {
		c.Spec.Analysis.StepWeight, c.Spec.Analysis.MaxWeight, c.Spec.Analysis.Iterations = 0, 0, 3
	})
	routes := sample(t, routeWeights(ns, "podinfo"))
	startCanaryTester(t, g, ns, "podinfo")

	setImage(g, ns, "podinfo", "podinfo:v2")
	expectV1OnlyDuringIterations(g, c)

	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 60*time.Second)
	g.Expect(c.Status.Iterations).To(Equal(3))
	var iterations []int
	for _, s := range c.Status.Analyses[0].Steps {
		iterations = append(iterations, s.Iteration)
	}
	g.Expect(iterations).To(Equal([]int{1, 2, 3}), "the record numbers the iterations")
	g.Eventually(func() string { return lastVersion(usersIn(ns)) }, 5*time.Second).Should(Equal("v2"))
	g.Eventually(routes.seen).Should(Equal([]string{"100/0", "0/100", "100/0"}), "HTTPRoute weights, primary/canary")
	expectNoUserErrors(t, g, ns)
}

// expectV1OnlyDuringIterations waits for a blue/green analysis of v2 to
// take two iterations and checks that the users saw v1 only meanwhile.
func expectV1OnlyDuringIterations(g Gomega, c *v1alpha1.Canary) {
	waitForPhase(g, c, v1alpha1.PhaseProgressing, 30*time.Second)
	analysing := time.Now()
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(c.Status.Iterations).To(BeNumerically(">=", 2))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	during := usersIn(c.Namespace).Counts(analysing, time.Now())
	g.Expect(during.ByVersion).To(Equal(map[string]int{"v1": during.Total}), "during the analysis the users see v1 only")
}

// startOnce starts the users of ns unless they run already.
func startOnce(t *testing.T, ns string) *testbed.Load {
	if l, ok := users.Load(ns); ok {
		return l.(*testbed.Load)
	}
	l := startUsers(t, appHost(ns))
	users.Store(ns, l)
	return l
}

// The seed case of Flagger #1898 where the primary's old pods go away: the
// app rolls out with the Recreate strategy, and the promoted primary's new
// pods never become ready. serin sends all traffic to the analysed canary
// before the primary rolls, halts with the canary serving, and restores
// the primary when Git reverts the revision: no user sees an error.
func TestTraffic_RecreatePrimaryFailsInPromotion(t *testing.T) {
	alone(t, "5 s progress deadline that a loaded testbed misses")
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := safetyCanary(t, g, ns)
	d := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, d)).To(Succeed())
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	g.Expect(k8s.Patch(ctx, d, patch)).To(Succeed()) // no new revision: the strategy is not part of it
	inv := watchInvariants(t, ns)

	breakPromotion(g, ns, "podinfo:v4")
	waitForPhase(g, c, v1alpha1.PhaseHalted, 90*time.Second)
	g.Expect(routeWeights(ns, "podinfo")()).To(Equal("0/100"), "all traffic on the canary")
	g.Eventually(func() string { return lastVersion(usersIn(ns)) }, 5*time.Second).Should(Equal("v4"))
	g.Expect(readyEndpoints(ns, "podinfo-canary")).To(Equal(2))

	// Git reverts v4. With Recreate, the target (the canary serving every
	// request) loses all its pods the moment Flux applies the revert, before
	// serin can see it: that window belongs to the app's strategy, not to a
	// routing decision, so the sampler stops here. serin routes to the
	// restored primary as soon as it serves (the Shield event).
	inv.Stop()
	fixTemplate(g, ns, "podinfo:v1")
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 90*time.Second)
	g.Expect(routeWeights(ns, "podinfo")()).To(Equal("100/0"))
	g.Eventually(func() string { return lastVersion(usersIn(ns)) }, 5*time.Second).Should(Equal("v1"))
	expectNoUserErrors(t, g, ns)
}

// A route the gateway does not accept never counts as shifted: the Canary
// names a listener the Gateway does not have, Traefik reports the route
// not Accepted, and the analysis waits at its first weight with the
// parent's message in Ready instead of stepping on.
func TestTraffic_RejectedRouteNeverCountsAsShifted(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	g.Expect(k8s.Create(ctx, testobj.MakeDeployment("podinfo", ns).Replicas(1).Image("podinfo:v1").Obj())).To(Succeed())
	routing := gatewayRouting(ns)
	routing.GatewayRefs[0].SectionName = "no-such-listener"
	c := testobj.MakeCanary("podinfo", ns).Routing(routing).ProgressDeadlineSeconds(60).Analysis(v1alpha1.CanaryAnalysis{
		Interval: &metav1.Duration{Duration: interval}, Threshold: 2, StepWeight: 20, MaxWeight: 60,
	}).Obj()
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseInitialized, 30*time.Second)

	setImage(g, ns, "podinfo", "podinfo:v2")
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(conditions.GetReason(c, meta.ReadyCondition)).To(Equal(v1alpha1.RouteNotProgrammedReason))
		g.Expect(conditions.GetMessage(c, meta.ReadyCondition)).To(ContainSubstring("gateway " + testbed.GatewayNamespace + "/" + testbed.GatewayName))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	t.Logf("Ready: %s", conditions.GetMessage(c, meta.ReadyCondition))
	stuck := c.Status.CanaryWeight
	g.Consistently(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(c.Status.Phase).To(Equal(v1alpha1.PhaseProgressing))
		g.Expect(c.Status.CanaryWeight).To(Equal(stuck), "no step while the gateway has not accepted the weights")
	}, 3*interval, 200*time.Millisecond).Should(Succeed())
}
