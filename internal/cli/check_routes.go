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

package cli

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/routing"
)

// The labels kustomize-controller sets on what a Kustomization applies.
const (
	kustomizationNameLabel      = "kustomize.toolkit.fluxcd.io/name"
	kustomizationNamespaceLabel = "kustomize.toolkit.fluxcd.io/namespace"
)

// checkSteeredRoutes checks every route a Canary steers (routing.routeRefs)
// that a Flux Kustomization applies: the Kustomization must leave the
// backends of each steered rule to serin (spec.ignore), or it puts them
// back on each reconcile and fights serin over the weights. Without such
// a Canary it prints nothing.
func checkSteeredRoutes(ctx context.Context, kube client.Client, l *checkLog) error {
	var canaries v1alpha1.CanaryList
	if err := kube.List(ctx, &canaries); err != nil {
		return fmt.Errorf("failed to list canaries: %w", err)
	}
	first := true
	for i := range canaries.Items {
		c := &canaries.Items[i]
		for _, ref := range c.Spec.Routing.RouteRefs {
			if first {
				l.actionf("checking the routes canaries steer (routing.routeRefs)")
				first = false
			}
			msg, ok, err := steeredRouteState(ctx, kube, c, ref)
			if err != nil {
				return err
			}
			l.result(ok, "%s %s/%s (canary %s): %s", strings.ToLower(ref.GetKind()), c.Namespace, ref.Name, c.Name, msg)
		}
	}
	return nil
}

// steeredRouteState says whether one steered route is safe from its
// Kustomization, and why.
func steeredRouteState(ctx context.Context, kube client.Client, c *v1alpha1.Canary, ref v1alpha1.RouteReference) (string, bool, error) {
	kind, name := ref.GetKind(), ref.Name
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: gatewayv1.GroupName, Version: gatewayv1.GroupVersion.Version, Kind: kind})
	if err := kube.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: name}, u); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return "not found", false, nil
		}
		return "", false, fmt.Errorf("failed to get %s %s/%s: %w", strings.ToLower(kind), c.Namespace, name, err)
	}
	var route client.Object = &gatewayv1.HTTPRoute{}
	if kind == v1alpha1.GRPCRouteKind {
		route = &gatewayv1.GRPCRoute{}
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, route); err != nil {
		return "", false, err
	}
	steered, err := routing.SteeredRules(route, c)
	if err != nil {
		return err.Error(), false, nil
	}
	ksName, ksNamespace := route.GetLabels()[kustomizationNameLabel], route.GetLabels()[kustomizationNamespaceLabel]
	if ksName == "" {
		return fmt.Sprintf("steered rules %v; no Flux Kustomization applies it", steered), true, nil
	}
	ks := &unstructured.Unstructured{}
	ks.SetAPIVersion("kustomize.toolkit.fluxcd.io/v1")
	ks.SetKind("Kustomization")
	if err := kube.Get(ctx, types.NamespacedName{Namespace: ksNamespace, Name: ksName}, ks); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return fmt.Sprintf("steered rules %v; its Kustomization %s/%s is gone", steered, ksNamespace, ksName), true, nil
		}
		return "", false, fmt.Errorf("failed to get kustomization %s/%s: %w", ksNamespace, ksName, err)
	}
	rules, _, _ := unstructured.NestedSlice(ks.Object, "spec", "ignore")
	var missing []string
	for _, i := range steered {
		path := fmt.Sprintf("/spec/rules/%d/backendRefs", i)
		if !ignored(rules, kind, route, path) {
			missing = append(missing, path)
		}
	}
	if len(missing) > 0 {
		return fmt.Sprintf("Kustomization %s/%s applies it and puts back the backends serin moves on each reconcile: add to its spec.ignore {paths: [%s], target: {group: gateway.networking.k8s.io, kind: %s, name: %s}}",
			ksNamespace, ksName, strings.Join(missing, ", "), kind, name), false, nil
	}
	return fmt.Sprintf("Kustomization %s/%s leaves the backends of rules %v to serin", ksNamespace, ksName, steered), true, nil
}

// ignored tells whether a Kustomization's spec.ignore rules leave path of
// route alone: a rule whose target selects the route (or has none) with a
// path that is path or one of its parents.
func ignored(rules []any, kind string, route client.Object, path string) bool {
	for _, r := range rules {
		rule, ok := r.(map[string]any)
		if !ok {
			continue
		}
		if target, ok := rule["target"].(map[string]any); ok && !selects(target, kind, route) {
			continue
		}
		paths, _, _ := unstructured.NestedStringSlice(rule, "paths")
		for _, p := range paths {
			if p == path || strings.HasPrefix(path, strings.TrimSuffix(p, "/")+"/") {
				return true
			}
		}
	}
	return false
}

// selects tells whether a Flux selector (kustomize's: regular expressions
// for group, version, kind, name and namespace) selects the route. A
// selector by label or annotation is taken to select it: serin check does
// not evaluate them.
func selects(target map[string]any, kind string, route client.Object) bool {
	match := func(key, value string) bool {
		pattern, _ := target[key].(string)
		if pattern == "" {
			return true
		}
		ok, err := regexp.MatchString("^(?:"+pattern+")$", value)
		return err == nil && ok
	}
	return match("group", gatewayv1.GroupName) && match("version", "v1") && match("kind", kind) &&
		match("name", route.GetName()) && match("namespace", route.GetNamespace())
}
