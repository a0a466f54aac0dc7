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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// A DaemonSet target (apps/v1) rolls out blue/green only: the API server
// refuses traffic weights, an A/B test and an autoscaler for it.
func TestValidation_DaemonSetTarget(t *testing.T) {
	ns := newNamespace(t)
	daemonSet := func(name string) *testobj.CanaryWrapper {
		return testobj.MakeCanary(name, ns).Target("apps/v1", "DaemonSet", "agent")
	}
	gatewayapi := v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: []v1alpha1.GatewayReference{{Name: "public"}}}
	const needsKubernetes = "a DaemonSet target needs routing.provider kubernetes: serin rolls a DaemonSet out blue/green through the apex Service"
	tests := map[string]struct {
		canary  *v1alpha1.Canary
		wantErr string
	}{
		"blue/green iterations": {
			canary: daemonSet("d1").Analysis(v1alpha1.CanaryAnalysis{Iterations: 5, Threshold: 2}).Obj(),
		},
		"no routing: kubernetes by default": {
			canary: func() *v1alpha1.Canary {
				c := daemonSet("d2").Obj()
				c.Spec.Routing = v1alpha1.CanaryRouting{}
				return c
			}(),
		},
		"gatewayapi weights": {
			canary:  daemonSet("d3").Routing(gatewayapi).Analysis(v1alpha1.CanaryAnalysis{StepWeight: 10, MaxWeight: 50}).Obj(),
			wantErr: needsKubernetes,
		},
		"an A/B test on gatewayapi": {
			canary: daemonSet("d4").Routing(gatewayapi).Analysis(v1alpha1.CanaryAnalysis{Iterations: 3,
				Match: []v1alpha1.AnalysisMatch{{Headers: []v1alpha1.HTTPHeaderMatch{{Name: "x-canary", Value: "always"}}}}}).Obj(),
			wantErr: needsKubernetes,
		},
		"weights with kubernetes": {
			canary:  daemonSet("d5").Analysis(v1alpha1.CanaryAnalysis{StepWeight: 10}).Obj(),
			wantErr: "routing.provider kubernetes switches all traffic at once: use analysis.iterations",
		},
		"an autoscaler": {
			canary: func() *v1alpha1.Canary {
				c := daemonSet("d6").Obj()
				c.Spec.AutoscalerRef = &v1alpha1.AutoscalerReference{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Name: "agent"}
				return c
			}(),
			wantErr: "autoscalerRef scales a Deployment: a DaemonSet target runs one pod per node and has no replicas to scale",
		},
		"extensions/v1beta1": {
			canary:  testobj.MakeCanary("d7", ns).Target("extensions/v1beta1", "DaemonSet", "agent").Obj(),
			wantErr: "targetRef.apiVersion must be apps/v1 for a Deployment and v1 for a Service; apps/v1 for a DaemonSet",
		},
		"ready thresholds count its pods": {
			canary: daemonSet("d8").Analysis(v1alpha1.CanaryAnalysis{Iterations: 2, PrimaryReadyThreshold: ptr.To(50), CanaryReadyThreshold: ptr.To(50),
				Interval: &metav1.Duration{Duration: 10 * time.Second}}).Obj(),
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) { expectAdmission(t, tt.canary, tt.wantErr) })
	}
}
