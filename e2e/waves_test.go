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
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/storage/memory"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// The wave tests carry a release from staging to production through one
// Gitea repository (staging/ and production/), as a team with one fleet
// repository does. Staging is a namespace of the testbed; production is a
// namespace of a second cluster (needSecondCluster: its own API server,
// Flux, data plane, Prometheus and serin, and its own Gitea user); the Git
// trust tests keep it in a second namespace of the testbed (newWave). Each
// stage has its own GitRepository, credentials and Kustomization, applied
// by Flux as a service account bound to that namespace only. The stages
// share nothing but Git: staging's serin writes a pull request to
// production/, production's Canary posts its verdict as a Gitea commit
// status through a Flux Provider of type gitea (spec.alerts), and staging
// reads it back. Every count is client-side, through the Gateway weights
// serin wrote.

// waveInterval is the stages' analysis interval.
const waveInterval = 2 * time.Second

// waveSoak is staging's soak before it promotes.
const waveSoak = 6 * time.Second

// waveRelease is what a commit holds: each stage's tag, and the
// versions staging's environment breaks (testbed.ErrorPercentOfAnnotation).
// Production's environment always breaks v3 (productionBreaks).
type waveRelease struct {
	staging, production string
	stagingBreaks       string
	// soak overrides staging's soak.
	soak time.Duration
}

// productionBreaks are the versions production's environment breaks:
// v3 answers 20% of production's requests with 500s, and none of
// staging's.
const productionBreaks = "v3=20"

// waveFiles is the repository for a release: staging/ promotes to
// production/ (the Canary podinfo of the production namespace).
func waveFiles(stg, prod string, r waveRelease) map[string]string {
	soak := waveSoak
	if r.soak != 0 {
		soak = r.soak
	}
	promote := wavePromote(prod, soak)
	return map[string]string{
		"staging/kustomization.yaml":    waveKustomization(stg, r.staging),
		"staging/deployment.yaml":       podinfoDeployment(waveBreaks(r.stagingBreaks)),
		"staging/canary.yaml":           waveCanary(stg, "[Halted]", promote, ""),
		"production/kustomization.yaml": waveKustomization(prod, r.production) + "  - provider.yaml\n",
		"production/deployment.yaml":    podinfoDeployment(waveBreaks(productionBreaks)),
		"production/canary.yaml": waveCanary(prod, "[Failed, Halted]", "", `
  alerts:
    - name: git
      providerRef:
        name: commit-status`),
		// The Provider through which production's Canary posts its
		// verdicts as commit statuses; its token is a Secret the test
		// creates, never in Git.
		"production/provider.yaml": commitStatusProvider(gitea.RepositoryURL(stg)),
	}
}

// commitStatusProvider is production's Flux Provider that posts its
// Canaries' verdicts as commit statuses of the repository at address.
func commitStatusProvider(address string) string {
	return fmt.Sprintf(`apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Provider
metadata:
  name: commit-status
spec:
  type: gitea
  address: %s
  secretRef:
    name: commit-status-token
`, address)
}

// wavePromote is staging's spec.gitops.promote: to ./production, whose
// Canary is podinfo of namespace prod, after soak.
func wavePromote(prod string, soak time.Duration) string {
	return fmt.Sprintf(`
    promote:
      - stage: production
        path: ./production
        canary:
          name: podinfo
          namespace: %s
        soak: %s`, prod, soak)
}

func waveKustomization(ns, tag string) string {
	return fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: %s
images:
  - name: podinfo
    newTag: %s # the released version
resources:
  - deployment.yaml
  - canary.yaml
`, ns, tag)
}

// waveBreaks is the pod template metadata of an environment that breaks
// versions ("v3=20"), or none.
func waveBreaks(versions string) string {
	if versions == "" {
		return ""
	}
	return fmt.Sprintf("\n      annotations:\n        %s: %q", testbed.ErrorPercentOfAnnotation, versions)
}

func waveCanary(ns, revertOn, promote, alerts string) string {
	return fmt.Sprintf(`apiVersion: serin.dev/v1alpha1
kind: Canary
metadata:
  name: podinfo
spec:
  targetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: podinfo
  progressDeadlineSeconds: 10
  service:
    port: 9898
    targetPort: http
  routing:
    provider: gatewayapi
    gatewayRefs:
      - name: %[2]s
        namespace: %[3]s
    hosts: [podinfo.%[1]s.serin.test]
  analysis:
    interval: %[4]s
    threshold: 2
    stepWeight: 25
    maxWeight: 50
    metrics:
      - name: request-success-rate
        thresholdRange:
          min: 99
        interval: 2s
  gitops:
    revert:
      on: %[5]s
      mode: PullRequest%[6]s%[7]s
`, ns, testbed.GatewayName, testbed.GatewayNamespace, waveInterval, revertOn, promote, alerts)
}

// wave is a wave test's world: the repository, applied to both stages,
// and each stage's users.
type wave struct {
	staging, production *fleet
	users               map[string]*testbed.Load
	// providerURL, when set, is the address of production's
	// commit-status Provider (e.g. through a proxy).
	providerURL string
}

// newWave seeds the repository with v1 in both stages, has Flux apply
// each stage into its namespace as that namespace's service account,
// waits until both Canaries are Initialized and starts their users.
// stagingSource, given the repository's name, completes staging's
// GitRepository spec (e.g. a proxy); nil for none. Both stages are
// namespaces of the testbed.
func newWave(t *testing.T, g Gomega, stagingSource func(repo string) map[string]any) *wave {
	t.Helper()
	return newWaveIn(t, g, testbedCluster(), nil, stagingSource)
}

// newWaveAcrossClusters is newWave with production in the second cluster:
// its own API server, Flux, data plane and serin, reading and writing the
// repository as its own Gitea user. Staging promotes to
// canary.cluster: prod-eu and reads the verdict production's serin posts
// under that name.
func newWaveAcrossClusters(t *testing.T, g Gomega, stagingSource func(repo string) map[string]any) *wave {
	t.Helper()
	return newWaveIn(t, g, needSecondCluster(t), nil, stagingSource)
}

// newWaveOf is newWave whose repository is seeded with files, given the
// staging and production namespaces.
func newWaveOf(t *testing.T, g Gomega, files func(stg, prod string) map[string]string, stagingSource func(repo string) map[string]any) *wave {
	t.Helper()
	return newWaveIn(t, g, testbedCluster(), files, stagingSource)
}

// newWaveIn is newWave with production in the cluster in, its repository
// seeded with files (nil: v1 in both stages).
func newWaveIn(t *testing.T, g Gomega, in *cluster, files func(stg, prod string) map[string]string, stagingSource func(repo string) map[string]any) *wave {
	t.Helper()
	w := newWaveRepository(t, g, in)
	stg, prod := w.staging.ns, w.production.ns
	seed := w.files(waveRelease{staging: "v1", production: "v1"})
	if files != nil {
		seed = files(stg, prod)
	}
	first := w.staging.push(seed, "Add podinfo to staging and production")
	var source map[string]any
	if stagingSource != nil {
		source = stagingSource(stg)
	}
	w.apply(t, g, first, source)
	for _, f := range []*fleet{w.staging, w.production} {
		l := testbed.StartLoad(context.Background(), testbed.LoadOptions{URL: f.cluster().gateway.URL + "/",
			Host: "podinfo." + f.ns + ".serin.test", Rate: 50, Duration: time.Hour})
		t.Cleanup(l.Stop)
		w.users[f.ns] = l
	}
	for _, ns := range []string{stg, prod} {
		g.Eventually(func() string { return lastVersion(w.users[ns]) }, 15*time.Second).Should(Equal("v1"), "%s answers through the Gateway", ns)
	}
	return w
}

// apply has Flux apply ./staging and ./production of the repository as
// each namespace's service account, at commit first, and waits until both
// Canaries are Initialized.
func (w *wave) apply(t *testing.T, g Gomega, first string, stagingSource map[string]any) {
	t.Helper()
	applyFleet(t, g, w.staging, stagingSource, map[string]any{"path": "./staging", "serviceAccountName": "deployer"})
	applyFleet(t, g, w.production, nil, map[string]any{"path": "./production", "serviceAccountName": "deployer"})
	w.staging.sync(g, first)
	w.production.sync(g, first)
	for _, f := range []*fleet{w.staging, w.production} {
		w.waitForPhase(g, f.ns, v1alpha1.PhaseInitialized, 60*time.Second)
	}
}

// newWaveRepository makes a wave's two namespaces (staging here,
// production in the cluster in), their deployer service accounts,
// production's commit-status token and the empty repository.
func newWaveRepository(t *testing.T, g Gomega, in *cluster) *wave {
	t.Helper()
	ctx := context.Background()
	here := testbedCluster()
	stg, prod := newNamespace(t), newNamespaceIn(t, in.k8s)
	for ns, c := range map[string]*cluster{stg: here, prod: in} {
		g.Expect(c.k8s.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns}})).To(Succeed())
		// Flux's multi-tenancy: cluster-admin bound in the namespace only.
		g.Expect(c.k8s.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "deployer", Namespace: ns}},
		})).To(Succeed())
	}
	// Production's verdicts are posted with its own Gitea user's token.
	g.Expect(in.k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "commit-status-token", Namespace: prod},
		StringData: map[string]string{"token": in.git.Token},
	})).To(Succeed())
	staging := &fleet{t: t, ns: stg, name: stg}
	g.Expect(gitea.CreateRepository(ctx, stg)).To(Succeed())
	if in.git.User != gitea.User {
		g.Expect(gitea.AddCollaborator(ctx, stg, in.git.User, "write")).To(Succeed())
	}
	staging.repo = initRepo(g, gitea.RepositoryURL(stg))
	production := &fleet{t: t, ns: prod, name: stg, repo: staging.repo, in: in}
	return &wave{staging: staging, production: production, users: map[string]*testbed.Load{}}
}

// files is the repository for a release; with production in a cluster of
// its own, staging names that cluster in its promotion; production's
// Provider posts to providerURL when set.
func (w *wave) files(r waveRelease) map[string]string {
	stg, prod := w.staging.ns, w.production.ns
	files := waveFiles(stg, prod, r)
	if w.providerURL != "" {
		files["production/provider.yaml"] = strings.Replace(files["production/provider.yaml"], gitea.RepositoryURL(stg), w.providerURL, 1)
	}
	if name := w.production.cluster().name; name != "" {
		files["staging/canary.yaml"] = strings.Replace(files["staging/canary.yaml"], "          namespace: "+prod+"\n",
			"          namespace: "+prod+"\n          cluster: "+name+"\n", 1)
	}
	return files
}

// initRepo is an empty in-memory clone whose origin is url.
func initRepo(g Gomega, url string) *gogit.Repository {
	repo, err := gogit.InitWithOptions(memory.NewStorage(), memfs.New(), gogit.InitOptions{DefaultBranch: "refs/heads/main"})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{url}})
	g.Expect(err).NotTo(HaveOccurred())
	return repo
}

// release commits r on top of main as Gitea has it and has staging's
// Flux apply it.
func (w *wave) release(g Gomega, r waveRelease, message string) string {
	w.staging.pull(g)
	commit := w.staging.push(w.files(r), message)
	w.staging.sync(g, commit)
	return commit
}

// canary is the stage's Canary in namespace ns, read from its cluster.
func (w *wave) canary(g Gomega, ns string) *v1alpha1.Canary {
	in := w.staging.cluster()
	if ns == w.production.ns {
		in = w.production.cluster()
	}
	c := &v1alpha1.Canary{}
	g.Expect(in.k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "podinfo"}, c)).To(Succeed())
	return c
}

// waitForPhase waits until the stage's Canary in namespace ns reaches
// phase.
func (w *wave) waitForPhase(g Gomega, ns string, phase v1alpha1.CanaryPhase, timeout time.Duration) {
	g.Eventually(func(g Gomega) {
		g.Expect(w.canary(g, ns).Status.Phase).To(Equal(phase))
	}, timeout, 100*time.Millisecond).Should(Succeed(), "canary %s/podinfo never reached %s", ns, phase)
}

// stage waits until staging's production stage reaches phase for
// revision, and returns it.
func (w *wave) stage(g Gomega, revision, phase string, timeout time.Duration) v1alpha1.PromotionStatus {
	var p v1alpha1.PromotionStatus
	g.Eventually(func(g Gomega) {
		c := w.canary(g, w.staging.ns)
		g.Expect(c.Status.Promotions).To(HaveLen(1))
		p = c.Status.Promotions[0]
		g.Expect(p.Revision).To(Equal("main@sha1:"+revision), "promotion: %+v", p)
		g.Expect(p.Phase).To(Equal(phase), "promotion: %+v", p)
	}, timeout, 200*time.Millisecond).Should(Succeed())
	return p
}

// promotionPR is the open pull request of the promotion of commit.
func (w *wave) promotionPR(g Gomega, commit string) pullRequest {
	branch := fmt.Sprintf("serin/promote/production/%s/podinfo/%s", w.staging.ns, commit[:8])
	var found []pullRequest
	for _, pr := range w.staging.pullRequests(g) {
		if pr.Head.Ref == branch {
			found = append(found, pr)
		}
	}
	g.Expect(found).To(HaveLen(1), "one pull request from %s", branch)
	return found[0]
}

// merge merges a pull request with a merge commit, as a reviewer does,
// and has production's Flux apply main; it returns main's commit.
func (w *wave) merge(g Gomega, pr pullRequest) string {
	g.Expect(gitea.API(context.Background(), "POST", fmt.Sprintf("/repos/%s/%s/pulls/%d/merge", gitea.User, w.staging.name, pr.Number),
		map[string]any{"Do": "merge"}, nil)).To(Succeed())
	head := w.staging.head(g)
	w.production.sync(g, head)
	return head
}

// A release committed to staging only is analysed there, soaks, and
// comes to production's cluster as one pull request with the new image
// and the analysis; merged, production's own Canary rolls it out on
// production's traffic and its verdict comes back to staging's status
// through Gitea. A release that passes staging but breaks in production is
// rolled back and reverted there by production's serin with production's
// Gitea user, and the wave shows Failed in staging, which keeps it. A
// release that fails staging opens no pull request.
func TestWaves_StagingToProduction(t *testing.T) {
	alone(t, "starts the second cluster; times a 6 s soak")
	g := NewWithT(t)
	w := newWaveAcrossClusters(t, g, nil)
	stg, prod := w.staging.ns, w.production.ns
	start := time.Now()

	// v2: staging only.
	v2 := w.release(g, waveRelease{staging: "v2", production: "v1"}, "Release podinfo v2 to staging")
	w.waitForPhase(g, stg, v1alpha1.PhaseSucceeded, 90*time.Second)
	succeeded := time.Now()
	soaking := w.stage(g, v2, v1alpha1.WaveSoaking, 10*time.Second)
	g.Expect(soaking.SoakUntil).NotTo(BeNil())
	opened := w.stage(g, v2, v1alpha1.WaveOpened, 60*time.Second)
	openedAt := time.Now()
	pr := w.promotionPR(g, v2)
	g.Expect(opened.PullRequestURL).To(Equal(pr.HTMLURL))
	g.Expect(opened.Images).To(Equal([]string{"podinfo:v2"}))
	g.Expect(pr.Base.Ref).To(Equal("main"))
	g.Expect(pr.User.Login).To(Equal(gitea.User), "opened with staging's credentials")
	g.Expect(pr.Body).To(ContainSubstring("Serin-Promotes: " + v2))
	g.Expect(pr.Body).To(ContainSubstring("Serin-Stage: production"))
	g.Expect(pr.Body).To(ContainSubstring("request-success-rate"), "the analysis that promoted it")
	diff, err := gitea.Raw(context.Background(), fmt.Sprintf("/repos/%s/%s/pulls/%d.diff", gitea.User, w.staging.name, pr.Number))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(diff).To(ContainSubstring("+    newTag: v2 # the released version"))
	g.Expect(diff).NotTo(ContainSubstring("staging/"), "the pull request changes production only")
	g.Expect(lastVersion(w.users[prod])).To(Equal("v1"), "production runs v1 until the merge")

	// A reviewer merges it; production rolls v2 out on its own traffic.
	merged := time.Now()
	m2 := w.merge(g, pr)
	w.waitForPhase(g, prod, v1alpha1.PhaseSucceeded, 90*time.Second)
	g.Expect(w.canary(g, prod).Status.LastPromotedRevision).To(Equal("main@sha1:" + m2))
	g.Eventually(func() string { return lastVersion(w.users[prod]) }, 10*time.Second).Should(Equal("v2"))
	done := w.stage(g, v2, v1alpha1.WaveSucceeded, 60*time.Second)
	g.Expect(done.StageCommit).To(Equal(m2), "the verdict is the one posted on the merge")
	g.Expect(done.Message).To(ContainSubstring("Canary " + prod + "/podinfo"))
	var statuses []struct {
		Context string `json:"context"`
		Status  string `json:"status"`
		Creator struct {
			Login string `json:"login"`
		} `json:"creator"`
	}
	g.Expect(gitea.API(context.Background(), "GET", fmt.Sprintf("/repos/%s/%s/commits/%s/statuses", gitea.User, w.staging.name, m2), nil, &statuses)).To(Succeed())
	var posted []string
	for _, s := range statuses {
		posted = append(posted, s.Context+"="+s.Status+" by "+s.Creator.Login)
	}
	g.Expect(posted).To(ContainElement("serin/"+productionClusterName+"/"+prod+"/podinfo=success by "+productionClusterName),
		"production's serin posted the verdict under its cluster's name, as production's Gitea user")
	shown := time.Now()
	prodCounts, stgCounts := w.users[prod].Counts(start, time.Time{}), w.users[stg].Counts(start, time.Time{})
	g.Expect(prodCounts.Errors).To(BeZero(), "production's users saw no error: %+v", prodCounts)
	g.Expect(stgCounts.Errors).To(BeZero(), "staging's users saw no error: %+v", stgCounts)
	g.Expect(prodCounts.ByVersion["v2"]).To(BeNumerically(">", 0))
	t.Logf("wave=good soak_to_pull_request=%s merge_to_verdict_in_staging=%s production_requests=%d production_errors=%d production_v2_answers=%d",
		openedAt.Sub(succeeded).Round(100*time.Millisecond), shown.Sub(merged).Round(100*time.Millisecond),
		prodCounts.Total, prodCounts.Errors, prodCounts.ByVersion["v2"])

	// v3: passes staging, but production's environment breaks it.
	v3 := w.release(g, waveRelease{staging: "v3", production: "v2"}, "Release podinfo v3 to staging")
	g.Eventually(func(g Gomega) {
		g.Expect(w.canary(g, stg).Status.LastPromotedRevision).To(Equal("main@sha1:" + v3))
	}, 90*time.Second, 200*time.Millisecond).Should(Succeed())
	w.stage(g, v3, v1alpha1.WaveOpened, 60*time.Second)
	pr3 := w.promotionPR(g, v3)
	m3 := w.merge(g, pr3)
	failedAt := time.Time{}
	g.Eventually(func(g Gomega) {
		c := w.canary(g, prod)
		g.Expect(c.Status.LastAttemptedRevision).To(Equal("main@sha1:" + m3))
		g.Expect(c.Status.Phase).To(Equal(v1alpha1.PhaseFailed))
		failedAt = time.Now()
	}, 90*time.Second, 200*time.Millisecond).Should(Succeed())
	failed := w.stage(g, v3, v1alpha1.WaveFailed, 60*time.Second)
	shownFailed := time.Since(failedAt)
	g.Expect(failed.StageCommit).To(Equal(m3))
	// Reverted in production, by production's serin.
	g.Eventually(func(g Gomega) {
		c := w.canary(g, prod)
		g.Expect(c.Status.Revert).NotTo(BeNil())
		g.Expect(c.Status.Revert.State).To(Equal("Opened"), "revert: %+v", c.Status.Revert)
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	revertBranch := fmt.Sprintf("serin/revert/%s/podinfo/%s", prod, m3[:8])
	g.Expect(w.staging.branches(g)).To(ContainElement(revertBranch))
	var revertBy []string
	for _, pr := range w.staging.pullRequests(g) {
		if pr.Head.Ref == revertBranch {
			revertBy = append(revertBy, pr.User.Login)
		}
	}
	g.Expect(revertBy).To(Equal([]string{productionClusterName}), "one revert, opened with production's credentials")
	// Staging keeps v3.
	c := w.canary(g, stg)
	g.Expect(c.Status.Phase).To(Equal(v1alpha1.PhaseSucceeded))
	g.Expect(c.Status.LastPromotedRevision).To(Equal("main@sha1:" + v3))
	g.Expect(lastVersion(w.users[stg])).To(Equal("v3"))
	g.Eventually(func() string { return lastVersion(w.users[prod]) }, 10*time.Second).Should(Equal("v2"), "production is back on v2")
	t.Logf("wave=breaks-in-production production_failed_to_staging_shows_failed=%s", shownFailed.Round(100*time.Millisecond))

	// v4 fails in staging: no pull request to production.
	v4 := w.release(g, waveRelease{staging: "v4", production: "v2", stagingBreaks: "v4=20"}, "Release podinfo v4 to staging")
	g.Eventually(func(g Gomega) {
		c := w.canary(g, stg)
		g.Expect(c.Status.LastAttemptedRevision).To(Equal("main@sha1:" + v4))
		g.Expect(c.Status.Phase).To(Equal(v1alpha1.PhaseFailed))
	}, 90*time.Second, 200*time.Millisecond).Should(Succeed())
	// Longer than a soak and a verdict read: nothing may come.
	g.Consistently(func(g Gomega) {
		for _, pr := range w.staging.pullRequests(g) {
			g.Expect(pr.Head.Ref).NotTo(HaveSuffix(v4[:8]), "no promotion of a release staging failed")
		}
		c := w.canary(g, stg)
		g.Expect(c.Status.Promotions).To(HaveLen(1))
		g.Expect(c.Status.Promotions[0].Revision).To(Equal("main@sha1:"+v3), "the wave still shows the last promoted revision")
	}, waveSoak+2*waveInterval+5*time.Second, time.Second).Should(Succeed())
}

// The Git host goes away while staging writes the promotion: the stage
// retries with the reverts' backoff (never Error, never a second pull
// request) and the pull request lands once the host is back. The
// promotion is asked by hand with `serin promote --to production`, which
// skips the soak (an hour here).
func TestWaves_GitHostOutageAndPromoteByHand(t *testing.T) {
	alone(t, "starts the second cluster")
	g := NewWithT(t)
	ctx := context.Background()
	direct, err := url.Parse(gitea.RepositoryURL("x"))
	g.Expect(err).NotTo(HaveOccurred())
	proxy := startGitHostProxy(t, direct.Host)
	// staging's Flux and serin reach Gitea through the proxy; the
	// developer and production's cluster go directly.
	w := newWaveAcrossClusters(t, g, func(repo string) map[string]any { return map[string]any{"url": proxy.via(gitea.RepositoryURL(repo))} })
	stg := w.staging.ns

	v2 := w.release(g, waveRelease{staging: "v2", production: "v1", soak: time.Hour}, "Release podinfo v2 to staging")
	w.waitForPhase(g, stg, v1alpha1.PhaseSucceeded, 90*time.Second)
	w.stage(g, v2, v1alpha1.WaveSoaking, 10*time.Second)

	proxy.down()
	outage := time.Now()
	_, stderr, err := runCLI("promote", "podinfo", "-n", stg, "--to", "production", "--timeout", "30s")
	g.Expect(err).NotTo(HaveOccurred(), stderr)
	g.Eventually(func(g Gomega) {
		c := w.canary(g, stg)
		g.Expect(c.Status.HandledRequests.PromoteTo).To(HavePrefix("production@"))
		p := c.Status.Promotions[0]
		g.Expect(p.Phase).To(Equal(v1alpha1.WavePromoting))
		g.Expect(p.Attempts).To(BeNumerically(">=", 1), "promotion: %+v", p)
		g.Expect(p.Message).To(ContainSubstring("connection refused"))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	phases := sample(t, func() string {
		c := &v1alpha1.Canary{}
		if err := k8s.Get(ctx, types.NamespacedName{Namespace: stg, Name: "podinfo"}, c); err != nil || len(c.Status.Promotions) == 0 {
			return "none"
		}
		return c.Status.Promotions[0].Phase
	})
	time.Sleep(time.Until(outage.Add(20 * time.Second)))
	proxy.up()
	back := time.Now()
	w.stage(g, v2, v1alpha1.WaveOpened, 2*time.Minute)
	opened := time.Now()
	w.promotionPR(g, v2)
	g.Expect(phases.seen()).NotTo(ContainElement(v1alpha1.WaveError), "never Error on the way")
	t.Logf("outage=%s promotion_opened_after_host_back=%s phases=%s", back.Sub(outage).Round(time.Second),
		opened.Sub(back).Round(100*time.Millisecond), strings.Join(phases.seen(), ","))

	// A stage the Canary does not have is refused by the CLI.
	_, stderr, err = runCLI("promote", "podinfo", "-n", stg, "--to", "prod")
	g.Expect(err).To(HaveOccurred())
	g.Expect(stderr+err.Error()).To(ContainSubstring("production"), "the error names the stages there are")
}

// A check that fails on the primary during the soak stops the wave:
// nothing goes to production, a StageStopped warning says why. Here an
// operator's hotfix breaks the promoted primary (an edit of its pod
// template, which serin does not undo); on real traffic its success rate
// drops below the check's 99%. `serin promote --to production` then
// overrides the stop, as a person who fixed it would.
func TestWaves_SoakStopsOnAFailingPrimary(t *testing.T) {
	alone(t, "starts the second cluster")
	g := NewWithT(t)
	ctx := context.Background()
	w := newWaveAcrossClusters(t, g, nil)
	stg := w.staging.ns

	v2 := w.release(g, waveRelease{staging: "v2", production: "v1", soak: time.Hour}, "Release podinfo v2 to staging")
	w.waitForPhase(g, stg, v1alpha1.PhaseSucceeded, 90*time.Second)
	w.stage(g, v2, v1alpha1.WaveSoaking, 10*time.Second)

	primary := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: stg, Name: "podinfo-primary"}, primary)).To(Succeed())
	patch := client.MergeFrom(primary.DeepCopy())
	if primary.Spec.Template.Annotations == nil {
		primary.Spec.Template.Annotations = map[string]string{}
	}
	primary.Spec.Template.Annotations[testbed.ErrorPercentAnnotation] = "50"
	g.Expect(k8s.Patch(ctx, primary, patch)).To(Succeed())
	broken := time.Now()

	stopped := w.stage(g, v2, v1alpha1.WaveStopped, 60*time.Second)
	stoppedAfter := time.Since(broken)
	g.Expect(stopped.Message).To(ContainSubstring("request-success-rate"))
	g.Expect(stopped.PullRequestURL).To(BeEmpty())
	for _, pr := range w.staging.pullRequests(g) {
		g.Expect(pr.Head.Ref).NotTo(HavePrefix("serin/promote/"), "a stopped wave writes nothing")
	}
	events := &corev1.EventList{}
	g.Expect(k8s.List(ctx, events, client.InNamespace(stg))).To(Succeed())
	var reasons []string
	for _, e := range events.Items {
		reasons = append(reasons, e.Reason)
	}
	g.Expect(reasons).To(ContainElement(v1alpha1.StageStoppedReason))

	_, stderr, err := runCLI("promote", "podinfo", "-n", stg, "--to", "production")
	g.Expect(err).NotTo(HaveOccurred(), stderr)
	w.stage(g, v2, v1alpha1.WaveOpened, 60*time.Second)
	w.promotionPR(g, v2)
	t.Logf("wave=soak-stopped primary_broken_to_stopped=%s", stoppedAfter.Round(100*time.Millisecond))
}
