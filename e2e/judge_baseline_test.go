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
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// withJudgedBaseline judges podinfo's success rate against a baseline
// Deployment: 10s steps of 25% up to 50%, the judge reading 2s values over
// the last 6s of each step. maxDecreasePercent 1: with 0, two success
// rates of 100 % that Prometheus computes a float's last bit apart
// ("canary 100 % vs baseline 100 % (-1.11e-14 %, p = 0.0131): Low", seen
// on this testbed) fail the judge, which ranks the difference as real.
func withJudgedBaseline(c *v1alpha1.Canary) {
	a := c.Spec.Analysis
	a.Interval = &metav1.Duration{Duration: 10 * time.Second}
	a.StepWeight, a.MaxWeight = 25, 50
	a.Metrics = []v1alpha1.CanaryMetric{{
		Name:     v1alpha1.RequestSuccessRateCheck,
		Interval: &metav1.Duration{Duration: 6 * time.Second},
		Judge:    &v1alpha1.MetricJudge{Direction: v1alpha1.JudgeDecrease, MaxDecreasePercent: ptrFloat(1)},
	}}
	a.Judge = &v1alpha1.AnalysisJudge{Baseline: true, Step: &metav1.Duration{Duration: 2 * time.Second}}
}

// splitChange is the HTTPRoute's canary and baseline weights (-1: the
// baseline is not named) and when the route got them.
type splitChange struct {
	at               time.Time
	canary, baseline int
}

// recordSplits records every change of podinfo's three-way split.
func recordSplits(t *testing.T, ns string) func() []splitChange {
	t.Helper()
	return recordSplitsOf(t, ns, "podinfo")
}

// recordSplitsOf records every change of an app's three-way split.
func recordSplitsOf(t *testing.T, ns, app string) func() []splitChange {
	t.Helper()
	var mu sync.Mutex
	var changes []splitChange
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			r := &gatewayv1.HTTPRoute{}
			if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: app}, r); err == nil && len(r.Spec.Rules) > 0 {
				now := splitChange{at: time.Now(), baseline: -1}
				for _, b := range r.Spec.Rules[0].BackendRefs {
					switch string(b.Name) {
					case app + "-canary":
						now.canary = int(*b.Weight)
					case app + "-baseline":
						now.baseline = int(*b.Weight)
					}
				}
				mu.Lock()
				if n := len(changes); n == 0 || changes[n-1].canary != now.canary || changes[n-1].baseline != now.baseline {
					changes = append(changes, now)
				}
				mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
	return func() []splitChange {
		mu.Lock()
		defer mu.Unlock()
		return append([]splitChange(nil), changes...)
	}
}

// sideShares counts the samples of [from, to) by the workload whose pod
// answered: primary, baseline or canary (percentages), and their number.
func sideShares(l *testbed.Load, from, to time.Time) (map[string]float64, int) {
	samples := l.Samples(from, to)
	counts := map[string]int{}
	for _, s := range samples {
		_, pod, _ := strings.Cut(s.Pod, "/") // namespace/name
		switch {
		case strings.HasPrefix(pod, "podinfo-baseline-"):
			counts["baseline"]++
		case strings.HasPrefix(pod, "podinfo-primary-"):
			counts["primary"]++
		case pod != "":
			counts["canary"]++
		}
	}
	shares := map[string]float64{}
	for side, n := range counts {
		shares[side] = 100 * float64(n) / float64(len(samples))
	}
	return shares, len(samples)
}

// expectNoBaseline checks that no baseline serves: its Deployment scaled
// to zero (kept for the next analysis: the agent deletes no Deployment)
// with no ready endpoint, and the route no longer naming it; once its
// Canary is deleted (canaryGone), the garbage collector deleted it and
// its Service.
func expectNoBaseline(g Gomega, ns string, canaryGone bool) {
	expectNoBaselineOf(g, ns, "podinfo", canaryGone)
}

// expectNoBaselineOf is expectNoBaseline for an app's Canary.
func expectNoBaselineOf(g Gomega, ns, app string, canaryGone bool) {
	ctx := context.Background()
	baseline := app + "-baseline"
	g.Eventually(func(g Gomega) {
		d := &appsv1.Deployment{}
		err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: baseline}, d)
		if canaryGone {
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the baseline deployment outlived its Canary: %v", err)
			err = k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: baseline}, &corev1.Service{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the baseline service outlived its Canary: %v", err)
			return
		}
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(d.Spec.Replicas).NotTo(BeNil())
		g.Expect(*d.Spec.Replicas).To(BeZero(), "the baseline still runs pods")
		g.Expect(readyEndpoints(ns, baseline)).To(BeZero(), "the baseline still has ready endpoints")
		r := &gatewayv1.HTTPRoute{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: app}, r)).To(Succeed())
		for _, rule := range r.Spec.Rules {
			for _, b := range rule.BackendRefs {
				g.Expect(string(b.Name)).NotTo(Equal(baseline), "the route still names the baseline")
			}
		}
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
}

// A good revision judged against a baseline Deployment on real traffic:
// the baseline is made when the analysis starts, before the canary gets
// any request; at every weight the users' requests split primary /
// baseline / canary as 100-2w / w / w (within 5 points, counted by the pod
// that answered); the judge compares the canary with the baseline and
// passes; after the promotion the baseline is scaled to zero and off the
// route, and no user saw an error.
func TestJudgeBaseline_CreatedSharedRemoved(t *testing.T) {
	alone(t, "traffic shares within 5 points assume Traefik applies each split within 300 ms")
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := gatewayCanary(t, g, ns, withJudgedBaseline)
	splits := recordSplits(t, ns)
	start := time.Now()

	setImage(g, ns, "podinfo", "podinfo:v2")
	var madeAt time.Time
	g.Eventually(func(g Gomega) {
		b := &appsv1.Deployment{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo-baseline"}, b)).To(Succeed())
		g.Expect(metav1.IsControlledBy(b, c)).To(BeTrue(), "owned by the Canary")
		g.Expect(b.Spec.Template.Spec.Containers[0].Image).To(Equal("podinfo:v1"), "the primary's revision")
		madeAt = b.CreationTimestamp.Time
	}, 30*time.Second, 50*time.Millisecond).Should(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 120*time.Second)
	expectNoBaseline(g, ns, false)
	time.Sleep(time.Second) // the last requests
	end := time.Now()

	var firstCanaryTraffic time.Time
	measured := map[int]bool{}
	changes := splits()
	for i, ch := range changes {
		to := end
		if i+1 < len(changes) {
			to = changes[i+1].at
		}
		if ch.canary > 0 && firstCanaryTraffic.IsZero() {
			firstCanaryTraffic = ch.at
		}
		from := ch.at.Add(300 * time.Millisecond) // Traefik applies a route within ~100 ms
		if !from.Before(to) {
			continue
		}
		shares, n := sideShares(usersIn(ns), from, to)
		t.Logf("route canary %2d%% baseline %2d%%: %4d requests, answered by %v", ch.canary, ch.baseline, n, shares)
		if ch.canary == 0 || ch.baseline < 0 || n < 100 {
			continue
		}
		measured[ch.canary] = true
		g.Expect(ch.baseline).To(Equal(ch.canary), "the baseline gets the canary's weight")
		g.Expect(math.Abs(shares["baseline"]-float64(ch.canary))).To(BeNumerically("<=", 5), "baseline share at %d%%", ch.canary)
		g.Expect(math.Abs(shares["canary"]-float64(ch.canary))).To(BeNumerically("<=", 5), "canary share at %d%%", ch.canary)
		g.Expect(math.Abs(shares["primary"]-float64(100-2*ch.canary))).To(BeNumerically("<=", 5), "primary share at %d%%", ch.canary)
	}
	g.Expect(measured).To(HaveKey(25), "the 25%% step was measured")
	g.Expect(madeAt.Before(firstCanaryTraffic)).To(BeTrue(), "the baseline (%s) exists before the canary's first request (%s)", madeAt, firstCanaryTraffic)

	// The judge read both sides at every step with traffic: a baseline
	// side without values fails the metric's check ("0 baseline values"),
	// so passed checks with values are series of the baseline's Service,
	// which Prometheus holds from Traefik.
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
	var judged []string
	for _, rec := range c.Status.Analyses {
		for _, step := range rec.Steps {
			for _, check := range step.Checks {
				if step.Weight > 0 && (check.Name == v1alpha1.RequestSuccessRateCheck || check.Name == "judge") {
					judged = append(judged, fmt.Sprintf("weight %d: %s %s %s", step.Weight, check.Name, check.Value, check.Verdict))
				}
			}
		}
	}
	t.Logf("judged against the baseline: %v", judged)
	g.Expect(judged).To(ContainElement(MatchRegexp(`^weight 25: judge 100 `+v1alpha1.VerdictPassed+`$`)), "the judge passed at 25%%")
	// Over the last minutes: Traefik drops a removed Service's series.
	served, found, err := promValue(ctx, fmt.Sprintf(`sum(max_over_time(traefik_service_requests_total{service="%s-podinfo-baseline-http-%d@kubernetesgateway"}[5m]))`, ns, appPort))
	g.Expect(err).NotTo(HaveOccurred())
	t.Logf("Prometheus: the baseline's Service served %.0f requests (Traefik's series, which the judge read)", served)
	g.Expect(found && served > 0).To(BeTrue(), "Traefik's series of the baseline's Service")
	all := usersIn(ns).Counts(start, end)
	t.Logf("whole rollout: %d requests, by version %v, by code %v; baseline made %.1fs after the release, canary first routed %.1fs after",
		all.Total, all.ByVersion, all.ByCode, madeAt.Sub(start).Seconds(), firstCanaryTraffic.Sub(start).Seconds())
	g.Expect(all.Errors).To(BeZero(), "no user saw an error")
}

// An agent of its own, SIGKILLed while the baseline serves: restarted, it
// finishes the analysis and removes the baseline; killed again and the
// Canary deleted meanwhile, the restarted agent's finalizer takes the
// baseline off the route and removes it. No baseline is left behind.
func TestJudgeBaseline_AgentKilledLeavesNoOrphan(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	const shard = "judge-baseline"
	a, err := env.StartAgentWith(ctx, "..", testbed.AgentOptions{
		Name: "serin-agent-judge-baseline",
		Flags: append([]string{"--metrics-server=" + prom.URL, "--data-plane=traefik", "--log-level=debug",
			"--watch-label-selector=" + shardLabel + "=" + shard}, gitopsFlags...),
	})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = a.Kill() })
	ns := newNamespace(t)
	c := gatewayCanary(t, g, ns, withJudgedBaseline, func(c *v1alpha1.Canary) { c.Labels = map[string]string{shardLabel: shard} })

	// killWhileRouted kills the agent once the route gives the baseline
	// traffic.
	killWhileRouted := func() {
		g.Eventually(func(g Gomega) {
			r := &gatewayv1.HTTPRoute{}
			g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, r)).To(Succeed())
			weight := int32(-1)
			for _, b := range r.Spec.Rules[0].BackendRefs {
				if string(b.Name) == "podinfo-baseline" {
					weight = *b.Weight
				}
			}
			g.Expect(weight).To(BeNumerically(">", 0))
		}, 60*time.Second, 50*time.Millisecond).Should(Succeed(), "the baseline is routed")
		g.Expect(a.Kill()).To(Succeed())
		time.Sleep(2 * time.Second)
	}

	setImage(g, ns, "podinfo", "podinfo:v2")
	killWhileRouted()
	g.Expect(a.Start(ctx)).To(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 120*time.Second)
	expectNoBaseline(g, ns, false)
	t.Logf("killed mid-analysis and restarted: promoted, no baseline left")

	setImage(g, ns, "podinfo", "podinfo:v3")
	killWhileRouted()
	g.Expect(k8s.Delete(ctx, c)).To(Succeed())
	g.Expect(a.Start(ctx)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(c), &v1alpha1.Canary{}))
	}, 30*time.Second, 100*time.Millisecond).Should(BeTrue(), "the Canary's deletion completes")
	expectNoBaseline(g, ns, true)
	expectNoUserErrors(t, g, ns)
	t.Logf("killed mid-analysis, the Canary deleted meanwhile: no baseline left")
}

// judgedApp makes an app of its own on the Gateway, for a test with more
// than one: its Deployment (2 pods of app:v1, with podAnnotations), its
// Canary judging the success rate against a baseline (withJudgedBaseline)
// under the hostname shopHost(ns, app), Initialized, and its users.
func judgedApp(t *testing.T, g Gomega, ns, app string, podAnnotations map[string]string, mutate ...func(*v1alpha1.Canary)) (*v1alpha1.Canary, *testbed.Load) {
	t.Helper()
	ctx := context.Background()
	d := testobj.MakeDeployment(app, ns).Replicas(2).Image(app + ":v1")
	for k, v := range podAnnotations {
		d.PodAnnotation(k, v)
	}
	g.Expect(k8s.Create(ctx, d.Obj())).To(Succeed())
	routing := gatewayRouting(ns)
	routing.Hosts = []string{shopHost(ns, app)}
	c := testobj.MakeCanary(app, ns).Target("apps/v1", "Deployment", app).
		Routing(routing).
		ProgressDeadlineSeconds(30).
		Analysis(v1alpha1.CanaryAnalysis{Threshold: 2}).Obj()
	withJudgedBaseline(c)
	for _, m := range mutate {
		m(c)
	}
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseInitialized, 30*time.Second)
	load := startUsers(t, shopHost(ns, app))
	g.Eventually(func() string { return lastVersion(load) }, 15*time.Second).Should(Equal("v1"), "%s answers through the Gateway", app)
	return c, load
}

// releaseWithErrors rolls an app to image with errorPercent % of its
// answers failing (none when 0).
func releaseWithErrors(g Gomega, ns, app, image string, errorPercent int) {
	d := &appsv1.Deployment{}
	g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: app}, d)).To(Succeed())
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Template.Spec.Containers[0].Image = image
	if errorPercent > 0 {
		if d.Spec.Template.Annotations == nil {
			d.Spec.Template.Annotations = map[string]string{}
		}
		d.Spec.Template.Annotations[testbed.ErrorPercentAnnotation] = fmt.Sprint(errorPercent)
	}
	g.Expect(k8s.Patch(context.Background(), d, patch)).To(Succeed())
}

// One group release judged against baselines: a CanaryGroup of two apps,
// each Canary with analysis.judge.baseline. The release's api answers 20 %
// of its requests with 500s, web is healthy. Each member runs its own
// baseline; the judge fails api against its baseline, in words that name
// the metric, the group rolls both back (web with it, never promoted),
// both primaries keep v1, and neither baseline is left serving.
func TestJudgeBaseline_GroupReleaseRolledBackByTheJudge(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	apps := []string{"api", "web"}
	splits := map[string]func() []splitChange{}
	for _, app := range apps {
		judgedApp(t, g, ns, app, nil)
		splits[app] = recordSplitsOf(t, ns, app)
	}
	g.Expect(k8s.Create(ctx, &v1alpha1.CanaryGroup{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns},
		Spec: v1alpha1.CanaryGroupSpec{Window: &metav1.Duration{Duration: time.Second},
			Members: []v1alpha1.GroupMember{{Name: "api"}, {Name: "web"}}}})).To(Succeed())

	releaseWithErrors(g, ns, "api", "api:v2", 20)
	releaseWithErrors(g, ns, "web", "web:v2", 0)
	cg := &v1alpha1.CanaryGroup{}
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "shop"}, cg)).To(Succeed())
		g.Expect(cg.Status.Release).NotTo(BeNil())
		g.Expect(cg.Status.Phase).To(Equal(v1alpha1.PhaseFailed), "release: %+v", cg.Status.Release)
	}, 3*time.Minute, 200*time.Millisecond).Should(Succeed())
	t.Logf("the release's verdict: decided by %s: %s", cg.Status.Release.DecidedBy, cg.Status.Release.Message)
	g.Expect(cg.Status.Release.DecidedBy).To(Equal("api"))
	g.Expect(cg.Status.Release.Message).To(ContainSubstring("request-success-rate Low"), "the judge names the metric")
	g.Expect(cg.Status.Release.Message).To(MatchRegexp(
		`request-success-rate: canary [\d.]+ % vs baseline [\d.]+ % \(-[\d.]+ %(, 95 % CI \S+ to \S+ %)?, p [<=] [\d.]+\): Low`),
		"against the baseline, with its numbers")

	g.Eventually(func() v1alpha1.CanaryPhase {
		c := &v1alpha1.Canary{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, c)).To(Succeed())
		return c.Status.Phase
	}, 30*time.Second, 200*time.Millisecond).Should(Equal(v1alpha1.PhaseFailed), "web is rolled back with api")
	web := &v1alpha1.Canary{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, web)).To(Succeed())
	g.Expect(web.Status.Group).NotTo(BeNil())
	g.Expect(web.Status.Group.FailedBy).To(Equal("api"))
	g.Expect(web.Status.LastPromotedSpec).NotTo(Equal(web.Status.LastAppliedSpec), "web was never promoted")
	for _, app := range apps {
		primary := &appsv1.Deployment{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: app + "-primary"}, primary)).To(Succeed())
		g.Expect(primary.Spec.Template.Spec.Containers[0].Image).To(Equal(app+":v1"), "%s's primary keeps v1", app)
		expectNoBaselineOf(g, ns, app, false)
		g.Eventually(routeWeights(ns, app), 10*time.Second).Should(Equal("100/0"), "%s's route back on the primary", app)
		baselineRouted := false
		for _, ch := range splits[app]() {
			baselineRouted = baselineRouted || ch.baseline > 0
		}
		g.Expect(baselineRouted).To(BeTrue(), "%s's baseline served during the analysis", app)
	}
}

// A baseline whose pods never become Ready (the testbed's
// never-ready-as-baseline annotation on the primary's revision, which the
// baseline runs) is never routed: the HTTPRoute never names it with a
// weight, the step waits for it rather than judging against the primary,
// and past the progress deadline the Canary stalls with BaselineNotReady,
// saying what to do. No user sees an error meanwhile.
func TestJudgeBaseline_NeverReadyIsNeverRouted(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c, load := judgedApp(t, g, ns, "podinfo", map[string]string{testbed.NeverReadyAsBaselineAnnotation: "true"},
		func(c *v1alpha1.Canary) { c.Spec.ProgressDeadlineSeconds = ptrInt32(10) })
	splits := recordSplits(t, ns)
	start := time.Now()

	setImage(g, ns, "podinfo", "podinfo:v2")
	g.Eventually(func(g Gomega) {
		b := &appsv1.Deployment{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo-baseline"}, b)).To(Succeed())
		g.Expect(b.Status.Replicas).To(BeNumerically(">", 0), "the baseline's pods run")
		g.Expect(b.Status.ReadyReplicas).To(BeZero())
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	msg := waitForReason(g, c, v1alpha1.BaselineNotReadyReason, true, "baseline podinfo-baseline not ready within the progress deadline")
	t.Logf("stalled: %s", msg)
	g.Expect(readyEndpoints(ns, "podinfo-baseline")).To(BeZero())
	var judged []string
	for _, rec := range c.Status.Analyses {
		for _, step := range rec.Steps {
			for _, check := range step.Checks {
				if check.Name == "judge" {
					judged = append(judged, check.Message)
				}
			}
		}
	}
	g.Expect(judged).To(BeEmpty(), "no step was judged, against the primary or anything else")
	changes := splits()
	var seen []string
	for _, ch := range changes {
		seen = append(seen, fmt.Sprintf("canary %d%% baseline %d%%", ch.canary, ch.baseline))
	}
	t.Logf("route changes (a baseline of -1 %% is not named): %v", seen)
	g.Expect(changes).NotTo(BeEmpty())
	for _, ch := range changes {
		g.Expect(ch.baseline).To(BeNumerically("<=", 0), "the route gave the unready baseline a weight at %s", ch.at)
	}
	counts := load.Counts(start, time.Now().Add(-time.Second))
	t.Logf("users: %d requests, by version %v, by code %v", counts.Total, counts.ByVersion, counts.ByCode)
	g.Expect(counts.Total).To(BeNumerically(">", 0))
	g.Expect(counts.Errors).To(BeZero(), "a user saw an error")
}
