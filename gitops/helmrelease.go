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
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/fluxowner"
)

// helmReleaseKind is a HelmRelease's kind.
const helmReleaseKind = "HelmRelease"

// helmReleaseSource finds where a HelmRelease that rendered a Canary's
// target is defined: the Kustomization that applied it (its labels, and
// its inventory listing it, as fluxowner.Verify checks) and that
// Kustomization's GitRepository. A revert restores the HelmRelease in the
// Kustomization's rendering (its chart version, its values, a values file
// of a configMapGenerator it reads with valuesFrom): what the bad commit
// changed in it, and nothing else.
func helmReleaseSource(ctx context.Context, c client.Reader, canary *v1alpha1.Canary, hrOwner fluxowner.Owner, crossNamespace bool) (*Source, error) {
	hr := &metav1.PartialObjectMetadata{}
	hr.SetGroupVersionKind(hrOwner.GroupVersionKind())
	key := types.NamespacedName{Namespace: hrOwner.Namespace, Name: hrOwner.Name}
	if err := c.Get(ctx, key, hr); err != nil {
		return nil, fmt.Errorf("failed to get HelmRelease %s: %w", key, err)
	}
	gk := schema.GroupKind{Group: fluxowner.HelmGroup, Kind: helmReleaseKind}
	applied, ok, err := fluxowner.Verify(ctx, c, hr, gk, crossNamespace)
	if !ok {
		return nil, fmt.Errorf("%w: HelmRelease %s, which rendered %s %s/%s, was not applied by a Flux Kustomization (no %s/name label): there is no file in Git to revert",
			ErrUnsupportedSource, key, canary.Spec.TargetRef.Kind, canary.Namespace, canary.Spec.TargetRef.Name, fluxowner.KustomizeGroup)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsupportedSource, err)
	}
	if applied.Group != fluxowner.KustomizeGroup {
		return nil, fmt.Errorf("%w: HelmRelease %s is applied by %s %s/%s; only Kustomizations can be reverted in Git",
			ErrUnsupportedSource, key, applied.Kind, applied.Namespace, applied.Name)
	}
	src, err := kustomizationSource(ctx, c, canary, applied.Owner, crossNamespace)
	if err != nil {
		return nil, err
	}
	src.HelmRelease = &Target{Kind: helmReleaseKind, Namespace: key.Namespace, Name: key.Name}
	return src, nil
}
