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
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/internal/workload"
)

// blueGreen is podinfo's apex Service and the selectors of its primary and
// canary pods.
var blueGreen = Target{
	ApexService:     "podinfo",
	PrimarySelector: map[string]string{"app": "podinfo-primary"},
	CanarySelector:  map[string]string{"app": "podinfo"},
}

// apexSelecting is podinfo's apex Service selecting selector, controlled
// by podinfo's Canary.
func apexSelecting(selector map[string]string) client.Object {
	svc := testobj.MakeService("podinfo", "apps").Selector(selector).Obj()
	svc.OwnerReferences = []metav1.OwnerReference{controllerRef("podinfo", testobj.MakeCanary("podinfo", "apps").Obj().UID)}
	return svc
}

// The kubernetes router flips the apex Service's selector, all traffic at
// once, and writes only when it changes; GetRoutes reads it back. It has
// nothing to create or hand back of its own.
func TestKubernetesRouter(t *testing.T) {
	c := testobj.MakeCanary("podinfo", "apps").Obj()
	tests := map[string]struct {
		objs         []client.Object
		set          *Weights // nil: SetRoutes is not called
		fail         map[string]error
		wantSetErr   error
		wantWrites   []string
		wantSelector map[string]string // nil: no apex Service
		want         Routes
		wantGetErr   error
	}{
		"the canary gets traffic: the apex selects its pods": {
			objs:         []client.Object{apexSelecting(blueGreen.PrimarySelector)},
			set:          ptr.To(Canary(100)),
			wantWrites:   []string{"patch Service/podinfo"},
			wantSelector: blueGreen.CanarySelector,
			want:         Routes{Found: true, Weights: Canary(100), Status: Programmed},
		},
		"any canary weight counts as all": {
			objs:         []client.Object{apexSelecting(blueGreen.PrimarySelector)},
			set:          ptr.To(Canary(10)),
			wantWrites:   []string{"patch Service/podinfo"},
			wantSelector: blueGreen.CanarySelector,
			want:         Routes{Found: true, Weights: Canary(100), Status: Programmed},
		},
		"back to the primary": {
			objs:         []client.Object{apexSelecting(blueGreen.CanarySelector)},
			set:          ptr.To(AllPrimary),
			wantWrites:   []string{"patch Service/podinfo"},
			wantSelector: blueGreen.PrimarySelector,
			want:         Routes{Found: true, Weights: AllPrimary, Status: Programmed},
		},
		"the selector in force: no write": {
			objs:         []client.Object{apexSelecting(blueGreen.PrimarySelector)},
			set:          ptr.To(AllPrimary),
			wantSelector: blueGreen.PrimarySelector,
			want:         Routes{Found: true, Weights: AllPrimary, Status: Programmed},
		},
		"a selector of neither side reads as all on the primary": {
			objs:         []client.Object{apexSelecting(map[string]string{"app": "legacy"})},
			wantSelector: map[string]string{"app": "legacy"},
			want:         Routes{Found: true, Weights: AllPrimary, Status: Programmed},
		},
		"another Canary's apex Service: read as none, never written": {
			objs: []client.Object{func() client.Object {
				svc := testobj.MakeService("podinfo", "apps").Selector(blueGreen.PrimarySelector).Obj()
				svc.OwnerReferences = []metav1.OwnerReference{controllerRef("first", "uid-first")}
				return svc
			}()},
			set: ptr.To(Canary(100)),
			wantSetErr: &workload.NotManagedError{Kind: "Service", Name: "podinfo",
				Controller: &metav1.OwnerReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.CanaryKind, Name: "first", UID: "uid-first", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
			wantSelector: blueGreen.PrimarySelector,
			want:         Routes{},
		},
		"no apex Service": {
			set:        ptr.To(Canary(100)),
			wantSetErr: apierrors.NewNotFound(corev1.Resource("services"), "podinfo"),
			want:       Routes{},
		},
		"the patch fails: the selector as it was": {
			objs:         []client.Object{apexSelecting(blueGreen.PrimarySelector)},
			set:          ptr.To(Canary(100)),
			fail:         map[string]error{"patch Service/podinfo": injected},
			wantSetErr:   injected,
			wantWrites:   []string{"patch Service/podinfo"},
			wantSelector: blueGreen.PrimarySelector,
			want:         Routes{Found: true, Weights: AllPrimary, Status: Programmed},
		},
		"the apex Service cannot be read": {
			objs:         []client.Object{apexSelecting(blueGreen.PrimarySelector)},
			fail:         map[string]error{"get Service/podinfo": injected},
			wantSelector: blueGreen.PrimarySelector,
			wantGetErr:   injected,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			w := newRouterWorld(t, tt.objs...)
			w.calls.Fail = tt.fail
			r := &KubernetesRouter{Client: w.client, FieldOwner: "serin"}
			ctx := context.Background()
			if tt.set != nil {
				if err := r.SetRoutes(ctx, c, blueGreen, *tt.set); !sameError(err, tt.wantSetErr) {
					t.Fatalf("SetRoutes: %v, want %v", err, tt.wantSetErr)
				}
			}
			if diff := cmp.Diff(tt.wantWrites, w.calls.Writes); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			if tt.wantSelector != nil {
				svc := apexSelecting(nil)
				if err := w.store.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.wantSelector, svc.(*corev1.Service).Spec.Selector); diff != "" {
					t.Errorf("apex selector (-want +got):\n%s", diff)
				}
			}
			got, err := r.GetRoutes(ctx, c, blueGreen)
			if !sameError(err, tt.wantGetErr) {
				t.Fatalf("GetRoutes: %v, want %v", err, tt.wantGetErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("GetRoutes() (-want +got):\n%s", diff)
			}
		})
	}
}

// The apex Service is the controller's service sync's: the kubernetes
// router creates nothing and hands nothing back.
func TestKubernetesRouter_ReconcileAndFinalizeWriteNothing(t *testing.T) {
	w := newRouterWorld(t, apexSelecting(blueGreen.CanarySelector))
	r := &KubernetesRouter{Client: w.client, FieldOwner: "serin"}
	c := testobj.MakeCanary("podinfo", "apps").Obj()
	if err := r.Reconcile(context.Background(), c, blueGreen); err != nil {
		t.Fatal(err)
	}
	if err := r.Finalize(context.Background(), c, blueGreen); err != nil {
		t.Fatal(err)
	}
	if len(w.calls.Writes) != 0 {
		t.Errorf("writes %v, want none", w.calls.Writes)
	}
}
