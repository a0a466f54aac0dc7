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
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// withReplicasInGit is podinfoApp whose Deployment sets replicas: 3 in
// Git, and a note in the Deployment's annotations that a commit changes.
func withReplicasInGit(ns, tag, note string) map[string]string {
	files := podinfoApp(ns, tag, v1alpha1.PullRequestRevert)
	files["apps/podinfo/deployment.yaml"] = strings.Replace(podinfoDeployment(""),
		"  labels:\n    app: podinfo\nspec:\n", "  labels:\n    app: podinfo\n  annotations:\n    note: "+note+"\nspec:\n  replicas: 3\n", 1)
	return files
}

// With Flux 2.9's drift ignore rules, the target's replicas may stay in
// Git: the Kustomization ignores /spec/replicas of the target, applies
// every other change (a commit to the Deployment's metadata, a new
// revision), and the target stays at the zero replicas serin set, the
// primary at the three of Git.
func TestFlux_ReplicasInGitWithADriftIgnoreRule(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	f, c := initializedFleet(t, g, ns, withReplicasInGit(ns, "v1", "first"), map[string]any{
		"interval": "5s",
		"ignore": []any{map[string]any{
			"paths":  []any{"/spec/replicas"},
			"target": map[string]any{"group": "apps", "kind": "Deployment", "name": "podinfo"},
		}},
	})
	target, primary := &appsv1.Deployment{}, &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo-primary"}, primary)).To(Succeed())
	g.Expect(primary.Spec.Replicas).To(HaveValue(BeEquivalentTo(3)), "the primary takes the replicas of Git")

	// A commit that changes the Deployment: Flux applies it, and leaves
	// the replicas serin set.
	f.sync(g, f.push(withReplicasInGit(ns, "v1", "second"), "A note on podinfo"))
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, target)).To(Succeed())
	g.Expect(target.Annotations).To(HaveKeyWithValue("note", "second"), "Flux applied the commit")
	g.Consistently(func(g Gomega) {
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, target)).To(Succeed())
		g.Expect(target.Spec.Replicas).To(HaveValue(BeEquivalentTo(0)), "the target stays at zero replicas")
	}, 12*time.Second, 200*time.Millisecond).Should(Succeed(), "over two intervals of the Kustomization")

	// A new revision rolls out and is promoted; the target is back at zero.
	release := f.push(withReplicasInGit(ns, "v2", "second"), "Release podinfo v2")
	f.sync(g, release)
	waitForPromotedRevision(g, c, release)
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo"}, target)).To(Succeed())
		g.Expect(target.Spec.Replicas).To(HaveValue(BeEquivalentTo(0)))
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "podinfo-primary"}, primary)).To(Succeed())
		g.Expect(primary.Spec.Template.Spec.Containers[0].Image).To(Equal("podinfo:v2"))
		g.Expect(primary.Spec.Replicas).To(HaveValue(BeEquivalentTo(3)))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
}
