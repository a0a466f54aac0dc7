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

	"k8s.io/utils/ptr"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// The ready thresholds are percentages from 1 to 100 (0 would call a
// Deployment without an available pod ready), and count a Deployment's
// replicas: the API server refuses them on a Service target.
func TestValidation_ReadyThresholds(t *testing.T) {
	ns := newNamespace(t)
	gatewayapi := v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: []v1alpha1.GatewayReference{{Name: "public"}}}
	thresholds := func(primary, canary *int) v1alpha1.CanaryAnalysis {
		return v1alpha1.CanaryAnalysis{StepWeight: 10, PrimaryReadyThreshold: primary, CanaryReadyThreshold: canary}
	}
	tests := map[string]struct {
		canary  *v1alpha1.Canary
		wantErr string
	}{
		"both at their bounds, Deployment target": {
			canary: testobj.MakeCanary("t1", ns).Routing(gatewayapi).Analysis(thresholds(ptr.To(1), ptr.To(100))).Obj(),
		},
		"primaryReadyThreshold 0": {
			canary:  testobj.MakeCanary("t2", ns).Routing(gatewayapi).Analysis(thresholds(ptr.To(0), nil)).Obj(),
			wantErr: "spec.analysis.primaryReadyThreshold in body should be greater than or equal to 1",
		},
		"canaryReadyThreshold 0": {
			canary:  testobj.MakeCanary("t3", ns).Routing(gatewayapi).Analysis(thresholds(nil, ptr.To(0))).Obj(),
			wantErr: "spec.analysis.canaryReadyThreshold in body should be greater than or equal to 1",
		},
		"canaryReadyThreshold over 100": {
			canary:  testobj.MakeCanary("t4", ns).Routing(gatewayapi).Analysis(thresholds(nil, ptr.To(101))).Obj(),
			wantErr: "spec.analysis.canaryReadyThreshold in body should be less than or equal to 100",
		},
		"a Service target with canaryReadyThreshold": {
			canary: testobj.MakeCanary("t5", ns).Target("v1", "Service", "web").Routing(gatewayapi).
				Analysis(thresholds(nil, ptr.To(50))).Obj(),
			wantErr: "analysis.primaryReadyThreshold and analysis.canaryReadyThreshold count a Deployment's replicas: a Service target has none",
		},
		"a Service target with primaryReadyThreshold 100": {
			canary: testobj.MakeCanary("t6", ns).Target("v1", "Service", "web").Routing(gatewayapi).
				Analysis(thresholds(ptr.To(100), nil)).Obj(),
			wantErr: "analysis.primaryReadyThreshold and analysis.canaryReadyThreshold count a Deployment's replicas: a Service target has none",
		},
		"a Service target without them": {
			canary: testobj.MakeCanary("t7", ns).Target("v1", "Service", "web").Routing(gatewayapi).
				Analysis(thresholds(nil, nil)).Obj(),
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) { expectAdmission(t, tt.canary, tt.wantErr) })
	}
}
