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

package canarywatch

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// Follow hands over the list, then each change in order, until stopped.
func TestFollow(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(testobj.MakeCanary("podinfo", "apps").Obj()).Build()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	seen := make(chan string, 10)
	errStop := errors.New("stop")
	done := make(chan error, 1)
	go func() {
		done <- Follow(ctx, kube, []client.ListOption{client.InNamespace("apps")}, Funcs[v1alpha1.Canary]{
			Listed: func(canaries []v1alpha1.Canary) error {
				for _, c := range canaries {
					seen <- "listed " + c.Name
				}
				return nil
			},
			Changed: func(c *v1alpha1.Canary, deleted bool) error {
				if deleted {
					seen <- "deleted " + c.Name
					return errStop
				}
				seen <- "changed " + c.Name
				return nil
			},
		})
	}()
	var got []string
	got = append(got, <-seen)
	backend := testobj.MakeCanary("backend", "apps").Obj()
	if err := kube.Create(ctx, backend); err != nil {
		t.Fatal(err)
	}
	got = append(got, <-seen)
	if err := kube.Delete(ctx, backend); err != nil {
		t.Fatal(err)
	}
	got = append(got, <-seen)
	if diff := cmp.Diff([]string{"listed podinfo", "changed backend", "deleted backend"}, got); diff != "" {
		t.Errorf("Follow saw (-want +got):\n%s", diff)
	}
	if err := <-done; !errors.Is(err, errStop) {
		t.Errorf("Follow returned %v, want the Funcs' error", err)
	}
}

func TestRestartable(t *testing.T) {
	gr := schema.GroupResource{Group: "serin.dev", Resource: "canaries"}
	tests := map[string]struct {
		err  error
		want bool
	}{
		"closed by the API server": {err: nil, want: true},
		"resource version expired": {err: apierrors.NewResourceExpired("too old resource version"), want: true},
		"forbidden":                {err: apierrors.NewForbidden(gr, "", errors.New("no")), want: false},
		"any other":                {err: errors.New("connection refused"), want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Restartable(tc.err); got != tc.want {
				t.Errorf("Restartable(%v) = %t, want %t", tc.err, got, tc.want)
			}
		})
	}
}

func group(namespace, name string, members ...string) *v1alpha1.CanaryGroup {
	g := &v1alpha1.CanaryGroup{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	for _, m := range members {
		g.Spec.Members = append(g.Spec.Members, v1alpha1.GroupMember{Name: m})
	}
	return g
}

// Follow hands over the list, then each change in order, until its Funcs
// stop it; a group of another namespace is not listed.
func TestFollowGroups(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	kube := fake.NewClientBuilder().WithScheme(scheme).
		WithObjects(group("apps", "storefront", "api", "web"), group("shop", "checkout", "cart")).Build()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	seen := make(chan string, 10)
	errStop := errors.New("stop")
	done := make(chan error, 1)
	go func() {
		done <- FollowGroups(ctx, kube, []client.ListOption{client.InNamespace("apps")}, Funcs[v1alpha1.CanaryGroup]{
			Listed: func(groups []v1alpha1.CanaryGroup) error {
				for _, g := range groups {
					seen <- "listed " + g.Name
				}
				return nil
			},
			Changed: func(g *v1alpha1.CanaryGroup, deleted bool) error {
				if deleted {
					seen <- "deleted " + g.Name
					return errStop
				}
				seen <- "changed " + g.Name
				return nil
			},
		})
	}()
	var got []string
	got = append(got, <-seen)
	billing := group("apps", "billing", "invoices")
	if err := kube.Create(ctx, billing); err != nil {
		t.Fatal(err)
	}
	got = append(got, <-seen)
	if err := kube.Delete(ctx, billing); err != nil {
		t.Fatal(err)
	}
	got = append(got, <-seen)
	if diff := cmp.Diff([]string{"listed storefront", "changed billing", "deleted billing"}, got); diff != "" {
		t.Errorf("Follow saw (-want +got):\n%s", diff)
	}
	if err := <-done; !errors.Is(err, errStop) {
		t.Errorf("Follow returned %v, want the Funcs' error", err)
	}
}
