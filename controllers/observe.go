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
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/dataplane"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/workload"
	"github.com/serin-dev/serin/routing"
)

// specHashAnnotation records on the primary which target revision it runs.
const specHashAnnotation = workload.SpecHashAnnotation

// observe reads the Canary's world from the informer cache into an
// Observation. It makes no decision and writes nothing.
func (r *CanaryReconciler) observe(ctx context.Context, obj *v1alpha1.Canary) (rollout.Observation, error) {
	obs := rollout.Observation{Now: r.now(), Requests: pendingRequests(obj)}
	conflict, err := r.observeClaims(ctx, obj)
	if err != nil || conflict.Reason != "" {
		// Not this Canary's: nothing more is read, since reading a target
		// the cache does not hold labels it (scopedClient).
		obs.Conflict = rollout.Conflict(conflict)
		return obs, err
	}
	if err := r.observeGroup(ctx, obj, &obs); err != nil || obs.Conflict.Reason != "" {
		return obs, err
	}
	obs.RoutingUnsupported = dataplane.Unsupported(obj, r.dataPlane(obj))
	obs.InvalidPromotion = rollout.InvalidPromotion(obj, r.ClusterName)
	return obs, r.targetKindOf(obj).observe(ctx, obj, &obs)
}

// podTarget is what the generated Services and the routes take of a target
// that runs pods (a Deployment, a DaemonSet).
type podTarget struct {
	// selector is the target's spec.selector.matchLabels.
	selector map[string]string
	// primarySelector selects the primary's pods.
	primarySelector map[string]string
	// template is the target's pod template as Git has it.
	template *corev1.PodTemplateSpec
}

// observePods fills what the targets that run pods observe alike: the
// tracked configs, the spec hash and revision, and whether the generated
// Services (and the primary's copies of the configs) are in sync.
func (r *CanaryReconciler) observePods(ctx context.Context, obj *v1alpha1.Canary, obs *rollout.Observation, target client.Object, gk schema.GroupKind, pods podTarget) error {
	tracked, err := r.trackedConfigs(ctx, obj.Namespace, workload.ConfigRefs(pods.template))
	if err != nil {
		return err
	}
	obs.Target.TrackedConfigs = tracked
	obs.Target.SpecHash = workload.SpecHash(pods.template, tracked)
	obs.Target.Revision = obj.Status.LastAttemptedRevision
	if obs.Target.SpecHash != obj.Status.LastAppliedSpec {
		// A new revision: ask the Flux object that applied it which source
		// revision it is. Not cached, so only here, once per revision.
		obs.Target.Revision = r.ownerRevision(ctx, obj, target, gk)
	}
	if obs.ServicesInSync, err = r.podServicesInSync(ctx, obj, pods); err != nil {
		return err
	}
	if obs.Target.SpecHash == obj.Status.LastPromotedSpec && obs.ServicesInSync {
		// The copies hold the promoted data, which the sources hold too
		// only while the target is on the promoted spec.
		if obs.ServicesInSync, err = r.primaryConfigsExist(ctx, obj.Namespace, tracked); err != nil {
			return err
		}
	}
	return nil
}

// observeWithoutTarget reads the routes of a Canary whose target is gone,
// its primary (selected by primarySelector) observed, so that decide can
// take traffic off the target.
func (r *CanaryReconciler) observeWithoutTarget(ctx context.Context, obj *v1alpha1.Canary, obs *rollout.Observation, primarySelector *metav1.LabelSelector) error {
	rt, err := r.routingTargetWithoutTarget(ctx, obj, primarySelector)
	if err != nil {
		return err
	}
	router, err := r.router(obj)
	if err != nil {
		return err
	}
	return r.observeRoutes(ctx, obj, router, rt, obs)
}

// routingTargetWithoutTarget describes the Services a router routes
// between from the primary's selector and the canary Service, when the
// target is gone.
func (r *CanaryReconciler) routingTargetWithoutTarget(ctx context.Context, obj *v1alpha1.Canary, primarySelector *metav1.LabelSelector) (routing.Target, error) {
	canary := &corev1.Service{}
	if _, err := r.getOptional(ctx, obj.Namespace, obj.GetCanaryServiceName(), canary); err != nil {
		return routing.Target{}, err
	}
	rt := routing.Target{
		ApexService:    obj.GetServiceName(),
		PrimaryService: obj.GetPrimaryServiceName(),
		CanaryService:  obj.GetCanaryServiceName(),
		CanarySelector: canary.Spec.Selector,
		Port:           obj.Spec.Service.Port,
	}
	if primarySelector != nil {
		rt.PrimarySelector = primarySelector.MatchLabels
	}
	return rt, nil
}

// observeRoutes reads the routing objects back: whether they exist, their
// weights, and whether the data plane applies them (and since when, as far
// as this agent saw).
func (r *CanaryReconciler) observeRoutes(ctx context.Context, obj *v1alpha1.Canary, router routing.Router, rt routing.Target, obs *rollout.Observation) error {
	routes, err := router.GetRoutes(ctx, obj, rt)
	if err != nil {
		return fmt.Errorf("failed to read routes: %w", err)
	}
	obs.ServicesInSync = obs.ServicesInSync && routes.Found && !routes.Drifted
	obs.CanaryWeight = routes.Weights.Canary
	obs.ABTest = routes.Weights.ABTest
	obs.Baseline.Routed = routes.Baseline
	obs.Routes = rollout.Routes{
		Programmed:   routes.Status.Programmed,
		Rejected:     routes.Status.Rejected,
		Message:      routes.Status.Message,
		ProgrammedAt: r.routeClocks.programmedSince(client.ObjectKeyFromObject(obj), routes.Status, obs.Now),
	}
	if !obs.Routes.ProgrammedAt.IsZero() {
		obs.Routes.SettleAt = obs.Routes.ProgrammedAt.Add(r.DataPlaneSettle)
	}
	return nil
}

// pendingRequests returns the request annotations not handled yet.
func pendingRequests(obj *v1alpha1.Canary) rollout.Requests {
	pending := func(annotation, handled string) string {
		if v := obj.Annotations[annotation]; v != "" && v != handled {
			return v
		}
		return ""
	}
	h := obj.Status.HandledRequests
	return rollout.Requests{
		Promote:   pending(v1alpha1.PromoteRequestAnnotation, h.Promote),
		Abort:     pending(v1alpha1.AbortRequestAnnotation, h.Abort),
		Retry:     pending(v1alpha1.RetryRequestAnnotation, h.Retry),
		Revert:    pending(v1alpha1.RevertRequestAnnotation, h.Revert),
		PromoteTo: pending(v1alpha1.PromoteToRequestAnnotation, h.PromoteTo),
	}
}

// router returns the Canary's traffic router.
func (r *CanaryReconciler) router(obj *v1alpha1.Canary) (routing.Router, error) {
	if r.Router != nil {
		return r.Router, nil
	}
	return routing.NewFor(r.Client, r.ControllerName, obj.Spec.TargetRef.Kind, obj.Spec.Routing)
}

// routing returns the Canary's router and the backends it routes between.
func (r *CanaryReconciler) routing(ctx context.Context, obj *v1alpha1.Canary) (routing.Router, routing.Target, error) {
	router, err := r.router(obj)
	if err != nil {
		return nil, routing.Target{}, err
	}
	rt, err := r.targetKindOf(obj).routingTarget(ctx, obj)
	if err != nil {
		return nil, routing.Target{}, err
	}
	return router, rt, nil
}

// routingTarget describes the Services a router routes between; the
// baseline's is named with analysis.judge.baseline, and routed only when
// the caller says so (Target.RouteBaseline).
func routingTarget(obj *v1alpha1.Canary, pods podTarget) routing.Target {
	rt := routing.Target{
		ApexService:     obj.GetServiceName(),
		PrimaryService:  obj.GetPrimaryServiceName(),
		CanaryService:   obj.GetCanaryServiceName(),
		PrimarySelector: pods.primarySelector,
		CanarySelector:  pods.selector,
		Port:            obj.Spec.Service.Port,
	}
	if obj.WantsBaseline() {
		rt.BaselineService = obj.GetBaselineServiceName()
	}
	return rt
}

// podServicesInSync reports whether the generated Services exist with the
// selectors and ports serin wants.
func (r *CanaryReconciler) podServicesInSync(ctx context.Context, obj *v1alpha1.Canary, pods podTarget) (bool, error) {
	for _, want := range desiredServices(obj, pods) {
		got := &corev1.Service{}
		if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: want.name}, got); err != nil {
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return false, fmt.Errorf("failed to get service %s: %w", want.name, err)
		}
		// Not this Canary's: the write that follows (applyService)
		// claims it, or stalls when it may not (AdoptionRefused).
		if !metav1.IsControlledBy(got, obj) {
			return false, nil
		}
		if (want.selector != nil && !maps.Equal(got.Spec.Selector, want.selector)) || !portsEqual(got.Spec.Ports, want.ports) ||
			!hasCustomMetadata(got, want.custom) || (want.selector == nil && !routedSelector(got.Spec.Selector, want.routed)) {
			return false, nil
		}
	}
	return true, nil
}

// routedSelector tells whether selector is one of those the router sets.
func routedSelector(selector map[string]string, routed []map[string]string) bool {
	for _, r := range routed {
		if maps.Equal(selector, r) {
			return true
		}
	}
	return false
}

// hasCustomMetadata tells whether an object carries the Canary's custom
// labels and annotations for it.
func hasCustomMetadata(obj metav1.Object, custom *v1alpha1.CustomMetadata) bool {
	return hasAll(obj.GetLabels(), custom.GetLabels()) && hasAll(obj.GetAnnotations(), custom.GetAnnotations())
}

// hasAll tells whether got holds every key of want with its value.
func hasAll(got, want map[string]string) bool {
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			return false
		}
	}
	return true
}

func portsEqual(got, want []corev1.ServicePort) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range want {
		g := got[i]
		g.NodePort = want[i].NodePort
		if !equality.Semantic.DeepEqual(g, want[i]) {
			return false
		}
	}
	return true
}

// desiredService is one Service serin generates. A nil selector means serin
// creates the Service with initial, but the router owns its selector.
type desiredService struct {
	name     string
	selector map[string]string
	// routed, with a nil selector, are the selectors the router sets:
	// any other (an operator's edit) is put back to initial.
	routed  []map[string]string
	initial map[string]string
	ports   []corev1.ServicePort
	// custom is the Canary's metadata for the Service (spec.service.apex,
	// primary, canary).
	custom *v1alpha1.CustomMetadata
}

// desiredServices returns the apex, primary and canary Services of a
// target that runs pods. The apex selects the primary; with the kubernetes
// router, its selector belongs to the router afterwards.
func desiredServices(obj *v1alpha1.Canary, pods podTarget) []desiredService {
	if obj.RoutesByReplicas() {
		// A worker: nothing calls it, serin generates no Service.
		return nil
	}
	ports := workload.ServicePorts(obj, pods.template)
	primarySel := pods.primarySelector
	svc := obj.Spec.Service
	apex := desiredService{name: obj.GetServiceName(), selector: primarySel, initial: primarySel, ports: ports, custom: svc.Apex}
	if obj.GetRoutingProvider() == v1alpha1.KubernetesRouting {
		apex.selector = nil
		apex.routed = []map[string]string{primarySel, pods.selector}
	}
	return []desiredService{
		apex,
		{name: obj.GetPrimaryServiceName(), selector: primarySel, initial: primarySel, ports: ports, custom: svc.Primary},
		{name: obj.GetCanaryServiceName(), selector: maps.Clone(pods.selector), initial: pods.selector, ports: ports, custom: svc.Canary},
	}
}

// dataPlane is the Canary's data plane: routing.dataPlane, else the
// agent's --data-plane.
func (r *CanaryReconciler) dataPlane(obj *v1alpha1.Canary) v1alpha1.DataPlane {
	var fallback v1alpha1.DataPlane
	if r.Checks != nil {
		fallback = r.Checks.DataPlane
	}
	return dataplane.Of(obj, fallback)
}
