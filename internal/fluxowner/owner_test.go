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

package fluxowner

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestOf(t *testing.T) {
	tests := map[string]struct {
		labels map[string]string
		want   Owner
		found  bool
	}{
		"kustomization": {
			labels: map[string]string{"kustomize.toolkit.fluxcd.io/name": "apps", "kustomize.toolkit.fluxcd.io/namespace": "flux-system"},
			want:   Owner{Group: KustomizeGroup, Version: "v1", Kind: "Kustomization", Name: "apps", Namespace: "flux-system"}, found: true,
		},
		"helmrelease": {
			labels: map[string]string{"helm.toolkit.fluxcd.io/name": "web", "helm.toolkit.fluxcd.io/namespace": "apps"},
			want:   Owner{Group: HelmGroup, Version: "v2", Kind: "HelmRelease", Name: "web", Namespace: "apps"}, found: true,
		},
		"name without namespace": {labels: map[string]string{"kustomize.toolkit.fluxcd.io/name": "apps"}},
		"not applied by flux":    {labels: map[string]string{"app": "web"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, found := Of(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Labels: tt.labels}})
			if found != tt.found || !cmp.Equal(got, tt.want) {
				t.Errorf("Of() = %+v, %v; want %+v, %v", got, found, tt.want, tt.found)
			}
		})
	}
}

func TestRevisionOf(t *testing.T) {
	ks := &unstructured.Unstructured{Object: map[string]any{
		"status": map[string]any{"lastAppliedRevision": "main@sha1:0123456789abcdef0123456789abcdef01234567"},
	}}
	if got := revisionOf(ks); got != "main@sha1:0123456789abcdef0123456789abcdef01234567" {
		t.Errorf("revisionOf() = %q", got)
	}
	applying := ks.DeepCopy()
	_ = unstructured.SetNestedField(applying.Object, "main@sha1:fedcba9876543210fedcba9876543210fedcba98", "status", "lastAttemptedRevision")
	if got := revisionOf(applying); got != "main@sha1:fedcba9876543210fedcba9876543210fedcba98" {
		t.Errorf("revisionOf() while applying = %q, want the attempted revision", got)
	}
}

func TestVerify(t *testing.T) {
	deployment := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	kustomization := func(ns, name string, ids ...string) *unstructured.Unstructured {
		entries := make([]any, 0, len(ids))
		for _, id := range ids {
			entries = append(entries, map[string]any{"id": id, "v": "v1"})
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"status": map[string]any{
				"lastAppliedRevision": "main@sha1:0123456789abcdef0123456789abcdef01234567",
				"inventory":           map[string]any{"entries": entries},
			},
		}}
	}
	c := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithObjects(
		kustomization("team-a", "apps", "team-a_web_apps_Deployment", "team-a_web__Service"),
		kustomization("flux-system", "flux-system", "flux-system_source-controller_apps_Deployment"),
		kustomization("flux-system", "tenants", "team-a_web_apps_Deployment"),
	).Build()
	labelled := func(ns, name string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web", Labels: map[string]string{
			"kustomize.toolkit.fluxcd.io/name": name, "kustomize.toolkit.fluxcd.io/namespace": ns,
		}}}
	}
	tests := map[string]struct {
		obj            *appsv1.Deployment
		crossNamespace bool
		wantOwner      string
		wantFound      bool
		wantErr        string
	}{
		"listed in its own namespace": {obj: labelled("team-a", "apps"), wantOwner: "team-a/apps", wantFound: true},
		"labels borrow the platform's Kustomization, which does not list it": {
			obj: labelled("flux-system", "flux-system"), crossNamespace: true, wantFound: true,
			wantErr: "Deployment team-a/web is labelled as applied by Kustomization flux-system/flux-system, whose status.inventory does not list it",
		},
		"listed by a Kustomization in another namespace, cross-namespace allowed": {
			obj: labelled("flux-system", "tenants"), crossNamespace: true, wantOwner: "flux-system/tenants", wantFound: true,
		},
		"listed by a Kustomization in another namespace, cross-namespace refused": {
			obj: labelled("flux-system", "tenants"), wantFound: true,
			wantErr: "cross-namespace references are disabled (--no-cross-namespace-refs)",
		},
		"labelled with a Kustomization that does not exist": {
			obj: labelled("team-a", "gone"), wantFound: true, wantErr: "failed to read Kustomization team-a/gone",
		},
		"not labelled": {obj: &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web"}}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, found, err := Verify(context.Background(), c, tt.obj, deployment, tt.crossNamespace)
			if found != tt.wantFound {
				t.Errorf("found = %v, want %v", found, tt.wantFound)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantOwner != "" && got.Namespace+"/"+got.Name != tt.wantOwner {
				t.Errorf("owner = %s/%s, want %s", got.Namespace, got.Name, tt.wantOwner)
			}
			if tt.wantOwner != "" && got.Revision != "main@sha1:0123456789abcdef0123456789abcdef01234567" {
				t.Errorf("revision = %q", got.Revision)
			}
		})
	}
	if id := InventoryID("team-a", "web", schema.GroupKind{Kind: "Service"}); id != "team-a_web__Service" {
		t.Errorf("InventoryID of a core object = %q", id)
	}
}

// A target rendered by a HelmRelease takes the Git revision of the
// Kustomization that applied the HelmRelease, verified by its inventory;
// otherwise the HelmRelease's own revision, its chart version.
func TestVerify_HelmRelease(t *testing.T) {
	const commit = "main@sha1:0123456789abcdef0123456789abcdef01234567"
	deployment := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	inventory := func(ids ...string) map[string]any {
		entries := make([]any, 0, len(ids))
		for _, id := range ids {
			entries = append(entries, map[string]any{"id": id, "v": "v1"})
		}
		return map[string]any{"entries": entries}
	}
	helmRelease := func(name string, labels map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
			"metadata": map[string]any{"name": name, "namespace": "team-a", "labels": labels},
			"status":   map[string]any{"lastAttemptedRevision": "0.1.0", "inventory": inventory("team-a_" + name + "_apps_Deployment")},
		}}
	}
	kustomization := func(ns, name string, ids ...string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"status":   map[string]any{"lastAttemptedRevision": commit, "inventory": inventory(ids...)},
		}}
	}
	appliedBy := func(ns, name string) map[string]any {
		return map[string]any{"kustomize.toolkit.fluxcd.io/name": name, "kustomize.toolkit.fluxcd.io/namespace": ns}
	}
	c := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithObjects(
		helmRelease("from-git", appliedBy("team-a", "apps")),
		helmRelease("by-hand", nil),
		helmRelease("borrowed", appliedBy("team-a", "apps")),
		helmRelease("tenant", appliedBy("flux-system", "tenants")),
		kustomization("team-a", "apps", "team-a_from-git_helm.toolkit.fluxcd.io_HelmRelease"),
		kustomization("flux-system", "tenants", "team-a_tenant_helm.toolkit.fluxcd.io_HelmRelease"),
	).Build()
	tests := map[string]struct {
		release        string
		crossNamespace bool
		want           string
	}{
		"applied by a Kustomization":                              {release: "from-git", want: commit},
		"created by hand":                                         {release: "by-hand", want: "0.1.0"},
		"labelled with a Kustomization that does not list it":     {release: "borrowed", want: "0.1.0"},
		"applied from another namespace, cross-namespace allowed": {release: "tenant", crossNamespace: true, want: commit},
		"applied from another namespace, cross-namespace refused": {release: "tenant", want: "0.1.0"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			target := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: tt.release, Labels: map[string]string{
				"helm.toolkit.fluxcd.io/name": tt.release, "helm.toolkit.fluxcd.io/namespace": "team-a",
			}}}
			got, found, err := Verify(context.Background(), c, target, deployment, tt.crossNamespace)
			if err != nil || !found {
				t.Fatalf("Verify() found = %v, err = %v", found, err)
			}
			if got.Kind != "HelmRelease" || got.Name != tt.release {
				t.Errorf("owner = %s %s, want HelmRelease %s", got.Kind, got.Name, tt.release)
			}
			if got.Revision != tt.want {
				t.Errorf("revision = %q, want %q", got.Revision, tt.want)
			}
		})
	}
}
