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
	"maps"
	"strconv"
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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/routing"
)

// A worker (a queue consumer: no Service, nothing calls it) rolled out by
// routing.provider replicas on the testbed's real Deployment controller:
// 4 replicas, the canary's weight its share of them (25 %, then 50 %).
// Every change of the namespace's pods and Deployments is checked as it
// happens: the canary never runs more pods than its share of the weight
// it has, the two sides never run fewer ready pods together than the 4
// the target asks for, and serin creates no Service and no route. A
// revision whose workers keep being OOM-killed (kwok reports 3 restarts
// of each of its pods) is rolled back by the built-in pod-restarts check
// at its first share, with one pod; a healthy one is promoted, and no pod
// of the old revision is left.
func TestWorkers_ReplicaShareRollsBackRestartsAndPromotes(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	const total = 4
	g.Expect(k8s.Create(ctx, testobj.MakeDeployment("worker", ns).Replicas(total).Image("worker:v1").Obj())).To(Succeed())
	c := testobj.MakeCanary("worker", ns).ProgressDeadlineSeconds(60).
		Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.ReplicasRouting}).
		Analysis(v1alpha1.CanaryAnalysis{
			Interval:    &metav1.Duration{Duration: interval},
			Threshold:   1,
			StepWeights: []int{25, 50},
			Metrics:     []v1alpha1.CanaryMetric{{Name: v1alpha1.PodRestartsCheck}},
		}).Obj()
	c.Spec.Service = v1alpha1.CanaryService{}
	g.Expect(k8s.Create(ctx, c)).To(Succeed())

	// The invariants, on every change the watch sees from here on.
	changed := make(chan struct{}, 1)
	cache := watchNamespace(t, ns, changed, &corev1.Pod{}, &appsv1.Deployment{})
	inv := &shareInvariants{total: total, steps: []int{25, 50}}
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			case <-changed:
				inv.sample(ctx, cache, ns)
			case <-time.After(500 * time.Millisecond):
				inv.sample(ctx, cache, ns)
			}
		}
	}()
	stopWatching := func() {
		select {
		case <-stop:
		default:
			close(stop)
			<-watched
		}
	}
	t.Cleanup(stopWatching)

	waitForPhase(g, c, v1alpha1.PhaseInitialized, 60*time.Second)
	g.Eventually(func() int32 { return readyPods(ctx, ns, "worker-primary") }, 30*time.Second, 100*time.Millisecond).
		Should(BeEquivalentTo(total), "the primary runs the target's 4 replicas")
	inv.arm()

	// A revision whose workers keep dying: rolled back at its first share.
	releaseRevision(g, ns, "worker", "worker:v2", map[string]string{
		testbed.RestartsAnnotation: "3", testbed.RestartReasonAnnotation: "OOMKilled"})
	waitForPhase(g, c, v1alpha1.PhaseFailed, 90*time.Second)
	record := whyStuck(c)
	t.Logf("rolled back: %s", record)
	g.Expect(record).To(MatchRegexp(`weight 25 Failed .*pod-restarts=\"3\" Failed "metric pod-restarts: 3 restarts of the canary's 1 pods > 0`),
		"rolled back by the pod-restarts check at the first share, one pod restarted 3 times")
	g.Expect(record).To(ContainSubstring("OOMKilled: worker-"), "the message names the cause and the pod")
	g.Expect(inv.report().maxCanary).To(BeEquivalentTo(1), "the failing revision ran one pod, its 25 %% share of 4, never more")
	g.Eventually(func() int32 { return readyPods(ctx, ns, "worker") }, 30*time.Second, 100*time.Millisecond).Should(BeZero(), "rolled back: the canary scaled to zero")
	g.Eventually(func() int32 { return readyPods(ctx, ns, "worker-primary") }, 30*time.Second, 100*time.Millisecond).
		Should(BeEquivalentTo(total), "the primary runs all 4 again")

	// A healthy revision: 25 %, 50 %, promoted.
	releaseRevision(g, ns, "worker", "worker:v3", map[string]string{})
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 120*time.Second)
	g.Eventually(func() int32 { return readyPods(ctx, ns, "worker") }, 30*time.Second, 100*time.Millisecond).Should(BeZero(), "promoted: the canary scaled to zero")
	g.Eventually(func(g Gomega) {
		pods := livePods(g, ns)
		for _, p := range pods {
			g.Expect(p.Spec.Containers[0].Image).To(Equal("worker:v3"), "no pod of an old revision left: %s", p.Name)
		}
		g.Expect(pods).To(HaveLen(total))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	stopWatching()

	seen := inv.report()
	g.Expect(seen.violations).To(BeEmpty())
	g.Expect(seen.maxCanary).To(BeEquivalentTo(2), "the healthy revision reached its 50 %% share, 2 of 4 pods, never more")
	g.Expect(seen.samples).To(BeNumerically(">", 20), "the invariants were checked on the rollouts' changes")
	t.Logf("invariants checked %d times; canary pods at most %d; ready pods together at least %d of %d",
		seen.samples, seen.maxCanary, seen.minReady, total)

	// Nothing to call: serin generated no Service and no route.
	var services corev1.ServiceList
	g.Expect(k8s.List(ctx, &services, client.InNamespace(ns))).To(Succeed())
	g.Expect(services.Items).To(BeEmpty(), "no Service for a worker")
	var routes gatewayv1.HTTPRouteList
	if err := k8s.List(ctx, &routes, client.InNamespace(ns)); err == nil {
		g.Expect(routes.Items).To(BeEmpty(), "no HTTPRoute for a worker")
	}
}

// A tired operator scales the primary by hand in the middle of a worker's
// rollout: serin puts the split back (what it generated is repaired), and
// a Canary that names a Service with routing.provider replicas, or none
// without it, is refused with a message that says what to change.
func TestWorkers_HandScaledPrimaryRepairedAndBadSpecsRefused(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	const total = 4
	g.Expect(k8s.Create(ctx, testobj.MakeDeployment("worker", ns).Replicas(total).Image("worker:v1").Obj())).To(Succeed())

	withService := testobj.MakeCanary("worker", ns).Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.ReplicasRouting}).Obj()
	err := k8s.Create(ctx, withService)
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("remove spec.service"))
	noService := testobj.MakeCanary("worker", ns).Obj()
	noService.Spec.Service = v1alpha1.CanaryService{}
	err = k8s.Create(ctx, noService)
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("spec.service is required"))
	dataPlaneCheck := testobj.MakeCanary("worker", ns).Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.ReplicasRouting}).
		Analysis(v1alpha1.CanaryAnalysis{Metrics: []v1alpha1.CanaryMetric{{Name: v1alpha1.RequestSuccessRateCheck}}}).Obj()
	dataPlaneCheck.Spec.Service = v1alpha1.CanaryService{}
	err = k8s.Create(ctx, dataPlaneCheck)
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("use pod-restarts"))

	c := testobj.MakeCanary("worker", ns).ProgressDeadlineSeconds(60).
		Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.ReplicasRouting}).
		Analysis(v1alpha1.CanaryAnalysis{
			Interval:    &metav1.Duration{Duration: interval},
			Threshold:   1,
			StepWeights: []int{50},
			Metrics:     []v1alpha1.CanaryMetric{{Name: v1alpha1.PodRestartsCheck}},
			Webhooks: []v1alpha1.CanaryWebhook{{
				Name: "hold", Type: v1alpha1.ConfirmPromotionHook, URL: newWebhook(t, 403).URL,
			}},
		}).Obj()
	c.Spec.Service = v1alpha1.CanaryService{}
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseInitialized, 60*time.Second)
	releaseRevision(g, ns, "worker", "worker:v2", map[string]string{})
	waitForPhase(g, c, v1alpha1.PhaseWaitingPromotion, 60*time.Second)
	primary := &appsv1.Deployment{}
	key := types.NamespacedName{Namespace: ns, Name: "worker-primary"}
	g.Expect(k8s.Get(ctx, key, primary)).To(Succeed())
	g.Expect(primary.Spec.Replicas).To(Equal(ptr.To(int32(2))), "at 50 %% the primary runs 2 of 4")
	g.Expect(primary.Annotations).To(HaveKeyWithValue(routing.ReplicasAnnotation, fmt.Sprint(total)))

	patch := client.MergeFrom(primary.DeepCopy())
	primary.Spec.Replicas = ptr.To(int32(1))
	g.Expect(k8s.Patch(ctx, primary, patch)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, key, primary)).To(Succeed())
		g.Expect(primary.Spec.Replicas).To(Equal(ptr.To(int32(2))))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed(), "serin put the primary's share back")
	canary := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "worker"}, canary)).To(Succeed())
	g.Expect(canary.Spec.Replicas).To(Equal(ptr.To(int32(2))), "the canary keeps its share")
}

// A worker's own metric, judged: every pod of the worker processes 20 jobs
// a second and counts them in testbed_jobs_total, by pod and outcome,
// which the real Prometheus scrapes. A MetricTemplate reads the share of
// failed jobs of the pods {{ pods }} names, and the judge compares the
// canary's pods with the primary's on it, series against series. A
// revision that fails 30 % of its jobs is rolled back at its 50 % share
// (the judge's Fail, the primary's jobs all ok); one that fails none is
// promoted.
func TestWorkers_JudgeComparesTheCanaryPodsWithThePrimarys(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	jobs := map[string]string{testbed.JobsPerSecondAnnotation: "20"}
	g.Expect(k8s.Create(ctx, testobj.MakeDeployment("worker", ns).Replicas(4).Image("worker:v1").
		PodAnnotation(testbed.JobsPerSecondAnnotation, "20").Obj())).To(Succeed())
	tpl := &v1alpha1.MetricTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "job-errors", Namespace: ns},
		Spec: v1alpha1.MetricTemplateSpec{
			Provider: v1alpha1.MetricProvider{Type: v1alpha1.PrometheusProvider, Address: prom.URL},
			Query: `100 * sum(rate(testbed_jobs_total{namespace="{{ namespace }}",pod=~"{{ pods }}",outcome="error"}[{{ interval }}]) or vector(0))
  / sum(rate(testbed_jobs_total{namespace="{{ namespace }}",pod=~"{{ pods }}"}[{{ interval }}]))`,
		},
	}
	g.Expect(k8s.Create(ctx, tpl)).To(Succeed())
	c := testobj.MakeCanary("worker", ns).ProgressDeadlineSeconds(60).
		Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.ReplicasRouting}).
		Analysis(v1alpha1.CanaryAnalysis{
			Interval:    &metav1.Duration{Duration: 10 * time.Second},
			Threshold:   1,
			StepWeights: []int{50},
			Metrics: []v1alpha1.CanaryMetric{{
				Name:        "job-errors",
				TemplateRef: &v1alpha1.TemplateReference{Name: "job-errors"},
				Interval:    &metav1.Duration{Duration: 6 * time.Second},
				Judge:       &v1alpha1.MetricJudge{Direction: v1alpha1.JudgeIncrease, MaxIncreasePercent: ptrFloat(1)},
			}},
			Judge: &v1alpha1.AnalysisJudge{Step: &metav1.Duration{Duration: 2 * time.Second}},
		}).Obj()
	c.Spec.Service = v1alpha1.CanaryService{}
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseInitialized, 60*time.Second)

	failing := map[string]string{testbed.ErrorPercentAnnotation: "30"}
	maps.Copy(failing, jobs)
	releaseRevision(g, ns, "worker", "worker:v2", failing)
	waitForPhase(g, c, v1alpha1.PhaseFailed, 120*time.Second)
	record := whyStuck(c)
	t.Logf("rolled back: %s", record)
	g.Expect(record).To(MatchRegexp(`weight 50 Failed .*\[judge=`), "the judge failed the step at the 50 %% share")
	g.Expect(record).To(ContainSubstring("job-errors"), "on the workers' own metric")

	releaseRevision(g, ns, "worker", "worker:v3", jobs)
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 120*time.Second)
	g.Expect(c.Status.Analyses).NotTo(BeEmpty())
	passed := c.Status.Analyses[0]
	g.Expect(passed.Result).To(Equal(v1alpha1.PhaseSucceeded))
	judged := false
	for _, st := range passed.Steps {
		for _, ch := range st.Checks {
			if ch.Name == "judge" && st.Weight == 50 {
				judged = true
				g.Expect(ch.Verdict).To(Equal("Passed"), "the judge passed the healthy revision: %s", ch.Message)
			}
		}
	}
	g.Expect(judged).To(BeTrue(), "the healthy revision was judged at its 50 %% share: %+v", passed.Steps)
}

// shareInvariants checks a replicas split on every sample: the canary's
// pods within the share of the weight serin gave it, and, once armed (the
// primary ready with all its replicas), never fewer ready pods on the two
// sides together than the total.
type shareInvariants struct {
	total int32
	// steps are the Canary's step weights.
	steps []int
	mu    sync.Mutex
	armed bool
	n     int
	// maxCanary is the most pods of the target seen at once since armed
	// (not being deleted).
	maxCanary int32
	// lowest is the fewest ready pods of both sides seen since armed.
	lowest int32
	// highest is the highest weight the primary recorded since armed.
	highest int
	bad     []string
}

func (s *shareInvariants) arm() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed, s.lowest, s.maxCanary = true, s.total, 0
}

func (s *shareInvariants) sample(ctx context.Context, r client.Reader, ns string) {
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		return
	}
	primary := &appsv1.Deployment{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: ns, Name: "worker-primary"}, primary); err != nil && !apierrors.IsNotFound(err) {
		return
	}
	canaryPods, ready := int32(0), int32(0)
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Labels["app"] == "worker" {
			canaryPods++
		}
		if podReady(&p) {
			ready++
		}
	}
	weight, _ := strconv.Atoi(primary.Annotations[routing.CanaryWeightAnnotation])
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.armed {
		return
	}
	s.n++
	s.maxCanary = max(s.maxCanary, canaryPods)
	s.lowest = min(s.lowest, ready)
	if ready < s.total {
		s.bad = append(s.bad, fmt.Sprintf("%s: %d pods ready on both sides, fewer than the %d replicas", time.Now().Format(time.StampMilli), ready, s.total))
	}
	// The canary's pods are within the share of the weight the primary
	// records, or of the step after it, which the router writes on the
	// canary first (and the first share is what the canary is scaled up
	// to before its first step); once the weight is back to 0 after a
	// promotion, within the last share until serin scales it down.
	s.highest = max(s.highest, weight)
	next := weight
	for _, w := range s.steps {
		if w > weight {
			next = w
			break
		}
	}
	if limit := routing.CanaryReplicas(max(next, s.highest), s.total); canaryPods > limit {
		s.bad = append(s.bad, fmt.Sprintf("%s: the canary runs %d pods at weight %d, more than %d", time.Now().Format(time.StampMilli), canaryPods, weight, limit))
	}
}

// shareReport is what the invariants saw so far.
type shareReport struct {
	samples             int
	maxCanary, minReady int32
	violations          string
}

func (s *shareInvariants) report() shareReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := shareReport{samples: s.n, maxCanary: s.maxCanary, minReady: s.lowest, violations: strings.Join(s.bad, "\n")}
	if len(s.bad) > 10 {
		r.violations = strings.Join(s.bad[:10], "\n") + fmt.Sprintf("\n… and %d more", len(s.bad)-10)
	}
	return r
}

// livePods are the pods of ns (with opts, e.g. labels) that are not being
// deleted.
func livePods(g Gomega, ns string, opts ...client.ListOption) []corev1.Pod {
	var pods corev1.PodList
	g.Expect(k8s.List(context.Background(), &pods, append([]client.ListOption{client.InNamespace(ns)}, opts...)...)).To(Succeed())
	live := pods.Items[:0]
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			live = append(live, p)
		}
	}
	return live
}

// readyPods counts the Ready pods labelled app=app in ns that are not
// being deleted.
func readyPods(ctx context.Context, ns, app string) int32 {
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
		return -1
	}
	n := int32(0)
	for i := range pods.Items {
		if pods.Items[i].DeletionTimestamp == nil && podReady(&pods.Items[i]) {
			n++
		}
	}
	return n
}
