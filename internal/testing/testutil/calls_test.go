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

package testutil

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// Calls logs the writes by verb, kind and name, the failed ones too, and
// fails the reads and writes it is told to; the others reach the client.
func TestCalls(t *testing.T) {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	cm := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name}}
	}
	unavailable := errors.New("unavailable")
	calls := &Calls{Fail: map[string]error{
		"create ConfigMap/refused": unavailable,
		"get ConfigMap/unreadable": unavailable,
		"list ConfigMapList":       unavailable,
	}}
	store := fake.NewClientBuilder().WithScheme(s).WithObjects(cm("existing"), cm("unreadable")).Build()
	c := calls.Wrap(store)
	ctx := context.Background()

	if err := c.Create(ctx, cm("new")); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, cm("refused")); !errors.Is(err, unavailable) {
		t.Errorf("create refused: %v, want the failure", err)
	}
	patched := cm("existing")
	if err := c.Patch(ctx, patched, client.MergeFrom(cm("existing"))); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, cm("new")); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm("existing")), &corev1.ConfigMap{}); err != nil {
		t.Errorf("get existing: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm("unreadable")), &corev1.ConfigMap{}); !errors.Is(err, unavailable) {
		t.Errorf("get unreadable: %v, want the failure", err)
	}
	if err := c.List(ctx, &corev1.ConfigMapList{}); !errors.Is(err, unavailable) {
		t.Errorf("list: %v, want the failure", err)
	}

	want := []string{"create ConfigMap/new", "create ConfigMap/refused", "patch ConfigMap/existing", "delete ConfigMap/new"}
	if diff := cmp.Diff(want, calls.Writes); diff != "" {
		t.Errorf("Writes (-want +got):\n%s", diff)
	}
	if err := store.Get(ctx, client.ObjectKeyFromObject(cm("refused")), &corev1.ConfigMap{}); err == nil {
		t.Error("the failed create reached the client")
	}
}
