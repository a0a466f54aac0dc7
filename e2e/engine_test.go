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
	"testing"
	"time"

	kstatus "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

const interval = 2 * time.Second

// kstatusOf computes the Canary's status as Flux's health checks do
// (kstatus, github.com/fluxcd/cli-utils).
func kstatusOf(g Gomega, c *v1alpha1.Canary) kstatus.Status {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c)
	g.Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind(v1alpha1.CanaryKind))
	res, err := kstatus.Compute(u)
	g.Expect(err).NotTo(HaveOccurred())
	return res.Status
}

// gatewayCanary sets up a Deployment podinfo with its Canary on Gateway API
// weights 20, 40, 60 on the testbed's Traefik, checking the error rate of
// the canary's real traffic through Prometheus, waits until it is
// Initialized, and starts the app's users (requests through the Gateway).
func gatewayCanary(t *testing.T, g Gomega, ns string, mutate ...func(*v1alpha1.Canary)) *v1alpha1.Canary {
	ctx := context.Background()
	g.Expect(k8s.Create(ctx, testobj.MakeDeployment("podinfo", ns).Replicas(2).Image("podinfo:v1").Obj())).To(Succeed())
	metric := errorRateTemplate(t, ns)
	c := testobj.MakeCanary("podinfo", ns).
		Routing(gatewayRouting(ns)).
		ProgressDeadlineSeconds(30).
		Analysis(v1alpha1.CanaryAnalysis{
			Interval:   &metav1.Duration{Duration: interval},
			Threshold:  2,
			StepWeight: 20,
			MaxWeight:  60,
			Metrics:    []v1alpha1.CanaryMetric{metric},
		}).Obj()
	for _, m := range mutate {
		m(c)
	}
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseInitialized, 30*time.Second)
	load := startUsers(t, appHost(ns))
	users.Store(ns, load)
	g.Eventually(func() string { return lastVersion(load) }, 10*time.Second).ShouldNot(BeEmpty(), "the app answers through the Gateway")
	return c
}

// A good revision walks the HTTPRoute weights 0→20→40→60, is promoted, and
// ends with the primary running it and the canary at zero.
func TestEngine_GatewayAPIGoodRevisionPromotes(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := gatewayCanary(t, g, ns)
	tr := recordTranscript(t, c)
	routes := sample(t, routeWeights(ns, "podinfo"))

	setImage(g, ns, "podinfo", "podinfo:v2")
	waitForPhase(g, c, v1alpha1.PhaseProgressing, 30*time.Second)
	g.Expect(kstatusOf(g, c)).To(Equal(kstatus.InProgressStatus), "a Flux health check keeps waiting during the analysis")
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 90*time.Second)
	g.Expect(kstatusOf(g, c)).To(Equal(kstatus.CurrentStatus), "and passes once promoted")

	tr.endsWith(g, v1alpha1.PhaseSucceeded)
	// What the data plane was told and what the analysis judged come
	// first: a transcript that differs after them points at the watch.
	g.Eventually(routes.seen).Should(Equal([]string{"100/0", "80/20", "60/40", "40/60", "100/0"}), "HTTPRoute weights, primary/canary")
	g.Expect(stepWeights(c)).To(Equal("[0:Passed 20:Passed 40:Passed 60:Passed]"), "the steps of the analysis record")
	compareGolden(t, "engine-gatewayapi-promote", tr.since("Progressing"))
	g.Expect(conditions.IsReady(c)).To(BeTrue())
	g.Expect(conditions.IsTrue(c, v1alpha1.PromotedCondition)).To(BeTrue())
	g.Expect(c.Status.LastPromotedSpec).To(Equal(c.Status.LastAppliedSpec))

	primary, target := &appsv1.Deployment{}, &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo-primary"}, primary)).To(Succeed())
	g.Expect(primary.Spec.Template.Spec.Containers[0].Image).To(Equal("podinfo:v2"))
	g.Expect(primary.Status.AvailableReplicas).To(Equal(int32(2)))
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, target)).To(Succeed())
		g.Expect(target.Status.Replicas).To(BeZero())
	}, 10*time.Second).Should(Succeed())
	g.Expect(routeWeights(ns, "podinfo")()).To(Equal("100/0"))
}

// A bad revision fails its checks until the threshold and is rolled back:
// all traffic on the primary, which still runs the old revision.
func TestEngine_BadRevisionRollsBack(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := gatewayCanary(t, g, ns)
	tr := recordTranscript(t, c)

	releaseRevision(g, ns, "podinfo", "podinfo:v3", erroring(50))
	waitForPhase(g, c, v1alpha1.PhaseFailed, 90*time.Second)

	tr.endsWith(g, v1alpha1.PhaseFailed)
	compareGolden(t, "engine-rollback", tr.since("Progressing"))
	g.Expect(kstatusOf(g, c)).To(Equal(kstatus.FailedStatus), "a Flux health check fails on a rollback")
	g.Expect(conditions.IsStalled(c)).To(BeTrue())
	g.Expect(conditions.GetMessage(c, meta.StalledCondition)).To(ContainSubstring("2 failed checks reached the threshold of 2"))
	g.Expect(c.Status.FailedChecks).To(Equal(2))

	primary := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo-primary"}, primary)).To(Succeed())
	g.Expect(primary.Spec.Template.Spec.Containers[0].Image).To(Equal("podinfo:v1"))
	g.Expect(routeWeights(ns, "podinfo")()).To(Equal("100/0"))

	var events corev1.EventList
	g.Expect(k8s.List(ctx, &events, client.InNamespace(ns), client.MatchingFields{"involvedObject.kind": "Canary"})).To(Succeed())
	var checkFailed []string
	for _, e := range events.Items {
		if e.Reason == "CheckFailed" {
			checkFailed = append(checkFailed, e.Message)
		}
	}
	g.Expect(checkFailed).To(ContainElement(MatchRegexp(`metric error-rate: \d+(\.\d+)? > 1 \(thresholdRange.max\)`)))
}

// A confirm-promotion webhook holds the canary in WaitingPromotion until it
// answers 200.
func TestEngine_ConfirmPromotionGate(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ns := newNamespace(t)
	gate := newWebhook(t, 403)
	c := gatewayCanary(t, g, ns, func(c *v1alpha1.Canary) {
		c.Spec.Analysis.Webhooks = []v1alpha1.CanaryWebhook{{Name: "approve", Type: v1alpha1.ConfirmPromotionHook, URL: gate.URL,
			Metadata: map[string]string{"team": "web"}}}
	})

	setImage(g, ns, "podinfo", "podinfo:v2")
	waitForPhase(g, c, v1alpha1.PhaseWaitingPromotion, 90*time.Second)
	g.Expect(c.Status.CanaryWeight).To(Equal(60))
	g.Consistently(func(g Gomega) {
		g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(c.Status.Phase).To(Equal(v1alpha1.PhaseWaitingPromotion))
	}, 3*interval, 200*time.Millisecond).Should(Succeed())
	g.Expect(len(gate.received())).To(BeNumerically(">=", 2), "the gate is asked at every interval")
	p := gate.received()[0]
	g.Expect(p.Name).To(Equal("podinfo"))
	g.Expect(p.Namespace).To(Equal(ns))
	g.Expect(p.Checksum).To(Equal(c.Status.LastAppliedSpec))
	g.Expect(p.Metadata).To(Equal(map[string]string{"team": "web"}))

	gate.status.Store(200)
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 30*time.Second)
}

// Blue/green with the kubernetes router: the apex Service keeps selecting
// the primary for the iterations, switches to the canary for the promotion,
// and back to the promoted primary.
func TestEngine_BlueGreenIterations(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	g.Expect(k8s.Create(ctx, testobj.MakeDeployment("podinfo", ns).Replicas(2).Image("podinfo:v1").Obj())).To(Succeed())
	hook := newWebhook(t, 200)
	c := testobj.MakeCanary("podinfo", ns).Analysis(v1alpha1.CanaryAnalysis{
		Interval:   &metav1.Duration{Duration: interval},
		Threshold:  2,
		Iterations: 3,
		Metrics:    []v1alpha1.CanaryMetric{errorRateTemplate(t, ns)},
		Webhooks: []v1alpha1.CanaryWebhook{
			{Name: "load-test", Type: v1alpha1.RolloutHook, URL: hook.URL + "/rollout"},
			{Name: "smoke", Type: v1alpha1.PreRolloutHook, URL: hook.URL + "/pre"},
			{Name: "events", Type: v1alpha1.EventHook, URL: hook.URL + "/events"},
		},
	}).Obj()
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseInitialized, 30*time.Second)
	// The load test the rollout hook stands for: requests to the canary
	// Service through the Gateway, which the error-rate check judges.
	startCanaryTester(t, g, ns, "podinfo")
	apex := func() string {
		svc := &corev1.Service{}
		if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, svc); err != nil {
			return "none"
		}
		return svc.Spec.Selector["app"]
	}
	tr := recordTranscript(t, c)
	selectors := sample(t, apex)

	setImage(g, ns, "podinfo", "podinfo:v2")
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 90*time.Second)
	tr.endsWith(g, v1alpha1.PhaseSucceeded)
	compareGolden(t, "engine-bluegreen", tr.since("Progressing"))
	g.Eventually(selectors.seen).Should(Equal([]string{"podinfo-primary", "podinfo", "podinfo-primary"}), "the apex Service's selector")
	g.Expect(c.Status.Iterations).To(Equal(3))
	g.Expect(apex()).To(Equal("podinfo-primary"))
	g.Expect(len(hook.received())).To(BeNumerically(">=", 4), "pre-rollout once, then rollout at each iteration")
	g.Eventually(func() []string {
		var events []string
		for _, p := range hook.received() {
			if p.Type == string(v1alpha1.EventHook) {
				events = append(events, p.Metadata["eventMessage"])
			}
		}
		return events
	}, 5*time.Second).Should(ContainElement(ContainSubstring("promotion of revision")), "event webhooks receive every event")
}

// A new revision during the analysis sends all traffic back to the primary
// and restarts the analysis of the newest revision, which is the one promoted.
func TestEngine_NewRevisionRestartsAnalysis(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := gatewayCanary(t, g, ns)

	setImage(g, ns, "podinfo", "podinfo:v2")
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(c.Status.CanaryWeight).To(BeNumerically(">=", 20))
	}, 60*time.Second, 100*time.Millisecond).Should(Succeed())
	first := c.Status.LastAppliedSpec

	setImage(g, ns, "podinfo", "podinfo:v3")
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(c.Status.LastAppliedSpec).NotTo(Equal(first))
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	g.Expect(c.Status.CanaryWeight).To(BeZero(), "traffic back on the primary when the analysis restarts")
	g.Expect(c.Status.Phase).To(Equal(v1alpha1.PhaseProgressing))

	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 90*time.Second)
	primary := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo-primary"}, primary)).To(Succeed())
	g.Expect(primary.Spec.Template.Spec.Containers[0].Image).To(Equal("podinfo:v3"))
}

// A change to a ConfigMap the target mounts is a new revision: it is
// analysed and promoted, and the primary keeps its own copy of the promoted
// data until then.
func TestEngine_ConfigMapChangeIsANewRevision(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app-config", Namespace: ns}, Data: map[string]string{"color": "blue"}}
	g.Expect(k8s.Create(ctx, cm)).To(Succeed())
	d := testobj.MakeDeployment("podinfo", ns).Replicas(1).Obj()
	d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}}}}
	g.Expect(k8s.Create(ctx, d)).To(Succeed())
	c := testobj.MakeCanary("podinfo", ns).Analysis(v1alpha1.CanaryAnalysis{
		Interval: &metav1.Duration{Duration: interval}, Threshold: 2, Iterations: 1,
	}).Obj()
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseInitialized, 30*time.Second)

	primaryConfig := func() string {
		copyCM := &corev1.ConfigMap{}
		if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "app-config-primary"}, copyCM); err != nil {
			return "none"
		}
		return copyCM.Data["color"]
	}
	g.Expect(primaryConfig()).To(Equal("blue"))
	primary := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo-primary"}, primary)).To(Succeed())
	g.Expect(primary.Spec.Template.Spec.Volumes[0].ConfigMap.Name).To(Equal("app-config-primary"))
	g.Expect(c.Status.TrackedConfigs).To(HaveKey("ConfigMap/app-config"))
	before := c.Status.LastAppliedSpec

	// A patch, as a GitOps apply changes it: serin labels the ConfigMap
	// for its cache, so an update of the copy read before would conflict.
	cmPatch := client.MergeFrom(cm.DeepCopy())
	cm.Data["color"] = "green"
	g.Expect(k8s.Patch(ctx, cm, cmPatch)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(c.Status.LastAppliedSpec).NotTo(Equal(before))
		g.Expect(c.Status.Phase).To(Equal(v1alpha1.PhaseProgressing))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(primaryConfig()).To(Equal("blue"), "the primary keeps the promoted data during the analysis")

	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 60*time.Second)
	g.Expect(primaryConfig()).To(Equal("green"))
}
