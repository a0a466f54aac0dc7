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
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// spec.autoscalerRef is an autoscaling/v2 HorizontalPodAutoscaler or a
// keda.sh/v1alpha1 ScaledObject; the API server refuses other pairs,
// primaryScalerQueries on an HPA, and bounds that cannot be.
func TestValidation_AutoscalerRef(t *testing.T) {
	ns := newNamespace(t)
	withRef := func(name string, ref v1alpha1.AutoscalerReference) *v1alpha1.Canary {
		c := testobj.MakeCanary(name, ns).Obj()
		c.Spec.AutoscalerRef = &ref
		return c
	}
	tests := map[string]struct {
		canary  *v1alpha1.Canary
		wantErr string
	}{
		"an HPA": {canary: withRef("a1", v1alpha1.AutoscalerReference{Name: "podinfo"})},
		"a ScaledObject with the primary's queries and bounds": {canary: withRef("a2", v1alpha1.AutoscalerReference{
			APIVersion: "keda.sh/v1alpha1", Kind: "ScaledObject", Name: "podinfo-so",
			PrimaryScalerQueries:  map[string]string{"requests": "sum(up)"},
			PrimaryScalerReplicas: &v1alpha1.ScalerReplicas{MinReplicas: ptr.To[int32](0), MaxReplicas: ptr.To[int32](5)}})},
		"a ScaledObject of autoscaling/v2": {
			canary:  withRef("a3", v1alpha1.AutoscalerReference{Kind: "ScaledObject", Name: "podinfo-so"}),
			wantErr: "autoscalerRef names an autoscaling/v2 HorizontalPodAutoscaler or a keda.sh/v1alpha1 ScaledObject",
		},
		"queries of an HPA": {
			canary:  withRef("a4", v1alpha1.AutoscalerReference{Name: "podinfo", PrimaryScalerQueries: map[string]string{"a": "up"}}),
			wantErr: "autoscalerRef.primaryScalerQueries replace the queries of a ScaledObject's triggers: kind must be ScaledObject",
		},
		"an HPA at zero": {
			canary:  withRef("a5", v1alpha1.AutoscalerReference{Name: "podinfo", PrimaryScalerReplicas: &v1alpha1.ScalerReplicas{MinReplicas: ptr.To[int32](0)}}),
			wantErr: "autoscalerRef.primaryScalerReplicas.minReplicas must be at least 1 for a HorizontalPodAutoscaler",
		},
		"min over max": {
			canary: withRef("a6", v1alpha1.AutoscalerReference{Name: "podinfo",
				PrimaryScalerReplicas: &v1alpha1.ScalerReplicas{MinReplicas: ptr.To[int32](5), MaxReplicas: ptr.To[int32](2)}}),
			wantErr: "primaryScalerReplicas.minReplicas must not exceed maxReplicas",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) { expectAdmission(t, tt.canary, tt.wantErr) })
	}
}

// A Canary whose autoscalerRef is a ScaledObject on a cluster without
// KEDA's CRD (the envtest API server has none) stalls, saying to install
// KEDA.
func TestScaledObjectWithoutKEDAStalls(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	g.Expect(k8s.Create(ctx, testobj.MakeDeployment("podinfo", ns).Obj())).To(Succeed())
	canary := testobj.MakeCanary("podinfo", ns).Obj()
	canary.Spec.AutoscalerRef = &v1alpha1.AutoscalerReference{APIVersion: "keda.sh/v1alpha1", Kind: "ScaledObject", Name: "podinfo-so"}
	g.Expect(k8s.Create(ctx, canary)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)).To(Succeed())
		g.Expect(conditions.GetReason(canary, meta.StalledCondition)).To(Equal(v1alpha1.InvalidTargetReason))
		g.Expect(conditions.GetMessage(canary, meta.StalledCondition)).To(ContainSubstring(
			"KEDA's ScaledObject API (keda.sh/v1alpha1) is not installed: install KEDA or remove spec.autoscalerRef"))
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
}
