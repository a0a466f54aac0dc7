package fluxowner

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
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

func TestRevision(t *testing.T) {
	ks := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
		"metadata": map[string]any{"name": "apps", "namespace": "flux-system"},
		"status":   map[string]any{"lastAppliedRevision": "main@sha1:0123456789abcdef0123456789abcdef01234567"},
	}}
	applying := ks.DeepCopy()
	applying.SetName("applying")
	_ = unstructured.SetNestedField(applying.Object, "main@sha1:fedcba9876543210fedcba9876543210fedcba98", "status", "lastAttemptedRevision")
	c := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithObjects(ks, applying).Build()
	owner := Owner{Group: KustomizeGroup, Version: "v1", Kind: "Kustomization", Name: "apps", Namespace: "flux-system"}
	if got := Revision(context.Background(), c, owner); got != "main@sha1:0123456789abcdef0123456789abcdef01234567" {
		t.Errorf("Revision() = %q", got)
	}
	owner.Name = "applying"
	if got := Revision(context.Background(), c, owner); got != "main@sha1:fedcba9876543210fedcba9876543210fedcba98" {
		t.Errorf("Revision() while applying = %q, want the attempted revision", got)
	}
	owner.Name = "missing"
	if got := Revision(context.Background(), c, owner); got != "" {
		t.Errorf("Revision() of a missing owner = %q, want empty", got)
	}
}
