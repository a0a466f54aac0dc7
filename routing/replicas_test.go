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
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// The canary's share of the replicas: rounded up, at least one pod for
// any weight, never more than the total.
func TestCanaryReplicas(t *testing.T) {
	for _, tt := range []struct {
		w     int
		total int32
		want  int32
	}{
		{0, 4, 0}, {1, 4, 1}, {10, 4, 1}, {25, 4, 1}, {26, 4, 2}, {50, 4, 2}, {100, 4, 4},
		{10, 1, 1}, {33, 10, 4}, {50, 0, 0},
	} {
		if got := CanaryReplicas(tt.w, tt.total); got != tt.want {
			t.Errorf("CanaryReplicas(%d, %d) = %d, want %d", tt.w, tt.total, got, tt.want)
		}
	}
}

// workerDeployment is a Deployment of the worker's with replicas, ready of
// them ready, and annotations.
func workerDeployment(name string, replicas, ready int32, annotations map[string]string) *appsv1.Deployment {
	d := testobj.MakeDeployment(name, "apps").Replicas(replicas).Obj()
	d.Annotations = annotations
	d.Status.ReadyReplicas = ready
	return d
}

// The replicas router: the canary gets its share first, the primary gives
// up a pod for each canary pod that is ready (never fewer ready pods than
// the total), the split is recorded on the primary and read back as the
// weights; a hand-scaled side is drift, and weight 0 gives the primary
// the total back without touching the canary.
func TestReplicasRouter(t *testing.T) {
	c := testobj.MakeCanary("worker", "apps").Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.ReplicasRouting}).Obj()
	split := func(w, total string) map[string]string {
		return map[string]string{CanaryWeightAnnotation: w, ReplicasAnnotation: total}
	}
	tests := map[string]struct {
		primary, canary *appsv1.Deployment
		set             *Weights
		wantPrimary     int32
		wantCanary      int32
		wantAnnotations map[string]string
		wantRoutes      Routes
		wantMessage     string
	}{
		"first share, canary pods not ready yet: the primary keeps all 4": {
			primary: workerDeployment("worker-primary", 4, 4, nil), canary: workerDeployment("worker", 1, 0, nil),
			set: ptr.To(Canary(25)), wantPrimary: 4, wantCanary: 1, wantAnnotations: split("25", "4"),
			wantRoutes:  Routes{Found: true, Weights: Canary(25)},
			wantMessage: "0 of the canary's 1 pods ready",
		},
		"first share, canary pod ready: the primary gives one up, and the primary's pods ready": {
			primary: workerDeployment("worker-primary", 4, 4, nil), canary: workerDeployment("worker", 1, 1, nil),
			set: ptr.To(Canary(25)), wantPrimary: 3, wantCanary: 1, wantAnnotations: split("25", "4"),
			wantRoutes: Routes{Found: true, Weights: Canary(25), Status: Programmed},
		},
		"not programmed while the primary's remaining pods are not ready": {
			primary: workerDeployment("worker-primary", 3, 2, split("25", "4")), canary: workerDeployment("worker", 1, 1, nil),
			wantPrimary: 3, wantCanary: 1, wantAnnotations: split("25", "4"),
			wantRoutes:  Routes{Found: true, Weights: Canary(25)},
			wantMessage: "1 of the canary's 1 pods ready, 2 of the primary's 3",
		},
		"programmed once the primary runs the rest": {
			primary: workerDeployment("worker-primary", 3, 3, split("25", "4")), canary: workerDeployment("worker", 1, 1, nil),
			wantPrimary: 3, wantCanary: 1, wantAnnotations: split("25", "4"),
			wantRoutes: Routes{Found: true, Weights: Canary(25), Status: Programmed},
		},
		"the next share: canary first, the primary still 3 until the new pod is ready": {
			primary: workerDeployment("worker-primary", 3, 3, split("25", "4")), canary: workerDeployment("worker", 1, 1, nil),
			set: ptr.To(Canary(50)), wantPrimary: 3, wantCanary: 2, wantAnnotations: split("50", "4"),
			wantRoutes:  Routes{Found: true, Weights: Canary(50)},
			wantMessage: "1 of the canary's 2 pods ready",
		},
		"a primary scaled by hand is drift": {
			primary: workerDeployment("worker-primary", 1, 1, split("50", "4")), canary: workerDeployment("worker", 2, 2, nil),
			wantPrimary: 1, wantCanary: 2, wantAnnotations: split("50", "4"),
			wantRoutes:  Routes{Found: true, Weights: Canary(50), Drifted: true},
			wantMessage: "the primary gives up a pod only once a canary pod is ready",
		},
		"weight 0: the primary runs all 4 again, the canary is the engine's to scale down": {
			primary: workerDeployment("worker-primary", 2, 2, split("50", "4")), canary: workerDeployment("worker", 2, 2, nil),
			set: ptr.To(AllPrimary), wantPrimary: 4, wantCanary: 2, wantAnnotations: map[string]string{CanaryWeightAnnotation: "0"},
			wantRoutes:  Routes{Found: true, Weights: AllPrimary},
			wantMessage: "2 of the primary's 4 pods ready",
		},
		"no primary yet: nothing routed": {
			canary:     workerDeployment("worker", 4, 4, nil),
			wantCanary: 4, wantRoutes: Routes{},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			var objs []client.Object
			if tt.primary != nil {
				objs = append(objs, tt.primary)
			}
			objs = append(objs, tt.canary)
			cl := newClient(t, objs...)
			r := &ReplicasRouter{Client: cl, FieldOwner: "serin"}
			if tt.set != nil {
				if err := r.SetRoutes(ctx, c, Target{}, *tt.set); err != nil {
					t.Fatalf("SetRoutes: %v", err)
				}
			}
			got, err := r.GetRoutes(ctx, c, Target{})
			if err != nil {
				t.Fatalf("GetRoutes: %v", err)
			}
			msg := got.Status.Message
			got.Status.Message = ""
			if got.Found != tt.wantRoutes.Found || got.Weights != tt.wantRoutes.Weights || got.Drifted != tt.wantRoutes.Drifted ||
				got.Status.Programmed != tt.wantRoutes.Status.Programmed {
				t.Errorf("GetRoutes = %+v, want %+v", got, tt.wantRoutes)
			}
			if !strings.Contains(msg, tt.wantMessage) || (tt.wantMessage == "" && msg != "") {
				t.Errorf("message %q, want it to say %q", msg, tt.wantMessage)
			}
			canary := &appsv1.Deployment{}
			if err := cl.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "worker"}, canary); err != nil {
				t.Fatal(err)
			}
			if r := ptr.Deref(canary.Spec.Replicas, 1); r != tt.wantCanary {
				t.Errorf("canary replicas %d, want %d", r, tt.wantCanary)
			}
			if tt.primary == nil {
				return
			}
			primary := &appsv1.Deployment{}
			if err := cl.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "worker-primary"}, primary); err != nil {
				t.Fatal(err)
			}
			if r := ptr.Deref(primary.Spec.Replicas, 1); r != tt.wantPrimary {
				t.Errorf("primary replicas %d, want %d", r, tt.wantPrimary)
			}
			for k, v := range tt.wantAnnotations {
				if primary.Annotations[k] != v {
					t.Errorf("primary annotation %s = %q, want %q (all: %v)", k, primary.Annotations[k], v, primary.Annotations)
				}
			}
			if _, ok := tt.wantAnnotations[ReplicasAnnotation]; !ok && primary.Annotations[ReplicasAnnotation] != "" {
				t.Errorf("primary keeps %s = %q at weight 0", ReplicasAnnotation, primary.Annotations[ReplicasAnnotation])
			}
			if TotalReplicas(primary) != 4 {
				t.Errorf("TotalReplicas = %d, want 4", TotalReplicas(primary))
			}
		})
	}
}
