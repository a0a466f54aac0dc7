// Package fluxowner finds the Flux object that applied a Kubernetes object
// (from the labels kustomize-controller and helm-controller set) and the
// source revision it applied.
package fluxowner

import (
	"context"

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

// Revision returns the source revision the owner is applying, e.g.
// main@sha1:…, or "" when the owner or its CRD cannot be read: a revision is
// information, never a requirement. kustomize-controller writes
// status.lastAttemptedRevision before it applies and lastAppliedRevision
// only after, so a change to an applied object is seen while
// lastAppliedRevision still names the previous commit: the attempted
// revision is the one that made the change.
func Revision(ctx context.Context, reader client.Reader, o Owner) string {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(o.GroupVersionKind())
	if err := reader.Get(ctx, types.NamespacedName{Namespace: o.Namespace, Name: o.Name}, u); err != nil {
		return ""
	}
	if rev, _, _ := unstructured.NestedString(u.Object, "status", "lastAttemptedRevision"); rev != "" {
		return rev
	}
	rev, _, _ := unstructured.NestedString(u.Object, "status", "lastAppliedRevision")
	return rev
}
