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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// splitShop is the shop with each app in a folder of its own, applied by
// a Flux Kustomization of its own from the one repository: api from
// ./apps/api (the Kustomization "apps"), web and the group from ./apps/web
// (the Kustomization "apps-web"). A commit that changes both is one
// release (one revision); its revert is one commit in both folders.
func splitShop(ns string, r shopRelease) map[string]string {
	files := shopFiles(ns, r, shopOptions{})
	kustomization := func(app, tag string, resources ...string) string {
		return fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: %s\nresources:\n  - %s\nimages:\n  - name: %s\n    newTag: %s\n",
			ns, strings.Join(resources, "\n  - "), app, tag)
	}
	return map[string]string{
		"apps/api/kustomization.yaml": kustomization("api", r.api.tag, "api.yaml"),
		"apps/api/api.yaml":           files["apps/shop/api.yaml"],
		"apps/web/kustomization.yaml": kustomization("web", r.web.tag, "web.yaml", "group.yaml"),
		"apps/web/web.yaml":           files["apps/shop/web.yaml"],
		"apps/web/group.yaml":         files["apps/shop/group.yaml"],
	}
}

// A group whose members two Kustomizations apply from one repository: a
// release whose promotion halts opens one revert pull request that takes
// both folders back, and merged, both apps run their previous version
// again.
func TestGroup_MembersOfTwoKustomizationsOneRevert(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	f := &fleet{t: t, ns: ns, name: ns}
	g.Expect(gitea.CreateRepository(ctx, f.name)).To(Succeed())
	f.repo = initRepo(g, gitea.RepositoryURL(f.name))
	first := f.push(splitShop(ns, shopRelease{api: shopApp{tag: "v1"}, web: shopApp{tag: "v1"}}), "Add the shop")
	applyFleet(t, g, f, nil, map[string]any{"path": "./apps/api"})
	g.Expect(testbedCluster().k8s.Create(ctx, fluxObject("kustomize.toolkit.fluxcd.io/v1", "Kustomization", ns, "apps-web", map[string]any{
		"interval": "10m", "path": "./apps/web", "prune": true, "timeout": "1m",
		"sourceRef": map[string]any{"kind": "GitRepository", "name": "fleet"},
	}))).To(Succeed())
	s := &shop{fleet: f, users: map[string]*testbed.Load{}}
	sync := func(commit string) {
		f.sync(g, commit)
		g.Eventually(func(g Gomega) {
			ks := &unstructured.Unstructured{}
			ks.SetAPIVersion("kustomize.toolkit.fluxcd.io/v1")
			ks.SetKind("Kustomization")
			g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "apps-web"}, ks)).To(Succeed())
			rev, _, _ := unstructured.NestedString(ks.Object, "status", "lastAppliedRevision")
			g.Expect(rev).To(Equal("main@sha1:" + commit))
		}, 2*time.Minute, 200*time.Millisecond).Should(Succeed(), "Flux never applied %s to ./apps/web", commit)
	}
	sync(first)
	for _, app := range shopApps {
		waitForPhase(g, s.canary(g, app), v1alpha1.PhaseInitialized, 60*time.Second)
		s.users[app] = startUsers(t, shopHost(ns, app))
		g.Eventually(func() string { return lastVersion(s.users[app]) }, 15*time.Second).Should(Equal("v1"), "%s answers through the Gateway", app)
	}
	release := func(r shopRelease, message string) string {
		commit := f.push(splitShop(ns, r), message)
		sync(commit)
		return commit
	}

	good := release(shopRelease{api: shopApp{tag: "v2"}, web: shopApp{tag: "v2"}}, "Release the shop v2")
	s.waitForGroup(g, good, v1alpha1.PhaseSucceeded, 3*time.Minute)

	bad := release(shopRelease{api: shopApp{tag: "v3", brokenPrimary: true}, web: shopApp{tag: "v3"}}, "Release the shop v3")
	cg := s.waitForGroup(g, bad, v1alpha1.PhaseHalted, 4*time.Minute)
	g.Expect(cg.Status.Release.DecidedBy).To(Equal("api"))
	pr := s.revertPullRequest(g)
	diff, err := gitea.Raw(ctx, fmt.Sprintf("/repos/%s/%s/pulls/%d.diff", gitea.User, f.name, pr.Number))
	g.Expect(err).NotTo(HaveOccurred())
	t.Logf("the release's revert %s:\n%s\n%s", pr.HTMLURL, pr.Body, diff)
	g.Expect(diff).To(ContainSubstring("apps/api/kustomization.yaml"))
	g.Expect(diff).To(ContainSubstring("apps/web/kustomization.yaml"))
	g.Expect(strings.Count(diff, "+    newTag: v2")).To(Equal(2), "both folders go back to v2")
	g.Expect(s.canary(g, "api").Status.Revert).NotTo(BeNil())
	g.Expect(s.canary(g, "api").Status.Revert.Covered).To(ContainElement(ContainSubstring("web")), "the deciding member's revert covers web")

	head := f.mergePull(g, pr.Number)
	sync(head)
	s.expectRestored(g, "v2")
	g.Expect(s.pullRequests(g)).To(HaveLen(1), "no second pull request")
	for _, app := range shopApps {
		l := s.users[app]
		c := l.Counts(firstAnswer(l), time.Now().Add(-time.Second))
		t.Logf("group_two_kustomizations %s: %d requests, by version %v, by code %v", app, c.Total, c.ByVersion, c.ByCode)
		g.Expect(c.Errors).To(BeZero(), "%s's users saw an error", app)
	}
}
