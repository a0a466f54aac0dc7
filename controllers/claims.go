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
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// A Canary claims its target and the names of the objects it generates.
// Two Canaries of a namespace whose claims meet cannot both act: the one
// created first (then the lower name) keeps them, the other stalls
// (TargetClaimed) before its first write, and may claim them once the
// first is gone. A Canary whose target is an object another Canary
// generates (a -primary, say) names the wrong thing: it stalls with
// InvalidTarget, whatever the order.

// claimsIndexKey indexes Canaries by every object they claim (claimKeys).
const claimsIndexKey = ".claims"

// claims is what a Canary claims, as "Kind/name" keys: the target, the
// objects it generates for it, and the routes of routing.routeRefs whose
// weights it moves.
type claims struct {
	target    string
	generated []string
	steered   []string
}

// claimsOf returns the claims of c.
func claimsOf(c *v1alpha1.Canary) claims {
	kind := c.Spec.TargetRef.Kind
	apex := c.GetServiceName()
	generated := []string{
		targetIndexValue(v1alpha1.ServiceKind, c.GetPrimaryServiceName()),
		targetIndexValue(v1alpha1.ServiceKind, c.GetCanaryServiceName()),
	}
	var steered []string
	for _, ref := range c.Spec.Routing.RouteRefs {
		steered = append(steered, targetIndexValue(ref.GetKind(), ref.Name))
	}
	if len(steered) == 0 {
		generated = append(generated, targetIndexValue(v1alpha1.HTTPRouteKind, apex))
	}
	if kind != v1alpha1.ServiceKind {
		generated = append(generated,
			targetIndexValue(kind, c.GetPrimaryName()),
			targetIndexValue(v1alpha1.ServiceKind, apex))
	}
	return claims{target: targetIndexValue(kind, c.Spec.TargetRef.Name), generated: generated, steered: steered}
}

// keys returns every key of the claims.
func (c claims) keys() []string {
	return append(append([]string{c.target}, c.generated...), c.steered...)
}

// claimKeys is the claims index function.
func claimKeys(o client.Object) []string {
	return claimsOf(o.(*v1alpha1.Canary)).keys()
}

// claimConflict is what keeps a Canary from acting: a target another
// Canary generates (Reason InvalidTarget), or claims another Canary holds
// (Reason TargetClaimed). The zero value means none.
type claimConflict struct {
	Reason  string
	Message string
}

// observeClaims looks for the Canaries whose claims meet obj's, in the
// cache's claims index.
func (r *CanaryReconciler) observeClaims(ctx context.Context, obj *v1alpha1.Canary) (claimConflict, error) {
	mine := claimsOf(obj)
	others := map[string]*v1alpha1.Canary{}
	for _, key := range mine.keys() {
		var list v1alpha1.CanaryList
		if err := r.List(ctx, &list, client.InNamespace(obj.Namespace), client.MatchingFields{claimsIndexKey: key}, client.UnsafeDisableDeepCopy); err != nil {
			return claimConflict{}, fmt.Errorf("failed to list the canaries claiming %s: %w", key, err)
		}
		for i := range list.Items {
			if o := &list.Items[i]; o.UID != obj.UID {
				others[o.Name] = o
			}
		}
	}
	if sharded(r.Shard) && r.APIReader != nil && (obj.Status.Phase == "" || obj.Status.Phase == v1alpha1.PhaseInitializing) {
		// Before its first write, a Canary of a shard looks for claims in
		// the others too (its cache holds its shard's Canaries only): the
		// Canaries whose spec.targetRef.name (a selectable field) is a
		// name it claims, read live.
		lists, err := r.liveCanariesNaming(ctx, obj.Namespace, claimedNames(obj))
		if err != nil {
			return claimConflict{}, err
		}
		for _, list := range lists {
			for i := range list.Items {
				o := &list.Items[i]
				if o.UID != obj.UID && !inShard(r.Shard, o) && claimsMeet(mine, claimsOf(o)) {
					others[o.Name] = o
				}
			}
		}
	}
	return decideClaims(obj, mine, others), nil
}

// targetNameField is the Canary CRD's selectable field of its target's
// name: the API server lists the Canaries of a target.
const targetNameField = "spec.targetRef.name"

// liveCanariesNaming lists, live, the Canaries of namespace whose
// spec.targetRef.name is one of names. An API server that cannot select
// on the field (before Kubernetes 1.32) is asked for the namespace's
// Canaries once instead.
func (r *CanaryReconciler) liveCanariesNaming(ctx context.Context, namespace string, names []string) ([]v1alpha1.CanaryList, error) {
	var out []v1alpha1.CanaryList
	for _, name := range names {
		var list v1alpha1.CanaryList
		err := r.APIReader.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{targetNameField: name})
		if apierrors.IsBadRequest(err) {
			var all v1alpha1.CanaryList
			if err := r.APIReader.List(ctx, &all, client.InNamespace(namespace)); err != nil {
				return nil, fmt.Errorf("failed to list the canaries of %s outside the cache: %w", namespace, err)
			}
			return []v1alpha1.CanaryList{all}, nil
		}
		if err != nil {
			return nil, fmt.Errorf("failed to list the canaries of %s naming %s outside the cache: %w", namespace, name, err)
		}
		out = append(out, list)
	}
	return out, nil
}

// claimedNames are the names of the objects a Canary claims, once each.
func claimedNames(c *v1alpha1.Canary) []string {
	names := []string{c.Spec.TargetRef.Name, c.GetPrimaryName(), c.GetServiceName(), c.GetPrimaryServiceName(), c.GetCanaryServiceName()}
	// A target named like what another Canary generates (NAME-primary):
	// that Canary's target is NAME.
	for _, suffix := range []string{v1alpha1.PrimarySuffix, v1alpha1.CanarySuffix} {
		if base, ok := strings.CutSuffix(c.Spec.TargetRef.Name, suffix); ok && base != "" {
			names = append(names, base)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// claimsMeet reports whether two Canaries claim an object in common.
func claimsMeet(a, b claims) bool {
	for _, k := range a.keys() {
		if slices.Contains(b.keys(), k) {
			return true
		}
	}
	return false
}

// decideClaims classifies the Canaries whose claims meet obj's: first any
// that generates obj's target, then the earliest that claims what obj does.
func decideClaims(obj *v1alpha1.Canary, mine claims, others map[string]*v1alpha1.Canary) claimConflict {
	names := slices.Sorted(maps.Keys(others))
	theirs := make(map[string]claims, len(names))
	for _, n := range names {
		theirs[n] = claimsOf(others[n])
	}
	kind, name := obj.Spec.TargetRef.Kind, obj.Spec.TargetRef.Name
	for _, n := range names {
		if o := others[n]; slices.Contains(theirs[n].generated, mine.target) {
			return claimConflict{Reason: v1alpha1.InvalidTargetReason, Message: fmt.Sprintf(
				"%s %s is generated by serin for Canary %s, which rolls out %s: name %s in spec.targetRef (Canary %s rolls it out already), not the object serin generates",
				kind, name, o.Name, readable(theirs[n].target), o.Spec.TargetRef.Name, o.Name)}
		}
	}
	for _, n := range names {
		o := others[n]
		if slices.Contains(mine.generated, theirs[n].target) || !earlier(o, obj) {
			// o names what obj generates (o is the invalid one), or o
			// came later and yields to obj.
			continue
		}
		if theirs[n].target == mine.target {
			return claimConflict{Reason: v1alpha1.TargetClaimedReason, Message: fmt.Sprintf(
				"%s %s is rolled out by Canary %s, created earlier: one Canary per target; delete this Canary, or delete %s first and this one takes the target over",
				kind, name, o.Name, o.Name)}
		}
		shared := sharedKeys(mine.keys(), theirs[n].keys())
		if steersShared(mine, theirs[n]) {
			return claimConflict{Reason: v1alpha1.TargetClaimedReason, Message: fmt.Sprintf(
				"%s is steered by Canary %s, created earlier: one Canary moves a route's weights; remove it from this Canary's routing.routeRefs, or delete %s first",
				strings.Join(shared, ", "), o.Name, o.Name)}
		}
		return claimConflict{Reason: v1alpha1.TargetClaimedReason, Message: fmt.Sprintf(
			"%s would be generated by both this Canary and Canary %s, created earlier: set spec.service.name (or the target's name) so that the generated names differ",
			strings.Join(shared, ", "), o.Name)}
	}
	return claimConflict{}
}

// steersShared reports whether a route one of two Canaries steers
// (routing.routeRefs) is claimed by the other too.
func steersShared(a, b claims) bool {
	for _, k := range a.steered {
		if slices.Contains(b.keys(), k) {
			return true
		}
	}
	for _, k := range b.steered {
		if slices.Contains(a.keys(), k) {
			return true
		}
	}
	return false
}

// earlier reports whether a was created before b (then by name): the one
// of two conflicting Canaries that keeps its claims.
func earlier(a, b *v1alpha1.Canary) bool {
	ta, tb := a.CreationTimestamp, b.CreationTimestamp
	if !ta.Equal(&tb) {
		return ta.Before(&tb)
	}
	return a.Name < b.Name
}

// sharedKeys returns the keys in both, as a person reads them.
func sharedKeys(a, b []string) []string {
	var out []string
	for _, k := range a {
		if slices.Contains(b, k) && !slices.Contains(out, readable(k)) {
			out = append(out, readable(k))
		}
	}
	return out
}

// readable writes a claim key ("Kind/name") as "Kind name".
func readable(key string) string { return strings.Replace(key, "/", " ", 1) }

// canariesForClaims maps a Canary that went away to the Canaries that wait
// for its claims (TargetClaimed), so that the next one takes them over.
func (r *CanaryReconciler) canariesForClaims(ctx context.Context, o client.Object) []reconcile.Request {
	c, ok := o.(*v1alpha1.Canary)
	if !ok {
		return nil
	}
	var reqs []reconcile.Request
	for _, key := range claimsOf(c).keys() {
		for _, req := range r.canariesBy(ctx, c.Namespace, claimsIndexKey, key, "canary "+c.Name) {
			if req.Name != c.Name && !slices.Contains(reqs, req) {
				reqs = append(reqs, req)
			}
		}
	}
	return reqs
}
