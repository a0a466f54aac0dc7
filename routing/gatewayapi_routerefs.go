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

package routing

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/workload"
)

// RouteRefsRouter moves the weights of HTTPRoutes the user keeps
// (routing.routeRefs), usually in Git, applied by Flux. It changes only the
// backendRefs of the rules that send to the apex Service alone (the
// steered rules) and serin's own annotations: between rollouts a steered
// rule is as the user wrote it, one backend to the apex Service (which
// selects the primary's pods); during one, that backend becomes the primary
// and canary Services with their weights, every other field of it (port,
// filters) kept. Every route moves in lockstep. It never creates, owns or
// deletes a route of the user's; with analysis.pin it keeps one of its own
// next to each (syncPin).
//
// A Flux Kustomization that applies such a route would put the rule's
// backendRefs back on each reconcile: the guide's drift ignore rule
// (spec.ignore, paths /spec/rules/N/backendRefs) leaves them to serin, and
// keeps everything else of the route following Git. Without it serin sees
// the reset (the weights it last wrote are in an annotation) and writes
// them again.
type RouteRefsRouter struct {
	Client     client.Client
	FieldOwner string
}

const (
	// SteeredByAnnotation names the Canary that steers a route; a route
	// another Canary steers stalls the later one (claims).
	SteeredByAnnotation = "serin.dev/steered-by"
	// weightsAnnotation records the weights serin last wrote on a route's
	// steered rules ("primary,canary", "+baseline" when the baseline is
	// routed): a reset by another writer is seen and undone.
	weightsAnnotation = "serin.dev/weights"
	// restBackendsAnnotation keeps, during a rollout, each steered rule's
	// backend as the user wrote it (JSON, by rule index), to put back when
	// the rollout ends.
	restBackendsAnnotation = "serin.dev/rest-backends"
)

// RouteRefError is a route of routing.routeRefs that serin cannot steer:
// missing, or with no rule that sends to the apex Service alone. A person
// must fix the route or the Canary.
type RouteRefError struct {
	// Route is the route's name.
	Route string
	// Missing is true when the route does not exist.
	Missing bool
	// Message says what is wrong and what to fix.
	Message string
}

func (e *RouteRefError) Error() string { return e.Message }

// Reconcile checks that every route exists and has a steered rule, marks
// it as this Canary's, and puts back the weights serin last wrote on it
// where another writer reset them (all traffic on the primary for a route
// serin has not moved yet).
func (r *RouteRefsRouter) Reconcile(ctx context.Context, canary *v1alpha1.Canary, t Target) error {
	routes, err := r.routes(ctx, canary, t)
	if err != nil {
		return err
	}
	w, baseline := AllPrimary, false
	if last, ok := lastWritten(routes); ok {
		w, baseline = last.w, last.baseline
	}
	t.RouteBaseline = baseline
	return r.write(ctx, canary, t, routes, w)
}

// SetRoutes writes the weights on the steered rules of every route.
func (r *RouteRefsRouter) SetRoutes(ctx context.Context, canary *v1alpha1.Canary, t Target, w Weights) error {
	routes, err := r.routes(ctx, canary, t)
	if err != nil {
		return err
	}
	return r.write(ctx, canary, t, routes, w)
}

// GetRoutes reads the weights of the steered rules. They count as found
// only when every route carries the same weights, those serin last wrote:
// otherwise another writer moved them (Flux applying the route from Git
// without the drift ignore rule, a person), and SyncServices puts them
// back (Reconcile). The routes are programmed when every parent of every
// route accepted its current generation.
func (r *RouteRefsRouter) GetRoutes(ctx context.Context, canary *v1alpha1.Canary, t Target) (Routes, error) {
	var out Routes
	out.Status = Programmed
	var why []string
	for i, ref := range canary.Spec.Routing.RouteRefs {
		route, err := getUserRoute(ctx, r.Client, canary.Namespace, ref)
		if err != nil {
			if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
				return Routes{}, nil
			}
			return Routes{}, err
		}
		if route.GetAnnotations()[SteeredByAnnotation] != canary.Name {
			return Routes{}, nil
		}
		steered, err := steeredRules(route, t)
		if err != nil {
			return Routes{}, nil
		}
		for j, rule := range steered {
			w, baseline := steeredWeights(route.rules[rule], t)
			if i == 0 && j == 0 {
				out.Found, out.Weights, out.Baseline = true, w, baseline
			}
			if w != out.Weights || baseline != out.Baseline {
				return Routes{}, nil // not in lockstep
			}
		}
		if last, ok := parseWeights(route.GetAnnotations()[weightsAnnotation]); ok && (last.w != out.Weights || last.baseline != out.Baseline) {
			return Routes{}, nil // reset by another writer
		}
		counted := []*userRoute{route}
		// The pinned requests go where the weights say once the pin route
		// (of an HTTPRoute) is programmed too: to the canary in the pinned
		// steps, with the others out of them. A missing or stale one is
		// written again (Reconcile).
		if route.kind == v1alpha1.HTTPRouteKind {
			pin := &gatewayv1.HTTPRoute{}
			switch err := r.Client.Get(ctx, types.NamespacedName{Namespace: canary.Namespace, Name: PinRouteName(ref.Name)}, pin); {
			case apierrors.IsNotFound(err) && pinned(canary, out.Weights):
				return Routes{}, nil
			case apierrors.IsNotFound(err) || (err == nil && !metav1.IsControlledBy(pin, canary)):
			case err != nil:
				return Routes{}, err
			case PinnedToCanary(pin, t.CanaryService) != pinned(canary, out.Weights):
				return Routes{}, nil
			default:
				counted = append(counted, &userRoute{Object: pin, kind: v1alpha1.HTTPRouteKind})
			}
		}
		for _, route := range counted {
			st := route.status()
			out.Status.Generation += st.Generation
			if !st.Programmed {
				out.Status.Programmed = false
				out.Status.Rejected = out.Status.Rejected || st.Rejected
				why = append(why, strings.ToLower(route.kind)+" "+route.GetName()+": "+st.Message)
			}
		}
	}
	out.Status.Message = strings.Join(why, "; ")
	return out, nil
}

// Finalize puts every steered rule back as the user wrote it (all traffic
// through the apex Service) and removes serin's annotations: the route is
// the user's again; a pin route sends where it does (garbage collection
// deletes it with the Canary). A missing route or route kind is nothing to
// do. The Services are named from the Canary (the caller knows only the
// apex).
func (r *RouteRefsRouter) Finalize(ctx context.Context, canary *v1alpha1.Canary, _ Target) error {
	t := steeringTarget(canary)
	for _, ref := range canary.Spec.Routing.RouteRefs {
		route, err := getUserRoute(ctx, r.Client, canary.Namespace, ref)
		if err != nil {
			if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
				continue
			}
			return fmt.Errorf("failed to get %s: %w", describeRoute(ref.GetKind(), canary.Namespace, ref.Name), err)
		}
		if route.GetAnnotations()[SteeredByAnnotation] != canary.Name {
			continue // not this Canary's to change
		}
		patch := client.MergeFromWithOptions(route.Object.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
		if steered, err := steeredRules(route, t); err == nil {
			rest := restBackends(route)
			for _, i := range steered {
				if err := route.setBackends(i, []routeBackend{usersBackend(route.rules[i], rest[i], t)}); err != nil {
					return err
				}
			}
		}
		annotations := route.GetAnnotations()
		delete(annotations, SteeredByAnnotation)
		delete(annotations, weightsAnnotation)
		delete(annotations, restBackendsAnnotation)
		route.SetAnnotations(annotations)
		if err := r.Client.Patch(ctx, route.Object, patch, client.FieldOwner(r.FieldOwner)); err != nil {
			return fmt.Errorf("failed to hand %s back: %w", route.describe(), err)
		}
	}
	for _, ref := range canary.Spec.Routing.RouteRefs {
		if ref.GetKind() != v1alpha1.HTTPRouteKind {
			continue // analysis.pin steers HTTPRoutes only
		}
		pin := &gatewayv1.HTTPRoute{}
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: canary.Namespace, Name: PinRouteName(ref.Name)}, pin)
		switch {
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err) || (err == nil && !metav1.IsControlledBy(pin, canary)):
			continue
		case err != nil:
			return fmt.Errorf("failed to get httproute %s: %w", PinRouteName(ref.Name), err)
		}
		route, err := getUserRoute(ctx, r.Client, canary.Namespace, ref)
		if err != nil {
			continue // the user's route is gone: nothing to follow
		}
		steered, err := steeredRules(route, t)
		if err != nil {
			continue
		}
		if err := r.syncPin(ctx, canary, t, route, steered, restBackends(route), AllPrimary); err != nil {
			return err
		}
	}
	return nil
}

// routes reads every route of routing.routeRefs and checks that serin may
// steer it.
func (r *RouteRefsRouter) routes(ctx context.Context, canary *v1alpha1.Canary, t Target) ([]*userRoute, error) {
	var out []*userRoute
	for _, ref := range canary.Spec.Routing.RouteRefs {
		name := describeRoute(ref.GetKind(), canary.Namespace, ref.Name)
		route, err := getUserRoute(ctx, r.Client, canary.Namespace, ref)
		if err != nil {
			switch {
			case apierrors.IsNotFound(err):
				return nil, &RouteRefError{Route: ref.Name, Missing: true, Message: fmt.Sprintf(
					"%s named by routing.routeRefs not found: create it (or let Flux apply it), or fix the name", name)}
			case meta.IsNoMatchError(err):
				return nil, &RouteRefError{Route: ref.Name, Missing: true, Message: fmt.Sprintf(
					"%s named by routing.routeRefs: the cluster does not serve the Gateway API's %s: install its CRDs (standard channel), then restart serin", name, ref.GetKind())}
			}
			return nil, fmt.Errorf("failed to get %s: %w", name, err)
		}
		if by := route.GetAnnotations()[SteeredByAnnotation]; by != "" && by != canary.Name {
			return nil, &RouteRefError{Route: ref.Name, Message: fmt.Sprintf(
				"%s is steered by canary %s: one Canary moves a route's weights; remove it from this Canary's routing.routeRefs", name, by)}
		}
		steered, err := steeredRules(route, t)
		if err != nil {
			return nil, err
		}
		if !canary.Spec.Service.PortDiscovery {
			if err := exposedPorts(route, steered, t); err != nil {
				return nil, err
			}
		}
		out = append(out, route)
	}
	return out, nil
}

// exposedPorts checks that the steered rules send to the one port serin's
// Services expose without portDiscovery, spec.service.port: a gateway
// would refuse a backend on any other (ResolvedRefs false), and the
// rollout would wait on a route that never works.
func exposedPorts(route *userRoute, steered []int, t Target) error {
	for _, i := range steered {
		for _, b := range route.rules[i] {
			if b.Port != nil && *b.Port != t.Port {
				return &RouteRefError{Route: route.GetName(), Message: fmt.Sprintf(
					"rule %d of %s sends to Service %s on port %d, which serin's Services do not expose (spec.service.port is %d): send to port %d, or set spec.service.portDiscovery to expose the pods' other container ports",
					i, route.describe(), b.Name, *b.Port, t.Port, t.Port)}
			}
		}
	}
	return nil
}

// write gives the steered rules of every route the weights w, and records
// them; a route already carrying them is not written. A route changed since
// it was read (Flux applying a new commit) is not overwritten: the write
// fails on its resourceVersion and is tried again with the new route.
func (r *RouteRefsRouter) write(ctx context.Context, canary *v1alpha1.Canary, t Target, routes []*userRoute, w Weights) error {
	for _, route := range routes {
		before := route.deepCopy()
		steered, _ := steeredRules(route, t)
		rest := restBackends(route)
		atRest := w == AllPrimary && !t.routedBaseline()
		for _, i := range steered {
			rest[i] = usersBackend(route.rules[i], rest[i], t)
			bs := []routeBackend{rest[i]}
			if !atRest {
				bs = rolledBackends(rest[i], t, w)
			}
			if err := route.setBackends(i, bs); err != nil {
				return err
			}
		}
		annotations := route.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[SteeredByAnnotation] = canary.Name
		annotations[weightsAnnotation] = formatWeights(w, t.routedBaseline())
		if atRest {
			delete(annotations, restBackendsAnnotation)
		} else {
			annotations[restBackendsAnnotation] = formatRestBackends(route, rest)
		}
		route.SetAnnotations(annotations)
		if !equality.Semantic.DeepEqual(before.spec(), route.spec()) || !maps.Equal(before.GetAnnotations(), route.GetAnnotations()) {
			patch := client.MergeFromWithOptions(before.Object, client.MergeFromWithOptimisticLock{})
			if err := r.Client.Patch(ctx, route.Object, patch, client.FieldOwner(r.FieldOwner)); err != nil {
				return fmt.Errorf("failed to set weights on %s: %w", route.describe(), err)
			}
		}
		if err := r.syncPin(ctx, canary, t, route, steered, rest, w); err != nil {
			return err
		}
	}
	return nil
}

// PinRouteName is the name of the HTTPRoute serin generates next to the
// user's route for analysis.pin: the route's name and "-serin-pin".
func PinRouteName(route string) string { return route + pinRouteSuffix }

const pinRouteSuffix = "-serin-pin"

// syncPin keeps the pin route of a user's route: while analysis.pin holds
// (pinned), an HTTPRoute of serin's own, owned by the Canary, with the
// user's route's parents and hostnames and, for each steered rule, the
// rule's matches with the pinned conditions added, its filters and
// timeouts, sending to the canary alone. Its matches are more specific
// than the user's (more header or query matches), so the Gateway API's
// precedence across routes serves them first; the user's route is never
// given a rule. Out of the pinned steps the pin route sends where the
// user's rule sends everyone: serin deletes nothing, and garbage collection
// deletes the route with the Canary. A route of that name that is not this
// Canary's is never touched: the Canary stalls naming it.
func (r *RouteRefsRouter) syncPin(ctx context.Context, canary *v1alpha1.Canary, t Target, u *userRoute, steered []int, rest map[int]routeBackend, w Weights) error {
	route, ok := u.Object.(*gatewayv1.HTTPRoute)
	if !ok {
		return nil // analysis.pin steers HTTPRoutes only (validation)
	}
	key := types.NamespacedName{Namespace: route.Namespace, Name: PinRouteName(route.Name)}
	existing := &gatewayv1.HTTPRoute{}
	found := true
	if err := r.Client.Get(ctx, key, existing); err != nil {
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("failed to get httproute %s: %w", key.Name, err)
		}
		found = false
	}
	if found && !metav1.IsControlledBy(existing, canary) {
		if a := canary.Spec.Analysis; a == nil || a.Pin == nil {
			return nil // a route of someone else's, of a name this Canary does not need
		}
		return &RouteRefError{Route: route.Name, Message: fmt.Sprintf(
			"httproute %s/%s is not this Canary's: serin names the route of analysis.pin's requests after httproute %s; rename or delete %s",
			key.Namespace, key.Name, route.Name, key.Name)}
	}
	if !pinned(canary, w) && !found {
		return nil
	}
	spec, err := pinRouteSpec(canary, route, steered, rest, t, pinned(canary, w))
	if err != nil {
		return err
	}
	pin := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, pin, func() error {
		if err := workload.Claim(canary, pin, r.Client.Scheme()); err != nil {
			return err
		}
		if pin.Labels == nil {
			pin.Labels = map[string]string{}
		}
		pin.Labels[workload.CanaryNameLabel] = canary.Name
		if pin.Annotations == nil {
			pin.Annotations = map[string]string{}
		}
		pin.Annotations["kustomize.toolkit.fluxcd.io/reconcile"] = "disabled"
		pin.Spec = spec
		return nil
	}); err != nil {
		return fmt.Errorf("failed to apply httproute %s: %w", key.Name, err)
	}
	return nil
}

// PinnedToCanary reports whether a pin route sends its requests to the
// canary alone (the pinned steps), rather than where the user's rule sends
// the others.
func PinnedToCanary(pin *gatewayv1.HTTPRoute, canaryService string) bool {
	for _, rule := range pin.Spec.Rules {
		if len(rule.BackendRefs) != 1 || string(rule.BackendRefs[0].Name) != canaryService {
			return false
		}
	}
	return len(pin.Spec.Rules) > 0
}

// maxRouteRules is the Gateway API's bound on an HTTPRoute's rules.
const maxRouteRules = 16

// pinRouteSpec is the pin route of route: its parents and hostnames, and
// analysis.pin's rules for each steered rule (pinRules). During the pinned
// steps (toCanary) each sends to the canary with the user's backend's port
// and filters; out of them, where the user's rule sends everyone (its
// weights, or the apex Service at rest), so that the pinned requests
// follow the others and the route's status tells when the Gateway applied
// that (a deleted or detached route's would not).
func pinRouteSpec(canary *v1alpha1.Canary, route *gatewayv1.HTTPRoute, steered []int, rest map[int]routeBackend, t Target, toCanary bool) (gatewayv1.HTTPRouteSpec, error) {
	spec := gatewayv1.HTTPRouteSpec{
		CommonRouteSpec: *route.Spec.CommonRouteSpec.DeepCopy(),
		Hostnames:       slices.Clone(route.Spec.Hostnames),
	}
	for _, i := range steered {
		rule := *route.Spec.Rules[i].DeepCopy()
		rule.Name = nil // the pinned copies of one rule would share it
		backends, err := convertBackends[routeBackend](rule.BackendRefs)
		if err != nil {
			return gatewayv1.HTTPRouteSpec{}, err
		}
		canaryOnly := usersBackend(backends, rest[i], t)
		canaryOnly.Name = gatewayv1.ObjectName(t.CanaryService)
		canaryOnly.Weight = nil
		asHTTP, err := convertBackends[gatewayv1.HTTPBackendRef]([]routeBackend{canaryOnly})
		if err != nil {
			return gatewayv1.HTTPRouteSpec{}, err
		}
		rules := pinRules(canary, rule, asHTTP[0])
		if !toCanary {
			for j := range rules {
				rules[j].BackendRefs = rule.BackendRefs
			}
		}
		spec.Rules = append(spec.Rules, rules...)
	}
	if len(spec.Rules) > maxRouteRules {
		return gatewayv1.HTTPRouteSpec{}, &RouteRefError{Route: route.Name, Message: fmt.Sprintf(
			"analysis.pin needs %d rules for httproute %s/%s (%d steered rules, %d pin matches), more than the %d an HTTPRoute holds: pin fewer conditions, or steer fewer rules",
			len(spec.Rules), route.Namespace, route.Name, len(steered), len(canary.Spec.Analysis.Pin.Match), maxRouteRules)}
	}
	return spec, nil
}

// steeredRules returns the indexes of the rules serin steers: those whose
// only backend is the apex Service, and those serin already moved (the
// primary and canary Services, and the baseline's). A route with none, or
// with a rule that mixes them with other backends, cannot be steered.
func steeredRules(route *userRoute, t Target) ([]int, error) {
	var out []int
	for i, rule := range route.rules {
		ours, others := 0, 0
		apex, primary, canary := false, false, false
		for _, b := range rule {
			switch name := serviceIn(b.BackendObjectReference, route.GetNamespace()); {
			case name == "":
				others++
			case name == t.ApexService:
				ours, apex = ours+1, true
			case name == t.PrimaryService:
				ours, primary = ours+1, true
			case name == t.CanaryService:
				ours, canary = ours+1, true
			case t.BaselineService != "" && name == t.BaselineService:
				ours++
			default:
				others++
			}
		}
		switch {
		case ours == 0:
			continue
		case others > 0 || (apex && ours > 1) || (!apex && (!primary || !canary)):
			return nil, &RouteRefError{Route: route.GetName(), Message: fmt.Sprintf(
				"rule %d of %s sends to Service %s together with other backends: serin steers a rule whose only backend is %s; give the other backends a rule of their own",
				i, route.describe(), t.ApexService, t.ApexService)}
		}
		out = append(out, i)
	}
	if len(out) == 0 {
		return nil, &RouteRefError{Route: route.GetName(), Message: fmt.Sprintf(
			"%s has no rule that sends to Service %s: point the backendRefs of the rule serin should steer at %s (port %d)",
			route.describe(), t.ApexService, t.ApexService, t.Port)}
	}
	return out, nil
}

// serviceIn returns the name of the core Service a backend names in the
// route's namespace, "" for any other backend.
func serviceIn(b gatewayv1.BackendObjectReference, namespace string) string {
	if ptr.Deref(b.Group, "") != "" || ptr.Deref(b.Kind, "Service") != "Service" {
		return ""
	}
	if b.Namespace != nil && string(*b.Namespace) != namespace {
		return ""
	}
	return string(b.Name)
}

// steeredWeights reads the weights of a steered rule: all on the primary
// when it sends to the apex Service, as the user wrote it.
func steeredWeights(rule []routeBackend, t Target) (Weights, bool) {
	if len(rule) == 1 && string(rule[0].Name) == t.ApexService {
		return AllPrimary, false
	}
	refs := make([]gatewayv1.HTTPBackendRef, len(rule))
	for i, b := range rule {
		refs[i].BackendRef = b.BackendRef
	}
	w, _ := ruleWeights(gatewayv1.HTTPRouteRule{BackendRefs: refs}, t)
	baseline := false
	for _, b := range rule {
		baseline = baseline || (t.BaselineService != "" && string(b.Name) == t.BaselineService)
	}
	return w, baseline
}

// usersBackend is a steered rule's backend as the user wrote it: recorded,
// when serin recorded it as it first moved the rule; else the rule's
// backend to the apex Service; else, of a moved rule, its primary's
// backend sent to the apex Service again.
func usersBackend(rule []routeBackend, recorded routeBackend, t Target) routeBackend {
	if recorded.Name != "" {
		return recorded.deepCopy()
	}
	for _, b := range rule {
		switch string(b.Name) {
		case t.ApexService:
			return b.deepCopy()
		case t.PrimaryService:
			out := b.deepCopy()
			out.Name = gatewayv1.ObjectName(t.ApexService)
			out.Weight = nil
			return out
		}
	}
	return routeBackend{}
}

// rolledBackends are a steered rule's backends during a rollout: the
// user's backend to the apex Service, once for the primary and once for
// the canary (and the baseline's, taking the canary's weight from the
// primary's share), each with its weight.
func rolledBackends(rest routeBackend, t Target, w Weights) []routeBackend {
	to := func(service string, weight int) routeBackend {
		b := rest.deepCopy()
		b.Name = gatewayv1.ObjectName(service)
		b.Weight = ptr.To(int32(weight))
		return b
	}
	if t.routedBaseline() {
		bw := baselineWeight(w)
		return []routeBackend{to(t.PrimaryService, w.Primary-bw), to(t.BaselineService, bw), to(t.CanaryService, w.Canary)}
	}
	return []routeBackend{to(t.PrimaryService, w.Primary), to(t.CanaryService, w.Canary)}
}

// restBackends reads restBackendsAnnotation, by the index each rule has
// now; a missing or unreadable one is empty. A named rule's backend is
// recorded under its name ("name:NAME"), so that it follows the rule when
// a commit applied during the rollout adds rules before it; an unnamed
// rule's under its index.
func restBackends(route *userRoute) map[int]routeBackend {
	out := map[int]routeBackend{}
	raw := map[string]routeBackend{}
	if json.Unmarshal([]byte(route.GetAnnotations()[restBackendsAnnotation]), &raw) != nil {
		return out
	}
	for k, v := range raw {
		if v.Name == "" {
			continue
		}
		if name, ok := strings.CutPrefix(k, restNamePrefix); ok {
			if i := slices.Index(route.names, name); i >= 0 {
				out[i] = v
			}
			continue
		}
		if i, err := strconv.Atoi(k); err == nil && i < len(route.names) && route.names[i] == "" {
			out[i] = v
		}
	}
	return out
}

// restNamePrefix marks a key of restBackendsAnnotation that is a rule's
// name.
const restNamePrefix = "name:"

func formatRestBackends(route *userRoute, rest map[int]routeBackend) string {
	raw := map[string]routeBackend{}
	for i, b := range rest {
		key := strconv.Itoa(i)
		if i < len(route.names) && route.names[i] != "" {
			key = restNamePrefix + route.names[i]
		}
		raw[key] = b
	}
	data, _ := json.Marshal(raw)
	return string(data)
}

// written is what weightsAnnotation records.
type written struct {
	w        Weights
	baseline bool
}

func formatWeights(w Weights, baseline bool) string {
	s := fmt.Sprintf("%d,%d", w.Primary, w.Canary)
	if baseline {
		s += "+baseline"
	}
	return s
}

func parseWeights(s string) (written, bool) {
	var out written
	s, out.baseline = strings.CutSuffix(s, "+baseline")
	p, c, ok := strings.Cut(s, ",")
	if !ok {
		return written{}, false
	}
	var err1, err2 error
	out.w.Primary, err1 = strconv.Atoi(p)
	out.w.Canary, err2 = strconv.Atoi(c)
	return out, err1 == nil && err2 == nil
}

// lastWritten returns the weights serin last wrote, as the first route
// records them.
func lastWritten(routes []*userRoute) (written, bool) {
	for _, route := range routes {
		if w, ok := parseWeights(route.GetAnnotations()[weightsAnnotation]); ok {
			return w, true
		}
	}
	return written{}, false
}

// SteeredRules returns the indexes of the rules of route (an HTTPRoute or
// a GRPCRoute) that canary steers (routing.routeRefs): for readers outside
// the router (serin check, which looks for a Flux drift ignore rule for
// each).
func SteeredRules(route client.Object, canary *v1alpha1.Canary) ([]int, error) {
	u, err := asUserRoute(route)
	if err != nil {
		return nil, err
	}
	return steeredRules(u, steeringTarget(canary))
}

// steeringTarget is the Target of a Canary's routes, from its names alone:
// what Finalize and readers outside the controller have.
func steeringTarget(canary *v1alpha1.Canary) Target {
	t := Target{ApexService: canary.GetServiceName(), PrimaryService: canary.GetPrimaryServiceName(),
		CanaryService: canary.GetCanaryServiceName(), Port: canary.Spec.Service.Port}
	if canary.WantsBaseline() {
		t.BaselineService = canary.GetBaselineServiceName()
	}
	return t
}
