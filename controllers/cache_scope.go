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
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/workload"
)

// The agent's caches of the kinds below hold only the objects carrying its
// watch label (workload.WatchLabel): its memory is set by its Canaries,
// not by the cluster. Everything serin writes of those kinds gets the
// label (scopedClient's writes), and an object the cache does not hold is
// read live once and labelled (scopedClient.Get): the target, its
// autoscaler and configs the first time a Canary names them, a generated
// object written before the agent used the label (or by another shard),
// and one whose label an operator removed. Once labelled, every change to
// it reaches the Canary through the watches, as before.

// missingObjectPoll is how often a Canary whose target or autoscaler does
// not exist looks for it again: with label-selected caches, no watch sees
// an object created without the label.
const missingObjectPoll = 5 * time.Second

// WatchedObjects are the kinds whose caches hold only the labelled objects,
// as main.go configures the manager's cache (metadata only for ConfigMaps
// and Secrets). KEDA's ScaledObject is one too, when it is installed.
func WatchedObjects() []client.Object {
	return []client.Object{
		&appsv1.Deployment{},
		&appsv1.DaemonSet{},
		&appsv1.StatefulSet{},
		&corev1.Service{},
		&discoveryv1.EndpointSlice{},
		&autoscalingv2.HorizontalPodAutoscaler{},
		&corev1.ConfigMap{},
		&corev1.Secret{},
		&gatewayv1.HTTPRoute{},
		&gatewayv1.GRPCRoute{},
		workload.NewScaledObject("", ""),
	}
}

// labelledKinds are the kinds of WatchedObjects that serin labels; an
// EndpointSlice takes its labels from its Service (the endpointslice
// controller copies them).
var labelledKinds = func() map[schema.GroupKind]bool {
	out := map[schema.GroupKind]bool{}
	for _, gvk := range []schema.GroupVersionKind{
		appsv1.SchemeGroupVersion.WithKind(v1alpha1.DeploymentKind),
		appsv1.SchemeGroupVersion.WithKind(v1alpha1.DaemonSetKind),
		appsv1.SchemeGroupVersion.WithKind(v1alpha1.StatefulSetKind),
		corev1.SchemeGroupVersion.WithKind(v1alpha1.ServiceKind),
		autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"),
		corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		corev1.SchemeGroupVersion.WithKind("Secret"),
		{Group: gatewayv1.GroupName, Version: gatewayv1.GroupVersion.Version, Kind: v1alpha1.HTTPRouteKind},
		{Group: gatewayv1.GroupName, Version: gatewayv1.GroupVersion.Version, Kind: v1alpha1.GRPCRouteKind},
		workload.ScaledObjectGVK,
	} {
		out[gvk.GroupKind()] = true
	}
	return out
}()

// scope is the watch label of the agent's caches; a zero scope (no label)
// caches everything and labels nothing.
type scope struct {
	key    string
	live   client.Reader
	scheme *runtime.Scheme
}

// labelled reports whether obj is of a kind whose cache holds only
// labelled objects.
func (s scope) labelled(obj runtime.Object) bool {
	if s.key == "" {
		return false
	}
	gvk, err := apiutil.GVKForObject(obj, s.scheme)
	return err == nil && labelledKinds[gvk.GroupKind()]
}

// label sets the watch label on an object of a labelled kind about to be
// written.
func (s scope) label(obj client.Object) {
	if !s.labelled(obj) {
		return
	}
	if obj.GetLabels()[s.key] == workload.WatchLabelValue {
		return
	}
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[s.key] = workload.WatchLabelValue
	obj.SetLabels(labels)
}

// adopt reads an object the cache does not hold live and, when it exists,
// labels it with w, so that the cache holds it from then on. It returns
// the cache's NotFound when the object does not exist.
func (s scope) adopt(ctx context.Context, w client.Writer, key client.ObjectKey, obj client.Object, notFound error) error {
	if err := s.live.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return notFound
		}
		return err
	}
	if obj.GetLabels()[s.key] == workload.WatchLabelValue {
		// Labelled already: the cache is behind a write.
		return nil
	}
	before, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("%T is not a client.Object", obj)
	}
	s.label(obj)
	if err := w.Patch(ctx, obj, client.MergeFrom(before)); err != nil {
		gvk, _ := apiutil.GVKForObject(obj, s.scheme)
		return fmt.Errorf("failed to label %s %s with %s for the agent's cache: %w", gvk.Kind, key, s.key, err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("labelled for the agent's cache", "object", key.String(), "label", s.key)
	return nil
}

// missingObjectRetry is how soon a Canary stalled for reason is reconciled
// again: a target or autoscaler that is missing (TargetNotFound, or an
// InvalidTarget that may name one) can be created without the watch label,
// which no label-selected watch sees; without those caches, the watches
// see it and a stall waits for them.
func (r *CanaryReconciler) missingObjectRetry(reason string) time.Duration {
	if r.WatchLabel == "" || (reason != v1alpha1.TargetNotFoundReason && reason != v1alpha1.InvalidTargetReason) {
		return 0
	}
	return missingObjectPoll
}
