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

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/workload"
	"github.com/serin-dev/serin/notifier"
)

// podKind is what the kinds whose primary runs pods (Deployment,
// DaemonSet) differ in when serin restores, re-creates or hands back the
// primary; restorePodPrimary, repairPodPrimary and handBackPodTarget are
// written once over it.
type podKind interface {
	targetKind
	// getTarget reads the target (with a NotFound error when it is gone).
	getTarget(ctx context.Context, obj *v1alpha1.Canary) (client.Object, error)
	// podTemplate is the pod template of a target or primary of the kind,
	// to read or set.
	podTemplate(o client.Object) *corev1.PodTemplateSpec
	// previousTemplate is the template the primary ran at revision good,
	// from the kind's own history; false when the kind keeps none, or it
	// is gone.
	previousTemplate(ctx context.Context, obj *v1alpha1.Canary, primary client.Object, good string) (*corev1.PodTemplateSpec, bool, error)
	// unrestorable says why the primary cannot be restored to good.
	unrestorable(primary, good string) string
	// applyPrimaryFrom promotes the target's revision to the primary.
	applyPrimaryFrom(ctx context.Context, obj *v1alpha1.Canary, target client.Object, revision rollout.Target) error
	// primaryAt builds a new primary from the target, running the recorded
	// revision rev.
	primaryAt(obj *v1alpha1.Canary, target client.Object, rev *promotedRevision) client.Object
	// servingTemplate is the target's template as Git has it (a DaemonSet's
	// without the scale-to-zero node selector).
	servingTemplate(target client.Object) *corev1.PodTemplateSpec
	// scaledDown reports whether the target runs no pod by serin's doing;
	// scaleBack gives it its pods back.
	scaledDown(target client.Object) bool
	scaleBack(ctx context.Context, obj *v1alpha1.Canary) error
	// targetHealth judges the target as the canary's copy is judged.
	targetHealth(obj *v1alpha1.Canary, target client.Object) workload.Health
	// selector is the target's pod selector.
	selector(target client.Object) map[string]string
}

// restorePodPrimary rolls the primary back to the pod template of its
// last promoted revision: the kind's own history first, else what was
// recorded when it was promoted. Routing is not touched: the canary keeps
// serving while the primary comes back.
func (r *CanaryReconciler) restorePodPrimary(ctx context.Context, k podKind, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	good := obj.Status.LastPromotedSpec
	primary := k.primaryObject()
	if err := r.Get(ctx, client.ObjectKey{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}, primary); err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to get primary: %w", err)
	}
	tpl, ok, err := k.previousTemplate(ctx, obj, primary, good)
	if err != nil {
		return ctrl.Result{}, err
	}
	// What was recorded when the good revision was promoted: its template,
	// should the history be gone, and its configs' hashes.
	rev, recorded, err := r.promotedTemplate(ctx, obj, good)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !ok && recorded {
		tpl, ok = &rev.Template, true
	}
	if !ok {
		return ctrl.Result{}, &stallingError{Reason: v1alpha1.HaltedReason, Err: errors.New(k.unrestorable(primary.GetName(), good))}
	}
	if err := r.restorePrimaryConfigs(ctx, obj, obs, rev); err != nil {
		return ctrl.Result{}, err
	}
	patch := client.MergeFrom(primary.DeepCopyObject().(client.Object))
	*k.podTemplate(primary) = *tpl
	setSpecHash(primary, good)
	if err := r.Patch(ctx, primary, patch, client.FieldOwner(r.ControllerName)); err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to restore primary %s: %w", primary.GetName(), err)
	}
	r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.RestoringPrimaryReason,
		"restoring %s to the last promoted revision %s while the canary keeps serving", primary.GetName(), good)
	setReconcilingMessage(obj, "restoring %s to revision %s", primary.GetName(), good)
	return ctrl.Result{RequeueAfter: obj.GetProgressDeadline()}, nil
}

// repairPodPrimary re-creates the primary with the last promoted revision
// as recorded when it was promoted, or else from the target when the
// target runs it.
func (r *CanaryReconciler) repairPodPrimary(ctx context.Context, k podKind, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	good := obj.Status.LastPromotedSpec
	target, err := k.getTarget(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	rev, ok, err := r.promotedTemplate(ctx, obj, good)
	switch {
	case err != nil:
		return ctrl.Result{}, err
	case !ok && obs.Target.SpecHash == good:
		if err := k.applyPrimaryFrom(ctx, obj, target, obs.Target); err != nil {
			return ctrl.Result{}, err
		}
	case !ok:
		return ctrl.Result{}, primaryNotRecorded(obj)
	default:
		primary := k.primaryAt(obj, target, rev)
		setSpecHash(primary, good)
		if err := r.recreatePrimary(ctx, obj, primary); err != nil {
			return ctrl.Result{}, err
		}
	}
	return r.primaryRepaired(ctx, obj)
}

// setSpecHash records on a primary the revision it runs.
func setSpecHash(primary client.Object, hash string) {
	annotations := primary.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[specHashAnnotation] = hash
	primary.SetAnnotations(annotations)
}

// handBackPodTarget gives the target its pods back and, once it is ready,
// points the apex Service (and HTTPRoute) at it, unless it runs a
// revision that was never promoted: then the primary keeps serving.
func (r *CanaryReconciler) handBackPodTarget(ctx context.Context, k podKind, obj *v1alpha1.Canary) (bool, error) {
	target, err := k.getTarget(ctx, obj)
	if apierrors.IsNotFound(err) {
		return true, nil
	} else if err != nil {
		return true, r.keepPrimaryServing(ctx, obj)
	}
	tpl := k.servingTemplate(target)
	tracked, err := r.trackedConfigs(ctx, obj.Namespace, workload.ConfigRefs(tpl))
	if err != nil || !targetServes(obj, workload.SpecHash(tpl, tracked)) {
		return true, r.keepPrimaryServing(ctx, obj)
	}
	if k.scaledDown(target) {
		return false, k.scaleBack(ctx, obj)
	}
	// The target takes the primary's place as the canary's copy did during
	// an analysis: ready at spec.analysis.canaryReadyThreshold, as
	// Flagger's finalizer judges it.
	if h := k.targetHealth(obj, target); !h.Ready {
		ctrl.LoggerFrom(ctx).Info("canary deleted: waiting for the target before removing the primary", "message", h.Message)
		return false, nil
	}
	return true, r.routeToTarget(ctx, obj, k.selector(target))
}
