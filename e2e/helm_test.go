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
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// helmController is Flux's helm-controller, started by the first test
// that installs a HelmRelease (the others do not wait for it).
var helmController struct {
	once sync.Once
	err  error
}

// needHelmController starts helm-controller once for the package.
func needHelmController(t *testing.T) {
	t.Helper()
	helmController.once.Do(func() {
		start := time.Now()
		helmController.err = env.StartHelmController(context.Background(), testbed.HelmControllerOptions{})
		t.Logf("helm-controller ready in %s", time.Since(start).Round(time.Millisecond))
	})
	if helmController.err != nil {
		t.Fatalf("helm-controller: %v", helmController.err)
	}
}

// helmApp is a HelmRelease of the testbed's podinfo chart and a Canary of
// the Deployment it renders, as a Flux user keeps them in Git.
type helmApp struct {
	ns string
	// chart is the HelmRelease's spec.chart.spec.
	chart string
	// tag is values.image.tag; annotations, values.annotations (the
	// Deployment's own, not its pods').
	tag         string
	annotations map[string]string
	// ignoreReplicas adds the drift-detection rule that leaves the target's
	// spec.replicas to serin.
	ignoreReplicas bool
	// sources are the objects the chart comes from (a HelmRepository),
	// written before the HelmRelease in its file.
	sources string
	// podAnnotations is values.podAnnotations (the pods' own).
	podAnnotations map[string]string
	// deadline is the Canary's progressDeadlineSeconds (30 if 0).
	deadline int
	// interval is the HelmRelease's spec.interval (10m if empty).
	interval string
	// revertOn is the Canary's spec.gitops.revert.on (none if empty), with
	// mode PullRequest.
	revertOn string
}

// files are the fleet's apps/podinfo: a kustomization of the HelmRelease
// and the Canary.
func (a helmApp) files() map[string]string {
	ignore := ""
	if a.ignoreReplicas {
		ignore = `
    ignore:
      # serin scales the target: replicas are not drift.
      - paths: ["/spec/replicas"]
        target:
          kind: Deployment
          name: podinfo`
	}
	yamlMap := func(m map[string]string) string {
		if len(m) == 0 {
			return " {}"
		}
		var b strings.Builder
		for _, k := range slices.Sorted(maps.Keys(m)) {
			fmt.Fprintf(&b, "\n      %s: %q", k, m[k])
		}
		return b.String()
	}
	gitops := ""
	if a.revertOn != "" {
		gitops = fmt.Sprintf("  gitops:\n    revert:\n      on: [%s]\n      mode: PullRequest\n", a.revertOn)
	}
	return map[string]string{
		"apps/podinfo/kustomization.yaml": fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: %s
resources:
  - helmrelease.yaml
  - canary.yaml
`, a.ns),
		"apps/podinfo/helmrelease.yaml": a.sources + fmt.Sprintf(`apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: podinfo
spec:
  interval: %s
  chart:
    spec:
%s
  driftDetection:
    mode: enabled%s
  values:
    canary: true
    image:
      tag: %s
    annotations:%s
    podAnnotations:%s
`, cmp.Or(a.interval, "10m"), a.chart, ignore, a.tag, yamlMap(a.annotations), yamlMap(a.podAnnotations)),
		"apps/podinfo/canary.yaml": fmt.Sprintf(`apiVersion: serin.dev/v1alpha1
kind: Canary
metadata:
  name: podinfo
spec:
  targetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: podinfo
  progressDeadlineSeconds: %d
  service:
    port: 9898
    targetPort: http
  routing:
    provider: gatewayapi
    gatewayRefs:
      - name: %s
        namespace: %s
    hosts: [%s]
  analysis:
    interval: %s
    threshold: 2
    stepWeight: 20
    maxWeight: 60
    metrics:
      - name: request-success-rate
        thresholdRange:
          min: 99
        interval: 2s
%s`, cmp.Or(a.deadline, 30), testbed.GatewayName, testbed.GatewayNamespace, appHost(a.ns), helmInterval, gitops),
	}
}

// helmInterval is the analysis interval of the HelmRelease canaries.
const helmInterval = 3 * time.Second

// gitChart is spec.chart.spec for the chart in the fleet's repository.
const gitChart = `      chart: ./charts/podinfo
      sourceRef:
        kind: GitRepository
        name: fleet`

// repositoryChart is spec.chart.spec for a version of the chart in the
// testbed's Helm repository (the HelmRepository charts).
func repositoryChart(version string) string {
	return fmt.Sprintf(`      chart: podinfo
      version: %q
      sourceRef:
        kind: HelmRepository
        name: charts`, version)
}

// startHelmApp pushes files and the app to a new fleet, has Flux apply it,
// waits until helm-controller installed the release and the Canary is
// Initialized, and starts the app's users.
func startHelmApp(t *testing.T, g Gomega, a helmApp, files map[string]string) *fleet {
	t.Helper()
	all := a.files()
	maps.Copy(all, files)
	return startHelmAppFiles(t, g, a, all)
}

// startHelmAppFiles is startHelmApp with all of the repository's files
// given.
func startHelmAppFiles(t *testing.T, g Gomega, a helmApp, files map[string]string) *fleet {
	t.Helper()
	f := newFleet(t, g, a.ns, files)
	waitForHelmRelease(g, a.ns, 90*time.Second)
	waitForPhase(g, &v1alpha1.Canary{ObjectMeta: metav1.ObjectMeta{Namespace: a.ns, Name: "podinfo"}}, v1alpha1.PhaseInitialized, 60*time.Second)
	load := startUsers(t, appHost(a.ns))
	users.Store(a.ns, load)
	g.Eventually(func() string { return lastVersion(load) }, 15*time.Second).Should(Equal(a.tag), "the app answers through the Gateway")
	return f
}

// chartFiles are a chart's files under charts/NAME/ of a repository.
func chartFiles(c testbed.Chart) map[string]string {
	files := map[string]string{}
	for p, content := range c.Files {
		files["charts/"+c.Name+"/"+p] = content
	}
	return files
}

// helmRelease reads the app's HelmRelease.
func helmRelease(g Gomega, ns string) *unstructured.Unstructured {
	hr := &unstructured.Unstructured{}
	hr.SetAPIVersion("helm.toolkit.fluxcd.io/v2")
	hr.SetKind("HelmRelease")
	g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "podinfo"}, hr)).To(Succeed())
	return hr
}

// waitForHelmRelease waits until helm-controller reconciled the
// HelmRelease's current generation and it is Ready, and returns it.
func waitForHelmRelease(g Gomega, ns string, timeout time.Duration) *unstructured.Unstructured {
	var hr *unstructured.Unstructured
	g.Eventually(func(g Gomega) {
		hr = helmRelease(g, ns)
		observed, _, _ := unstructured.NestedInt64(hr.Object, "status", "observedGeneration")
		g.Expect(observed).To(Equal(hr.GetGeneration()))
		g.Expect(readyCondition(hr)).To(Equal("True"), "HelmRelease conditions: %v", hr.Object["status"])
	}, timeout, 200*time.Millisecond).Should(Succeed(), "helm-controller never reconciled the HelmRelease")
	return hr
}

// readyCondition is the status of an unstructured object's Ready condition.
func readyCondition(u *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

// releases is the number of Helm releases of the HelmRelease
// (status.history: install and each upgrade, newest first).
func releases(hr *unstructured.Unstructured) int {
	history, _, _ := unstructured.NestedSlice(hr.Object, "status", "history")
	if len(history) == 0 {
		return 0
	}
	v, _ := history[0].(map[string]any)["version"].(int64)
	return int(v)
}

// reconcileHelmRelease asks helm-controller to reconcile the HelmRelease
// now (drift detection runs at every reconcile) and waits until it did.
func reconcileHelmRelease(g Gomega, ns string) {
	ctx := context.Background()
	hr := helmRelease(g, ns)
	token := time.Now().Format(time.RFC3339Nano)
	patch := client.MergeFrom(hr.DeepCopy())
	ann := hr.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann["reconcile.fluxcd.io/requestedAt"] = token
	hr.SetAnnotations(ann)
	g.Expect(k8s.Patch(ctx, hr, patch)).To(Succeed())
	g.Eventually(func(g Gomega) {
		handled, _, _ := unstructured.NestedString(helmRelease(g, ns).Object, "status", "lastHandledReconcileAt")
		g.Expect(handled).To(Equal(token))
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
}

// driftCorrections returns the messages of helm-controller's
// DriftCorrected events of the HelmRelease.
func driftCorrections(g Gomega, ns string) []string {
	var events corev1.EventList
	g.Expect(k8s.List(context.Background(), &events, client.InNamespace(ns), client.MatchingFields{"involvedObject.kind": "HelmRelease"})).To(Succeed())
	var out []string
	for _, e := range events.Items {
		if e.Reason == "DriftCorrected" {
			out = append(out, e.Message)
		}
	}
	return out
}

// targetReplicas reads the target Deployment's spec.replicas.
func targetReplicas(g Gomega, ns string) int32 {
	d := &appsv1.Deployment{}
	g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "podinfo"}, d)).To(Succeed())
	g.Expect(d.Spec.Replicas).NotTo(BeNil())
	return *d.Spec.Replicas
}

// A HelmRelease of a chart in Git renders the target. A values change
// (image.tag v2) pushed to Git is upgraded by helm-controller and analysed
// and promoted by serin on real traffic; a second upgrade in the middle of
// the analysis (the Deployment's own annotations: no new pod template) does
// not disturb it. With drift detection on and the /spec/replicas ignore
// rule, helm-controller leaves the target at the zero replicas serin set;
// without the rule it corrects them at every reconcile and serin scales
// the target down again: the fight the rule prevents.
func TestHelm_GitChartValuesChangePromotes(t *testing.T) {
	alone(t, "the mid-analysis Helm upgrade must land within a few 3 s steps")
	needHelmController(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	app := helmApp{ns: ns, chart: gitChart, tag: "v1", ignoreReplicas: true}
	f := startHelmApp(t, g, app, chartFiles(testbed.PodinfoChart("0.1.0")))
	c := &v1alpha1.Canary{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "podinfo"}}
	installed := releases(helmRelease(g, ns))
	target := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, target)).To(Succeed())
	g.Expect(target.Labels).To(HaveKeyWithValue("helm.toolkit.fluxcd.io/name", "podinfo"), "helm-controller rendered the target")
	replicas := sample(t, replicasOf(ns))
	routes := sample(t, routeWeights(ns, "podinfo"))

	app.tag = "v2"
	v2 := f.push(app.files(), "podinfo v2")
	f.sync(g, v2)
	waitForPhase(g, c, v1alpha1.PhaseProgressing, 60*time.Second)
	g.Eventually(func(g Gomega) int {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		return c.Status.CanaryWeight
	}, 30*time.Second, 100*time.Millisecond).Should(BeNumerically(">=", 20))

	// helm-controller upgrades the release mid-analysis.
	app.annotations = map[string]string{"serin.test/owner": "team-b"}
	annotated := f.push(app.files(), "podinfo: annotate the Deployment")
	f.sync(g, annotated)
	g.Eventually(func(g Gomega) int { return releases(waitForHelmRelease(g, ns, 30*time.Second)) }, 30*time.Second).
		Should(Equal(installed+2), "the values change and the annotation are two upgrades")
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
	t.Logf("the mid-analysis upgrade done at phase %s, weight %d", c.Status.Phase, c.Status.CanaryWeight)
	g.Expect(c.Status.Phase).To(BeElementOf(v1alpha1.PhaseProgressing, v1alpha1.PhasePromoting, v1alpha1.PhaseFinalising), "the upgrade came during the rollout")

	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 2*time.Minute)
	g.Expect(c.Status.LastAttemptedRevision).To(Equal("main@sha1:"+v2), "the revision of the commit that changed the values")
	g.Expect(c.Status.LastPromotedRevision).To(Equal("main@sha1:" + v2))
	g.Eventually(routes.seen).Should(Equal([]string{"100/0", "80/20", "60/40", "40/60", "100/0"}),
		"HTTPRoute weights, primary/canary: the upgrade mid-analysis did not restart it")
	g.Eventually(func() string { return lastVersion(usersIn(ns)) }, 10*time.Second).Should(Equal("v2"))
	g.Eventually(func() int32 { return targetReplicas(g, ns) }, 10*time.Second).Should(BeZero(), "serin scaled the target down")
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, target)).To(Succeed())
	g.Expect(target.Annotations).To(HaveKeyWithValue("serin.test/owner", "team-b"))

	// Drift detection runs at every reconcile: with the rule, the replicas
	// serin set are not drift. Every write of the target's spec moves its
	// generation, however quickly it is undone.
	idle := targetGeneration(g, ns)
	for range 2 {
		reconcileHelmRelease(g, ns)
	}
	g.Consistently(func() int32 { return targetReplicas(g, ns) }, 3*time.Second, 100*time.Millisecond).Should(BeZero())
	g.Expect(targetGeneration(g, ns)).To(Equal(idle), "nobody wrote the target's spec")
	g.Expect(driftCorrections(g, ns)).To(BeEmpty())
	g.Expect(releases(waitForHelmRelease(g, ns, 10*time.Second))).To(Equal(installed+2), "no upgrade since")
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
	g.Expect(c.Status.Phase).To(Equal(v1alpha1.PhaseSucceeded))
	expectNoUserErrors(t, g, ns)
	t.Logf("target replicas seen with the rule: %v", replicas.seen())

	// Without the rule, helm-controller puts the chart's replicas back and
	// serin scales the target down again, at every reconcile.
	app.ignoreReplicas = false
	noRule := f.push(app.files(), "podinfo: drift detection without the replicas rule")
	f.sync(g, noRule)
	reconcileHelmRelease(g, ns)
	g.Eventually(func() []string { return driftCorrections(g, ns) }, 30*time.Second, 200*time.Millisecond).ShouldNot(BeEmpty())
	t.Logf("helm-controller without the rule: %s", driftCorrections(g, ns)[0])
	g.Eventually(func() int32 { return targetReplicas(g, ns) }, 10*time.Second).Should(BeZero(), "serin scaled the target down again")
	writes := targetGeneration(g, ns) - idle
	t.Logf("without the rule: %d DriftCorrected events, %d writes of the target's spec; replicas sampled: %v",
		len(driftCorrections(g, ns)), writes, replicas.seen())
	g.Expect(writes).To(BeNumerically(">=", 2), "helm-controller restored the chart's replicas, serin scaled them back to 0")
	expectNoUserErrors(t, g, ns)
}

// A HelmRelease of a chart in the testbed's HTTP Helm repository: a new
// chart version with a new app version, pushed to Git, is analysed and
// promoted on real traffic with no user error.
func TestHelm_RepositoryChartVersionPromotes(t *testing.T) {
	shared(t)
	needHelmController(t)
	g := NewWithT(t)
	ns := newNamespace(t)
	repo, err := testbed.StartHelmRepository(testbed.PodinfoChart("0.1.0"), testbed.PodinfoChart("0.2.0"))
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(repo.Close)
	app := helmApp{ns: ns, chart: repositoryChart("0.1.0"), tag: "v1", ignoreReplicas: true, sources: helmRepositorySource(repo.URL)}
	f := startHelmApp(t, g, app, nil)
	c := &v1alpha1.Canary{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "podinfo"}}
	g.Expect(repo.Downloads("podinfo", "0.1.0")).To(BeNumerically(">=", 1), "source-controller fetched the chart from the testbed's repository")

	app.chart, app.tag = repositoryChart("0.2.0"), "v2"
	commit := f.push(app.files(), "podinfo chart 0.2.0 with v2")
	f.sync(g, commit)
	waitForPhase(g, c, v1alpha1.PhaseProgressing, 60*time.Second)
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 2*time.Minute)
	g.Expect(c.Status.LastAttemptedRevision).To(Equal("main@sha1:" + commit))
	g.Expect(repo.Downloads("podinfo", "0.2.0")).To(BeNumerically(">=", 1))
	hr := waitForHelmRelease(g, ns, 10*time.Second)
	chartVersion, _, _ := unstructured.NestedString(hr.Object, "status", "lastAttemptedRevision")
	g.Expect(chartVersion).To(Equal("0.2.0"))
	g.Eventually(func() string { return lastVersion(usersIn(ns)) }, 10*time.Second).Should(Equal("v2"))
	g.Eventually(func() int32 { return targetReplicas(g, ns) }, 10*time.Second).Should(BeZero())
	expectNoUserErrors(t, g, ns)
}

// replicasOf renders the target Deployment's spec.replicas, for a sampler.
func replicasOf(ns string) func() string {
	return func() string {
		d := &appsv1.Deployment{}
		if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "podinfo"}, d); err != nil || d.Spec.Replicas == nil {
			return "none"
		}
		return fmt.Sprint(*d.Spec.Replicas)
	}
}

// targetGeneration reads the target Deployment's metadata.generation,
// which every change of its spec moves.
func targetGeneration(g Gomega, ns string) int64 {
	d := &appsv1.Deployment{}
	g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "podinfo"}, d)).To(Succeed())
	return d.Generation
}
