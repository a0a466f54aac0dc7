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
	"fmt"
	"net/url"
	"strings"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/git"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/fluxowner"
)

// ErrUnsupportedSource means the target does not come from a Git branch
// serin can write to (a HelmRelease no Kustomization applied, an OCI or
// bucket source, a tag).
var ErrUnsupportedSource = errors.New("unsupported source")

// Source is where a Canary's target is defined: the Flux Kustomization
// that applies it, and the Git repository and branch that Kustomization
// builds.
type Source struct {
	// Kustomization applies the target.
	Kustomization types.NamespacedName
	// GitRepository is the Kustomization's source.
	GitRepository types.NamespacedName
	// URL of the Git repository.
	URL string
	// Branch the GitRepository tracks.
	Branch string
	// Path is the Kustomization's spec.path.
	Path string
	// Auth is the GitRepository's secret, read as source-controller reads
	// it: username/password, bearerToken, SSH identity and known_hosts,
	// ca.crt and client certificates.
	Auth *git.AuthOptions
	// HostToken is the secret's password or bearerToken: the Git host API
	// token, unless the agent is given one.
	HostToken string
	// LastAppliedRevision is the revision the Kustomization last applied.
	LastAppliedRevision string
	// HelmRelease is set when a HelmRelease that the Kustomization
	// applies rendered the target: the HelmRelease is what a revert
	// restores in the Kustomization's rendering (see revertTarget).
	HelmRelease *Target
}

// targetOf returns the Canary's target.
func targetOf(c *v1alpha1.Canary) Target {
	return Target{Kind: c.Spec.TargetRef.Kind, Namespace: c.Namespace, Name: c.Spec.TargetRef.Name}
}

// revertTarget returns the object of the Kustomization's rendering that a
// revert of c's target restores: the target itself, or the HelmRelease
// that rendered it.
func revertTarget(c *v1alpha1.Canary, src *Source) Target {
	if src != nil && src.HelmRelease != nil {
		return *src.HelmRelease
	}
	return targetOf(c)
}

// DiscoverSource finds the Kustomization that applied the Canary's target
// (from the labels kustomize-controller sets) and its GitRepository, with
// the credentials of the GitRepository's secret.
//
// The Kustomization is used only when its status.inventory lists the
// target (fluxowner.Verify): the labels alone are the tenant's to write. With
// crossNamespace false (--no-cross-namespace-refs), the Kustomization and
// its GitRepository, whose Secret serin clones and pushes with, must be in
// the Canary's namespace.
func DiscoverSource(ctx context.Context, c client.Reader, canary *v1alpha1.Canary, crossNamespace bool) (*Source, error) {
	ref := canary.Spec.TargetRef
	apiVersion := ref.APIVersion
	if apiVersion == "" {
		apiVersion = "apps/v1"
	}
	target := &metav1.PartialObjectMetadata{}
	target.SetGroupVersionKind(schema.FromAPIVersionAndKind(apiVersion, ref.Kind))
	if err := c.Get(ctx, types.NamespacedName{Namespace: canary.Namespace, Name: ref.Name}, target); err != nil {
		return nil, fmt.Errorf("failed to get target %s/%s: %w", ref.Kind, ref.Name, err)
	}
	applied, ok, err := fluxowner.Verify(ctx, c, target, target.GroupVersionKind().GroupKind(), crossNamespace)
	if !ok {
		return nil, fmt.Errorf("%w: %s %s/%s was not applied by a Flux Kustomization (no %s/name label)",
			ErrUnsupportedSource, ref.Kind, canary.Namespace, ref.Name, fluxowner.KustomizeGroup)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsupportedSource, err)
	}
	owner := applied.Owner
	if owner.Group == fluxowner.HelmGroup && owner.Kind == helmReleaseKind {
		return helmReleaseSource(ctx, c, canary, owner, crossNamespace)
	}
	if owner.Group != fluxowner.KustomizeGroup {
		return nil, fmt.Errorf("%w: %s %s/%s is applied by %s %s/%s; only Kustomizations and the HelmReleases they apply can be reverted in Git",
			ErrUnsupportedSource, ref.Kind, canary.Namespace, ref.Name, owner.Kind, owner.Namespace, owner.Name)
	}
	return kustomizationSource(ctx, c, canary, owner, crossNamespace)
}

// kustomizationSource reads the Kustomization owner and its GitRepository.
func kustomizationSource(ctx context.Context, c client.Reader, canary *v1alpha1.Canary, owner fluxowner.Owner, crossNamespace bool) (*Source, error) {
	ks := &kustomizev1.Kustomization{}
	if err := getTyped(ctx, c, owner.GroupVersionKind(), types.NamespacedName{Namespace: owner.Namespace, Name: owner.Name}, ks); err != nil {
		return nil, fmt.Errorf("failed to get Kustomization %s/%s: %w", owner.Namespace, owner.Name, err)
	}
	src := ks.Spec.SourceRef
	if src.Kind != sourcev1.GitRepositoryKind {
		return nil, fmt.Errorf("%w: Kustomization %s/%s builds a %s; only GitRepository sources can be reverted",
			ErrUnsupportedSource, ks.Namespace, ks.Name, src.Kind)
	}
	repoKey := types.NamespacedName{Namespace: src.Namespace, Name: src.Name}
	if repoKey.Namespace == "" {
		repoKey.Namespace = ks.Namespace
	}
	if !crossNamespace && repoKey.Namespace != canary.Namespace {
		return nil, fmt.Errorf("%w: Kustomization %s/%s builds GitRepository %s in another namespace, and cross-namespace references are disabled (--no-cross-namespace-refs)",
			ErrUnsupportedSource, ks.Namespace, ks.Name, repoKey)
	}
	out, err := repositorySource(ctx, c, repoKey)
	if err != nil {
		return nil, err
	}
	out.Kustomization = types.NamespacedName{Namespace: ks.Namespace, Name: ks.Name}
	out.Path = ks.Spec.Path
	out.LastAppliedRevision = ks.Status.LastAppliedRevision
	return out, nil
}

// repositorySource reads a GitRepository: its URL, the branch it tracks
// and the credentials of its secret.
func repositorySource(ctx context.Context, c client.Reader, repoKey types.NamespacedName) (*Source, error) {
	repo := &sourcev1.GitRepository{}
	gvk := sourcev1.GroupVersion.WithKind(sourcev1.GitRepositoryKind)
	if err := getTyped(ctx, c, gvk, repoKey, repo); err != nil {
		return nil, fmt.Errorf("failed to get GitRepository %s: %w", repoKey, err)
	}
	branch, err := trackedBranch(repo)
	if err != nil {
		return nil, err
	}
	if p := repo.Spec.Provider; p != "" && p != sourcev1.GitProviderGeneric {
		return nil, fmt.Errorf("%w: GitRepository %s authenticates with provider %q; serin supports secretRef credentials only",
			ErrUnsupportedSource, repoKey, p)
	}

	out := &Source{GitRepository: repoKey, URL: repo.Spec.URL, Branch: branch}
	var data map[string][]byte
	if sr := repo.Spec.SecretRef; sr != nil {
		secret := &corev1.Secret{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: repoKey.Namespace, Name: sr.Name}, secret); err != nil {
			return nil, fmt.Errorf("failed to get the secret %s/%s of GitRepository %s: %w", repoKey.Namespace, sr.Name, repoKey, err)
		}
		data = secret.Data
		out.HostToken = string(data["bearerToken"])
		if out.HostToken == "" {
			out.HostToken = string(data["password"])
		}
	}
	u, err := url.Parse(repo.Spec.URL)
	if err != nil {
		return nil, fmt.Errorf("GitRepository %s: invalid url %q: %w", repoKey, repo.Spec.URL, err)
	}
	if out.Auth, err = git.NewAuthOptions(*u, data); err != nil {
		return nil, fmt.Errorf("GitRepository %s: %w", repoKey, err)
	}
	return out, nil
}

// trackedBranch returns the branch a GitRepository follows, which is where
// a revert goes; tags, semver ranges and pinned commits cannot be reverted.
func trackedBranch(repo *sourcev1.GitRepository) (string, error) {
	ref := repo.Spec.Reference
	switch {
	case ref == nil:
		return git.DefaultBranch, nil
	case ref.Commit != "" || ref.Tag != "" || ref.SemVer != "":
		return "", fmt.Errorf("%w: GitRepository %s/%s follows a tag, semver range or commit, not a branch: revert the change where that reference is set",
			ErrUnsupportedSource, repo.Namespace, repo.Name)
	case ref.Name != "":
		if b, ok := strings.CutPrefix(ref.Name, "refs/heads/"); ok {
			return b, nil
		}
		return "", fmt.Errorf("%w: GitRepository %s/%s follows %s, not a branch", ErrUnsupportedSource, repo.Namespace, repo.Name, ref.Name)
	case ref.Branch != "":
		return ref.Branch, nil
	}
	return git.DefaultBranch, nil
}

// getTyped reads a Flux object through the unstructured client, so that
// the manager's scheme needs no Flux types.
func getTyped(ctx context.Context, c client.Reader, gvk schema.GroupVersionKind, key types.NamespacedName, into runtime.Object) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := c.Get(ctx, key, u); err != nil {
		return err
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}
