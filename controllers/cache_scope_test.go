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
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/internal/workload"
)

// labelSelectedWorld is a store, and a cache of it that holds only what
// carries the watch label of a scope, as main.go configures the manager's.
func labelSelectedWorld(t *testing.T, key string, objs ...client.Object) (tenantClient, client.Client, *int) {
	t.Helper()
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = v1alpha1.AddToScheme(s)
	store := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
	liveReads := 0
	live := interceptor.NewClient(store, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, o client.Object, opts ...client.GetOption) error {
			liveReads++
			return c.Get(ctx, k, o, opts...)
		},
	})
	sc := scope{key: key, live: live, scheme: s}
	cache := interceptor.NewClient(store, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, o client.Object, opts ...client.GetOption) error {
			if err := c.Get(ctx, k, o, opts...); err != nil {
				return err
			}
			if sc.labelled(o) && o.GetLabels()[key] != "true" {
				return apierrors.NewNotFound(corev1.Resource("x"), k.Name)
			}
			return nil
		},
	})
	return tenantClient{Client: cache, scope: sc}, store, &liveReads
}

func TestScope_LabelsWhatTheCacheDoesNotHold(t *testing.T) {
	const key = "watch.serin.dev/shard1"
	ctx := context.Background()
	target := testobj.MakeDeployment("podinfo", "apps").Obj()
	config := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "podinfo-config", Namespace: "apps"}}
	c, store, liveReads := labelSelectedWorld(t, key, target, config)

	// The target, first named: read live once, labelled, then cached.
	got := &appsv1.Deployment{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: "apps", Name: "podinfo"}, got); err != nil {
		t.Fatalf("get target: %v", err)
	}
	stored := &appsv1.Deployment{}
	_ = store.Get(ctx, types.NamespacedName{Namespace: "apps", Name: "podinfo"}, stored)
	if stored.Labels[key] != "true" {
		t.Errorf("target labels %v: want %s=true", stored.Labels, key)
	}
	if err := c.Get(ctx, types.NamespacedName{Namespace: "apps", Name: "podinfo"}, got); err != nil || *liveReads != 1 {
		t.Errorf("second get: %v, %d live reads: want the cache's answer and 1 live read", err, *liveReads)
	}

	// A config, by its metadata.
	meta := metadataOf("ConfigMap")
	if err := c.Get(ctx, types.NamespacedName{Namespace: "apps", Name: "podinfo-config"}, meta); err != nil {
		t.Fatalf("get config metadata: %v", err)
	}
	_ = store.Get(ctx, types.NamespacedName{Namespace: "apps", Name: "podinfo-config"}, config)
	if config.Labels[key] != "true" {
		t.Errorf("config labels %v: want %s=true", config.Labels, key)
	}

	// What does not exist stays NotFound, and nothing is written.
	if err := c.Get(ctx, types.NamespacedName{Namespace: "apps", Name: "missing"}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("get missing: %v, want NotFound", err)
	}
	// Kinds outside the label-selected caches are never read live.
	before := *liveReads
	if err := c.Get(ctx, types.NamespacedName{Namespace: "apps", Name: "nope"}, &v1alpha1.Canary{}); !apierrors.IsNotFound(err) || *liveReads != before {
		t.Errorf("get a missing Canary: %v after %d live reads: want NotFound and none", err, *liveReads-before)
	}

	// What serin writes carries the label.
	svc := testobj.MakeService("podinfo-primary", "apps").Obj()
	if err := c.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	_ = store.Get(ctx, client.ObjectKeyFromObject(svc), svc)
	if svc.Labels[key] != "true" {
		t.Errorf("created Service labels %v: want %s=true", svc.Labels, key)
	}
	canary := testobj.MakeCanary("podinfo", "apps").Obj()
	if err := c.Create(ctx, canary); err != nil {
		t.Fatal(err)
	}
	if _, ok := canary.Labels[key]; ok {
		t.Errorf("the Canary got the watch label: %v", canary.Labels)
	}
}

// Without a watch label (caches of everything), nothing is labelled or
// read live.
func TestScope_ZeroLabelsNothing(t *testing.T) {
	ctx := context.Background()
	c, store, liveReads := labelSelectedWorld(t, "")
	svc := testobj.MakeService("podinfo", "apps").Obj()
	if err := c.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	_ = store.Get(ctx, client.ObjectKeyFromObject(svc), svc)
	for k := range svc.Labels {
		if strings.HasPrefix(k, workload.WatchLabelPrefix) {
			t.Errorf("labelled %s", k)
		}
	}
	if err := c.Get(ctx, types.NamespacedName{Namespace: "apps", Name: "missing"}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) || *liveReads != 0 {
		t.Errorf("get missing: %v, %d live reads: want NotFound and none", err, *liveReads)
	}
}
