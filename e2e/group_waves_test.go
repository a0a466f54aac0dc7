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
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// The group wave test releases the shop's two apps (api and web, a
// CanaryGroup in each stage) from staging to production through one
// Gitea repository, as the wave tests do for one Canary: staging/ and
// production/, each applied by its own Flux Kustomization into its own
// namespace, with real users on each app of each stage.

// groupWaveFiles is the repository for a release: the shop in staging
// promotes to ./production, where the shop's Canaries post their
// verdicts as commit statuses.
func groupWaveFiles(stg, prod, staging, production string) map[string]string {
	files := map[string]string{
		"staging/kustomization.yaml":    groupWaveKustomization(stg, staging),
		"production/kustomization.yaml": groupWaveKustomization(prod, production) + "  - provider.yaml\n",
		"production/provider.yaml":      commitStatusProvider(gitea.RepositoryURL(stg)),
	}
	for _, dir := range []string{"staging", "production"} {
		files[dir+"/group.yaml"] = `apiVersion: serin.dev/v1alpha1
kind: CanaryGroup
metadata:
  name: shop
spec:
  members:
    - name: api
    - name: web
`
	}
	for _, app := range shopApps {
		promote := fmt.Sprintf(`
    promote:
      - stage: production
        path: ./production
        canary:
          name: %s
          namespace: %s
        soak: %s`, app, prod, waveSoak)
		alerts := `
  alerts:
    - name: git
      providerRef:
        name: commit-status`
		// The shop's Canaries, whose spec ends with gitops: the stage
		// goes under it, the alerts after it.
		plan := "stepWeight: 25\n    maxWeight: 50"
		files["staging/"+app+".yaml"] = shopDeployment(app, shopApp{}) + "---\n" + shopCanary(stg, app, plan, "") + strings.TrimPrefix(promote, "\n") + "\n"
		files["production/"+app+".yaml"] = shopDeployment(app, shopApp{}) + "---\n" + shopCanary(prod, app, plan, "") + strings.TrimPrefix(alerts, "\n") + "\n"
	}
	return files
}

// groupWaveKustomization sets both apps to tag.
func groupWaveKustomization(ns, tag string) string {
	return fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: %[1]s
images:
  - name: api
    newTag: %[2]s
  - name: web
    newTag: %[2]s
resources:
  - api.yaml
  - web.yaml
  - group.yaml
`, ns, tag)
}

// A group with a production stage promotes its release as one: once both
// apps are promoted in staging (and soaked), exactly one pull request
// carries both images to production, written by api (the first member
// by name); web shows it as its own stage's. Merged, production's Flux
// applies it and production's shop promotes both apps on production's
// traffic; the two verdicts come back as one, on the staging group
// (status.release.stages, serin get groups) and on both members.
func TestGroupWaves_ProductionStageMergesOnePullRequestWithBothImages(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	stg, prod := newNamespace(t), newNamespace(t)
	for _, ns := range []string{stg, prod} {
		g.Expect(k8s.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns}})).To(Succeed())
		g.Expect(k8s.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "deployer", Namespace: ns}},
		})).To(Succeed())
	}
	g.Expect(k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "commit-status-token", Namespace: prod},
		StringData: map[string]string{"token": gitea.Token},
	})).To(Succeed())
	staging := &fleet{t: t, ns: stg, name: stg}
	g.Expect(gitea.CreateRepository(ctx, stg)).To(Succeed())
	staging.repo = initRepo(g, gitea.RepositoryURL(stg))
	first := staging.push(groupWaveFiles(stg, prod, "v1", "v1"), "Add the shop to staging and production")
	production := &fleet{t: t, ns: prod, name: stg, repo: staging.repo}
	applyFleet(t, g, staging, nil, map[string]any{"path": "./staging", "serviceAccountName": "deployer"})
	applyFleet(t, g, production, nil, map[string]any{"path": "./production", "serviceAccountName": "deployer"})
	staging.sync(g, first)
	production.sync(g, first)
	users := map[string]*testbed.Load{}
	canary := func(g Gomega, ns, app string) *v1alpha1.Canary {
		c := &v1alpha1.Canary{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: app}, c)).To(Succeed())
		return c
	}
	for _, ns := range []string{stg, prod} {
		for _, app := range shopApps {
			waitForPhase(g, &v1alpha1.Canary{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: app}}, v1alpha1.PhaseInitialized, 60*time.Second)
			users[ns+"/"+app] = startUsers(t, shopHost(ns, app))
		}
	}
	for key, l := range users {
		g.Eventually(func() string { return lastVersion(l) }, 15*time.Second).Should(Equal("v1"), "%s answers through the Gateway", key)
	}
	start := time.Now()

	// v2 of both apps, to staging only.
	staging.pull(g)
	v2 := staging.push(groupWaveFiles(stg, prod, "v2", "v1"), "Release the shop v2 to staging")
	staging.sync(g, v2)
	g.Eventually(func(g Gomega) {
		for _, app := range shopApps {
			c := canary(g, stg, app)
			g.Expect(c.Status.LastPromotedRevision).To(Equal("main@sha1:"+v2), "%s", app)
			g.Expect(c.Status.Promotions).To(HaveLen(1), "%s", app)
			g.Expect(c.Status.Promotions[0].Phase).To(Equal(v1alpha1.WaveOpened), "%s: %+v", app, c.Status.Promotions[0])
		}
	}, 3*time.Minute, 200*time.Millisecond).Should(Succeed())

	// One pull request for the release, with both images.
	branch := gitops.ReleasePromoteBranch(stg, "shop", "production", v2)
	var prs []pullRequest
	for _, pr := range staging.pullRequests(g) {
		if strings.HasPrefix(pr.Head.Ref, "serin/promote/") {
			prs = append(prs, pr)
		}
	}
	g.Expect(prs).To(HaveLen(1), "one pull request for the release: %+v", prs)
	pr := prs[0]
	g.Expect(pr.Head.Ref).To(Equal(branch))
	g.Expect(pr.Body).To(ContainSubstring("Serin-Group: " + stg + "/shop"))
	g.Expect(pr.Body).To(ContainSubstring("Serin-Promotes: " + v2))
	g.Expect(pr.Body).To(ContainSubstring("api:v2"))
	g.Expect(pr.Body).To(ContainSubstring("web:v2"))
	diff, err := gitea.Raw(ctx, fmt.Sprintf("/repos/%s/%s/pulls/%d.diff", gitea.User, staging.name, pr.Number))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.Count(diff, "+    newTag: v2")).To(Equal(2), "both images in one pull request:\n%s", diff)
	g.Expect(diff).NotTo(ContainSubstring("staging/"), "the pull request changes production only")
	api, web := canary(g, stg, "api").Status.Promotions[0], canary(g, stg, "web").Status.Promotions[0]
	g.Expect(api.PullRequestURL).To(Equal(pr.HTMLURL))
	g.Expect(api.Covers).To(Equal([]string{"web"}))
	g.Expect(web.CoveredBy).To(Equal("api"))
	g.Expect(web.PullRequestURL).To(Equal(pr.HTMLURL), "web shows the release's pull request")
	for _, app := range shopApps {
		g.Expect(lastVersion(users[prod+"/"+app])).To(Equal("v1"), "production runs v1 until the merge")
	}

	// A reviewer merges it; production's shop rolls both out on its traffic.
	g.Expect(gitea.API(ctx, "POST", fmt.Sprintf("/repos/%s/%s/pulls/%d/merge", gitea.User, staging.name, pr.Number),
		map[string]any{"Do": "merge"}, nil)).To(Succeed())
	merged := staging.head(g)
	production.sync(g, merged)
	for _, app := range shopApps {
		g.Eventually(func(g Gomega) {
			c := canary(g, prod, app)
			g.Expect(c.Status.LastPromotedRevision).To(Equal("main@sha1:"+merged), "%s", app)
		}, 3*time.Minute, 200*time.Millisecond).Should(Succeed())
		g.Eventually(func() string { return lastVersion(users[prod+"/"+app]) }, 15*time.Second).Should(Equal("v2"), "production's %s", app)
	}

	// One verdict for the release, on the group and both members.
	g.Eventually(func(g Gomega) {
		cg := &v1alpha1.CanaryGroup{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: stg, Name: "shop"}, cg)).To(Succeed())
		g.Expect(cg.Status.Release).NotTo(BeNil())
		g.Expect(cg.Status.Release.Stages).To(HaveLen(1), "release: %+v", cg.Status.Release)
		st := cg.Status.Release.Stages[0]
		g.Expect(st.Phase).To(Equal(v1alpha1.WaveSucceeded), "stage: %+v", st)
		g.Expect(st.WrittenBy).To(Equal("api"))
		g.Expect(st.Members).To(Equal([]string{"api", "web"}))
		g.Expect(st.PullRequestURL).To(Equal(pr.HTMLURL))
		g.Expect(st.StageCommit).To(Equal(merged))
		for _, app := range shopApps {
			g.Expect(canary(g, stg, app).Status.Promotions[0].Phase).To(Equal(v1alpha1.WaveSucceeded), "%s", app)
		}
	}, 2*time.Minute, 200*time.Millisecond).Should(Succeed())
	out, stderr, err := runCLI("get", "groups", "-n", stg)
	g.Expect(err).NotTo(HaveOccurred(), stderr)
	g.Expect(out).To(ContainSubstring("WAVE"))
	g.Expect(out).To(ContainSubstring("production: Succeeded"))

	for key, l := range users {
		counts := l.Counts(start, time.Time{})
		g.Expect(counts.Errors).To(BeZero(), "%s's users saw no error: %+v", key, counts)
	}
	t.Logf("group-wave: one pull request %s, merged as %s; production api and web on v2", pr.HTMLURL, merged[:8])
}
