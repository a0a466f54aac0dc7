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
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/workload"
	"github.com/serin-dev/serin/notifier"
)

// restorePrimary rolls the primary back to the pod template of its last
// promoted revision, taken from its own ReplicaSet history. Routing is not
// touched: the canary keeps serving while the primary comes back.
func (r *CanaryReconciler) restorePrimary(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	good := obj.Status.LastPromotedSpec
	if isServiceTarget(obj) {
		if err := r.restoreServicePrimary(ctx, obj); err != nil {
			return ctrl.Result{}, err
		}
		r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.RestoringPrimaryReason, "restored %s to the last promoted revision %s", obj.GetPrimaryServiceName(), good)
		return ctrl.Result{RequeueAfter: obj.GetProgressDeadline()}, nil
	}
	primary := &appsv1.Deployment{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}, primary); err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to get primary: %w", err)
	}
	// ReplicaSets are not cached (a cluster-wide informer for a rare read);
	// a restore reads them live.
	var replicaSets appsv1.ReplicaSetList
	if err := r.APIReader.List(ctx, &replicaSets, client.InNamespace(obj.Namespace), client.MatchingLabels(primary.Spec.Selector.MatchLabels)); err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to list the primary's replicasets: %w", err)
	}
	// What was recorded when the good revision was promoted: its template,
	// should the ReplicaSets be gone (revisionHistoryLimit, or the primary
	// was re-created), and its configs' hashes.
	rev, recorded, err := r.promotedTemplate(ctx, obj, good)
	if err != nil {
		return ctrl.Result{}, err
	}
	tpl, ok := workload.LastGoodTemplate(replicaSets.Items, good)
	if !ok && recorded {
		tpl, ok = &rev.Template, true
	}
	if !ok {
		return ctrl.Result{}, &stallingError{Reason: v1alpha1.HaltedReason, Err: fmt.Errorf(
			"cannot restore %s: no ReplicaSet of it ran the last promoted revision %s (revisionHistoryLimit too low?); fix the target in Git", primary.Name, good)}
	}
	if err := r.restorePrimaryConfigs(ctx, obj, obs, rev); err != nil {
		return ctrl.Result{}, err
	}
	patch := client.MergeFrom(primary.DeepCopy())
	primary.Spec.Template = *tpl
	metav1.SetMetaDataAnnotation(&primary.ObjectMeta, specHashAnnotation, good)
	if err := r.Patch(ctx, primary, patch, client.FieldOwner(r.ControllerName)); err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to restore primary %s: %w", primary.Name, err)
	}
	r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.RestoringPrimaryReason,
		"restoring %s to the last promoted revision %s while the canary keeps serving", primary.Name, good)
	setReconcilingMessage(obj, "restoring %s to revision %s", primary.Name, good)
	return ctrl.Result{RequeueAfter: obj.GetProgressDeadline()}, nil
}

// restorePrimaryConfigs brings the primary's copies of the tracked configs
// back to the last promoted data: from the sources when Git reverted them
// (the target is on the last promoted spec again). When the sources still
// hold the bad revision's data and the copies do too, the restore stops
// rather than run the good template with the bad data.
func (r *CanaryReconciler) restorePrimaryConfigs(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, rev *promotedRevision) error {
	if obs.Target.SpecHash == obj.Status.LastPromotedSpec {
		return r.copyPrimaryConfigs(ctx, obj, obs.Target.TrackedConfigs)
	}
	if rev == nil {
		return nil // promoted before serin recorded revisions: the template alone
	}
	for key, want := range rev.Configs {
		ref, ok := workload.ParseConfigRef(key)
		if !ok {
			continue
		}
		got, err := r.configCopyHash(ctx, obj.Namespace, ref)
		if err != nil {
			return err
		}
		if got != want {
			return &stallingError{Reason: v1alpha1.HaltedReason, Err: fmt.Errorf(
				"cannot restore %s: its copy of %s holds the new revision's data, and the last promoted data is not kept (serin never stores config data): revert the target and %s in Git",
				obj.GetPrimaryName(), key, ref.Name)}
		}
	}
	return nil
}

// configCopyHash hashes the data of the primary's copy of a tracked config.
func (r *CanaryReconciler) configCopyHash(ctx context.Context, namespace string, ref workload.ConfigRef) (string, error) {
	key := types.NamespacedName{Namespace: namespace, Name: workload.PrimaryConfigName(ref.Name)}
	data, _, err := r.readConfig(ctx, key, ref.Kind)
	if err != nil {
		return "", err
	}
	return workload.ConfigDataHash(data), nil
}
