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
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// config/default renders with kustomize, the API server accepts every object
// it installs (server-side apply), and the agent's Deployment rolls out.
func TestTestbed_InstallManifestsApply(t *testing.T) {
	alone(t, "applies serin's CRDs and ClusterRoles cluster-wide")
	g := NewWithT(t)
	ctx := context.Background()

	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resMap, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join("..", "config", "default"))
	g.Expect(err).NotTo(HaveOccurred())

	kinds := map[string]int{}
	for _, res := range resMap.Resources() {
		m, err := res.Map()
		g.Expect(err).NotTo(HaveOccurred())
		obj := &unstructured.Unstructured{Object: m}
		kinds[obj.GetKind()]++
		err = k8s.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner("serin-e2e"), client.ForceOwnership)
		g.Expect(err).NotTo(HaveOccurred(), "%s %s", obj.GetKind(), obj.GetName())
	}
	g.Expect(kinds).To(Equal(map[string]int{
		// ClusterRoles: the agent's, and serin-view, serin-edit (aggregated
		// into Kubernetes' view, edit, admin) and serin-tenant for people.
		"Namespace": 1, "CustomResourceDefinition": 3, "ServiceAccount": 1, "ClusterRole": 4,
		"ClusterRoleBinding": 1, "Role": 1, "RoleBinding": 1, "Deployment": 1, "Service": 1,
	}))

	agentDeploy := &appsv1.Deployment{}
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: "serin-system", Name: "serin-agent"}, agentDeploy)).To(Succeed())
		g.Expect(agentDeploy.Status.AvailableReplicas).To(Equal(int32(1)))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "serin-system"}})).To(Succeed())
}
