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

// Package fluxowner finds the Flux object that applied a Kubernetes object
// (from the labels kustomize-controller and helm-controller set) and the
// source revision it applied.
package fluxowner

import (
	"context"
	"errors"
	"fmt"

	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/runtime/acl"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Flux API groups and kinds that apply workloads.
const (
	KustomizeGroup = "kustomize.toolkit.fluxcd.io"
	HelmGroup      = "helm.toolkit.fluxcd.io"
)

// Owner is the Flux object that applied an object.
type Owner struct {
	// Group is kustomize.toolkit.fluxcd.io or helm.toolkit.fluxcd.io.
	Group string
	// Version is the served API version read (v1 for Kustomization, v2 for HelmRelease).
	Version string
	// Kind is Kustomization or HelmRelease.
	Kind      string
	Name      string
	Namespace string
}

// GroupVersionKind of the owner.
func (o Owner) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: o.Group, Version: o.Version, Kind: o.Kind}
}

// Of returns the Flux object that applied obj, from its labels.
func Of(obj client.Object) (Owner, bool) {
	l := obj.GetLabels()
	if name, ns := l[KustomizeGroup+"/name"], l[KustomizeGroup+"/namespace"]; name != "" && ns != "" {
		return Owner{Group: KustomizeGroup, Version: "v1", Kind: "Kustomization", Name: name, Namespace: ns}, true
	}
	if name, ns := l[HelmGroup+"/name"], l[HelmGroup+"/namespace"]; name != "" && ns != "" {
		return Owner{Group: HelmGroup, Version: "v2", Kind: "HelmRelease", Name: name, Namespace: ns}, true
	}
	return Owner{}, false
}

// ErrUnverified is returned by Verify when a Flux object is named by the
// labels of an object but does not list it in its inventory.
var ErrUnverified = errors.New("not applied by the Flux object its labels name")

// Applied is a Flux owner that Verify found to really apply an object.
type Applied struct {
	Owner
	// Revision is the source revision it is applying (see revisionOf); for
	// a HelmRelease that a Kustomization applied, the Kustomization's (see
	// helmReleaseSource).
	Revision string
}

// Verify returns the Flux object that applied obj (of group and kind gk)
// when obj's labels name it and its status.inventory lists obj. Labels are
// written by whoever writes the object, a tenant included; the inventory
// is written by the Flux controller that applied it. So a tenant cannot
// borrow a Kustomization's Git credentials, its Alerts or its commit
// statuses by labelling a Deployment. An owner in another namespace than
// obj is refused unless crossNamespace allows it (Flux's
// --no-cross-namespace-refs). Errors: not labelled (found is false), the
// owner cannot be read, ErrUnverified, or an acl.AccessDeniedError.
func Verify(ctx context.Context, reader client.Reader, obj client.Object, gk schema.GroupKind, crossNamespace bool) (applied Applied, found bool, err error) {
	o, ok := Of(obj)
	if !ok {
		return Applied{}, false, nil
	}
	if !crossNamespace && o.Namespace != obj.GetNamespace() {
		return Applied{}, true, acl.AccessDeniedError(fmt.Sprintf(
			"%s %s/%s is labelled as applied by %s %s/%s in another namespace, and cross-namespace references are disabled (--no-cross-namespace-refs)",
			gk.Kind, obj.GetNamespace(), obj.GetName(), o.Kind, o.Namespace, o.Name))
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(o.GroupVersionKind())
	if err := reader.Get(ctx, types.NamespacedName{Namespace: o.Namespace, Name: o.Name}, u); err != nil {
		return Applied{}, true, fmt.Errorf("failed to read %s %s/%s: %w", o.Kind, o.Namespace, o.Name, err)
	}
	if !inInventory(u, InventoryID(obj.GetNamespace(), obj.GetName(), gk)) {
		return Applied{}, true, fmt.Errorf("%w: %s %s/%s is labelled as applied by %s %s/%s, whose status.inventory does not list it",
			ErrUnverified, gk.Kind, obj.GetNamespace(), obj.GetName(), o.Kind, o.Namespace, o.Name)
	}
	rev := revisionOf(u)
	if o.Group == HelmGroup {
		if git, ok := helmReleaseSource(ctx, reader, u, crossNamespace); ok {
			rev = git
		}
	}
	return Applied{Owner: o, Revision: rev}, true, nil
}

// helmReleaseGroupKind is a HelmRelease's, as a Kustomization's inventory
// lists it.
var helmReleaseGroupKind = schema.GroupKind{Group: HelmGroup, Kind: "HelmRelease"}

// helmReleaseSource returns the Git revision of the Kustomization that
// applied a HelmRelease, when the HelmRelease's labels name one whose
// inventory lists it. A HelmRelease's own lastAttemptedRevision is its
// chart's version: the same for every change of its values, so two
// revisions of the target would look like one. The commit that changed the
// HelmRelease (its values, its chart version) is what attributes a
// revision, as for a target a Kustomization applies directly.
func helmReleaseSource(ctx context.Context, reader client.Reader, hr *unstructured.Unstructured, crossNamespace bool) (string, bool) {
	if o, ok := Of(hr); !ok || o.Group != KustomizeGroup {
		return "", false
	}
	applied, _, err := Verify(ctx, reader, hr, helmReleaseGroupKind, crossNamespace)
	if err != nil || applied.Revision == "" {
		return "", false
	}
	return applied.Revision, true
}

// InventoryID is the id of an object in a Flux inventory
// (status.inventory.entries[].id): namespace_name_group_kind, as
// fluxcd/cli-utils' ObjMetadata writes it.
func InventoryID(namespace, name string, gk schema.GroupKind) string {
	return object.ObjMetadata{Namespace: namespace, Name: name, GroupKind: gk}.String()
}

// inInventory reports whether a Kustomization or HelmRelease lists id.
func inInventory(u *unstructured.Unstructured, id string) bool {
	entries, _, _ := unstructured.NestedSlice(u.Object, "status", "inventory", "entries")
	for _, e := range entries {
		if m, ok := e.(map[string]any); ok && m["id"] == id {
			return true
		}
	}
	return false
}

// revisionOf returns the source revision a Flux owner is applying, e.g.
// main@sha1:…. kustomize-controller writes status.lastAttemptedRevision
// before it applies and lastAppliedRevision only after, so a change to an
// applied object is seen while lastAppliedRevision still names the previous
// commit: the attempted revision is the one that made the change.
func revisionOf(u *unstructured.Unstructured) string {
	if rev, _, _ := unstructured.NestedString(u.Object, "status", "lastAttemptedRevision"); rev != "" {
		return rev
	}
	rev, _, _ := unstructured.NestedString(u.Object, "status", "lastAppliedRevision")
	return rev
}
