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

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/workload"
	"github.com/serin-dev/serin/notifier"
	"github.com/serin-dev/serin/routing"
)

// A Service target: serin keeps <name>-canary mirroring the latest <name>
// and <name>-primary mirroring the last promoted one, and shifts weights
// between them on an HTTPRoute. It never touches workloads: whatever the
// selectors select is the canary and the primary.

type serviceTarget struct{ r *CanaryReconciler }

var _ targetKind = serviceTarget{}

// primaryObject: the primary is <name>-primary, a generated Service.
func (t serviceTarget) primaryObject() client.Object { return nil }

func (t serviceTarget) observe(ctx context.Context, obj *v1alpha1.Canary, obs *rollout.Observation) error {
	return t.r.observeServiceTarget(ctx, obj, obs)
}

func (t serviceTarget) routingTarget(_ context.Context, obj *v1alpha1.Canary) (routing.Target, error) {
	return serviceRoutingTarget(obj), nil
}

func (t serviceTarget) initialize(ctx context.Context, obj *v1alpha1.Canary, _ rollout.Observation) (string, error) {
	if err := t.r.syncServiceTarget(ctx, obj); err != nil {
		return "", err
	}
	return fmt.Sprintf("created %s, %s and the route", obj.GetPrimaryServiceName(), obj.GetCanaryServiceName()), nil
}

func (t serviceTarget) syncGenerated(ctx context.Context, obj *v1alpha1.Canary, _ rollout.Observation) error {
	return t.r.syncServiceTarget(ctx, obj)
}

func (t serviceTarget) promote(ctx context.Context, obj *v1alpha1.Canary, revision rollout.Target) error {
	return t.r.promoteServiceTarget(ctx, obj, revision)
}

// primaryMayGoDark: switching <name>-primary's selector takes no pod away.
func (t serviceTarget) primaryMayGoDark(context.Context, *v1alpha1.Canary) bool { return false }

// scaleUp and scaleDown: serin never touches the workloads behind a
// Service target.
func (t serviceTarget) scaleUp(context.Context, *v1alpha1.Canary, rollout.Observation) error {
	return nil
}
func (t serviceTarget) scaleDown(context.Context, *v1alpha1.Canary) error { return nil }

func (t serviceTarget) restorePrimary(ctx context.Context, obj *v1alpha1.Canary, _ rollout.Observation) (ctrl.Result, error) {
	if err := t.r.restoreServicePrimary(ctx, obj); err != nil {
		return ctrl.Result{}, err
	}
	t.r.emit(ctx, obj, notifier.SeverityWarn, v1alpha1.RestoringPrimaryReason, "restored %s to the last promoted revision %s", obj.GetPrimaryServiceName(), obj.Status.LastPromotedSpec)
	return ctrl.Result{RequeueAfter: obj.GetProgressDeadline()}, nil
}

// repairPrimary: decide does not ask for it (the primary Service is a
// generated Service, re-created when the generated objects are synced);
// it would do the same.
func (t serviceTarget) repairPrimary(ctx context.Context, obj *v1alpha1.Canary, _ rollout.Observation) (ctrl.Result, error) {
	return ctrl.Result{}, t.r.syncServiceTarget(ctx, obj)
}

// handBack: the routes go back to the apex Service, the target itself.
func (t serviceTarget) handBack(ctx context.Context, obj *v1alpha1.Canary) (bool, error) {
	return true, t.r.releaseRoutes(ctx, obj)
}

// observeServiceTarget fills the observation of a Service target.
func (r *CanaryReconciler) observeServiceTarget(ctx context.Context, obj *v1alpha1.Canary, obs *rollout.Observation) error {
	target := &corev1.Service{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.TargetRef.Name}, target); err != nil {
		return client.IgnoreNotFound(err)
	}
	obs.Target = rollout.Target{Found: true}
	if msg := workload.ForeignTarget(obj, target); msg != "" {
		obs.Target.Invalid = msg
		return nil
	}
	if err := workload.ValidateServiceTarget(target); err != nil {
		obs.Target.Invalid = err.Error()
		return nil
	}
	backend := workload.BackendOf(target)
	obs.Target.SpecHash = backend.Hash()
	obs.Target.Revision = obj.Status.LastAttemptedRevision
	if obs.Target.SpecHash != obj.Status.LastAppliedSpec {
		obs.Target.Revision = r.ownerRevision(ctx, obj, target, schema.GroupKind{Kind: "Service"})
	}
	canary, primary := &corev1.Service{}, &corev1.Service{}
	canaryFound, err := r.getOptional(ctx, obj.Namespace, obj.GetCanaryServiceName(), canary)
	if err != nil {
		return err
	}
	primaryFound, err := r.getOptional(ctx, obj.Namespace, obj.GetPrimaryServiceName(), primary)
	if err != nil {
		return err
	}
	if obs.Target.Health, err = r.serviceHealth(ctx, obj.Namespace, obj.GetCanaryServiceName()); err != nil {
		return err
	}
	if primaryFound {
		obs.Primary = rollout.Primary{Exists: true, SpecHash: primary.Annotations[specHashAnnotation]}
		if obs.Primary.Health, err = r.serviceHealth(ctx, obj.Namespace, primary.Name); err != nil {
			return err
		}
	}
	obs.ServicesInSync = canaryFound && workload.BackendOf(canary).Hash() == obs.Target.SpecHash && primaryFound &&
		hasCustomMetadata(canary, obj.Spec.Service.Canary) && hasCustomMetadata(primary, obj.Spec.Service.Primary)
	router, rt, err := r.routing(ctx, obj)
	if err != nil {
		return err
	}
	return r.observeRoutes(ctx, obj, router, rt, obs)
}

// promoting reports whether the Canary's promotion is under way, or halted:
// the phases in which the primary's leaving pods are counted.
func promoting(obj *v1alpha1.Canary) bool {
	switch obj.Status.Phase {
	case v1alpha1.PhasePromoting, v1alpha1.PhaseFinalising, v1alpha1.PhaseHalted:
		return true
	}
	return false
}

// leavingEndpoints counts the endpoints of the Canary's primary Service that
// may still answer though their pod is on its way out, for a primary of
// ready pods: the data plane may route a request to them
// (workload.LeavingEndpoints).
func (r *CanaryReconciler) leavingEndpoints(ctx context.Context, obj *v1alpha1.Canary, obs *rollout.Observation, ready int32) error {
	var slices discoveryv1.EndpointSliceList
	name := obj.GetPrimaryServiceName()
	if err := r.List(ctx, &slices, client.InNamespace(obj.Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: name}); err != nil {
		return fmt.Errorf("failed to list endpoints of %s: %w", name, err)
	}
	obs.Primary.Leaving = workload.LeavingEndpoints(slices.Items, ready)
	changed := workload.EndpointsChangedAt(slices.Items)
	if r.endpointClocks != nil {
		if seen := r.endpointClocks.changedAt(client.ObjectKeyFromObject(obj), workload.EndpointsKey(slices.Items), obs.Now); seen.After(changed) {
			changed = seen
		}
	}
	if !changed.IsZero() {
		obs.Primary.EndpointsSettleAt = changed.Add(r.DataPlaneSettle)
	}
	return nil
}

// serviceHealth judges a generated Service by its ready endpoints.
func (r *CanaryReconciler) serviceHealth(ctx context.Context, namespace, name string) (workload.Health, error) {
	var slices discoveryv1.EndpointSliceList
	if err := r.List(ctx, &slices, client.InNamespace(namespace), client.MatchingLabels{discoveryv1.LabelServiceName: name}); err != nil {
		return workload.Health{}, fmt.Errorf("failed to list endpoints of %s: %w", name, err)
	}
	return workload.EndpointsHealth(name, slices.Items), nil
}

// syncServiceTarget keeps <name>-canary equal to the target, creates
// <name>-primary from it once, and the HTTPRoute.
func (r *CanaryReconciler) syncServiceTarget(ctx context.Context, obj *v1alpha1.Canary) error {
	target := &corev1.Service{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.TargetRef.Name}, target); err != nil {
		return fmt.Errorf("failed to get target: %w", err)
	}
	backend := workload.BackendOf(target)
	canary := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: obj.Namespace, Name: obj.GetCanaryServiceName()}}
	if _, err := r.createOrUpdate(ctx, obj, canary, func() {
		workload.MutateServiceCopy(obj, canary, backend, obj.Spec.Service.Canary)
	}); err != nil {
		return fmt.Errorf("failed to apply %s: %w", canary.Name, err)
	}
	primary := &corev1.Service{}
	if found, err := r.getOptional(ctx, obj.Namespace, obj.GetPrimaryServiceName(), primary); err != nil {
		return err
	} else if err := workload.MayManage(obj, primary, r.Client.Scheme()); err != nil {
		return err // not routed to while it is someone else's
	} else if !found {
		if err := r.applyServicePrimary(ctx, obj, backend, backend.Hash()); err != nil {
			return err
		}
	} else if !hasCustomMetadata(primary, obj.Spec.Service.Primary) {
		// The backend stays the promoted one; only the metadata changes.
		if _, err := r.createOrUpdate(ctx, obj, primary, func() { workload.MutateMetadata(obj, primary, obj.Spec.Service.Primary) }); err != nil {
			return fmt.Errorf("failed to apply %s: %w", primary.Name, err)
		}
	}
	router, rt, err := r.routing(ctx, obj)
	if err != nil {
		return err
	}
	return router.Reconcile(ctx, obj, rt)
}

// applyServicePrimary sets <name>-primary to a backend, keeping the one it
// replaces in an annotation for a restore.
func (r *CanaryReconciler) applyServicePrimary(ctx context.Context, obj *v1alpha1.Canary, b workload.ServiceBackend, hash string) error {
	primary := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: obj.Namespace, Name: obj.GetPrimaryServiceName()}}
	_, err := r.createOrUpdate(ctx, obj, primary, func() {
		previous := primary.Annotations[workload.PreviousSpecAnnotation]
		if !primary.CreationTimestamp.IsZero() && primary.Annotations[specHashAnnotation] != hash {
			data, _ := json.Marshal(struct {
				Hash    string                  `json:"hash"`
				Backend workload.ServiceBackend `json:"backend"`
			}{primary.Annotations[specHashAnnotation], workload.BackendOf(primary)})
			previous = string(data)
		}
		workload.MutateServiceCopy(obj, primary, b, obj.Spec.Service.Primary)
		primary.Annotations[specHashAnnotation] = hash
		if previous != "" {
			primary.Annotations[workload.PreviousSpecAnnotation] = previous
		}
	})
	if err != nil {
		return fmt.Errorf("failed to apply %s: %w", primary.Name, err)
	}
	return nil
}

// promoteServiceTarget copies the target's backend to <name>-primary.
func (r *CanaryReconciler) promoteServiceTarget(ctx context.Context, obj *v1alpha1.Canary, revision rollout.Target) error {
	target := &corev1.Service{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.TargetRef.Name}, target); err != nil {
		return fmt.Errorf("failed to get target: %w", err)
	}
	return r.applyServicePrimary(ctx, obj, workload.BackendOf(target), revision.SpecHash)
}

// restoreServicePrimary sets <name>-primary back to the backend it served
// before the promotion.
func (r *CanaryReconciler) restoreServicePrimary(ctx context.Context, obj *v1alpha1.Canary) error {
	primary := &corev1.Service{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.GetPrimaryServiceName()}, primary); err != nil {
		return err
	}
	var previous struct {
		Hash    string                  `json:"hash"`
		Backend workload.ServiceBackend `json:"backend"`
	}
	if err := json.Unmarshal([]byte(primary.Annotations[workload.PreviousSpecAnnotation]), &previous); err != nil || previous.Hash != obj.Status.LastPromotedSpec {
		return &stallingError{Reason: v1alpha1.HaltedReason, Err: fmt.Errorf(
			"cannot restore %s: the spec of the last promoted revision %s is not recorded on it; fix the target in Git", primary.Name, obj.Status.LastPromotedSpec)}
	}
	return r.applyServicePrimary(ctx, obj, previous.Backend, previous.Hash)
}

// serviceRoutingTarget describes the Services the router routes between.
func serviceRoutingTarget(obj *v1alpha1.Canary) routing.Target {
	return routing.Target{
		ApexService:    obj.GetServiceName(),
		PrimaryService: obj.GetPrimaryServiceName(),
		CanaryService:  obj.GetCanaryServiceName(),
		Port:           obj.Spec.Service.Port,
	}
}

// getOptional gets an object from the cache, reporting whether it exists.
func (r *CanaryReconciler) getOptional(ctx context.Context, namespace, name string, o client.Object) (bool, error) {
	err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, o)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("failed to get %s: %w", name, err)
	}
	return true, nil
}
