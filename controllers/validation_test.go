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
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
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
		"custom metadata in serin's prefix": {
			canary: func() *v1alpha1.Canary {
				c := testobj.MakeCanary("c-meta", ns).Analysis(v1alpha1.CanaryAnalysis{Iterations: 5}).Obj()
				c.Spec.Service.Primary = &v1alpha1.CustomMetadata{Labels: map[string]string{"serin.dev/canary": "other"}}
				return c
			}(),
			wantErr: "labels in the serin.dev/ prefix are serin's own and cannot be set here",
		},
		"custom metadata": {
			canary: func() *v1alpha1.Canary {
				c := testobj.MakeCanary("ok-meta", ns).Analysis(v1alpha1.CanaryAnalysis{Iterations: 5}).Obj()
				c.Spec.Service.Apex = &v1alpha1.CustomMetadata{Labels: map[string]string{"team": "payments"}, Annotations: map[string]string{"example.com/a": "b"}}
				return c
			}(),
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
		"iterations with gatewayapi weights": {
			canary: testobj.MakeCanary("c4", ns).
				Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: []v1alpha1.GatewayReference{{Name: "public"}}}).
				Analysis(v1alpha1.CanaryAnalysis{Iterations: 3, StepWeight: 10}).Obj(),
			wantErr: "analysis.iterations (blue/green, or an A/B test with analysis.match) moves no weights step by step",
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
			canary:  testobj.MakeCanary("c7", ns).Target("apps/v1", "ReplicaSet", "db").Obj(),
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
			wantErr: "templateRef is required unless name is a built-in check: request-success-rate, request-duration, grpc-success-rate or pod-restarts",
		},
		"unknown data plane": {
			canary:  testobj.MakeCanary("c13", ns).Routing(v1alpha1.CanaryRouting{DataPlane: "consul"}).Obj(),
			wantErr: `spec.routing.dataPlane: Unsupported value: "consul"`,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) { expectAdmission(t, tt.canary, tt.wantErr) })
	}
}

// routing.provider replicas (a worker, no Service) is checked at admission:
// spec.service only without it, a Deployment target, weights rather than
// iterations, no autoscaler, no check that reads a data plane; and
// pod-restarts, a count, is never judged nor set on a Service target.
func TestValidation_ReplicasCEL(t *testing.T) {
	ns := "default"
	worker := func(name string, a *v1alpha1.CanaryAnalysis) *v1alpha1.Canary {
		c := testobj.MakeCanary(name, ns).Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.ReplicasRouting}).Obj()
		c.Spec.Service = v1alpha1.CanaryService{}
		c.Spec.Analysis = a
		return c
	}
	restarts := v1alpha1.CanaryMetric{Name: v1alpha1.PodRestartsCheck}
	tests := map[string]struct {
		canary  *v1alpha1.Canary
		wantErr string
	}{
		"a worker with pod-restarts and a template": {
			canary: worker("r1", &v1alpha1.CanaryAnalysis{StepWeights: []int{25, 50}, Metrics: []v1alpha1.CanaryMetric{
				restarts, {Name: "lag", TemplateRef: &v1alpha1.TemplateReference{Name: "lag"}, ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(10.0)}},
			}}),
		},
		"a worker with a Service": {
			canary: func() *v1alpha1.Canary {
				return testobj.MakeCanary("r2", ns).Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.ReplicasRouting}).Obj()
			}(),
			wantErr: "serin generates no Service and no route for it; remove spec.service",
		},
		"no Service without replicas": {
			canary: func() *v1alpha1.Canary {
				c := testobj.MakeCanary("r3", ns).Obj()
				c.Spec.Service = v1alpha1.CanaryService{}
				return c
			}(),
			wantErr: "spec.service is required",
		},
		"a DaemonSet worker": {
			canary: func() *v1alpha1.Canary {
				c := worker("r4", nil)
				c.Spec.TargetRef = v1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent"}
				return c
			}(),
			wantErr: "it needs a Deployment or StatefulSet targetRef",
		},
		"a StatefulSet by its partition": {
			canary: func() *v1alpha1.Canary {
				c := worker("r12", &v1alpha1.CanaryAnalysis{StepWeights: []int{25, 50}, Metrics: []v1alpha1.CanaryMetric{restarts}})
				c.Spec.TargetRef = v1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db"}
				return c
			}(),
		},
		"a StatefulSet behind a route": {
			canary:  testobj.MakeCanary("r13", ns).Target("apps/v1", "StatefulSet", "db").Obj(),
			wantErr: "a StatefulSet target needs routing.provider replicas",
		},
		"iterations": {
			canary:  worker("r5", &v1alpha1.CanaryAnalysis{Iterations: 3}),
			wantErr: "use analysis.stepWeight or analysis.stepWeights",
		},
		"an autoscaler": {
			canary: func() *v1alpha1.Canary {
				c := worker("r6", nil)
				c.Spec.AutoscalerRef = &v1alpha1.AutoscalerReference{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Name: "worker"}
				return c
			}(),
			wantErr: "remove autoscalerRef",
		},
		"a data plane's check": {
			canary:  worker("r7", &v1alpha1.CanaryAnalysis{Metrics: []v1alpha1.CanaryMetric{{Name: v1alpha1.RequestSuccessRateCheck}}}),
			wantErr: "use pod-restarts, or a MetricTemplate",
		},
		"a data plane's name on a template": {
			canary: worker("r8", &v1alpha1.CanaryAnalysis{Metrics: []v1alpha1.CanaryMetric{
				{Name: v1alpha1.RequestSuccessRateCheck, TemplateRef: &v1alpha1.TemplateReference{Name: "own"}},
			}}),
		},
		"pod-restarts judged": {
			canary: worker("r9", &v1alpha1.CanaryAnalysis{Metrics: []v1alpha1.CanaryMetric{
				{Name: v1alpha1.PodRestartsCheck, Judge: &v1alpha1.MetricJudge{Direction: v1alpha1.JudgeIncrease}},
			}}),
			wantErr: "a number and not a series",
		},
		"pod-restarts on a Service target": {
			canary: testobj.MakeCanary("r10", ns).Target("v1", "Service", "web").
				Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: []v1alpha1.GatewayReference{{Name: "gw"}}}).
				Analysis(v1alpha1.CanaryAnalysis{Metrics: []v1alpha1.CanaryMetric{restarts}}).Obj(),
			wantErr: "a Service target has no pods of its own",
		},
		"pod-restarts on a Deployment behind a route": {
			canary: testobj.MakeCanary("r11", ns).Analysis(v1alpha1.CanaryAnalysis{Iterations: 2, Metrics: []v1alpha1.CanaryMetric{restarts}}).Obj(),
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) { expectAdmission(t, tt.canary, tt.wantErr) })
	}
}

// The judge's fields are checked at admission: its scores, alpha and step
// in their ranges, percentages that the direction can use, and
// analysis.judge only with a judged metric.
func TestValidation_JudgeCEL(t *testing.T) {
	ns := newNamespace(t)
	judged := func(name string, j v1alpha1.MetricJudge, aj *v1alpha1.AnalysisJudge) *v1alpha1.Canary {
		return testobj.MakeCanary(name, ns).Gateway("gateways", "public").Analysis(v1alpha1.CanaryAnalysis{StepWeight: 10, MaxWeight: 50, Judge: aj, Metrics: []v1alpha1.CanaryMetric{
			{Name: v1alpha1.RequestDurationCheck, ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(500.0)}, Judge: &j},
		}}).Obj()
	}
	tests := map[string]struct {
		canary  *v1alpha1.Canary
		wantErr string
	}{
		"every field at its limit": {
			canary: judged("j-ok", v1alpha1.MetricJudge{Direction: v1alpha1.JudgeEither, MaxIncreasePercent: ptr.To(1000.0),
				MaxDecreasePercent: ptr.To(99.9), Weight: ptr.To(100), Critical: true},
				&v1alpha1.AnalysisJudge{PassScore: ptr.To(100), MarginalScore: ptr.To(100), Alpha: ptr.To(0.001), Step: metaDuration(time.Hour)}),
		},
		"the defaults": {
			canary: judged("j-defaults", v1alpha1.MetricJudge{}, nil),
		},
		"analysis.judge without a judged metric": {
			canary: testobj.MakeCanary("j1", ns).Analysis(v1alpha1.CanaryAnalysis{Iterations: 5,
				Judge: &v1alpha1.AnalysisJudge{PassScore: ptr.To(90)}}).Obj(),
			wantErr: "analysis.judge scores the metrics that have a judge block, and none has one",
		},
		"marginalScore above passScore": {
			canary:  judged("j2", v1alpha1.MetricJudge{}, &v1alpha1.AnalysisJudge{MarginalScore: ptr.To(96)}),
			wantErr: "analysis.judge.marginalScore must not exceed passScore (defaults: passScore 95, marginalScore 75)",
		},
		"marginalScore 0": {
			canary:  judged("j3", v1alpha1.MetricJudge{}, &v1alpha1.AnalysisJudge{MarginalScore: ptr.To(0)}),
			wantErr: "spec.analysis.judge.marginalScore in body should be greater than or equal to 1",
		},
		"alpha 0.5": {
			canary:  judged("j4", v1alpha1.MetricJudge{}, &v1alpha1.AnalysisJudge{Alpha: ptr.To(0.5)}),
			wantErr: "analysis.judge.alpha is a significance level: more than 0 and less than 0.5",
		},
		"step over 1h": {
			canary:  judged("j5", v1alpha1.MetricJudge{}, &v1alpha1.AnalysisJudge{Step: metaDuration(2 * time.Hour)}),
			wantErr: "analysis.judge.step, the time between two values of a judged series, must be between 1s and 1h",
		},
		"an unknown direction": {
			canary:  judged("j6", v1alpha1.MetricJudge{Direction: "Up"}, nil),
			wantErr: `spec.analysis.metrics[0].judge.direction: Unsupported value: "Up"`,
		},
		"maxIncreasePercent with direction Decrease": {
			canary:  judged("j7", v1alpha1.MetricJudge{Direction: v1alpha1.JudgeDecrease, MaxIncreasePercent: ptr.To(5.0)}, nil),
			wantErr: "judge.maxIncreasePercent tolerates an increase, which direction Decrease never counts as bad",
		},
		"maxDecreasePercent with direction Increase": {
			canary:  judged("j8", v1alpha1.MetricJudge{Direction: v1alpha1.JudgeIncrease, MaxDecreasePercent: ptr.To(5.0)}, nil),
			wantErr: "judge.maxDecreasePercent tolerates a decrease, which direction Increase never counts as bad",
		},
		"maxDecreasePercent 100": {
			canary:  judged("j9", v1alpha1.MetricJudge{MaxDecreasePercent: ptr.To(100.0)}, nil),
			wantErr: "judge.maxDecreasePercent must be at least 0 and less than 100 (percent)",
		},
		"a negative maxIncreasePercent": {
			canary:  judged("j10", v1alpha1.MetricJudge{MaxIncreasePercent: ptr.To(-1.0)}, nil),
			wantErr: "judge.maxIncreasePercent must be between 0 and 1000 (percent)",
		},
		"weight 0": {
			canary:  judged("j11", v1alpha1.MetricJudge{Weight: ptr.To(0)}, nil),
			wantErr: "spec.analysis.metrics[0].judge.weight in body should be greater than or equal to 1",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) { expectAdmission(t, tt.canary, tt.wantErr) })
	}
}

// Each bound of the Canary and MetricTemplate CRDs rejects a value past it
// with a message that says what to fix, and accepts the value at it.
func TestValidation_CanaryBounds(t *testing.T) {
	ns := newNamespace(t)
	gatewayapi := v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: []v1alpha1.GatewayReference{{Name: "public"}}}
	tests := map[string]struct {
		canary  *v1alpha1.Canary
		wantErr string
	}{
		"every bound at its limit, blue/green": {
			canary: withService(testobj.MakeCanary(strings.Repeat("c", 63), ns).
				Target("apps/v1", "Deployment", strings.Repeat("t", 55)).
				Analysis(v1alpha1.CanaryAnalysis{
					Interval: metaDuration(24 * time.Hour), Threshold: 1000, Iterations: 1000,
					Metrics: []v1alpha1.CanaryMetric{
						{Name: v1alpha1.RequestSuccessRateCheck, Interval: metaDuration(time.Second), ThresholdRange: &v1alpha1.ThresholdRange{Min: ptr.To(99.0)}},
						{Name: v1alpha1.RequestDurationCheck, Interval: metaDuration(24 * time.Hour), ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(500.0)}},
					},
					Webhooks: []v1alpha1.CanaryWebhook{
						{Name: "longest", URL: "https://hooks.example/" + strings.Repeat("p", 2048-len("https://hooks.example/")), Timeout: metaDuration(30 * time.Second), Retries: 3},
						{Name: "shortest", URL: "http://hooks.example", Timeout: metaDuration(time.Millisecond)},
					},
				}).Obj(), func(s *v1alpha1.CanaryService) {
				s.Name = strings.Repeat("s", 55)
				s.PortName = strings.Repeat("p", 63)
				s.TargetPort = ptr.To(intstr.FromInt32(65535))
			}),
		},
		"every bound at its limit, gatewayapi": {
			canary: withService(testobj.MakeCanary("limits-gw", ns).Routing(gatewayapi).
				Analysis(v1alpha1.CanaryAnalysis{Interval: metaDuration(time.Second), StepWeights: percentages(100)}).Obj(),
				func(s *v1alpha1.CanaryService) { s.TargetPort = ptr.To(intstr.FromString("http-metrics-15")) }),
		},
		"analysis.interval under 1s": {
			canary:  testobj.MakeCanary("b1", ns).Analysis(v1alpha1.CanaryAnalysis{Interval: metaDuration(time.Millisecond)}).Obj(),
			wantErr: "analysis.interval must be between 1s and 24h",
		},
		"analysis.interval over 24h": {
			canary:  testobj.MakeCanary("b2", ns).Analysis(v1alpha1.CanaryAnalysis{Interval: metaDuration(25 * time.Hour)}).Obj(),
			wantErr: "analysis.interval must be between 1s and 24h",
		},
		"metric interval under 1s": {
			canary: testobj.MakeCanary("b3", ns).Analysis(v1alpha1.CanaryAnalysis{Metrics: []v1alpha1.CanaryMetric{{
				Name: v1alpha1.RequestSuccessRateCheck, Interval: metaDuration(500 * time.Millisecond), ThresholdRange: &v1alpha1.ThresholdRange{Min: ptr.To(99.0)},
			}}}).Obj(),
			wantErr: "metrics[].interval, the query's range window, must be between 1s and 24h",
		},
		"threshold over 1000": {
			canary:  testobj.MakeCanary("b4", ns).Analysis(v1alpha1.CanaryAnalysis{Threshold: 2147483647}).Obj(),
			wantErr: "spec.analysis.threshold in body should be less than or equal to 1000",
		},
		"iterations over 1000": {
			canary:  testobj.MakeCanary("b5", ns).Analysis(v1alpha1.CanaryAnalysis{Iterations: 100000}).Obj(),
			wantErr: "spec.analysis.iterations in body should be less than or equal to 1000",
		},
		"more than 100 stepWeights": {
			canary:  testobj.MakeCanary("b6", ns).Routing(gatewayapi).Analysis(v1alpha1.CanaryAnalysis{StepWeights: append(percentages(100), 100)}).Obj(),
			wantErr: "spec.analysis.stepWeights: Too many: 101: must have at most 100 items",
		},
		"targetPort 0": {
			canary:  withService(testobj.MakeCanary("b7", ns).Obj(), func(s *v1alpha1.CanaryService) { s.TargetPort = ptr.To(intstr.FromInt32(0)) }),
			wantErr: "service.targetPort must be a port number from 1 to 65535, or a container port name",
		},
		"targetPort over 65535": {
			canary:  withService(testobj.MakeCanary("b8", ns).Obj(), func(s *v1alpha1.CanaryService) { s.TargetPort = ptr.To(intstr.FromInt32(65536)) }),
			wantErr: "service.targetPort must be a port number from 1 to 65535, or a container port name",
		},
		"targetPort name not an IANA_SVC_NAME": {
			canary:  withService(testobj.MakeCanary("b9", ns).Obj(), func(s *v1alpha1.CanaryService) { s.TargetPort = ptr.To(intstr.FromString("http--metrics")) }),
			wantErr: "service.targetPort must be a container port name (at most 15 lowercase letters, digits and '-'",
		},
		"targetPort name longer than 15": {
			canary:  withService(testobj.MakeCanary("b10", ns).Obj(), func(s *v1alpha1.CanaryService) { s.TargetPort = ptr.To(intstr.FromString("http-metrics-abc")) }),
			wantErr: "service.targetPort must be a container port name (at most 15 lowercase letters, digits and '-'",
		},
		"targetPort name without a letter": {
			canary:  withService(testobj.MakeCanary("b11", ns).Obj(), func(s *v1alpha1.CanaryService) { s.TargetPort = ptr.To(intstr.FromString("8080")) }),
			wantErr: "service.targetPort must be a container port name (at most 15 lowercase letters, digits and '-'",
		},
		"portName not a DNS-1123 label": {
			canary:  withService(testobj.MakeCanary("b12", ns).Obj(), func(s *v1alpha1.CanaryService) { s.PortName = "NOT_valid!" }),
			wantErr: "service.portName must be a DNS-1123 label, as a Service port name",
		},
		"portName longer than 63": {
			canary:  withService(testobj.MakeCanary("b13", ns).Obj(), func(s *v1alpha1.CanaryService) { s.PortName = strings.Repeat("p", 64) }),
			wantErr: "spec.service.portName: Too long: may not be more than 63",
		},
		"targetRef.name longer than 55": {
			canary:  testobj.MakeCanary("b14", ns).Target("apps/v1", "Deployment", strings.Repeat("t", 56)).Obj(),
			wantErr: "targetRef.name must be at most 55 characters: serin names generated objects <name>-primary and <name>-canary",
		},
		"targetRef.name not a DNS-1123 label": {
			canary:  testobj.MakeCanary("b15", ns).Target("apps/v1", "Deployment", "web.v2").Obj(),
			wantErr: "targetRef.name must be a DNS-1123 label",
		},
		"service.name longer than 55": {
			canary:  withService(testobj.MakeCanary("b16", ns).Obj(), func(s *v1alpha1.CanaryService) { s.Name = strings.Repeat("s", 56) }),
			wantErr: "service.name must be at most 55 characters: serin names generated Services <name>-primary and <name>-canary",
		},
		"service.name not a DNS-1123 label": {
			canary:  withService(testobj.MakeCanary("b17", ns).Obj(), func(s *v1alpha1.CanaryService) { s.Name = "Web" }),
			wantErr: "service.name must be a DNS-1123 label",
		},
		"Canary name longer than 63": {
			canary:  testobj.MakeCanary(strings.Repeat("c", 64), ns).Target("apps/v1", "Deployment", "web").Obj(),
			wantErr: "metadata.name of a Canary must be at most 63 characters",
		},
		"a gate's timeout over 30s": {
			canary: withWebhook(testobj.MakeCanary("b18", ns).Obj(), v1alpha1.CanaryWebhook{Name: "slow", Type: v1alpha1.ConfirmPromotionHook,
				URL: "http://hooks.example", Timeout: metaDuration(time.Minute)}),
			wantErr: "webhooks[].timeout is at most 30s for confirm-rollout, confirm-traffic-increase, confirm-promotion, rollback and event hooks; pre-rollout, rollout and post-rollout hooks may take up to 30m",
		},
		"an event hook's timeout over 30s": {
			canary: withWebhook(testobj.MakeCanary("b18e", ns).Obj(), v1alpha1.CanaryWebhook{Name: "slow", Type: v1alpha1.EventHook,
				URL: "http://hooks.example", Timeout: metaDuration(31 * time.Second)}),
			wantErr: "webhooks[].timeout is at most 30s for confirm-rollout",
		},
		"a load test's timeout over 30m": {
			canary: withWebhook(testobj.MakeCanary("b18l", ns).Obj(), v1alpha1.CanaryWebhook{Name: "k6", Type: v1alpha1.PreRolloutHook,
				URL: "http://hooks.example", Timeout: metaDuration(31 * time.Minute)}),
			wantErr: "webhooks[].timeout bounds one call and must be more than 0s and at most 30m",
		},
		"a load test of 5m before the rollout: accepted": {
			canary: withWebhook(testobj.MakeCanary("b18a", ns).Obj(), v1alpha1.CanaryWebhook{Name: "k6", Type: v1alpha1.PreRolloutHook,
				URL: "http://hooks.example", Timeout: metaDuration(5 * time.Minute)}),
		},
		"a rollout hook (the default type) of 30m: accepted": {
			canary: withWebhook(testobj.MakeCanary("b18b", ns).Obj(), v1alpha1.CanaryWebhook{Name: "load", URL: "http://hooks.example",
				Timeout: metaDuration(30 * time.Minute)}),
		},
		"a post-rollout hook of 10m: accepted": {
			canary: withWebhook(testobj.MakeCanary("b18c", ns).Obj(), v1alpha1.CanaryWebhook{Name: "report", Type: v1alpha1.PostRolloutHook,
				URL: "http://hooks.example", Timeout: metaDuration(10 * time.Minute)}),
		},
		"webhook timeout 0s": {
			canary:  withWebhook(testobj.MakeCanary("b19", ns).Obj(), v1alpha1.CanaryWebhook{Name: "zero", URL: "http://hooks.example", Timeout: metaDuration(0)}),
			wantErr: "webhooks[].timeout bounds one call and must be more than 0s and at most 30m",
		},
		"webhook retries over 3": {
			canary:  withWebhook(testobj.MakeCanary("b20", ns).Obj(), v1alpha1.CanaryWebhook{Name: "retry", URL: "http://hooks.example", Retries: 10}),
			wantErr: "spec.analysis.webhooks[0].retries in body should be less than or equal to 3",
		},
		"webhook url not http": {
			canary:  withWebhook(testobj.MakeCanary("b21", ns).Obj(), v1alpha1.CanaryWebhook{Name: "ftp", URL: "ftp://hooks.example/x"}),
			wantErr: "webhooks[].url must be an absolute http:// or https:// URL",
		},
		"webhook url without a host": {
			canary:  withWebhook(testobj.MakeCanary("b22", ns).Obj(), v1alpha1.CanaryWebhook{Name: "nohost", URL: "http://"}),
			wantErr: "webhooks[].url must be an absolute http:// or https:// URL",
		},
		"webhook metadata at its limits": {
			canary: withWebhook(testobj.MakeCanary("b24", ns).Obj(), v1alpha1.CanaryWebhook{Name: "meta", URL: "http://hooks.example",
				Metadata: manyEntries(32, 253, 4096)}),
		},
		"webhook metadata over 32 entries": {
			canary: withWebhook(testobj.MakeCanary("b25", ns).Obj(), v1alpha1.CanaryWebhook{Name: "meta", URL: "http://hooks.example",
				Metadata: manyEntries(33, 8, 8)}),
			wantErr: "spec.analysis.webhooks[0].metadata: Too many: 33: must have at most 32 items",
		},
		"webhook metadata value over 4096": {
			canary: withWebhook(testobj.MakeCanary("b26", ns).Obj(), v1alpha1.CanaryWebhook{Name: "meta", URL: "http://hooks.example",
				Metadata: manyEntries(1, 8, 4097)}),
			wantErr: "webhooks[].metadata keys are at most 253 characters and values at most 4096",
		},
		"templateVariables at their limits": {
			canary: withMetric(testobj.MakeCanary("b27", ns).Obj(), manyEntries(32, 63, 1024)),
		},
		"templateVariables over 32": {
			canary:  withMetric(testobj.MakeCanary("b28", ns).Obj(), manyEntries(33, 8, 8)),
			wantErr: "spec.analysis.metrics[0].templateVariables: Too many: 33: must have at most 32 items",
		},
		"a templateVariables value over 1024": {
			canary:  withMetric(testobj.MakeCanary("b29", ns).Obj(), manyEntries(1, 8, 1025)),
			wantErr: "templateVariables names are at most 63 characters and values at most 1024",
		},
		"webhook url longer than 2048": {
			canary: withWebhook(testobj.MakeCanary("b23", ns).Obj(), v1alpha1.CanaryWebhook{
				Name: "long", URL: "https://hooks.example/" + strings.Repeat("p", 2049-len("https://hooks.example/"))}),
			wantErr: "spec.analysis.webhooks[0].url: Too long: may not be more than 2048",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) { expectAdmission(t, tt.canary, tt.wantErr) })
	}
}

// A Canary without spec.routing gets routing.provider kubernetes, the
// default the getters and the docs give, and the rules read it so.
func TestValidation_RoutingDefault(t *testing.T) {
	ns := newNamespace(t)
	g := NewWithT(t)
	ctx := context.Background()

	created := withoutRouting(t, testobj.MakeCanary("no-routing", ns).Analysis(v1alpha1.CanaryAnalysis{Iterations: 2}).Obj())
	g.Expect(k8s.Create(ctx, created)).To(Succeed())
	got := &v1alpha1.Canary{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(created), got)).To(Succeed())
	g.Expect(got.Spec.Routing.Provider).To(Equal(v1alpha1.KubernetesRouting))
	g.Expect(got.GetRoutingProvider()).To(Equal(v1alpha1.KubernetesRouting))

	expectAdmission(t, withoutRouting(t, testobj.MakeCanary("no-routing-svc", ns).Target("v1", "Service", "web").Obj()),
		"a Service target needs routing.provider gatewayapi")
	expectAdmission(t, withoutRouting(t, testobj.MakeCanary("no-routing-weights", ns).Analysis(v1alpha1.CanaryAnalysis{StepWeight: 10}).Obj()),
		"routing.provider kubernetes switches all traffic at once")
}

// A MetricTemplate's provider.timeout bounds one query: at most 30s.
func TestValidation_MetricTemplateBounds(t *testing.T) {
	ns := newNamespace(t)
	tests := map[string]struct {
		timeout time.Duration
		wantErr string
	}{
		"30s":      {timeout: 30 * time.Second},
		"1ms":      {timeout: time.Millisecond},
		"over 30s": {timeout: 31 * time.Second, wantErr: "provider.timeout bounds one query and must be more than 0s and at most 30s"},
		"0s":       {timeout: 0, wantErr: "provider.timeout bounds one query and must be more than 0s and at most 30s"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			expectAdmission(t, &v1alpha1.MetricTemplate{
				ObjectMeta: metav1.ObjectMeta{Name: "errors-" + strings.ReplaceAll(name, " ", "-"), Namespace: ns},
				Spec: v1alpha1.MetricTemplateSpec{
					Provider: v1alpha1.MetricProvider{Address: "http://prometheus:9090", Timeout: metaDuration(tt.timeout)},
					Query:    "sum(up)",
				},
			}, tt.wantErr)
		})
	}
}

// A MetricTemplate's provider needs what its type needs: an address
// (datadog and newrelic have a default), a Secret for the SaaS providers,
// headers for prometheus only and never Authorization.
func TestValidation_MetricTemplateProviders(t *testing.T) {
	ns := newNamespace(t)
	secret := &meta.LocalObjectReference{Name: "creds"}
	tests := map[string]struct {
		provider v1alpha1.MetricProvider
		wantErr  string
	}{
		"datadog, its default address": {provider: v1alpha1.MetricProvider{Type: v1alpha1.DatadogProvider, SecretRef: secret}},
		"newrelic without a Secret": {provider: v1alpha1.MetricProvider{Type: v1alpha1.NewRelicProvider},
			wantErr: "provider.secretRef is required for datadog, newrelic, dynatrace and splunk: it holds their API keys"},
		"dynatrace without an address": {provider: v1alpha1.MetricProvider{Type: v1alpha1.DynatraceProvider, SecretRef: secret},
			wantErr: "provider.address is required, except for datadog and newrelic (which default to their US API)"},
		"prometheus without an address": {provider: v1alpha1.MetricProvider{Type: v1alpha1.PrometheusProvider},
			wantErr: "provider.address is required, except for datadog and newrelic"},
		"graphite without a Secret": {provider: v1alpha1.MetricProvider{Type: v1alpha1.GraphiteProvider, Address: "http://graphite"}},
		"prometheus headers": {provider: v1alpha1.MetricProvider{Address: "http://mimir/prometheus",
			Headers: map[string][]string{"X-Scope-OrgID": {"team-a"}}}},
		"an Authorization header": {provider: v1alpha1.MetricProvider{Address: "http://prometheus",
			Headers: map[string][]string{"authorization": {"Bearer x"}}},
			wantErr: "provider.headers cannot set Authorization: put the credentials in the Secret of secretRef"},
		"influxdb headers": {provider: v1alpha1.MetricProvider{Type: v1alpha1.InfluxDBProvider, Address: "http://influxdb",
			Headers: map[string][]string{"X-A": {"b"}}},
			wantErr: "provider.headers are sent to prometheus only"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			expectAdmission(t, &v1alpha1.MetricTemplate{
				ObjectMeta: metav1.ObjectMeta{Name: strings.Map(dnsLabelRune, strings.ToLower(name)), Namespace: ns},
				Spec:       v1alpha1.MetricTemplateSpec{Provider: tt.provider, Query: "q"},
			}, tt.wantErr)
		})
	}
}

// dnsLabelRune keeps the letters and digits of a test's name, and makes
// anything else a dash.
func dnsLabelRune(r rune) rune {
	if ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') {
		return r
	}
	return '-'
}

// expectAdmission creates obj and checks that the API server accepts it
// (wantErr empty), or rejects it with an error that contains wantErr.
func expectAdmission(t *testing.T, obj client.Object, wantErr string) {
	t.Helper()
	g := NewWithT(t)
	err := k8s.Create(context.Background(), obj)
	if wantErr == "" {
		g.Expect(err).NotTo(HaveOccurred())
		return
	}
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring(wantErr))
}

func metaDuration(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

// percentages returns 1, 2, …, n.
func percentages(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

func withService(c *v1alpha1.Canary, edit func(*v1alpha1.CanaryService)) *v1alpha1.Canary {
	edit(&c.Spec.Service)
	return c
}

func withWebhook(c *v1alpha1.Canary, hook v1alpha1.CanaryWebhook) *v1alpha1.Canary {
	c.Spec.Analysis = &v1alpha1.CanaryAnalysis{Webhooks: []v1alpha1.CanaryWebhook{hook}}
	return c
}

// withoutRouting is the Canary as YAML without spec.routing would send it:
// a typed client always sends the routing struct.
func withoutRouting(t *testing.T, c *v1alpha1.Canary) *unstructured.Unstructured {
	t.Helper()
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	unstructured.RemoveNestedField(u.Object, "spec", "routing")
	unstructured.RemoveNestedField(u.Object, "status")
	return u
}

// spec.targetRef and spec.service.name cannot change once a Canary exists:
// the API server refuses the edit, with a message saying what to do,
// before the Canary could act on a second target with the first one's
// objects. Other edits go through.
func TestValidation_TargetIsImmutable(t *testing.T) {
	ns := newNamespace(t)
	g := NewWithT(t)
	ctx := context.Background()

	created := testobj.MakeCanary("podinfo", ns).Obj()
	g.Expect(k8s.Create(ctx, created)).To(Succeed())
	// The agent of the suite writes the Canary too: an edit retries on
	// a conflict, as kubectl edit would.
	edit := func(mutate func(*v1alpha1.Canary)) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			got := &v1alpha1.Canary{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(created), got)).To(Succeed())
			mutate(got)
			return k8s.Update(ctx, got)
		})
	}
	tests := map[string]struct {
		mutate  func(*v1alpha1.Canary)
		wantErr string
	}{
		"targetRef.name": {
			mutate:  func(c *v1alpha1.Canary) { c.Spec.TargetRef.Name = "podinfo-primary" },
			wantErr: "spec.targetRef cannot change: the Canary owns the primary, Services and routes it generated for its target; delete this Canary",
		},
		"targetRef.kind": {
			mutate:  func(c *v1alpha1.Canary) { c.Spec.TargetRef.Kind = "DaemonSet" },
			wantErr: "spec.targetRef cannot change",
		},
		"service.name": {
			mutate:  func(c *v1alpha1.Canary) { c.Spec.Service.Name = "web" },
			wantErr: "spec.service.name cannot change: it names the apex Service and HTTPRoute users reach",
		},
		"service.name spelled out as the default it had": {
			mutate: func(c *v1alpha1.Canary) { c.Spec.Service.Name = "podinfo" },
		},
		"anything else": {
			mutate: func(c *v1alpha1.Canary) { c.Spec.ProgressDeadlineSeconds = ptr.To(int32(120)) },
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			err := edit(tt.mutate)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("update refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("update: %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

// manyEntries is a map of n entries whose keys are keyLen characters long
// and values valueLen.
func manyEntries(n, keyLen, valueLen int) map[string]string {
	m := make(map[string]string, n)
	for i := range n {
		k := fmt.Sprintf("k%02d", i)
		m[k+strings.Repeat("k", keyLen-len(k))] = strings.Repeat("v", valueLen)
	}
	return m
}

// withMetric gives c a MetricTemplate check with templateVariables vars.
func withMetric(c *v1alpha1.Canary, vars map[string]string) *v1alpha1.Canary {
	c.Spec.Analysis = &v1alpha1.CanaryAnalysis{Iterations: 1, Metrics: []v1alpha1.CanaryMetric{{
		Name: "errors", TemplateRef: &v1alpha1.TemplateReference{Name: "errors"}, TemplateVariables: vars,
	}}}
	return c
}

// A wave's stages are checked by the API server: a stage named twice, a
// path that leaves the repository, a soak over a day and a stage name
// that is no DNS label are refused with what to fix; a valid wave is
// accepted.
func TestValidation_WaveStages(t *testing.T) {
	ns := newNamespace(t)
	floor := 99.0
	thresholded := v1alpha1.CanaryMetric{Name: v1alpha1.RequestSuccessRateCheck, ThresholdRange: &v1alpha1.ThresholdRange{Min: &floor}}
	wave := func(name string, stages ...v1alpha1.PromotionTarget) *v1alpha1.Canary {
		c := testobj.MakeCanary(name, ns).Analysis(v1alpha1.CanaryAnalysis{Iterations: 5, Metrics: []v1alpha1.CanaryMetric{thresholded}}).Obj()
		c.Spec.GitOps = &v1alpha1.GitOpsSpec{Promote: stages}
		return c
	}
	stage := func(mutate func(*v1alpha1.PromotionTarget)) v1alpha1.PromotionTarget {
		p := v1alpha1.PromotionTarget{Stage: "production", Path: "./production"}
		mutate(&p)
		return p
	}
	prod := v1alpha1.PromotionTarget{Stage: "production", Path: "./production", Soak: &metav1.Duration{Duration: time.Hour},
		Canary: &v1alpha1.PromotionCanaryReference{Name: "podinfo", Namespace: "production"}}
	tests := map[string]struct {
		canary  *v1alpha1.Canary
		wantErr string
	}{
		"valid": {canary: wave("w-ok", prod, v1alpha1.PromotionTarget{Stage: "dr", Path: "clusters/dr/apps", Mode: v1alpha1.PushRevert})},
		"a stage twice": {
			canary:  wave("w-dup", prod, prod),
			wantErr: "Duplicate value",
		},
		"a path out of the repository": {
			canary:  wave("w-dots", v1alpha1.PromotionTarget{Stage: "production", Path: "./apps/../../etc"}),
			wantErr: "promote[].path must stay inside the repository",
		},
		"a soak over a day": {
			canary:  wave("w-soak", v1alpha1.PromotionTarget{Stage: "production", Path: "./production", Soak: &metav1.Duration{Duration: 25 * time.Hour}}),
			wantErr: "promote[].soak must be at most 24h",
		},
		"a stage that is no DNS label": {
			canary:  wave("w-name", v1alpha1.PromotionTarget{Stage: "Production!", Path: "./production"}),
			wantErr: "spec.gitops.promote[0].stage",
		},
		"an unknown mode": {
			canary:  wave("w-mode", v1alpha1.PromotionTarget{Stage: "production", Path: "./production", Mode: "Merge"}),
			wantErr: `Unsupported value: "Merge"`,
		},
		"a path into .git": {
			canary:  wave("w-git", stage(func(p *v1alpha1.PromotionTarget) { p.Path = "./.git/hooks" })),
			wantErr: "promote[].path must not name a '.git' segment",
		},
		"a path into .git, deeper": {
			canary:  wave("w-git2", stage(func(p *v1alpha1.PromotionTarget) { p.Path = "a/.git/b" })),
			wantErr: "promote[].path must not name a '.git' segment",
		},
		"an absolute path": {
			canary:  wave("w-abs", stage(func(p *v1alpha1.PromotionTarget) { p.Path = "/etc" })),
			wantErr: "promote[].path is relative to the repository's root",
		},
		"a branch with '..' and spaces": {
			canary:  wave("w-branch", stage(func(p *v1alpha1.PromotionTarget) { p.Branch = "main..refs/heads/x; rm -rf /" })),
			wantErr: "promote[].branch must be a Git branch name",
		},
		"a branch ending with .lock": {
			canary:  wave("w-lock", stage(func(p *v1alpha1.PromotionTarget) { p.Branch = "release/v1.lock" })),
			wantErr: "promote[].branch must be a Git branch name",
		},
		"a valid branch": {canary: wave("w-branch-ok", stage(func(p *v1alpha1.PromotionTarget) { p.Branch = "release/v1.2" }))},
		// A stage whose Canary is this Canary is not refused at admission:
		// a rule on the whole object would run again on every status patch
		// of a Canary stored before it. The agent stalls on it
		// (rollout.InvalidPromotion, TestInvalidPromotion).
		"a stage whose Canary is this Canary, stalled by the agent": {
			canary: wave("w-self", stage(func(p *v1alpha1.PromotionTarget) {
				p.Canary = &v1alpha1.PromotionCanaryReference{Name: "w-self"}
			})),
		},
		"a Canary of the same name in another cluster": {
			canary: wave("w-other-cluster", stage(func(p *v1alpha1.PromotionTarget) {
				p.Canary = &v1alpha1.PromotionCanaryReference{Name: "w-other-cluster", Cluster: "prod-eu"}
			})),
		},
		"a soak whose metrics cannot fail": {
			canary: func() *v1alpha1.Canary {
				c := wave("w-soak-free", stage(func(p *v1alpha1.PromotionTarget) { p.Soak = &metav1.Duration{Duration: time.Hour} }))
				c.Spec.Analysis.Metrics = []v1alpha1.CanaryMetric{{Name: v1alpha1.RequestDurationCheck}}
				return c
			}(),
			wantErr: "gitops.promote[].soak holds the promoted primary to the thresholdRange of analysis.metrics",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) { expectAdmission(t, tt.canary, tt.wantErr) })
	}
}
