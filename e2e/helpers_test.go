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

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// newNamespace creates a namespace for one test and deletes it afterwards.
func newNamespace(t testing.TB) string {
	t.Helper()
	return newNamespaceIn(t, k8s)
}

// newNamespaceIn creates a namespace for one test in the cluster of k8s and
// deletes it afterwards.
func newNamespaceIn(t testing.TB, k8s client.Client) string {
	t.Helper()
	name := fmt.Sprintf("e2e-%s-%d", strings.ToLower(strings.NewReplacer("_", "-", "/", "-").Replace(t.Name())), metav1.Now().UnixNano()%100000)
	if len(name) > 63 {
		name = name[len(name)-63:]
		name = "e" + strings.TrimLeft(name[1:], "-")
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), ns) })
	return name
}
