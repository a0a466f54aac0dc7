package controllers

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testobj"
)

// The CRD's CEL rules reject bad Canaries at admission, with messages that
// say what to fix.
func TestValidation_CanaryCEL(t *testing.T) {
	ns := newNamespace(t)
	tests := map[string]struct {
		canary  *v1alpha1.Canary
		wantErr string
	}{
		"valid blue/green": {
			canary: testobj.MakeCanary("ok-bg", ns).Analysis(v1alpha1.CanaryAnalysis{Iterations: 5}).Obj(),
		},
		"valid gatewayapi": {
			canary: testobj.MakeCanary("ok-gw", ns).
				Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: []v1alpha1.GatewayReference{{Name: "public"}}}).
				Analysis(v1alpha1.CanaryAnalysis{StepWeights: []int{5, 10, 50}}).Obj(),
		},
		"stepWeight and stepWeights": {
			canary: testobj.MakeCanary("c1", ns).
				Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: []v1alpha1.GatewayReference{{Name: "public"}}}).
				Analysis(v1alpha1.CanaryAnalysis{StepWeight: 10, StepWeights: []int{10, 20}}).Obj(),
			wantErr: "analysis.stepWeight and analysis.stepWeights are exclusive",
		},
		"maxWeight over 100": {
			canary: testobj.MakeCanary("c2", ns).
				Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: []v1alpha1.GatewayReference{{Name: "public"}}}).
				Analysis(v1alpha1.CanaryAnalysis{MaxWeight: 120}).Obj(),
			wantErr: "analysis.maxWeight is a percentage and must be at most 100",
		},
		"stepWeights not ascending": {
			canary: testobj.MakeCanary("c3", ns).
				Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: []v1alpha1.GatewayReference{{Name: "public"}}}).
				Analysis(v1alpha1.CanaryAnalysis{StepWeights: []int{50, 10}}).Obj(),
			wantErr: "analysis.stepWeights must be ascending percentages between 1 and 100",
		},
		"iterations with gatewayapi": {
			canary: testobj.MakeCanary("c4", ns).
				Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: []v1alpha1.GatewayReference{{Name: "public"}}}).
				Analysis(v1alpha1.CanaryAnalysis{Iterations: 3}).Obj(),
			wantErr: "analysis.iterations is for blue/green (routing.provider: kubernetes)",
		},
		"stepWeight with kubernetes": {
			canary:  testobj.MakeCanary("c5", ns).Analysis(v1alpha1.CanaryAnalysis{StepWeight: 10}).Obj(),
			wantErr: "routing.provider kubernetes switches all traffic at once: use analysis.iterations",
		},
		"gatewayapi without gateways": {
			canary:  testobj.MakeCanary("c6", ns).Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting}).Obj(),
			wantErr: "routing.gatewayRefs must name at least one Gateway when routing.provider is gatewayapi",
		},
		"unsupported target kind": {
			canary:  testobj.MakeCanary("c7", ns).Target("apps/v1", "StatefulSet", "db").Obj(),
			wantErr: "targetRef.kind must be Deployment or Service",
		},
		"service target with apps/v1": {
			canary:  testobj.MakeCanary("c8", ns).Target("apps/v1", "Service", "web").Obj(),
			wantErr: "targetRef.apiVersion must be apps/v1 for a Deployment and v1 for a Service",
		},
		"threshold range inverted": {
			canary: testobj.MakeCanary("c9", ns).Analysis(v1alpha1.CanaryAnalysis{Metrics: []v1alpha1.CanaryMetric{{
				Name: "errors", TemplateRef: &v1alpha1.TemplateReference{Name: "errors"},
				ThresholdRange: &v1alpha1.ThresholdRange{Min: ptr.To(5.0), Max: ptr.To(1.0)},
			}}}).Obj(),
			wantErr: "thresholdRange.min must not exceed thresholdRange.max",
		},
		"built-in checks without templateRef": {
			canary: testobj.MakeCanary("c10", ns).
				Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.KubernetesRouting, DataPlane: v1alpha1.IstioDataPlane}).
				Analysis(v1alpha1.CanaryAnalysis{Iterations: 3, Metrics: []v1alpha1.CanaryMetric{
					{Name: v1alpha1.RequestSuccessRateCheck, ThresholdRange: &v1alpha1.ThresholdRange{Min: ptr.To(99.0)}},
					{Name: v1alpha1.RequestDurationCheck, ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(500.0)}},
				}}).Obj(),
		},
		"a built-in name with a template": {
			canary: testobj.MakeCanary("c11", ns).Analysis(v1alpha1.CanaryAnalysis{Metrics: []v1alpha1.CanaryMetric{{
				Name: v1alpha1.RequestDurationCheck, TemplateRef: &v1alpha1.TemplateReference{Name: "latency"},
			}}}).Obj(),
		},
		"custom check without templateRef": {
			canary: testobj.MakeCanary("c12", ns).Analysis(v1alpha1.CanaryAnalysis{Metrics: []v1alpha1.CanaryMetric{{
				Name: "error-rate", ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(1.0)},
			}}}).Obj(),
			wantErr: "templateRef is required unless name is a built-in check: request-success-rate or request-duration",
		},
		"unknown data plane": {
			canary:  testobj.MakeCanary("c13", ns).Routing(v1alpha1.CanaryRouting{DataPlane: "linkerd"}).Obj(),
			wantErr: `spec.routing.dataPlane: Unsupported value: "linkerd"`,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			err := k8s.Create(context.Background(), tt.canary)
			if tt.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring(tt.wantErr))
		})
	}
}
