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
	"strings"

	helper "github.com/fluxcd/pkg/runtime/controller"
	"github.com/fluxcd/pkg/runtime/predicates"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/analysis"
	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/internal/workload"
	"github.com/serin-dev/serin/routing"
)

// This file wires the reconciler into a manager: its watches, the field
// indexes that map a watched object to its Canaries, and those map
// functions.

// targetIndexKey indexes Canaries by "Kind/name" of their target, so that a
// change to a target reconciles the Canaries that roll it out.
const targetIndexKey = ".spec.targetRef"

// trackedConfigIndexKey indexes Canaries by the ConfigMaps and Secrets their
// target uses (status.trackedConfigs), so that a data change reconciles them.
const trackedConfigIndexKey = ".status.trackedConfigs"

// autoscalerIndexKey indexes Canaries by the autoscaler they name, so that
// a change to the target's HorizontalPodAutoscaler reaches the primary's.
const autoscalerIndexKey = ".spec.autoscalerRef"

// canaryIndexes are the field indexes of Canaries the map functions list
// by: each maps a Canary to the keys of the objects it depends on.
var canaryIndexes = map[string]client.IndexerFunc{
	targetIndexKey: func(o client.Object) []string {
		c := o.(*v1alpha1.Canary)
		return []string{targetIndexValue(c.Spec.TargetRef.Kind, c.Spec.TargetRef.Name)}
	},
	trackedConfigIndexKey: func(o client.Object) []string {
		tracked := o.(*v1alpha1.Canary).Status.TrackedConfigs
		keys := make([]string, 0, len(tracked))
		for k := range tracked {
			keys = append(keys, k)
		}
		return keys
	},
	claimsIndexKey: claimKeys,
	autoscalerIndexKey: func(o client.Object) []string {
		if ref := o.(*v1alpha1.Canary).Spec.AutoscalerRef; ref != nil {
			return []string{ref.Name}
		}
		return nil
	},
}

// SetupWithManager registers the controller and its watches: the Canaries,
// the objects serin generates for them, and their targets.
func (r *CanaryReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts CanaryReconcilerOptions) error {
	r.setDefaults(mgr.GetClient(), mgr.GetAPIReader())
	for key, index := range canaryIndexes {
		if err := mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.Canary{}, key, index); err != nil {
			return fmt.Errorf("failed to index canaries by %s: %w", key, err)
		}
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.CanaryGroup{}, groupMembersIndexKey, groupMembers); err != nil {
		return fmt.Errorf("failed to index canary groups by member: %w", err)
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.Canary{}, builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicates.ReconcileRequestedPredicate{}),
		)).
		Owns(&appsv1.Deployment{}).
		Owns(&appsv1.DaemonSet{}).
		Owns(&corev1.Service{}).
		Owns(&autoscalingv2.HorizontalPodAutoscaler{}).
		// A Canary gone hands its claims to the next one waiting for them.
		Watches(&v1alpha1.Canary{}, handler.EnqueueRequestsFromMapFunc(r.canariesForClaims),
			builder.WithPredicates(predicate.Funcs{
				CreateFunc:  func(event.CreateEvent) bool { return false },
				UpdateFunc:  func(event.UpdateEvent) bool { return false },
				GenericFunc: func(event.GenericEvent) bool { return false },
			})).
		// A member's step, failure or halt moves the other members of its
		// group; a group's change moves its members.
		Watches(&v1alpha1.Canary{}, handler.EnqueueRequestsFromMapFunc(r.canariesForPeers),
			builder.WithPredicates(predicate.Funcs{UpdateFunc: peerMoved})).
		Watches(&v1alpha1.CanaryGroup{}, handler.EnqueueRequestsFromMapFunc(r.canariesForGroup),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&autoscalingv2.HorizontalPodAutoscaler{}, handler.EnqueueRequestsFromMapFunc(r.canariesForAutoscaler)).
		Watches(&appsv1.Deployment{}, handler.EnqueueRequestsFromMapFunc(r.canariesForTarget(v1alpha1.DeploymentKind))).
		Watches(&appsv1.DaemonSet{}, handler.EnqueueRequestsFromMapFunc(r.canariesForTarget(v1alpha1.DaemonSetKind))).
		Watches(&appsv1.StatefulSet{}, handler.EnqueueRequestsFromMapFunc(r.canariesForTarget(v1alpha1.StatefulSetKind))).
		Watches(&corev1.Service{}, handler.EnqueueRequestsFromMapFunc(r.canariesForTarget(v1alpha1.ServiceKind))).
		Watches(&discoveryv1.EndpointSlice{}, handler.EnqueueRequestsFromMapFunc(r.canariesForEndpoints)).
		// Metadata only: the informers hold no ConfigMap's or Secret's
		// data, which is read live (APIReader) when a resourceVersion is new.
		WatchesMetadata(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.canariesForConfig("ConfigMap"))).
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.canariesForConfig("Secret"))).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
			RateLimiter:             helper.GetRateLimiter(opts.RateLimiter),
		})
	watched := []client.Object{&v1alpha1.Canary{}, &v1alpha1.CanaryGroup{}, &appsv1.Deployment{}, &appsv1.DaemonSet{}, &appsv1.StatefulSet{}, &corev1.Service{},
		&autoscalingv2.HorizontalPodAutoscaler{}, &discoveryv1.EndpointSlice{}, metadataOf("ConfigMap"), metadataOf("Secret")}
	// Watch HTTPRoutes only where the Gateway API is installed. Without a
	// predicate: a change of status alone (a gateway accepting or rejecting
	// the weights, status.parents) must reconcile, since the rollout waits
	// for it.
	if _, err := mgr.GetRESTMapper().RESTMapping(schema.GroupKind{Group: gatewayv1.GroupName, Kind: v1alpha1.HTTPRouteKind}, gatewayv1.GroupVersion.Version); err == nil {
		b = b.Owns(&gatewayv1.HTTPRoute{}).
			// The routes of routing.routeRefs: the user's, not owned.
			Watches(&gatewayv1.HTTPRoute{}, handler.EnqueueRequestsFromMapFunc(r.canariesForRoute(v1alpha1.HTTPRouteKind)))
		watched = append(watched, &gatewayv1.HTTPRoute{})
	} else {
		ctrl.LoggerFrom(ctx).Info("Gateway API HTTPRoute not installed: gatewayapi routing works once it is, after a restart")
	}
	// GRPCRoutes are only ever the user's (routing.routeRefs).
	if _, err := mgr.GetRESTMapper().RESTMapping(schema.GroupKind{Group: gatewayv1.GroupName, Kind: v1alpha1.GRPCRouteKind}, gatewayv1.GroupVersion.Version); err == nil {
		b = b.Watches(&gatewayv1.GRPCRoute{}, handler.EnqueueRequestsFromMapFunc(r.canariesForRoute(v1alpha1.GRPCRouteKind)))
		watched = append(watched, &gatewayv1.GRPCRoute{})
	} else {
		ctrl.LoggerFrom(ctx).Info("Gateway API GRPCRoute not installed: routing.routeRefs of kind GRPCRoute works once it is, after a restart")
	}
	// Watch KEDA's ScaledObjects only where KEDA is installed: the target's
	// (a change reaches the primary's copy) and the primary's.
	if _, err := mgr.GetRESTMapper().RESTMapping(workload.ScaledObjectGVK.GroupKind(), workload.ScaledObjectGVK.Version); err == nil {
		b = b.Owns(workload.NewScaledObject("", "")).
			Watches(workload.NewScaledObject("", ""), handler.EnqueueRequestsFromMapFunc(r.canariesForAutoscaler))
		watched = append(watched, workload.NewScaledObject("", ""))
	} else {
		ctrl.LoggerFrom(ctx).Info("KEDA ScaledObject not installed: autoscalerRef of kind ScaledObject works once it is, after a restart")
	}
	watchCacheSizes(mgr.GetCache(), mgr.GetScheme(), watched)
	// An analysis outcome reconciles its Canary.
	if err := mgr.Add(r.Analysis); err != nil {
		return fmt.Errorf("failed to add the analysis runner: %w", err)
	}
	// A revert's end reconciles its Canary.
	if err := mgr.Add(r.reverts); err != nil {
		return fmt.Errorf("failed to add the revert jobs: %w", err)
	}
	// A promotion's end, or its verdict read, reconciles its Canary.
	if err := mgr.Add(r.promotions); err != nil {
		return fmt.Errorf("failed to add the promotion jobs: %w", err)
	}
	// A commit status's delivery reconciles its Canary.
	if err := mgr.Add(r.commitStatuses); err != nil {
		return fmt.Errorf("failed to add the commit status jobs: %w", err)
	}
	return b.WatchesRawSource(r.analysisResults()).WatchesRawSource(r.reverts.results()).WatchesRawSource(r.promotions.results()).
		WatchesRawSource(r.commitStatuses.results()).Complete(r)
}

// setDefaults gives the reconciler its in-memory state and the
// collaborators left unset: the cached reader for MetricTemplates, the
// uncached one for what the cache does not hold.
func (r *CanaryReconciler) setDefaults(cached, uncached client.Reader) {
	r.metrics = newCanaryMetrics()
	r.reverts = newGitJobs[gitops.RevertResult]()
	r.promotions = newGitJobs[promotionOutcome]()
	r.commitStatuses = newGitJobs[[]string]()
	r.expectations = newWriteExpectations()
	r.routeClocks = newRouteClocks()
	r.endpointClocks = newEndpointClocks()
	r.configs = &configHashes{byName: map[string]configHash{}}
	if _, wrapped := r.Client.(tenantClient); !wrapped {
		r.Client = tenantClient{Client: r.Client, scope: scope{key: r.WatchLabel, live: uncached, scheme: r.Client.Scheme()}}
	}
	if r.Webhooks == nil {
		r.Webhooks = &analysis.Webhooks{}
	}
	if r.Checks == nil {
		r.Checks = &analysis.Metrics{Reader: cached, Pods: uncached}
	}
	if r.Analysis == nil {
		r.Analysis = analysis.NewRunner(r.Webhooks, r.Checks, analysis.RunnerOptions{})
	}
	if r.APIReader == nil {
		r.APIReader = uncached
	}
	if r.Reverter == nil {
		r.Reverter = gitops.Disabled{}
	}
	if r.Promoter == nil {
		r.Promoter = gitops.Disabled{}
	}
}

// metadataOf is the object of a metadata-only watch of a core kind.
func metadataOf(kind string) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind))
	return m
}

func targetIndexValue(kind, name string) string { return kind + "/" + name }

// canariesBy lists the Canaries in namespace whose index key has value, as
// reconcile requests; what names the object for the log when listing fails.
func (r *CanaryReconciler) canariesBy(ctx context.Context, namespace, key, value, what string) []reconcile.Request {
	var list v1alpha1.CanaryList
	if err := r.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{key: value}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "failed to list canaries", "for", what)
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return reqs
}

// canariesForTarget maps a Deployment, DaemonSet, StatefulSet or Service to the Canaries
// targeting it.
func (r *CanaryReconciler) canariesForTarget(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		value := targetIndexValue(kind, o.GetName())
		return r.canariesBy(ctx, o.GetNamespace(), targetIndexKey, value, value)
	}
}

// canariesForRoute maps a route of kind (HTTPRoute, GRPCRoute) to the
// Canaries that steer it (routing.routeRefs): Flux applying it again, a
// parent's status, a person's edit reach them.
func (r *CanaryReconciler) canariesForRoute(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		if o.GetAnnotations()[routing.SteeredByAnnotation] == "" && metav1.GetControllerOf(o) != nil {
			return nil // a generated route: Owns reconciles its Canary
		}
		value := targetIndexValue(kind, o.GetName())
		return r.canariesBy(ctx, o.GetNamespace(), claimsIndexKey, value, strings.ToLower(kind)+" "+o.GetName())
	}
}

// canariesForConfig maps a ConfigMap or Secret to the Canaries whose target
// uses it.
func (r *CanaryReconciler) canariesForConfig(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		if owner := o.GetLabels()[workload.CanaryNameLabel]; owner != "" {
			// The primary's copy: repaired when deleted.
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: owner}}}
		}
		value := kind + "/" + o.GetName()
		return r.canariesBy(ctx, o.GetNamespace(), trackedConfigIndexKey, value, value)
	}
}

// canariesForAutoscaler maps an autoscaler (a HorizontalPodAutoscaler or a
// ScaledObject) to the Canaries naming it in spec.autoscalerRef.
func (r *CanaryReconciler) canariesForAutoscaler(ctx context.Context, o client.Object) []reconcile.Request {
	return r.canariesBy(ctx, o.GetNamespace(), autoscalerIndexKey, o.GetName(), "autoscaler "+o.GetName())
}

// canariesForEndpoints maps an EndpointSlice of <name>-primary or
// <name>-canary to the Canaries whose Service target is <name> (their
// readiness is their endpoints'), and one of a primary Service to the
// Canary that generated it (a promotion waits for the old pods to leave
// its endpoints).
func (r *CanaryReconciler) canariesForEndpoints(ctx context.Context, o client.Object) []reconcile.Request {
	svc := o.GetLabels()[discoveryv1.LabelServiceName]
	for _, suffix := range []string{v1alpha1.PrimarySuffix, v1alpha1.CanarySuffix} {
		if base, ok := strings.CutSuffix(svc, suffix); ok {
			reqs := r.canariesForTarget(v1alpha1.ServiceKind)(ctx, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: o.GetNamespace(), Name: base}})
			if suffix == v1alpha1.PrimarySuffix {
				key := targetIndexValue(v1alpha1.ServiceKind, svc)
				reqs = append(reqs, r.canariesBy(ctx, o.GetNamespace(), claimsIndexKey, key, key)...)
			}
			return reqs
		}
	}
	return nil
}
