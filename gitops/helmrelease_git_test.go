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

package gitops

import (
	"context"
	"strings"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// newHelmGitFixture is a gitFixture whose apps/podinfo is a HelmRelease
// (goodHelmFleet), bumped to chart 0.2.0 with v2 by the bad commit, and
// whose production/ holds a HelmRelease of chart 0.1.0 with v1; the
// cluster holds the Deployment the HelmRelease rendered, the HelmRelease,
// the Kustomization that applied it, and the GitRepository.
func newHelmGitFixture(t *testing.T) *gitFixture {
	t.Helper()
	server := startGitServer(t)
	f := &gitFixture{t: t, server: server, url: server.HTTPAddress() + "/" + repoPath, host: &fakeHost{}}
	local := newTestRepo(t)
	files := goodHelmFleet().files()
	files["production/kustomization.yaml"] = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: production\nresources:\n  - helmrelease.yaml\n"
	files["production/helmrelease.yaml"] = productionHelmRelease("0.1.0", "    image:\n      tag: v1 # the app's version\n", "")
	f.good = local.commitFiles(files, "Promote podinfo 0.1.0")
	f.bad = local.commitFiles(with(goodHelmFleet(), func(h *helmFleet) { h.version, h.tag = "0.2.0", "v2" }).files(), "Try podinfo chart 0.2.0")
	f.pushLocal(local)
	f.k8s = fleetClient(f.url, f.bad.Hash)
	ctx := context.Background()
	target := &appsv1.Deployment{}
	if err := f.k8s.Get(ctx, types.NamespacedName{Namespace: "apps", Name: "podinfo"}, target); err != nil {
		t.Fatal(err)
	}
	target.Labels = map[string]string{"helm.toolkit.fluxcd.io/name": "podinfo", "helm.toolkit.fluxcd.io/namespace": "apps"}
	ks := &kustomizev1.Kustomization{}
	if err := f.k8s.Get(ctx, types.NamespacedName{Namespace: "flux-system", Name: "apps"}, ks); err != nil {
		t.Fatal(err)
	}
	ks.Status.Inventory.Entries = []kustomizev1.ResourceRef{{ID: "apps_podinfo_helm.toolkit.fluxcd.io_HelmRelease", Version: "v2"}}
	hr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
		"metadata": map[string]any{"name": "podinfo", "namespace": "apps", "labels": map[string]any{
			"kustomize.toolkit.fluxcd.io/name": "apps", "kustomize.toolkit.fluxcd.io/namespace": "flux-system",
		}},
		"status": map[string]any{"inventory": map[string]any{"entries": []any{map[string]any{"id": "apps_podinfo_apps_Deployment", "v": "v1"}}}},
	}}
	for _, err := range []error{f.k8s.Update(ctx, target), f.k8s.Update(ctx, ks), f.k8s.Create(ctx, hr)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// The revert of a HelmRelease's bad revision goes through the GitReverter
// as any other: one pull request whose branch puts the HelmRelease's file
// back; asked again, the same one.
func TestGitReverter_HelmRelease(t *testing.T) {
	f := newHelmGitFixture(t)
	g := f.reverter()
	ctx := context.Background()
	res, err := g.Revert(ctx, f.request(v1alpha1.PullRequestRevert))
	if err != nil {
		t.Fatal(err)
	}
	if res.State != StateOpened || len(f.host.prs) != 1 {
		t.Fatalf("revert = %+v, pull requests %d", res, len(f.host.prs))
	}
	got, commit := f.file(res.Branch, "apps/podinfo/helmrelease.yaml")
	if want := goodHelmFleet().files()["apps/podinfo/helmrelease.yaml"]; got != want {
		t.Errorf("helmrelease.yaml on the revert branch:\n%s\nwant:\n%s", got, want)
	}
	if title, _ := splitMessage(commit.Message); title != "Revert HelmRelease/podinfo in apps to "+f.good.Hash.String()[:8] {
		t.Errorf("title %q", title)
	}
	again, err := g.Revert(ctx, f.request(v1alpha1.PullRequestRevert))
	if err != nil || again.Commit != res.Commit || len(f.host.prs) != 1 {
		t.Errorf("again = %+v, %v; pull requests %d", again, err, len(f.host.prs))
	}
}

// A wave from a stage whose target a HelmRelease rendered writes the
// promoted chart version and image tag into the next stage's HelmRelease,
// read from the stage's HelmRelease at the promoted commit; asked again,
// it opens nothing more.
func TestGitPromoter_HelmRelease(t *testing.T) {
	f := newHelmGitFixture(t)
	g := f.promoter()
	req := f.promotion(v1alpha1.PullRequestRevert)
	req.Stage.Path = "./production"
	req.Stage.Canary = &v1alpha1.PromotionCanaryReference{Name: "podinfo", Namespace: "production"}
	req.Revision = "main@sha1:" + f.bad.Hash.String()
	req.Images = []string{"podinfo:v2"}
	res, err := g.Promote(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.State != PromotionOpened || len(f.host.prs) != 1 {
		t.Fatalf("promotion = %+v, pull requests %d", res, len(f.host.prs))
	}
	got, commit := f.file(res.Branch, "production/helmrelease.yaml")
	if want := productionHelmRelease("0.2.0", "    image:\n      tag: v2 # the app's version\n", ""); got != want {
		t.Errorf("production/helmrelease.yaml on the promotion branch:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(commit.Message, "HelmRelease/podinfo spec.chart.spec.version 0.2.0, spec.values.image.tag v2 set.") {
		t.Errorf("message:\n%s", commit.Message)
	}
	again, err := g.Promote(context.Background(), req)
	if err != nil || again.State != PromotionOpened || again.Commit != res.Commit || len(f.host.prs) != 1 {
		t.Errorf("again = %+v, %v; pull requests %d", again, err, len(f.host.prs))
	}
}
