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

package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/workload"
)

// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=get;list;create;delete

// The primary's promoted revisions are kept as ControllerRevisions owned by
// the Canary (as a StatefulSet keeps its templates), not by the primary: a
// primary that someone deletes, with its ReplicaSets, is re-created with
// the last promoted revision rather than with whatever the target runs, and
// RestorePrimary does not depend on the primary's revisionHistoryLimit.

// promotedRevisionsKept is how many promoted revisions a Canary keeps.
const promotedRevisionsKept = 3

// promotedRevision is what a ControllerRevision holds: the primary's pod
// template and replicas for one promoted spec hash.
type promotedRevision struct {
	Template corev1.PodTemplateSpec `json:"template"`
	Replicas *int32                 `json:"replicas,omitempty"`
	// Configs are the hashes of the tracked ConfigMaps' and Secrets' data
	// (Kind/name), which the primary's copies held (never the data).
	Configs map[string]string `json:"configs,omitempty"`
}

// promotedRevisionName is the ControllerRevision of one promoted spec hash.
func promotedRevisionName(obj *v1alpha1.Canary, hash string) string {
	if len(hash) > 10 {
		hash = hash[:10]
	}
	return fmt.Sprintf("%s-primary-%s", obj.Name, hash)
}

// recordPromoted keeps the primary's template (and replicas, and configs'
// hashes) for hash, before the primary runs it, and prunes the oldest
// beyond promotedRevisionsKept.
func (r *CanaryReconciler) recordPromoted(ctx context.Context, obj *v1alpha1.Canary, hash string, rev promotedRevision) error {
	data, err := json.Marshal(rev)
	if err != nil {
		return err
	}
	var existing appsv1.ControllerRevisionList
	if err := r.APIReader.List(ctx, &existing, client.InNamespace(obj.Namespace), client.MatchingLabels{workload.CanaryNameLabel: obj.Name}); err != nil {
		return fmt.Errorf("failed to list promoted revisions: %w", err)
	}
	name := promotedRevisionName(obj, hash)
	next := int64(1)
	// Only the Canary's own: a label is anyone's to set.
	existing.Items = slices.DeleteFunc(existing.Items, func(cr appsv1.ControllerRevision) bool { return !metav1.IsControlledBy(&cr, obj) })
	for _, cr := range existing.Items {
		if cr.Name == name {
			return nil // recorded when this revision was promoted
		}
		next = max(next, cr.Revision+1)
	}
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Namespace: obj.Namespace, Name: name, Labels: map[string]string{workload.CanaryNameLabel: obj.Name},
			Annotations: map[string]string{specHashAnnotation: hash}},
		Data:     runtime.RawExtension{Raw: data},
		Revision: next,
	}
	if err := controllerutil.SetControllerReference(obj, cr, r.Client.Scheme()); err != nil {
		return err
	}
	if err := r.Create(ctx, cr, client.FieldOwner(r.ControllerName)); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("failed to record promoted revision %s: %w", name, err)
	}
	old := existing.Items
	slices.SortFunc(old, func(a, b appsv1.ControllerRevision) int { return int(b.Revision - a.Revision) })
	for i := range old {
		if i < promotedRevisionsKept-1 {
			continue
		}
		if err := r.Delete(ctx, &old[i]); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("failed to prune promoted revision %s: %w", old[i].Name, err)
		}
	}
	return nil
}

// promotedTemplate returns the primary's template and replicas recorded
// for hash.
func (r *CanaryReconciler) promotedTemplate(ctx context.Context, obj *v1alpha1.Canary, hash string) (*promotedRevision, bool, error) {
	cr := &appsv1.ControllerRevision{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: obj.Namespace, Name: promotedRevisionName(obj, hash)}, cr)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, fmt.Errorf("failed to read promoted revision: %w", err)
	}
	if cr.Annotations[specHashAnnotation] != hash || !metav1.IsControlledBy(cr, obj) {
		return nil, false, nil
	}
	var rev promotedRevision
	if err := json.Unmarshal(cr.Data.Raw, &rev); err != nil {
		return nil, false, fmt.Errorf("promoted revision %s: %w", cr.Name, err)
	}
	return &rev, true, nil
}
