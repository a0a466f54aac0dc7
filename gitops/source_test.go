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
	"errors"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/git"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/fluxowner"
)

// sourceObjects are the Flux objects behind Deployment apps/podinfo; each
// test case mutates them.
type sourceObjects struct {
	target *appsv1.Deployment
	ks     *kustomizev1.Kustomization
	repo   *sourcev1.GitRepository
	secret *corev1.Secret
	// helmRelease, when set, rendered the target.
	helmRelease *unstructured.Unstructured
}

func newSourceObjects() *sourceObjects {
	return &sourceObjects{
		target: &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: "apps", Labels: map[string]string{
			"kustomize.toolkit.fluxcd.io/name": "apps", "kustomize.toolkit.fluxcd.io/namespace": "flux-system",
		}}},
		ks: &kustomizev1.Kustomization{
			ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: "flux-system"},
			Spec: kustomizev1.KustomizationSpec{
				Path:      "./apps/podinfo",
				SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "fleet"},
			},
			Status: kustomizev1.KustomizationStatus{
				LastAppliedRevision: "main@sha1:0123456789abcdef0123456789abcdef01234567",
				Inventory:           &kustomizev1.ResourceInventory{Entries: []kustomizev1.ResourceRef{{ID: "apps_podinfo_apps_Deployment", Version: "v1"}}},
			},
		},
		repo: &sourcev1.GitRepository{
			ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "flux-system"},
			Spec: sourcev1.GitRepositorySpec{
				URL:       "https://git.example.com/fleet/apps.git",
				Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
				SecretRef: &meta.LocalObjectReference{Name: "git-auth"},
			},
		},
		secret: &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "git-auth", Namespace: "flux-system"},
			Data:       map[string][]byte{"username": []byte("bot"), "password": []byte("token-1")},
		},
	}
}

func (o *sourceObjects) client() client.Client {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = kustomizev1.AddToScheme(scheme)
	_ = sourcev1.AddToScheme(scheme)
	objs := []client.Object{o.target, o.ks, o.repo, o.secret}
	if o.helmRelease != nil {
		objs = append(objs, o.helmRelease)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
}

// renderedByHelmRelease makes a HelmRelease apps/podinfo, which the
// Kustomization applied (with kustomizeLabels and listing it when listed),
// render the target.
func (o *sourceObjects) renderedByHelmRelease(kustomizeLabels, listed bool) {
	o.target.Labels = map[string]string{"helm.toolkit.fluxcd.io/name": "podinfo", "helm.toolkit.fluxcd.io/namespace": "apps"}
	hr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
		"metadata": map[string]any{"name": "podinfo", "namespace": "apps"},
		"status":   map[string]any{"inventory": map[string]any{"entries": []any{map[string]any{"id": "apps_podinfo_apps_Deployment", "v": "v1"}}}},
	}}
	if kustomizeLabels {
		hr.SetLabels(map[string]string{"kustomize.toolkit.fluxcd.io/name": "apps", "kustomize.toolkit.fluxcd.io/namespace": "flux-system"})
	}
	if listed {
		o.ks.Status.Inventory.Entries = []kustomizev1.ResourceRef{{ID: "apps_podinfo_helm.toolkit.fluxcd.io_HelmRelease", Version: "v2"}}
	}
	o.helmRelease = hr
}

func TestDiscoverSource(t *testing.T) {
	canary := &v1alpha1.Canary{
		ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: "apps"},
		Spec:       v1alpha1.CanarySpec{TargetRef: v1alpha1.TargetReference{Kind: "Deployment", Name: "podinfo"}},
	}
	basic := &Source{
		Kustomization:       types.NamespacedName{Namespace: "flux-system", Name: "apps"},
		GitRepository:       types.NamespacedName{Namespace: "flux-system", Name: "fleet"},
		URL:                 "https://git.example.com/fleet/apps.git",
		Branch:              "main",
		Path:                "./apps/podinfo",
		Auth:                &git.AuthOptions{Transport: git.HTTPS, Host: "git.example.com", Username: "bot", Password: "token-1"},
		HostToken:           "token-1",
		LastAppliedRevision: "main@sha1:0123456789abcdef0123456789abcdef01234567",
	}
	tests := map[string]struct {
		mutate           func(*sourceObjects)
		noCrossNamespace bool
		want             func(*Source)
		wantErr          error
	}{
		"labels name a Kustomization that does not list the target": {
			mutate: func(o *sourceObjects) {
				o.ks.Status.Inventory.Entries[0].ID = "flux-system_source-controller_apps_Deployment"
			},
			wantErr: fluxowner.ErrUnverified,
		},
		"Kustomization in another namespace under --no-cross-namespace-refs": {noCrossNamespace: true, wantErr: ErrUnsupportedSource},
		"GitRepository in another namespace under --no-cross-namespace-refs": {
			mutate: func(o *sourceObjects) {
				o.target.Labels["kustomize.toolkit.fluxcd.io/namespace"] = "apps"
				o.ks.Namespace = "apps"
				o.ks.Spec.SourceRef.Namespace = "flux-system"
			},
			noCrossNamespace: true, wantErr: ErrUnsupportedSource,
		},
		"username and password": {},
		"bearer token": {
			mutate: func(o *sourceObjects) {
				o.secret.Data = map[string][]byte{"bearerToken": []byte("token-2"), "ca.crt": []byte("CA")}
			},
			want: func(s *Source) {
				s.Auth = &git.AuthOptions{Transport: git.HTTPS, Host: "git.example.com", BearerToken: "token-2", CAFile: []byte("CA")}
				s.HostToken = "token-2"
			},
		},
		"ssh identity": {
			mutate: func(o *sourceObjects) {
				o.repo.Spec.URL = "ssh://git@git.example.com/fleet/apps.git"
				o.secret.Data = map[string][]byte{"identity": []byte("KEY"), "known_hosts": []byte("HOSTS")}
			},
			want: func(s *Source) {
				s.URL = "ssh://git@git.example.com/fleet/apps.git"
				s.Auth = &git.AuthOptions{Transport: git.SSH, Host: "git.example.com", Username: "git", Identity: []byte("KEY"), KnownHosts: []byte("HOSTS")}
				s.HostToken = ""
			},
		},
		"source in the kustomization's namespace, default branch, no secret": {
			mutate: func(o *sourceObjects) {
				o.repo.Spec.Reference, o.repo.Spec.SecretRef = nil, nil
			},
			want: func(s *Source) {
				s.Branch = "master"
				s.Auth = &git.AuthOptions{Transport: git.HTTPS, Host: "git.example.com"}
				s.HostToken = ""
			},
		},
		"ref name of a branch": {
			mutate: func(o *sourceObjects) { o.repo.Spec.Reference = &sourcev1.GitRepositoryRef{Name: "refs/heads/release"} },
			want:   func(s *Source) { s.Branch = "release" },
		},
		"tag":             {mutate: func(o *sourceObjects) { o.repo.Spec.Reference = &sourcev1.GitRepositoryRef{Tag: "v1"} }, wantErr: ErrUnsupportedSource},
		"oci source":      {mutate: func(o *sourceObjects) { o.ks.Spec.SourceRef.Kind = "OCIRepository" }, wantErr: ErrUnsupportedSource},
		"github app auth": {mutate: func(o *sourceObjects) { o.repo.Spec.Provider = "github" }, wantErr: ErrUnsupportedSource},
		"not from flux":   {mutate: func(o *sourceObjects) { o.target.Labels = nil }, wantErr: ErrUnsupportedSource},
		"from a helm release that is not there": {
			mutate: func(o *sourceObjects) {
				o.target.Labels = map[string]string{"helm.toolkit.fluxcd.io/name": "podinfo", "helm.toolkit.fluxcd.io/namespace": "apps"}
			},
			wantErr: ErrUnsupportedSource,
		},
		"from a helm release made by hand": {
			mutate:  func(o *sourceObjects) { o.renderedByHelmRelease(false, false) },
			wantErr: ErrUnsupportedSource,
		},
		"from a helm release whose labels name a Kustomization that does not list it": {
			mutate:  func(o *sourceObjects) { o.renderedByHelmRelease(true, false) },
			wantErr: fluxowner.ErrUnverified,
		},
		"from a helm release a Kustomization applied": {
			mutate: func(o *sourceObjects) { o.renderedByHelmRelease(true, true) },
			want:   func(s *Source) { s.HelmRelease = &Target{Kind: "HelmRelease", Namespace: "apps", Name: "podinfo"} },
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			o := newSourceObjects()
			if tt.mutate != nil {
				tt.mutate(o)
			}
			got, err := DiscoverSource(context.Background(), o.client(), canary, !tt.noCrossNamespace)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := *basic
			auth := *basic.Auth
			want.Auth = &auth
			if tt.want != nil {
				tt.want(&want)
			}
			if diff := cmp.Diff(&want, got); diff != "" {
				t.Errorf("DiscoverSource() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseRepositoryURL(t *testing.T) {
	tests := map[string]RepositoryURL{
		"https://github.com/fleet/apps.git":             {Scheme: "https", Host: "github.com", Owner: "fleet", Name: "apps"},
		"http://127.0.0.1:3000/serin/fleet.git":         {Scheme: "http", Host: "127.0.0.1:3000", Owner: "serin", Name: "fleet"},
		"ssh://git@gitlab.com/group/sub/apps":           {Scheme: "https", Host: "gitlab.com", Owner: "group/sub", Name: "apps"},
		"ssh://git@git.example.com:2222/fleet/apps.git": {Scheme: "https", Host: "git.example.com", Owner: "fleet", Name: "apps"},
		"git@github.com:fleet/apps.git":                 {Scheme: "https", Host: "github.com", Owner: "fleet", Name: "apps"},
	}
	for in, want := range tests {
		got, err := ParseRepositoryURL(in)
		if err != nil || got != want {
			t.Errorf("ParseRepositoryURL(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	if _, err := ParseRepositoryURL("https://github.com/apps"); err == nil {
		t.Error("a URL without an owner parsed")
	}
	for host, want := range map[string]string{"github.com": ProviderGitHub, "gitlab.com": ProviderGitLab, "git.example.com": ""} {
		got, err := ProviderFor("", RepositoryURL{Host: host})
		if got != want || (want == "") != (err != nil) {
			t.Errorf("ProviderFor(%s) = %q, %v; want %q", host, got, err, want)
		}
	}
	if got, err := ProviderFor(ProviderGitea, RepositoryURL{Host: "git.example.com"}); got != ProviderGitea || err != nil {
		t.Errorf("ProviderFor(gitea) = %q, %v", got, err)
	}
}
