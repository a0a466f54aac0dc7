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
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// adoptionWorld is podinfo's Canary (gatewayapi routing), its target
// Deployment using the Secret podinfo-secret, and that Secret.
func adoptionWorld(t *testing.T, canary func(*v1alpha1.Canary), objs ...client.Object) *faultWorld {
	c := weightedCanary()
	c.UID = "uid-podinfo"
	if canary != nil {
		canary(c)
	}
	d := testobj.MakeDeployment("podinfo", "apps").Replicas(2).Deployment
	d.Spec.Template.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "podinfo-secret"}}}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo-secret"}, Data: map[string][]byte{"token": []byte("v1")}}
	return newFaultWorld(t, 0, append([]client.Object{c, &d, secret}, objs...)...)
}

// Objects someone else made, with the names serin generates.
func legacyService(name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name, Labels: map[string]string{"team": "payments"}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "legacy"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}},
	}
}

func legacyRoute() *gatewayv1.HTTPRoute {
	return &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo", Labels: map[string]string{"team": "payments"}},
		Spec:       gatewayv1.HTTPRouteSpec{Hostnames: []gatewayv1.Hostname{"legacy.example.com"}},
	}
}

func legacyPrimary() client.Object {
	return &testobj.MakeDeployment("podinfo-primary", "apps").Image("legacy:1.0").Label("team", "payments").Deployment
}

func legacySecretCopy() *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo-secret-primary", Labels: map[string]string{"team": "payments"}},
		Data: map[string][]byte{"token": []byte("legacy")}}
}

// adoptable asks serin to take o over.
func adoptable(o client.Object) client.Object {
	o.SetAnnotations(map[string]string{v1alpha1.AdoptAnnotation: "true"})
	return o
}

// ownedByOther makes o another Canary's.
func ownedByOther(o client.Object) client.Object {
	o.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.CanaryKind,
		Name: "other", UID: "uid-other", Controller: ptr.To(true)}})
	return o
}

// An object with a name serin generates that the Canary does not control
// is not taken over: the Canary stalls (AdoptionRefused) and the object
// keeps its spec, labels and owners, unless it is annotated
// serin.dev/adopt=true and has no controller. A Service target is the
// user's own object, not adopted.
func TestNoAdoptionOfObjectsSerinDidNotCreate(t *testing.T) {
	serviceTarget := func(c *v1alpha1.Canary) {
		c.Spec.TargetRef = v1alpha1.TargetReference{APIVersion: "v1", Kind: "Service", Name: "podinfo"}
	}
	cases := map[string]struct {
		canary   func(*v1alpha1.Canary)
		existing client.Object
		also     []client.Object // the rest of the world
		// refused is the Stalled message; empty when serin goes on.
		refused string
		// adopted: the Canary controls the object afterwards; otherwise
		// the object is left as it was.
		adopted bool
	}{
		"apex Service": {
			existing: legacyService("podinfo"),
			refused:  "Service podinfo exists and is not managed by this Canary: delete it, or annotate it serin.dev/adopt=true to let serin take it over",
		},
		"canary Service": {
			existing: legacyService("podinfo-canary"),
			refused:  "Service podinfo-canary exists and is not managed by this Canary: delete it, or annotate it serin.dev/adopt=true to let serin take it over",
		},
		"HTTPRoute": {
			existing: legacyRoute(),
			refused:  "HTTPRoute podinfo exists and is not managed by this Canary: delete it, or annotate it serin.dev/adopt=true to let serin take it over",
		},
		"primary Deployment": {
			existing: legacyPrimary(),
			refused:  "Deployment podinfo-primary exists and is not managed by this Canary: delete it, or annotate it serin.dev/adopt=true to let serin take it over",
		},
		"config copy Secret": {
			existing: legacySecretCopy(),
			refused:  "Secret podinfo-secret-primary exists and is not managed by this Canary: delete it, or annotate it serin.dev/adopt=true to let serin take it over",
		},
		"primary Service of a Service target": {
			canary:   serviceTarget,
			existing: legacyService("podinfo-primary"),
			also:     []client.Object{legacyService("podinfo")},
			refused:  "Service podinfo-primary exists and is not managed by this Canary: delete it, or annotate it serin.dev/adopt=true to let serin take it over",
		},
		"Service owned by another Canary": {
			existing: ownedByOther(legacyService("podinfo-canary")),
			refused:  "Service podinfo-canary is controlled by Canary other (serin.dev/v1alpha1), not by this Canary: remove it (or that Canary) so that serin can generate it",
		},
		"HTTPRoute owned by another Canary, annotated": {
			existing: adoptable(ownedByOther(legacyRoute())),
			refused:  "HTTPRoute podinfo is controlled by Canary other (serin.dev/v1alpha1), not by this Canary: remove it (or that Canary) so that serin can generate it",
		},
		"annotated apex Service":       {existing: adoptable(legacyService("podinfo")), adopted: true},
		"annotated HTTPRoute":          {existing: adoptable(legacyRoute()), adopted: true},
		"annotated primary Deployment": {existing: adoptable(legacyPrimary()), adopted: true},
		"annotated config copy Secret": {existing: adoptable(legacySecretCopy()), adopted: true},
		"the Service target itself": {
			canary:   serviceTarget,
			existing: legacyService("podinfo"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := adoptionWorld(t, tc.canary, append(tc.also, tc.existing)...)
			before := w.snapshot(tc.existing)
			if tc.refused != "" {
				w.runUntil("stalled", func(c *v1alpha1.Canary) bool { return conditions.IsStalled(c) })
				c := w.canary()
				if got := conditions.GetReason(c, meta.StalledCondition); got != v1alpha1.AdoptionRefusedReason {
					t.Errorf("stalled with reason %s, want %s", got, v1alpha1.AdoptionRefusedReason)
				}
				if got := conditions.GetMessage(c, meta.StalledCondition); got != tc.refused {
					t.Errorf("stalled with\n  %q, want\n  %q", got, tc.refused)
				}
			} else {
				w.runUntil("initializing", isPhase(v1alpha1.PhaseInitializing))
			}
			after := w.snapshot(tc.existing)
			if tc.adopted {
				if !metav1.IsControlledBy(after, w.canary()) {
					t.Errorf("not adopted: owners %v", after.GetOwnerReferences())
				}
				return
			}
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("the existing object changed (-before +after):\n%s", diff)
			}
		})
	}
}

// snapshot reads o back from the world, without what the world itself
// writes (status, and the resourceVersion that goes with it).
func (w *faultWorld) snapshot(o client.Object) *unstructured.Unstructured {
	w.t.Helper()
	got := o.DeepCopyObject().(client.Object)
	w.do(func(ctx context.Context, c client.Client) error {
		return c.Get(ctx, types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}, got)
	})
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(got)
	if err != nil {
		w.t.Fatal(err)
	}
	delete(u, "status")
	unstructured.RemoveNestedField(u, "metadata", "resourceVersion")
	return &unstructured.Unstructured{Object: u}
}

// The reconciler never reads a Secret whole through its cached client,
// which would start a cluster-wide informer of every Secret's data: it
// watches their metadata and reads the data live. Through initialization,
// a promotion of new Secret data and a deletion that orphans the copy.
func TestNoSecretReadFromTheCache(t *testing.T) {
	w := adoptionWorld(t, nil)
	w.runUntil("initialized", isPhase(v1alpha1.PhaseInitialized))
	w.do(func(ctx context.Context, c client.Client) error {
		return c.Update(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo-secret"}, Data: map[string][]byte{"token": []byte("v2")}})
	})
	w.setImage("podinfo", newImage)
	w.runUntil("succeeded", isPhase(v1alpha1.PhaseSucceeded))
	w.do(func(ctx context.Context, c client.Client) error { return c.Delete(ctx, w.canary()) })
	for range 5 { // the finalizer orphans the generated objects
		if _, err := w.r.Reconcile(context.Background(), reconcileRequest(w.key)); err != nil {
			t.Fatal(err)
		}
	}

	copied := legacySecretCopy()
	w.do(func(ctx context.Context, c client.Client) error {
		return c.Get(ctx, client.ObjectKeyFromObject(copied), copied)
	})
	if string(copied.Data["token"]) != "v2" || len(copied.OwnerReferences) != 0 {
		t.Errorf("the primary's copy holds %q with owners %v, want the promoted v2, orphaned", copied.Data["token"], copied.OwnerReferences)
	}
	for _, read := range w.cachedReads {
		if read == "*v1.Secret" || read == "*v1.SecretList" {
			t.Fatalf("a %s was read through the cache; the reads: %v", read, w.cachedReads)
		}
	}
}
