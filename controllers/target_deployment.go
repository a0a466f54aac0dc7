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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/workload"
	"github.com/serin-dev/serin/notifier"
	"github.com/serin-dev/serin/routing"
)

// A Deployment target: serin keeps <name>-primary, a Deployment running
// the last promoted pod template, and scales the target (the canary) to
// zero replicas outside a rollout. The primary's autoscaler is a copy of
// the target's (spec.autoscalerRef).
type deploymentTarget struct{ r *CanaryReconciler }

var _ targetKind = deploymentTarget{}

// deploymentPods is what the generated Services and the routes take of a
// Deployment.
func deploymentPods(d *appsv1.Deployment) podTarget {
	return podTarget{selector: d.Spec.Selector.MatchLabels, primarySelector: workload.PrimarySelector(d), template: &d.Spec.Template}
}

func (t deploymentTarget) primaryObject() client.Object { return &appsv1.Deployment{} }

func (t deploymentTarget) observe(ctx context.Context, obj *v1alpha1.Canary, obs *rollout.Observation) error {
	r := t.r
	target, err := r.getTarget(ctx, obj)
	if apierrors.IsNotFound(err) {
		// What routes where still matters: the canary's pods are gone.
		primary, err := r.observePrimary(ctx, obj, obs)
		if err != nil || primary == nil {
			return err
		}
		return r.observeWithoutTarget(ctx, obj, obs, primary.Spec.Selector)
	} else if err != nil {
		return err
	}
	obs.Target = rollout.Target{Found: true}
	if target.Spec.Replicas != nil {
		obs.Target.Replicas = *target.Spec.Replicas
	}
	if msg := workload.ForeignTarget(obj, target); msg != "" {
		obs.Target.Invalid = msg
		return nil
	}
	if err := workload.ValidateTarget(target); err != nil {
		obs.Target.Invalid = err.Error()
		return nil
	}
	obs.Target.Health = workload.DeploymentHealth(target, obj.GetCanaryReadyThreshold())
	if _, err := r.observePrimary(ctx, obj, obs); err != nil {
		return err
	}
	pods := deploymentPods(target)
	gk := schema.GroupKind{Group: appsv1.GroupName, Kind: "Deployment"}
	if err := r.observePods(ctx, obj, obs, target, gk, pods); err != nil {
		return err
	}
	if obj.Spec.AutoscalerRef != nil {
		inSync, err := r.autoscalerInSync(ctx, obj, obs)
		if err != nil || obs.Target.Invalid != "" {
			return err
		}
		obs.ServicesInSync = obs.ServicesInSync && inSync
	}
	router, err := r.router(obj)
	if err != nil {
		return err
	}
	return r.observeRoutes(ctx, obj, router, routingTarget(obj, pods), obs)
}

// observePrimary reads the primary Deployment, when it exists.
func (r *CanaryReconciler) observePrimary(ctx context.Context, obj *v1alpha1.Canary, obs *rollout.Observation) (*appsv1.Deployment, error) {
	primary := &appsv1.Deployment{}
	switch err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}, primary); {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("failed to get primary: %w", err)
	}
	obs.Primary = rollout.Primary{
		Exists:   true,
		SpecHash: primary.Annotations[specHashAnnotation],
		Health:   workload.DeploymentHealth(primary, obj.GetPrimaryReadyThreshold()),
		// A ScaledObject may scale the primary to zero; nothing else does.
		ScaledDown: primary.Spec.Replicas != nil && *primary.Spec.Replicas == 0 && !obj.Spec.AutoscalerRef.IsScaledObject() &&
			metav1.IsControlledBy(primary, obj),
	}
	return primary, nil
}

// getTarget reads the target Deployment from the cache.
func (r *CanaryReconciler) getTarget(ctx context.Context, obj *v1alpha1.Canary) (*appsv1.Deployment, error) {
	target := &appsv1.Deployment{}
	err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.TargetRef.Name}, target)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("failed to get target: %w", err)
	}
	return target, err
}

func (t deploymentTarget) routingTarget(ctx context.Context, obj *v1alpha1.Canary) (routing.Target, error) {
	r := t.r
	target, err := r.getTarget(ctx, obj)
	if apierrors.IsNotFound(err) {
		primary := &appsv1.Deployment{}
		if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}, primary); err != nil {
			return routing.Target{}, fmt.Errorf("failed to get primary: %w", err)
		}
		return r.routingTargetWithoutTarget(ctx, obj, primary.Spec.Selector)
	}
	if err != nil {
		return routing.Target{}, err
	}
	return routingTarget(obj, deploymentPods(target)), nil
}

func (t deploymentTarget) initialize(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (string, error) {
	target, err := t.r.getTarget(ctx, obj)
	if err != nil {
		return "", err
	}
	if err := t.r.syncServices(ctx, obj, target); err != nil {
		return "", err
	}
	if err := t.r.applyPrimary(ctx, obj, target, obs.Target); err != nil {
		return "", err
	}
	return fmt.Sprintf("created the services and primary deployment %s", obj.GetPrimaryName()), nil
}

func (t deploymentTarget) syncGenerated(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) error {
	target, err := t.r.getTarget(ctx, obj)
	if err != nil {
		return err
	}
	ctrl.LoggerFrom(ctx).Info("generated objects drifted; syncing them")
	if obs.Target.SpecHash == obj.Status.LastPromotedSpec {
		if err := t.r.copyPrimaryConfigs(ctx, obj, obs.Target.TrackedConfigs); err != nil {
			return err
		}
	}
	return t.r.syncServices(ctx, obj, target)
}

// syncServices creates or updates the generated Services of a Deployment
// target, its primary's autoscaler, then the routing objects.
func (r *CanaryReconciler) syncServices(ctx context.Context, obj *v1alpha1.Canary, target *appsv1.Deployment) error {
	return r.syncPodServices(ctx, obj, deploymentPods(target), r.applyPrimaryAutoscaler)
}

// servicesInSync reports whether the generated Services of a Deployment
// target exist with the selectors and ports serin wants.
func (r *CanaryReconciler) servicesInSync(ctx context.Context, obj *v1alpha1.Canary, target *appsv1.Deployment) (bool, error) {
	return r.podServicesInSync(ctx, obj, deploymentPods(target))
}

// applyPrimary promotes the target's revision to the primary Deployment,
// creating it if needed: the primary's copies of the tracked configs first,
// then the pod template.
func (r *CanaryReconciler) applyPrimary(ctx context.Context, obj *v1alpha1.Canary, target *appsv1.Deployment, revision rollout.Target) error {
	if err := r.copyPrimaryConfigs(ctx, obj, revision.TrackedConfigs); err != nil {
		return err
	}
	primary := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}}
	if _, err := r.getOptional(ctx, obj.Namespace, primary.Name, primary); err != nil {
		return err
	}
	// Refused before the revision is recorded for it.
	if err := workload.MayManage(obj, primary, r.Client.Scheme()); err != nil {
		return err
	}
	want := primary.DeepCopy()
	workload.MutatePrimary(obj, target, want, true, revision.TrackedConfigs)
	if err := r.recordPromoted(ctx, obj, revision.SpecHash, promotedRevision{Template: want.Spec.Template, Replicas: want.Spec.Replicas, Configs: revision.TrackedConfigs}); err != nil {
		return err
	}
	op, err := r.createOrUpdate(ctx, obj, primary, func() {
		workload.MutatePrimary(obj, target, primary, true, revision.TrackedConfigs)
		primary.Annotations[specHashAnnotation] = revision.SpecHash
	})
	if err != nil {
		return fmt.Errorf("failed to apply primary deployment %s: %w", primary.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("primary applied", "deployment", primary.Name, "operation", op)
	return nil
}

func (t deploymentTarget) promote(ctx context.Context, obj *v1alpha1.Canary, revision rollout.Target) error {
	target, err := t.r.getTarget(ctx, obj)
	if err != nil {
		return err
	}
	return t.r.applyPrimary(ctx, obj, target, revision)
}

// primaryMayGoDark: the primary takes the target's strategy, which may
// take all its ready pods away at once.
func (t deploymentTarget) primaryMayGoDark(ctx context.Context, obj *v1alpha1.Canary) bool {
	target, err := t.r.getTarget(ctx, obj)
	return err == nil && workload.MayLoseAllReadyPods(target)
}

// scaleUp scales the canary to the replicas the new revision asks for
// (Flux applied them with it), or else to the primary's.
func (t deploymentTarget) scaleUp(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) error {
	replicas, err := t.canaryReplicas(ctx, obj, obs)
	if err != nil {
		return err
	}
	return t.scale(ctx, obj, replicas)
}

func (t deploymentTarget) canaryReplicas(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (int32, error) {
	if obs.Target.Replicas > 0 && obj.Spec.AutoscalerRef == nil {
		return obs.Target.Replicas, nil
	}
	primary := &appsv1.Deployment{}
	if err := t.r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}, primary); err != nil {
		return 0, err
	}
	if primary.Spec.Replicas != nil && *primary.Spec.Replicas > 0 {
		return *primary.Spec.Replicas, nil
	}
	return 1, nil
}

func (t deploymentTarget) scaleDown(ctx context.Context, obj *v1alpha1.Canary) error {
	return t.scale(ctx, obj, 0)
}

// scale sets the target Deployment's replicas, and pauses the target's
// ScaledObject at zero (resumes it above).
func (t deploymentTarget) scale(ctx context.Context, obj *v1alpha1.Canary, replicas int32) error {
	if err := t.r.pauseTargetScaledObject(ctx, obj, replicas == 0); err != nil {
		return err
	}
	target := &appsv1.Deployment{}
	if err := t.r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.TargetRef.Name}, target); err != nil {
		return fmt.Errorf("failed to get target: %w", err)
	}
	if target.Spec.Replicas != nil && *target.Spec.Replicas == replicas {
		return nil
	}
	patch := client.MergeFrom(target.DeepCopy())
	target.Spec.Replicas = ptr.To(replicas)
	if err := t.r.Patch(ctx, target, patch, client.FieldOwner(t.r.ControllerName)); err != nil {
		return fmt.Errorf("failed to scale target %s to %d: %w", target.Name, replicas, err)
	}
	ctrl.LoggerFrom(ctx).Info("target scaled", "deployment", target.Name, "replicas", replicas)
	return nil
}

// restorePrimary rolls the primary back to the pod template of its last
// promoted revision, taken from its own ReplicaSet history. Routing is not
// touched: the canary keeps serving while the primary comes back.
func (t deploymentTarget) restorePrimary(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	r := t.r
	good := obj.Status.LastPromotedSpec
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

// repairPrimary re-creates the primary Deployment with the last promoted
// revision as recorded when it was promoted (template and replicas), or
// else from the target when the target runs it.
func (t deploymentTarget) repairPrimary(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	r := t.r
	good := obj.Status.LastPromotedSpec
	target, err := r.getTarget(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	rev, ok, err := r.promotedTemplate(ctx, obj, good)
	switch {
	case err != nil:
		return ctrl.Result{}, err
	case !ok && obs.Target.SpecHash == good:
		if err := r.applyPrimary(ctx, obj, target, obs.Target); err != nil {
			return ctrl.Result{}, err
		}
	case !ok:
		return ctrl.Result{}, primaryNotRecorded(obj)
	default:
		primary := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}}
		workload.MutatePrimary(obj, target, primary, false, nil)
		primary.Spec.Template = rev.Template
		if rev.Replicas != nil {
			primary.Spec.Replicas = rev.Replicas
		}
		primary.Annotations[specHashAnnotation] = good
		if err := r.recreatePrimary(ctx, obj, primary); err != nil {
			return ctrl.Result{}, err
		}
	}
	return r.primaryRepaired(ctx, obj)
}

// handBack scales the target back up and, once it is ready, points the
// apex Service (and HTTPRoute) at it, unless it runs a revision that was
// never promoted.
func (t deploymentTarget) handBack(ctx context.Context, obj *v1alpha1.Canary) (bool, error) {
	r := t.r
	target, err := r.getTarget(ctx, obj)
	if apierrors.IsNotFound(err) {
		return true, nil
	} else if err != nil {
		return true, r.keepPrimaryServing(ctx, obj)
	}
	tracked, err := r.trackedConfigs(ctx, obj.Namespace, workload.ConfigRefs(&target.Spec.Template))
	if err != nil || !targetServes(obj, workload.SpecHash(&target.Spec.Template, tracked)) {
		return true, r.keepPrimaryServing(ctx, obj)
	}
	primary := &appsv1.Deployment{}
	replicas := workload.TargetReplicas(target)
	if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}, primary); err == nil && primary.Spec.Replicas != nil && *primary.Spec.Replicas > 0 {
		replicas = *primary.Spec.Replicas
	}
	if target.Spec.Replicas == nil || *target.Spec.Replicas == 0 {
		return false, t.scale(ctx, obj, replicas)
	}
	// The target takes the primary's place as the canary's copy did during
	// an analysis: ready at spec.analysis.canaryReadyThreshold, as Flagger's
	// finalizer judges it.
	if h := workload.DeploymentHealth(target, obj.GetCanaryReadyThreshold()); !h.Ready {
		ctrl.LoggerFrom(ctx).Info("canary deleted: waiting for the target before removing the primary", "message", h.Message)
		return false, nil
	}
	return true, r.routeToTarget(ctx, obj, target.Spec.Selector.MatchLabels)
}
