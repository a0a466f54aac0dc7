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
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
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

// A StatefulSet target is rolled out in place, by its own partition
// (routing.PartitionRouter): there is no -primary copy (a second set of
// volumes and identities would be wrong for it), and no Service of
// serin's. The "primary" is the pods of the StatefulSet's current
// revision, the "canary" those of its update revision, the highest
// ordinals. Outside a rollout the partition is the replicas, so that a
// new template updates no pod until the analysis lowers it; promotion
// lowers it to 0. A rollback raises it back and evicts the pods of the
// rolled-back revision, which the StatefulSet controller re-creates at the
// current revision with the same names and volumes: the template stays as
// Git has it, as a Deployment target's does, and no PersistentVolumeClaim
// is touched.
type statefulSetTarget struct{ r *CanaryReconciler }

func (t statefulSetTarget) primaryObject() client.Object { return nil }

// get reads the target StatefulSet from the cache.
func (t statefulSetTarget) get(ctx context.Context, obj *v1alpha1.Canary) (*appsv1.StatefulSet, error) {
	sts := &appsv1.StatefulSet{}
	err := t.r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.TargetRef.Name}, sts)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("failed to get target: %w", err)
	}
	return sts, err
}

// statefulSetPods are the StatefulSet's pods by revision.
type statefulSetPods struct {
	// notCurrent are the pods (not being deleted) of another revision than
	// the current one: the canary's, or a rolled-back revision's.
	notCurrent []corev1.Pod
	// updated and updatedReady count the pods of the update revision.
	updated, updatedReady int32
	// current and currentReady count the pods of the current revision.
	current, currentReady int32
}

// pods lists the StatefulSet's pods, live (the agent caches no pods).
func (t statefulSetTarget) pods(ctx context.Context, sts *appsv1.StatefulSet) (statefulSetPods, error) {
	var out statefulSetPods
	sel, err := metav1.LabelSelectorAsSelector(sts.Spec.Selector)
	if err != nil {
		return out, fmt.Errorf("statefulset %s: %w", sts.Name, err)
	}
	var pods corev1.PodList
	if err := t.r.APIReader.List(ctx, &pods, client.InNamespace(sts.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return out, fmt.Errorf("failed to list the pods of %s: %w", sts.Name, err)
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || !metav1.IsControlledBy(&p, sts) {
			continue
		}
		rev := p.Labels[appsv1.ControllerRevisionHashLabelKey]
		ready := podIsReady(&p)
		if rev == sts.Status.UpdateRevision {
			out.updated++
			if ready {
				out.updatedReady++
			}
		}
		if rev == sts.Status.CurrentRevision {
			out.current++
			if ready {
				out.currentReady++
			}
			continue
		}
		out.notCurrent = append(out.notCurrent, p)
	}
	return out, nil
}

func podIsReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// validStatefulSet says why serin cannot roll a StatefulSet out by its
// partition, or "".
func validStatefulSet(sts *appsv1.StatefulSet) string {
	if sts.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return fmt.Sprintf("StatefulSet %s has updateStrategy OnDelete, under which the StatefulSet controller updates no pod by itself and ignores a partition: "+
			"set updateStrategy.type RollingUpdate (serin keeps the partition), or roll it out without a Canary", sts.Name)
	}
	return ""
}

func (t statefulSetTarget) observe(ctx context.Context, obj *v1alpha1.Canary, obs *rollout.Observation) error {
	sts, err := t.get(ctx, obj)
	if apierrors.IsNotFound(err) {
		return nil // decide stalls: the target is gone, and with it every pod
	} else if err != nil {
		return err
	}
	obs.Target = rollout.Target{Found: true}
	if msg := workload.ForeignTarget(obj, sts); msg != "" {
		obs.Target.Invalid = msg
		return nil
	}
	if msg := validStatefulSet(sts); msg != "" {
		obs.Target.Invalid = msg
		return nil
	}
	// The pods' configs are not copied (there is no primary): a change to
	// a ConfigMap reaches every pod at once, and is no revision of its own.
	obs.Target.SpecHash = workload.SpecHash(&sts.Spec.Template, nil)
	obs.Target.Revision = obj.Status.LastAttemptedRevision
	if obs.Target.SpecHash != obj.Status.LastAppliedSpec {
		obs.Target.Revision = t.r.ownerRevision(ctx, obj, sts, schema.GroupKind{Group: appsv1.GroupName, Kind: v1alpha1.StatefulSetKind})
	}
	obs.ServicesInSync = true
	router, err := t.r.router(obj)
	if err != nil {
		return err
	}
	if err := t.r.observeRoutes(ctx, obj, router, routing.Target{}, obs); err != nil {
		return err
	}
	replicas := ptr.Deref(sts.Spec.Replicas, 1)
	pods, err := t.pods(ctx, sts)
	if err != nil {
		return err
	}
	// The canary's pods are those of another revision than the current
	// one: what a rollback takes back.
	obs.Target.Replicas = int32(len(pods.notCurrent))
	settled := sts.Status.ObservedGeneration >= sts.Generation
	// Serving counts the ready pods of any revision, as for the other
	// kinds: the StatefulSet's Service selects them all, whichever
	// revision they run, so no side is ever without traffic to shield.
	serving := sts.Status.ReadyReplicas
	obs.Target.Health = workload.Health{Serving: serving, Ready: settled && pods.updatedReady == pods.updated,
		Message: fmt.Sprintf("%d of the %d pods of the new revision ready", pods.updatedReady, pods.updated)}
	share := routing.CanaryReplicas(obs.CanaryWeight, replicas)
	obs.Primary = rollout.Primary{
		Exists:   true,
		SpecHash: obj.Status.LastPromotedSpec,
		Health: workload.Health{Serving: serving, Ready: settled && pods.currentReady >= replicas-max(share, pods.updated),
			Message: fmt.Sprintf("%d of the %d pods of the current revision ready", pods.currentReady, pods.current)},
	}
	if settled && sts.Status.CurrentRevision == sts.Status.UpdateRevision {
		// Every pod runs the template, or is about to: it is the primary's.
		obs.Primary.SpecHash = obs.Target.SpecHash
		obs.Primary.Health.Ready = pods.currentReady >= replicas && len(pods.notCurrent) == 0
		obs.Primary.Health.Message = fmt.Sprintf("%d of the %d pods ready at the current revision", pods.currentReady, replicas)
	}
	return nil
}

func (t statefulSetTarget) routingTarget(context.Context, *v1alpha1.Canary) (routing.Target, error) {
	return routing.Target{}, nil
}

// initialize sets the partition to the replicas, so that no pod takes a
// new template before its analysis. A StatefulSet still in its own rolling
// update is let finish first (partition 0).
func (t statefulSetTarget) initialize(ctx context.Context, obj *v1alpha1.Canary, _ rollout.Observation) (string, error) {
	sts, err := t.get(ctx, obj)
	if err != nil {
		return "", err
	}
	router, err := t.r.router(obj)
	if err != nil {
		return "", err
	}
	if sts.Status.CurrentRevision != sts.Status.UpdateRevision && sts.Status.UpdateRevision != "" {
		if err := router.SetRoutes(ctx, obj, routing.Target{}, routing.Canary(100)); err != nil {
			return "", err
		}
		return fmt.Sprintf("waiting for StatefulSet %s to finish its own rolling update", sts.Name), nil
	}
	if err := router.SetRoutes(ctx, obj, routing.Target{}, routing.AllPrimary); err != nil {
		return "", err
	}
	return fmt.Sprintf("set the partition of StatefulSet %s to its %d replicas: no pod takes a new template before its analysis",
		sts.Name, ptr.Deref(sts.Spec.Replicas, 1)), nil
}

func (t statefulSetTarget) syncGenerated(ctx context.Context, obj *v1alpha1.Canary, _ rollout.Observation) error {
	router, err := t.r.router(obj)
	if err != nil {
		return err
	}
	return router.Reconcile(ctx, obj, routing.Target{})
}

// promote lowers the partition to 0: the StatefulSet controller updates
// the remaining ordinals, from the highest down.
func (t statefulSetTarget) promote(ctx context.Context, obj *v1alpha1.Canary, _ rollout.Target) error {
	router, err := t.r.router(obj)
	if err != nil {
		return err
	}
	return router.SetRoutes(ctx, obj, routing.Target{}, routing.Canary(100))
}

// primaryMayGoDark: a StatefulSet of one replica has no pod while it is
// replaced.
func (t statefulSetTarget) primaryMayGoDark(ctx context.Context, obj *v1alpha1.Canary) bool {
	sts, err := t.get(ctx, obj)
	return err == nil && ptr.Deref(sts.Spec.Replicas, 1) <= 1
}

// scaleUp: the canary's pods come with its first share (the partition).
func (t statefulSetTarget) scaleUp(context.Context, *v1alpha1.Canary, rollout.Observation) error {
	return nil
}

// scaleDown takes back the pods of a revision that is not the current
// one (after a rollback) by evicting them: with the partition above their
// ordinals, the StatefulSet controller re-creates each at the current
// revision, with its name and its volumes. A no-op when there are none.
func (t statefulSetTarget) scaleDown(ctx context.Context, obj *v1alpha1.Canary) error {
	sts, err := t.get(ctx, obj)
	if err != nil {
		return client.IgnoreNotFound(err)
	}
	// Not skipped when the template is the current revision's again (a
	// revert merged before the rollback's pods were taken back): the
	// pods below the partition keep the revision they run.
	replicas := ptr.Deref(sts.Spec.Replicas, 1)
	if p := sts.Spec.UpdateStrategy.RollingUpdate; p == nil || ptr.Deref(p.Partition, 0) < replicas {
		return nil // the pods would take the update revision again: the partition first
	}
	pods, err := t.pods(ctx, sts)
	if err != nil {
		return err
	}
	for i := range pods.notCurrent {
		p := &pods.notCurrent[i]
		// Evicted, not deleted: a PodDisruptionBudget (a quorum's) is
		// honoured, and the eviction is asked again at the next reconcile.
		eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name},
			DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}}}
		if err := t.r.SubResource("eviction").Create(ctx, p, eviction); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			if apierrors.IsTooManyRequests(err) {
				// Retried with the reconcile's backoff.
				return fmt.Errorf("eviction of pod %s of the rolled-back revision refused by its PodDisruptionBudget for now: %w", p.Name, err)
			}
			return fmt.Errorf("failed to evict pod %s of the rolled-back revision: %w", p.Name, err)
		}
		ctrl.LoggerFrom(ctx).Info("pod of the rolled-back revision evicted; the StatefulSet controller re-creates it at the current revision", "pod", p.Name)
	}
	return nil
}

// restorePrimary: a StatefulSet promoted in place (partition 0) is
// restored by its own controller once its template is the last promoted
// one again (a revert in Git); serin has no copy to restore from.
func (t statefulSetTarget) restorePrimary(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	if obs.Target.SpecHash != obj.Status.LastPromotedSpec {
		return ctrl.Result{}, &stallingError{Reason: v1alpha1.HaltedReason,
			Err: fmt.Errorf("StatefulSet %s was promoted in place: serin keeps no copy of its previous template to restore; revert the revision in Git, and the StatefulSet controller rolls its pods back", obj.Spec.TargetRef.Name)}
	}
	setReconcilingMessage(obj, "StatefulSet %s rolls its pods back to revision %s", obj.Spec.TargetRef.Name, obj.Status.LastPromotedSpec)
	return ctrl.Result{RequeueAfter: obj.GetProgressDeadline()}, nil
}

// repairPrimary is never chosen: the StatefulSet is its own primary.
func (t statefulSetTarget) repairPrimary(ctx context.Context, obj *v1alpha1.Canary, _ rollout.Observation) (ctrl.Result, error) {
	return ctrl.Result{}, errors.New("a StatefulSet target has no primary to repair")
}

// handBack gives the StatefulSet its own rolling update back (partition 0)
// when it runs the promoted revision; one that runs a revision serin did
// not promote keeps its partition, so that the revision reaches no other
// pod, and the Canary says so.
func (t statefulSetTarget) handBack(ctx context.Context, obj *v1alpha1.Canary) (bool, error) {
	sts, err := t.get(ctx, obj)
	if apierrors.IsNotFound(err) {
		return true, nil
	} else if err != nil {
		return false, err
	}
	router, err := t.r.router(obj)
	if err != nil {
		return false, err
	}
	if workload.SpecHash(&sts.Spec.Template, nil) != obj.Status.LastPromotedSpec {
		t.r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.RevertOnDeletionSkippedReason,
			"StatefulSet %s has a template serin did not promote (last promoted %s): its partition stays at %d so that no other pod takes it; fix the template in Git, then remove the partition",
			sts.Name, obj.Status.LastPromotedSpec, ptr.Deref(sts.Spec.Replicas, 1))
		return true, nil
	}
	return true, router.Finalize(ctx, obj, routing.Target{})
}
