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
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/workload"
	"github.com/serin-dev/serin/routing"
)

// A DaemonSet target, as Flagger rolls one out: serin keeps <name>-primary,
// a DaemonSet running the last promoted pod template on the same nodes, and
// "scales the target to zero" outside a rollout with a node selector that
// no node matches (workload.ScaleToZeroNodeSelector), removed to scale it
// up. Blue/green only (routing.provider kubernetes, analysis.iterations):
// the API refuses weights for it, since every node runs one pod of each.
type daemonSetTarget struct{ r *CanaryReconciler }

var _ podKind = daemonSetTarget{}

// daemonSetPods is what the generated Services and the routes take of a
// DaemonSet: its template as Git has it, without the scale-to-zero selector.
func daemonSetPods(d *appsv1.DaemonSet) podTarget {
	return podTarget{selector: d.Spec.Selector.MatchLabels, primarySelector: workload.DaemonSetPrimarySelector(d), template: workload.DaemonSetTemplate(d)}
}

func (t daemonSetTarget) primaryObject() client.Object { return &appsv1.DaemonSet{} }

// get reads the target DaemonSet from the cache.
func (t daemonSetTarget) get(ctx context.Context, obj *v1alpha1.Canary) (*appsv1.DaemonSet, error) {
	target := &appsv1.DaemonSet{}
	err := t.r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.TargetRef.Name}, target)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("failed to get target: %w", err)
	}
	return target, err
}

// observePrimary reads the primary DaemonSet, when it exists.
func (t daemonSetTarget) observePrimary(ctx context.Context, obj *v1alpha1.Canary, obs *rollout.Observation) (*appsv1.DaemonSet, error) {
	primary := &appsv1.DaemonSet{}
	switch err := t.r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}, primary); {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("failed to get primary: %w", err)
	}
	obs.Primary = rollout.Primary{
		Exists:   true,
		SpecHash: primary.Annotations[specHashAnnotation],
		Health:   workload.DaemonSetHealth(primary, obj.GetPrimaryReadyThreshold()),
	}
	if promoting(obj) {
		if err := t.r.leavingEndpoints(ctx, obj, obs, primary.Status.NumberReady); err != nil {
			return nil, err
		}
	}
	return primary, nil
}

func (t daemonSetTarget) observe(ctx context.Context, obj *v1alpha1.Canary, obs *rollout.Observation) error {
	r := t.r
	target, err := t.get(ctx, obj)
	if apierrors.IsNotFound(err) {
		primary, err := t.observePrimary(ctx, obj, obs)
		if err != nil || primary == nil {
			return err
		}
		return r.observeWithoutTarget(ctx, obj, obs, primary.Spec.Selector)
	} else if err != nil {
		return err
	}
	obs.Target = rollout.Target{Found: true, Replicas: workload.DaemonSetReplicas(target)}
	if msg := workload.ForeignTarget(obj, target); msg != "" {
		obs.Target.Invalid = msg
		return nil
	}
	if err := workload.ValidateDaemonSetTarget(target); err != nil {
		obs.Target.Invalid = err.Error()
		return nil
	}
	obs.Target.Health = workload.DaemonSetHealth(target, obj.GetCanaryReadyThreshold())
	if _, err := t.observePrimary(ctx, obj, obs); err != nil {
		return err
	}
	pods := daemonSetPods(target)
	if err := r.observePods(ctx, obj, obs, target, schema.GroupKind{Group: appsv1.GroupName, Kind: v1alpha1.DaemonSetKind}, pods); err != nil {
		return err
	}
	router, err := r.router(obj)
	if err != nil {
		return err
	}
	return r.observeRoutes(ctx, obj, router, routingTarget(obj, pods), obs)
}

func (t daemonSetTarget) routingTarget(ctx context.Context, obj *v1alpha1.Canary) (routing.Target, error) {
	target, err := t.get(ctx, obj)
	if apierrors.IsNotFound(err) {
		primary := &appsv1.DaemonSet{}
		if err := t.r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}, primary); err != nil {
			return routing.Target{}, fmt.Errorf("failed to get primary: %w", err)
		}
		return t.r.routingTargetWithoutTarget(ctx, obj, primary.Spec.Selector)
	}
	if err != nil {
		return routing.Target{}, err
	}
	return routingTarget(obj, daemonSetPods(target)), nil
}

func (t daemonSetTarget) initialize(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (string, error) {
	target, err := t.get(ctx, obj)
	if err != nil {
		return "", err
	}
	if err := t.r.syncPodServices(ctx, obj, daemonSetPods(target), nil); err != nil {
		return "", err
	}
	if err := t.applyPrimary(ctx, obj, target, obs.Target); err != nil {
		return "", err
	}
	return fmt.Sprintf("created the services and primary daemonset %s", obj.GetPrimaryName()), nil
}

func (t daemonSetTarget) syncGenerated(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) error {
	target, err := t.get(ctx, obj)
	if err != nil {
		return err
	}
	ctrl.LoggerFrom(ctx).Info("generated objects drifted; syncing them")
	if obs.Target.SpecHash == obj.Status.LastPromotedSpec {
		if err := t.r.copyPrimaryConfigs(ctx, obj, obs.Target.TrackedConfigs); err != nil {
			return err
		}
	}
	return t.r.syncPodServices(ctx, obj, daemonSetPods(target), nil)
}

// applyPrimary promotes the target's revision to the primary DaemonSet,
// creating it if needed: the primary's copies of the tracked configs first,
// then the pod template, recorded first as the Deployment's is.
func (t daemonSetTarget) applyPrimary(ctx context.Context, obj *v1alpha1.Canary, target *appsv1.DaemonSet, revision rollout.Target) error {
	r := t.r
	if err := r.copyPrimaryConfigs(ctx, obj, revision.TrackedConfigs); err != nil {
		return err
	}
	primary := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}}
	if _, err := r.getOptional(ctx, obj.Namespace, primary.Name, primary); err != nil {
		return err
	}
	if err := workload.MayManage(obj, primary, r.Client.Scheme()); err != nil {
		return err
	}
	want := workload.PrimaryDaemonSetTemplate(target, revision.TrackedConfigs)
	if err := r.recordPromoted(ctx, obj, revision.SpecHash, promotedRevision{Template: want, Configs: revision.TrackedConfigs}); err != nil {
		return err
	}
	op, err := r.createOrUpdate(ctx, obj, primary, func() {
		workload.MutatePrimaryDaemonSet(obj, target, primary, true, revision.TrackedConfigs)
		primary.Annotations[specHashAnnotation] = revision.SpecHash
	})
	if err != nil {
		return fmt.Errorf("failed to apply primary daemonset %s: %w", primary.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("primary applied", "daemonset", primary.Name, "operation", op)
	return nil
}

func (t daemonSetTarget) promote(ctx context.Context, obj *v1alpha1.Canary, revision rollout.Target) error {
	target, err := t.get(ctx, obj)
	if err != nil {
		return err
	}
	return t.applyPrimary(ctx, obj, target, revision)
}

// primaryMayGoDark: blue/green only, so promote sends all traffic to the
// canary before the primary rolls, whatever its update strategy.
func (t daemonSetTarget) primaryMayGoDark(context.Context, *v1alpha1.Canary) bool { return false }

func (t daemonSetTarget) scaleUp(ctx context.Context, obj *v1alpha1.Canary, _ rollout.Observation) error {
	return t.scale(ctx, obj, false)
}

func (t daemonSetTarget) scaleDown(ctx context.Context, obj *v1alpha1.Canary) error {
	return t.scale(ctx, obj, true)
}

// scale adds (zero) or removes the node selector that takes the target's
// pods away.
func (t daemonSetTarget) scale(ctx context.Context, obj *v1alpha1.Canary, zero bool) error {
	target := &appsv1.DaemonSet{}
	if err := t.r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.TargetRef.Name}, target); err != nil {
		return fmt.Errorf("failed to get target: %w", err)
	}
	patch := client.MergeFrom(target.DeepCopy())
	if !workload.ScaleDaemonSet(target, zero) {
		return nil
	}
	if err := t.r.Patch(ctx, target, patch, client.FieldOwner(t.r.ControllerName)); err != nil {
		return fmt.Errorf("failed to scale target %s %s: %w", target.Name, map[bool]string{true: "to zero", false: "up"}[zero], err)
	}
	ctrl.LoggerFrom(ctx).Info("target scaled", "daemonset", target.Name, "toZero", zero)
	return nil
}

func (t daemonSetTarget) restorePrimary(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	return t.r.restorePodPrimary(ctx, t, obj, obs)
}

func (t daemonSetTarget) repairPrimary(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	return t.r.repairPodPrimary(ctx, t, obj, obs)
}

func (t daemonSetTarget) handBack(ctx context.Context, obj *v1alpha1.Canary) (bool, error) {
	return t.r.handBackPodTarget(ctx, t, obj)
}

func (t daemonSetTarget) getTarget(ctx context.Context, obj *v1alpha1.Canary) (client.Object, error) {
	return t.get(ctx, obj)
}

func (t daemonSetTarget) podTemplate(o client.Object) *corev1.PodTemplateSpec {
	return &o.(*appsv1.DaemonSet).Spec.Template
}

// previousTemplate: a DaemonSet's own history is in ControllerRevisions of
// its pods' hashes, which serin does not read; the recorded template
// serves.
func (t daemonSetTarget) previousTemplate(context.Context, *v1alpha1.Canary, client.Object, string) (*corev1.PodTemplateSpec, bool, error) {
	return nil, false, nil
}

func (t daemonSetTarget) unrestorable(primary, good string) string {
	return fmt.Sprintf("cannot restore %s: the last promoted revision %s is not recorded; fix the target in Git", primary, good)
}

func (t daemonSetTarget) applyPrimaryFrom(ctx context.Context, obj *v1alpha1.Canary, target client.Object, revision rollout.Target) error {
	return t.applyPrimary(ctx, obj, target.(*appsv1.DaemonSet), revision)
}

func (t daemonSetTarget) primaryAt(obj *v1alpha1.Canary, target client.Object, rev *promotedRevision) client.Object {
	primary := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}}
	workload.MutatePrimaryDaemonSet(obj, target.(*appsv1.DaemonSet), primary, false, nil)
	primary.Spec.Template = rev.Template
	return primary
}

func (t daemonSetTarget) servingTemplate(target client.Object) *corev1.PodTemplateSpec {
	return workload.DaemonSetTemplate(target.(*appsv1.DaemonSet))
}

func (t daemonSetTarget) scaledDown(target client.Object) bool {
	return workload.DaemonSetScaledToZero(target.(*appsv1.DaemonSet))
}

func (t daemonSetTarget) scaleBack(ctx context.Context, obj *v1alpha1.Canary) error {
	return t.scale(ctx, obj, false)
}

func (t daemonSetTarget) targetHealth(obj *v1alpha1.Canary, target client.Object) workload.Health {
	return workload.DaemonSetHealth(target.(*appsv1.DaemonSet), obj.GetCanaryReadyThreshold())
}

func (t daemonSetTarget) selector(target client.Object) map[string]string {
	return target.(*appsv1.DaemonSet).Spec.Selector.MatchLabels
}
