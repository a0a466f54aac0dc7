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
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// helmRepositorySource is the HelmRepository of the testbed's Helm
// repository at url, written before the HelmRelease in its file.
func helmRepositorySource(url string) string {
	return fmt.Sprintf(`apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: charts
spec:
  url: %s
  interval: 10m
---
`, url)
}

// waitForRevert waits until the Canary records a revert in state and
// returns it.
func waitForRevert(g Gomega, c *v1alpha1.Canary, state string) v1alpha1.RevertStatus {
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(c.Status.Revert).NotTo(BeNil())
		g.Expect(c.Status.Revert.State).To(Equal(state), "revert: %+v", c.Status.Revert)
	}, 90*time.Second, 200*time.Millisecond).Should(Succeed())
	return *c.Status.Revert
}

// mergeRevert merges the fleet's only pull request, checks that it is the
// revert's, has Flux apply the merge and returns the merge commit.
func mergeRevert(t *testing.T, g Gomega, f *fleet, revert v1alpha1.RevertStatus) (pullRequest, string) {
	t.Helper()
	prs := f.pullRequests(g)
	g.Expect(prs).To(HaveLen(1), "one pull request for the bad revision")
	pr := prs[0]
	g.Expect(pr.HTMLURL).To(Equal(revert.PullRequestURL))
	g.Expect(pr.Head.Ref).To(Equal(revert.Branch))
	g.Expect(pr.Head.Sha).To(Equal(revert.Commit))
	return pr, f.mergePull(g, pr.Number)
}

// revertDiff is the diff of the revert pull request.
func revertDiff(g Gomega, f *fleet, pr pullRequest) string {
	diff, err := gitea.Raw(context.Background(), fmt.Sprintf("/repos/%s/%s/pulls/%d.diff", gitea.User, f.name, pr.Number))
	g.Expect(err).NotTo(HaveOccurred())
	return diff
}

// A chart version bump of a HelmRelease (0.1.0 to 0.2.0, whose pods never
// become ready as the primary) halts the promotion; serin finds the
// HelmRelease that rendered the target and the Kustomization that applied
// it, and opens one pull request that puts chart 0.1.0 back. Merged, Flux
// applies it, helm-controller goes back to 0.1.0 and serin restores the
// primary: the users saw no error through it all.
func TestHelm_ChartVersionBumpRevertedInGit(t *testing.T) {
	shared(t)
	needHelmController(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	bad := testbed.PodinfoChart("0.2.0")
	bad.Files["values.yaml"] = strings.Replace(bad.Files["values.yaml"], "podAnnotations: {}",
		fmt.Sprintf("podAnnotations:\n  %s: \"true\"", testbed.NeverReadyAsPrimaryAnnotation), 1)
	g.Expect(bad.Files["values.yaml"]).To(ContainSubstring(testbed.NeverReadyAsPrimaryAnnotation))
	repo, err := testbed.StartHelmRepository(testbed.PodinfoChart("0.1.0"), bad)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(repo.Close)
	app := helmApp{ns: ns, chart: repositoryChart("0.1.0"), tag: "v1", ignoreReplicas: true, deadline: 10, revertOn: "Halted",
		sources: helmRepositorySource(repo.URL)}
	f := startHelmApp(t, g, app, nil)
	c := &v1alpha1.Canary{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "podinfo"}}

	// A tag change is promoted first: the last promoted revision.
	app.tag = "v2"
	good := f.push(app.files(), "podinfo v2")
	f.sync(g, good)
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(c.Status.Phase).To(Equal(v1alpha1.PhaseSucceeded))
		g.Expect(c.Status.LastPromotedRevision).To(Equal("main@sha1:" + good))
	}, 2*time.Minute, 200*time.Millisecond).Should(Succeed())

	app.chart = repositoryChart("0.2.0")
	bump := f.push(app.files(), "podinfo chart 0.2.0")
	f.sync(g, bump)
	waitForPhase(g, c, v1alpha1.PhaseHalted, 3*time.Minute)
	g.Expect(c.Status.LastAttemptedRevision).To(Equal("main@sha1:" + bump))

	revert := waitForRevert(g, c, gitops.StateOpened)
	g.Expect(revert.Revision).To(Equal("main@sha1:" + bump))
	g.Expect(revert.Branch).To(Equal("serin/revert/" + ns + "/podinfo/" + bump[:8]))
	// Another reconcile finds the same pull request.
	requestRevert(g, c)
	g.Expect(c.Status.Revert.PullRequestURL).To(Equal(revert.PullRequestURL))
	g.Expect(c.Status.Revert.Commit).To(Equal(revert.Commit))
	pr, merged := mergeRevert(t, g, f, revert)
	g.Expect(pr.Title).To(Equal("Revert HelmRelease/podinfo in " + ns + " to " + good[:8]))
	diff := revertDiff(g, f, pr)
	t.Logf("revert pull request %s:\n%s", pr.HTMLURL, diff)
	g.Expect(diff).To(ContainSubstring(`-      version: "0.2.0"`))
	g.Expect(diff).To(ContainSubstring(`+      version: "0.1.0"`))
	g.Expect(strings.Count(diff, "\n-")-strings.Count(diff, "\n---")).To(Equal(1), "only the chart version changes")
	// Verified by rendering the chart of the HTTP Helm repository with Helm.
	g.Expect(pr.Body).To(ContainSubstring(fmt.Sprintf("Verified by rendering the chart of HelmRelease/%s/podinfo with Helm: Deployment/%s/podinfo renders as at %s (chart podinfo 0.1.0)",
		ns, ns, good[:8])))

	// helm-controller goes back to chart 0.1.0; serin restores the primary.
	g.Eventually(func(g Gomega) string {
		hr := waitForHelmRelease(g, ns, 30*time.Second)
		v, _, _ := unstructured.NestedString(hr.Object, "status", "lastAttemptedRevision")
		return v
	}, 60*time.Second, 200*time.Millisecond).Should(Equal("0.1.0"))
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 90*time.Second)
	primary := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo-primary"}, primary)).To(Succeed())
	g.Expect(primary.Spec.Template.Annotations).NotTo(HaveKey(testbed.NeverReadyAsPrimaryAnnotation))
	g.Expect(primary.Spec.Template.Spec.Containers[0].Image).To(Equal("podinfo:v2"))
	g.Expect(c.Status.LastAttemptedRevision).To(Equal("main@sha1:" + merged))
	g.Expect(f.pullRequests(g)).To(HaveLen(1))
	g.Eventually(func() string { return lastVersion(usersIn(ns)) }, 10*time.Second).Should(Equal("v2"))
	expectNoUserErrors(t, g, ns)
}

// A values change of a HelmRelease (image.tag v2, which errs where it
// runs) is rolled back by the analysis, and serin opens one pull request
// that puts image.tag v1 back; the HelmRelease's interval, changed in the
// same commit, stays (it is not what the chart renders with).
// Merged, helm-controller upgrades to v1 and serin accepts it without an
// analysis (the primary runs it).
func TestHelm_ValuesImageTagErrorRevertedInGit(t *testing.T) {
	alone(t, "no error 1 s after the rollback: Traefik must apply the weights at once")
	needHelmController(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	app := helmApp{ns: ns, chart: gitChart, tag: "v1", ignoreReplicas: true, revertOn: "Failed",
		podAnnotations: map[string]string{testbed.ErrorPercentOfAnnotation: "v2=100"}}
	f := startHelmApp(t, g, app, chartFiles(testbed.PodinfoChart("0.1.0")))
	c := &v1alpha1.Canary{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "podinfo"}}
	first := c.DeepCopy()
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(first), first)).To(Succeed())
	// The good revision: the one the Canary initialized with (when it
	// recorded it), else the previous definition of the HelmRelease.
	head, err := f.repo.Reference("refs/heads/main", true)
	g.Expect(err).NotTo(HaveOccurred())
	good := head.Hash().String()

	app.tag, app.interval = "v2", "5m"
	bad := f.push(app.files(), "podinfo v2, reconciled every 5m")
	f.sync(g, bad)
	waitForPhase(g, c, v1alpha1.PhaseProgressing, 60*time.Second)
	waitForPhase(g, c, v1alpha1.PhaseFailed, 2*time.Minute)
	failedAt := time.Now()
	g.Expect(c.Status.LastAttemptedRevision).To(Equal("main@sha1:" + bad))
	g.Eventually(func() string { return lastVersion(usersIn(ns)) }, 10*time.Second).Should(Equal("v1"), "rolled back")

	revert := waitForRevert(g, c, gitops.StateOpened)
	g.Expect(revert.Revision).To(Equal("main@sha1:" + bad))
	pr, merged := mergeRevert(t, g, f, revert)
	g.Expect(pr.Title).To(Equal("Revert HelmRelease/podinfo in " + ns + " to " + good[:8]))
	diff := revertDiff(g, f, pr)
	t.Logf("revert pull request %s:\n%s", pr.HTMLURL, diff)
	g.Expect(diff).To(ContainSubstring("-      tag: v2"))
	g.Expect(diff).To(ContainSubstring("+      tag: v1"))
	g.Expect(strings.Count(diff, "\n-")-strings.Count(diff, "\n---")).To(Equal(1), "only image.tag changes")
	// Verified by rendering the chart kept in Git with Helm.
	g.Expect(pr.Body).To(ContainSubstring(fmt.Sprintf("Verified by rendering the chart of HelmRelease/%s/podinfo with Helm: Deployment/%s/podinfo renders as at %s",
		ns, ns, good[:8])))

	target := &appsv1.Deployment{}
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, target)).To(Succeed())
		g.Expect(target.Spec.Template.Spec.Containers[0].Image).To(Equal("podinfo:v1"))
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(c.Status.LastAttemptedRevision).To(Equal("main@sha1:" + merged))
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	interval, _, _ := unstructured.NestedString(helmRelease(g, ns).Object, "spec", "interval")
	g.Expect(interval).To(Equal("5m"), "the unrelated edit stays")
	g.Expect(c.Status.LastPromotedRevision).To(Equal(first.Status.LastPromotedRevision))

	// The users saw v2's errors only while the canary ran it. The revert
	// can land within two seconds of the rollback on a fast run: leave
	// the users 3 s after it to count.
	time.Sleep(time.Until(failedAt.Add(4 * time.Second)))
	load := usersIn(ns)
	all := load.Counts(firstAnswer(load), time.Now().Add(-time.Second))
	after := load.Counts(failedAt.Add(time.Second), time.Now().Add(-time.Second))
	t.Logf("users: %d requests, by version %v, by code %v; after the rollback %d, by version %v, by code %v",
		all.Total, all.ByVersion, all.ByCode, after.Total, after.ByVersion, after.ByCode)
	g.Expect(all.Errors).To(BeNumerically(">", 0), "the canary erred")
	for _, s := range load.Samples(firstAnswer(load), time.Now().Add(-time.Second)) {
		if !s.OK() {
			g.Expect(s.Version).To(Equal("v2"), "an error not from the canary: %+v", s)
		}
	}
	g.Expect(after.Total).To(BeNumerically(">", 0))
	g.Expect(after.Errors).To(BeZero(), "no error after the rollback, through the revert")
}

// requestRevert asks for the revert again (the revert-request annotation)
// and waits until the Canary handled it.
func requestRevert(g Gomega, c *v1alpha1.Canary) {
	ctx := context.Background()
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
	patch := client.MergeFrom(c.DeepCopy())
	requested := time.Now().Format(time.RFC3339Nano)
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[v1alpha1.RevertRequestAnnotation] = requested
	g.Expect(k8s.Patch(ctx, c, patch)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(c.Status.HandledRequests.Revert).To(Equal(requested))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
}

// helmWaveFiles is a repository whose staging/ and production/ each hold
// a HelmRelease of the testbed's Helm repository (at a chart version and
// image tag) and a Canary of the Deployment it renders; staging promotes
// to production, whose Canary posts its verdicts as commit statuses.
func helmWaveFiles(stg, prod, charts string, staging, production [2]string) map[string]string {
	release := func(ns string, chartAndTag [2]string) string {
		app := helmApp{ns: ns, chart: repositoryChart(chartAndTag[0]), tag: chartAndTag[1], ignoreReplicas: true, sources: helmRepositorySource(charts)}
		return app.files()["apps/podinfo/helmrelease.yaml"]
	}
	kustomization := func(ns string, more string) string {
		return fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: %s\nresources:\n  - helmrelease.yaml\n  - canary.yaml\n%s", ns, more)
	}
	promote := wavePromote(prod, waveSoak)
	return map[string]string{
		"staging/kustomization.yaml":    kustomization(stg, ""),
		"staging/helmrelease.yaml":      release(stg, staging),
		"staging/canary.yaml":           waveCanary(stg, "[Halted]", promote, ""),
		"production/kustomization.yaml": kustomization(prod, "  - provider.yaml\n"),
		"production/helmrelease.yaml":   release(prod, production),
		"production/canary.yaml": waveCanary(prod, "[Failed, Halted]", "", `
  alerts:
    - name: git
      providerRef:
        name: commit-status`),
		"production/provider.yaml": waveFiles(stg, prod, waveRelease{})["production/provider.yaml"],
	}
}

// A wave of HelmReleases: chart 0.2.0 with image.tag v2, committed to
// staging only, is analysed there on staging's traffic, soaks, and comes
// to production as one pull request that sets production's HelmRelease's
// chart version and image tag where they stand. Merged, helm-controller
// upgrades production, production's Canary promotes it on its own
// traffic, and its verdict comes back to staging's status. helm-controller
// (drift detection on) and serin never fight: no user of either stage
// saw an error.
func TestHelm_WaveMovesTheChartVersionToProduction(t *testing.T) {
	shared(t)
	needHelmController(t)
	g := NewWithT(t)
	ctx := context.Background()
	charts, err := testbed.StartHelmRepository(testbed.PodinfoChart("0.1.0"), testbed.PodinfoChart("0.2.0"))
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(charts.Close)
	v1 := [2]string{"0.1.0", "v1"}
	w := newWaveOf(t, g, func(stg, prod string) map[string]string { return helmWaveFiles(stg, prod, charts.URL, v1, v1) }, nil)
	staging, stg, prod := w.staging, w.staging.ns, w.production.ns
	for _, ns := range []string{stg, prod} {
		g.Expect(releases(waitForHelmRelease(g, ns, 10*time.Second))).To(Equal(1), "helm-controller installed %s", ns)
	}
	start := time.Now()

	staging.pull(g)
	v2 := staging.push(helmWaveFiles(stg, prod, charts.URL, [2]string{"0.2.0", "v2"}, v1), "Release podinfo chart 0.2.0 (v2) to staging")
	staging.sync(g, v2)
	waitForPhase(g, w.canary(g, stg), v1alpha1.PhaseSucceeded, 2*time.Minute)
	opened := w.stage(g, v2, v1alpha1.WaveOpened, 90*time.Second)
	pr := w.promotionPR(g, v2)
	g.Expect(opened.PullRequestURL).To(Equal(pr.HTMLURL))
	g.Expect(pr.Body).To(ContainSubstring("Serin-Promotes: " + v2))
	g.Expect(pr.Body).To(ContainSubstring(fmt.Sprintf("Verified by rendering the chart of HelmRelease/%s/podinfo with Helm: chart podinfo 0.2.0 renders the same objects as chart podinfo 0.1.0 did, and Deployment/%s/podinfo runs podinfo:v2.",
		prod, prod)))
	diff, err := gitea.Raw(ctx, fmt.Sprintf("/repos/%s/%s/pulls/%d.diff", gitea.User, staging.name, pr.Number))
	g.Expect(err).NotTo(HaveOccurred())
	t.Logf("promotion pull request %s:\n%s", pr.HTMLURL, diff)
	g.Expect(diff).To(ContainSubstring("production/helmrelease.yaml"))
	g.Expect(diff).NotTo(ContainSubstring("staging/"), "the pull request changes production only")
	g.Expect(diff).To(ContainSubstring(`-      version: "0.1.0"`))
	g.Expect(diff).To(ContainSubstring(`+      version: "0.2.0"`))
	g.Expect(diff).To(ContainSubstring("-      tag: v1"))
	g.Expect(diff).To(ContainSubstring("+      tag: v2"))
	g.Expect(strings.Count(diff, "\n-")-strings.Count(diff, "\n---")).To(Equal(2), "the chart version and the tag, nothing else")
	g.Expect(lastVersion(w.users[prod])).To(Equal("v1"), "production runs v1 until the merge")

	// A reviewer merges it; production rolls chart 0.2.0 out on its own
	// traffic, and its verdict comes back to staging.
	merged := w.merge(g, pr)
	g.Eventually(func(g Gomega) string {
		v, _, _ := unstructured.NestedString(waitForHelmRelease(g, prod, 30*time.Second).Object, "status", "lastAttemptedRevision")
		return v
	}, 60*time.Second, 200*time.Millisecond).Should(Equal("0.2.0"))
	waitForPhase(g, w.canary(g, prod), v1alpha1.PhaseSucceeded, 2*time.Minute)
	g.Expect(w.canary(g, prod).Status.LastPromotedRevision).To(Equal("main@sha1:" + merged))
	g.Eventually(func() string { return lastVersion(w.users[prod]) }, 10*time.Second).Should(Equal("v2"))
	done := w.stage(g, v2, v1alpha1.WaveSucceeded, 60*time.Second)
	g.Expect(done.StageCommit).To(Equal(merged), "the verdict is the one posted on the merge")
	g.Expect(w.staging.pullRequests(g)).To(HaveLen(1), "one pull request for the promotion")
	for _, ns := range []string{stg, prod} {
		c := w.users[ns].Counts(start, time.Now().Add(-time.Second))
		t.Logf("%s: %d requests, by version %v, by code %v", ns, c.Total, c.ByVersion, c.ByCode)
		g.Expect(c.ByVersion["v2"]).To(BeNumerically(">", 0))
		g.Expect(c.Errors).To(BeZero(), "a user of %s saw an error: %v", ns, c.ByCode)
	}
}
