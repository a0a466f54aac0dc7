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
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/workload"
	"github.com/serin-dev/serin/routing"
)

// A Deployment target: serin keeps <name>-primary, a Deployment running
// the last promoted pod template, and scales the target (the canary) to
// zero replicas outside a rollout. The primary's autoscaler is a copy of
// the target's (spec.autoscalerRef).
type deploymentTarget struct{ r *CanaryReconciler }

var _ podKind = deploymentTarget{}

// deploymentPods is what the generated Services and the routes take of a
// Deployment.
func deploymentPods(d *appsv1.Deployment) podTarget {
	return podTarget{selector: d.Spec.Selector.MatchLabels, primarySelector: workload.PrimarySelector(d), template: &d.Spec.Template}
}

func (t deploymentTarget) primaryObject() client.Object { return &appsv1.Deployment{} }

func (t deploymentTarget) observe(ctx context.Context, obj *v1alpha1.Canary, obs *rollout.Observation) error {
	r := t.r
	target, err := t.get(ctx, obj)
	if apierrors.IsNotFound(err) {
		// What routes where still matters: the canary's pods are gone.
		primary, err := t.observePrimary(ctx, obj, obs)
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
	primary, err := t.observePrimary(ctx, obj, obs)
	if err != nil {
		return err
	}
	pods := deploymentPods(target)
	gk := schema.GroupKind{Group: appsv1.GroupName, Kind: v1alpha1.DeploymentKind}
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
	if err := r.observeBaseline(ctx, obj, target, primary, obs); err != nil {
		return err
	}
	router, err := r.router(obj)
	if err != nil {
		return err
	}
	return r.observeRoutes(ctx, obj, router, routingTarget(obj, pods), obs)
}

// observePrimary reads the primary Deployment, when it exists.
func (t deploymentTarget) observePrimary(ctx context.Context, obj *v1alpha1.Canary, obs *rollout.Observation) (*appsv1.Deployment, error) {
	primary := &appsv1.Deployment{}
	switch err := t.r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}, primary); {
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
		// A replicas split at weight 100 gives the canary all of them.
		ScaledDown: primary.Spec.Replicas != nil && *primary.Spec.Replicas == 0 && !obj.Spec.AutoscalerRef.IsScaledObject() &&
			metav1.IsControlledBy(primary, obj) && primary.Annotations[routing.ReplicasAnnotation] == "",
	}
	if promoting(obj) {
		if err := t.r.leavingEndpoints(ctx, obj, obs, primary.Status.ReadyReplicas); err != nil {
			return nil, err
		}
		obs.Primary.Terminating = ptr.Deref(primary.Status.TerminatingReplicas, 0)
	}
	return primary, nil
}

// get reads the target Deployment from the cache.
func (t deploymentTarget) get(ctx context.Context, obj *v1alpha1.Canary) (*appsv1.Deployment, error) {
	target := &appsv1.Deployment{}
	err := t.r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.TargetRef.Name}, target)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("failed to get target: %w", err)
	}
	return target, err
}

func (t deploymentTarget) routingTarget(ctx context.Context, obj *v1alpha1.Canary) (routing.Target, error) {
	r := t.r
	target, err := t.get(ctx, obj)
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
	rt := routingTarget(obj, deploymentPods(target))
	if rt.RouteBaseline, err = r.baselineRouted(ctx, obj); err != nil {
		return routing.Target{}, err
	}
	return rt, nil
}

func (t deploymentTarget) initialize(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (string, error) {
	target, err := t.get(ctx, obj)
	if err != nil {
		return "", err
	}
	if err := t.syncServices(ctx, obj, target); err != nil {
		return "", err
	}
	if err := t.applyPrimary(ctx, obj, target, obs.Target); err != nil {
		return "", err
	}
	return fmt.Sprintf("created the services and primary deployment %s", obj.GetPrimaryName()), nil
}

func (t deploymentTarget) syncGenerated(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) error {
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
	return t.syncServices(ctx, obj, target)
}

// syncServices creates or updates the generated Services of a Deployment
// target, its primary's autoscaler, then the routing objects.
func (t deploymentTarget) syncServices(ctx context.Context, obj *v1alpha1.Canary, target *appsv1.Deployment) error {
	return t.r.syncPodServices(ctx, obj, deploymentPods(target), t.r.applyPrimaryAutoscaler)
}

// applyPrimary promotes the target's revision to the primary Deployment,
// creating it if needed: the primary's copies of the tracked configs first,
// then the pod template.
func (t deploymentTarget) applyPrimary(ctx context.Context, obj *v1alpha1.Canary, target *appsv1.Deployment, revision rollout.Target) error {
	r := t.r
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
	target, err := t.get(ctx, obj)
	if err != nil {
		return err
	}
	return t.applyPrimary(ctx, obj, target, revision)
}

// primaryMayGoDark: the primary takes the target's strategy, which may
// take all its ready pods away at once.
func (t deploymentTarget) primaryMayGoDark(ctx context.Context, obj *v1alpha1.Canary) bool {
	target, err := t.get(ctx, obj)
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
	if obs.Target.Replicas > 0 && obj.Spec.AutoscalerRef == nil && !obj.RoutesByReplicas() {
		return obs.Target.Replicas, nil
	}
	primary := &appsv1.Deployment{}
	if err := t.r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}, primary); err != nil {
		return 0, err
	}
	if obj.RoutesByReplicas() {
		// A worker's canary starts with the pods of its first share, and
		// the primary keeps all its own until they are ready.
		return routing.CanaryReplicas(obj.GetStepWeights()[0], routing.TotalReplicas(primary)), nil
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

func (t deploymentTarget) restorePrimary(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	return t.r.restorePodPrimary(ctx, t, obj, obs)
}

func (t deploymentTarget) repairPrimary(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	return t.r.repairPodPrimary(ctx, t, obj, obs)
}

func (t deploymentTarget) handBack(ctx context.Context, obj *v1alpha1.Canary) (bool, error) {
	return t.r.handBackPodTarget(ctx, t, obj)
}

func (t deploymentTarget) getTarget(ctx context.Context, obj *v1alpha1.Canary) (client.Object, error) {
	return t.get(ctx, obj)
}

func (t deploymentTarget) podTemplate(o client.Object) *corev1.PodTemplateSpec {
	return &o.(*appsv1.Deployment).Spec.Template
}

// previousTemplate reads the primary's ReplicaSet history. ReplicaSets are
// not cached (a cluster-wide informer for a rare read): a restore reads
// them live.
func (t deploymentTarget) previousTemplate(ctx context.Context, obj *v1alpha1.Canary, primary client.Object, good string) (*corev1.PodTemplateSpec, bool, error) {
	var replicaSets appsv1.ReplicaSetList
	if err := t.r.APIReader.List(ctx, &replicaSets, client.InNamespace(obj.Namespace),
		client.MatchingLabels(primary.(*appsv1.Deployment).Spec.Selector.MatchLabels)); err != nil {
		return nil, false, fmt.Errorf("failed to list the primary's replicasets: %w", err)
	}
	tpl, ok := workload.LastGoodTemplate(replicaSets.Items, good)
	return tpl, ok, nil
}

func (t deploymentTarget) unrestorable(primary, good string) string {
	return fmt.Sprintf("cannot restore %s: no ReplicaSet of it ran the last promoted revision %s (revisionHistoryLimit too low?); fix the target in Git", primary, good)
}

func (t deploymentTarget) applyPrimaryFrom(ctx context.Context, obj *v1alpha1.Canary, target client.Object, revision rollout.Target) error {
	return t.applyPrimary(ctx, obj, target.(*appsv1.Deployment), revision)
}

// primaryAt takes the recorded template and replicas.
func (t deploymentTarget) primaryAt(obj *v1alpha1.Canary, target client.Object, rev *promotedRevision) client.Object {
	primary := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}}
	workload.MutatePrimary(obj, target.(*appsv1.Deployment), primary, false, nil)
	primary.Spec.Template = rev.Template
	if rev.Replicas != nil {
		primary.Spec.Replicas = rev.Replicas
	}
	return primary
}

func (t deploymentTarget) servingTemplate(target client.Object) *corev1.PodTemplateSpec {
	return &target.(*appsv1.Deployment).Spec.Template
}

func (t deploymentTarget) scaledDown(target client.Object) bool {
	d := target.(*appsv1.Deployment)
	return d.Spec.Replicas == nil || *d.Spec.Replicas == 0
}

// scaleBack gives the target the primary's replicas, or else its own.
func (t deploymentTarget) scaleBack(ctx context.Context, obj *v1alpha1.Canary) error {
	target, err := t.get(ctx, obj)
	if err != nil {
		return err
	}
	replicas := workload.TargetReplicas(target)
	primary := &appsv1.Deployment{}
	if err := t.r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}, primary); err == nil && primary.Spec.Replicas != nil && *primary.Spec.Replicas > 0 {
		// Its whole replicas, should a replicas split be under way.
		replicas = routing.TotalReplicas(primary)
	}
	return t.scale(ctx, obj, replicas)
}

func (t deploymentTarget) targetHealth(obj *v1alpha1.Canary, target client.Object) workload.Health {
	return workload.DeploymentHealth(target.(*appsv1.Deployment), obj.GetCanaryReadyThreshold())
}

func (t deploymentTarget) selector(target client.Object) map[string]string {
	return target.(*appsv1.Deployment).Spec.Selector.MatchLabels
}
