package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// newNamespace creates a namespace for one test and deletes it afterwards.
func newNamespace(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("e2e-%s-%d", strings.ToLower(strings.ReplaceAll(t.Name(), "_", "-")), metav1.Now().UnixNano()%100000)
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
