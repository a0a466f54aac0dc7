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

package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GetConditions returns the status conditions of the Canary, so that the
// helpers of github.com/fluxcd/pkg/runtime/conditions work on it.
func (in *Canary) GetConditions() []metav1.Condition {
	return in.Status.Conditions
}

// SetConditions sets the status conditions of the Canary.
func (in *Canary) SetConditions(conditions []metav1.Condition) {
	in.Status.Conditions = conditions
}

// GetProgressDeadline returns how long a Deployment may take to become ready.
func (in *Canary) GetProgressDeadline() time.Duration {
	if in.Spec.ProgressDeadlineSeconds != nil {
		return time.Duration(*in.Spec.ProgressDeadlineSeconds) * time.Second
	}
	return DefaultProgressDeadlineSeconds * time.Second
}

// GetAnalysisInterval returns the interval between two analysis steps.
func (in *Canary) GetAnalysisInterval() time.Duration {
	if a := in.Spec.Analysis; a != nil && a.Interval != nil && a.Interval.Duration > 0 {
		return a.Interval.Duration
	}
	return DefaultAnalysisInterval
}

// GetThreshold returns the number of failed checks that fail a rollout.
func (in *Canary) GetThreshold() int {
	if a := in.Spec.Analysis; a != nil && a.Threshold > 0 {
		return a.Threshold
	}
	return DefaultThreshold
}

// GetPrimaryReadyThreshold returns the percentage of the primary's updated
// replicas that must be available for it to count as ready.
func (in *Canary) GetPrimaryReadyThreshold() int {
	if a := in.Spec.Analysis; a != nil && a.PrimaryReadyThreshold != nil {
		return *a.PrimaryReadyThreshold
	}
	return DefaultReadyThreshold
}

// GetCanaryReadyThreshold returns the percentage of the canary's updated
// replicas that must be available for it to count as ready.
func (in *Canary) GetCanaryReadyThreshold() int {
	if a := in.Spec.Analysis; a != nil && a.CanaryReadyThreshold != nil {
		return *a.CanaryReadyThreshold
	}
	return DefaultReadyThreshold
}

// GetMaxWeight returns the canary weight at which the analysis ends.
func (in *Canary) GetMaxWeight() int {
	a := in.Spec.Analysis
	switch {
	case a != nil && len(a.StepWeights) > 0:
		return a.StepWeights[len(a.StepWeights)-1]
	case a != nil && a.MaxWeight > 0:
		return a.MaxWeight
	}
	return DefaultMaxWeight
}

// GetStepWeights returns the canary weights of the analysis steps in order,
// ending at the max weight.
func (in *Canary) GetStepWeights() []int {
	a := in.Spec.Analysis
	if a != nil && len(a.StepWeights) > 0 {
		return append([]int(nil), a.StepWeights...)
	}
	step := DefaultStepWeight
	if a != nil && a.StepWeight > 0 {
		step = a.StepWeight
	}
	max := in.GetMaxWeight()
	var weights []int
	for w := step; w < max; w += step {
		weights = append(weights, w)
	}
	return append(weights, max)
}

// GetIterations returns the number of analysis steps of blue/green and of
// an A/B test.
func (in *Canary) GetIterations() int {
	if a := in.Spec.Analysis; a != nil {
		return a.Iterations
	}
	return 0
}

// IsBlueGreen reports whether the analysis is blue/green: the primary
// serves every request until the promotion, which moves them all at once;
// with kubernetes routing always, with gatewayapi when analysis.iterations
// is set without analysis.match (an A/B test).
func (in *Canary) IsBlueGreen() bool {
	if in.GetRoutingProvider() == KubernetesRouting {
		return true
	}
	return in.GetIterations() > 0 && !in.IsABTest()
}

// IsMirrored reports whether a blue/green analysis on gatewayapi mirrors
// the primary's requests to the canary (analysis.mirror).
func (in *Canary) IsMirrored() bool {
	return in.Spec.Analysis != nil && in.Spec.Analysis.Mirror && in.GetRoutingProvider() == GatewayAPIRouting && in.IsBlueGreen()
}

// IsABTest reports whether the analysis is an A/B test (analysis.match):
// the matched requests go to the canary, every other to the primary.
func (in *Canary) IsABTest() bool {
	return in.Spec.Analysis != nil && len(in.Spec.Analysis.Match) > 0
}

// GetFailurePolicy returns the policy for a failed promotion.
func (in *Canary) GetFailurePolicy() FailurePolicy {
	if p := in.Spec.Promotion; p != nil && p.FailurePolicy != "" {
		return p.FailurePolicy
	}
	return HaltPolicy
}

// GetRoutingProvider returns the traffic router.
func (in *Canary) GetRoutingProvider() RoutingProvider {
	if in.Spec.Routing.Provider != "" {
		return in.Spec.Routing.Provider
	}
	return KubernetesRouting
}

// GetServiceName returns the name of the apex Service.
func (in *Canary) GetServiceName() string {
	if in.Spec.Service.Name != "" {
		return in.Spec.Service.Name
	}
	return in.Spec.TargetRef.Name
}

// GetPrimaryName returns the name of the primary Deployment and Service.
func (in *Canary) GetPrimaryName() string {
	return in.Spec.TargetRef.Name + PrimarySuffix
}

// GetPrimaryServiceName returns the name of the Service selecting the primary.
func (in *Canary) GetPrimaryServiceName() string {
	return in.GetServiceName() + PrimarySuffix
}

// GetCanaryServiceName returns the name of the Service selecting the canary.
func (in *Canary) GetCanaryServiceName() string {
	return in.GetServiceName() + CanarySuffix
}

// WantsBaseline reports whether the analysis runs a baseline Deployment
// for the judge (analysis.judge.baseline).
func (in *Canary) WantsBaseline() bool {
	a := in.Spec.Analysis
	return a != nil && a.Judge != nil && a.Judge.Baseline
}

// GetBaselineName returns the name of the baseline Deployment.
func (in *Canary) GetBaselineName() string {
	return in.Spec.TargetRef.Name + BaselineSuffix
}

// GetBaselineServiceName returns the name of the Service selecting the
// baseline.
func (in *Canary) GetBaselineServiceName() string {
	return in.GetServiceName() + BaselineSuffix
}

// GetPortName returns the name of the Services' port.
func (in *Canary) GetPortName() string {
	if in.Spec.Service.PortName != "" {
		return in.Spec.Service.PortName
	}
	return "http"
}

// GetRevertTriggers returns the phases that trigger a GitOps revert, or
// nil when revert is not configured.
func (in *Canary) GetRevertTriggers() []RevertTrigger {
	g := in.Spec.GitOps
	if g == nil || g.Revert == nil {
		return nil
	}
	if len(g.Revert.On) == 0 {
		return []RevertTrigger{RevertTrigger(PhaseHalted)}
	}
	return g.Revert.On
}

// IsBuiltin reports whether the metric is one of the built-in checks
// (request-success-rate, request-duration, grpc-success-rate): named so,
// without templateRef.
func (in *CanaryMetric) IsBuiltin() bool {
	return in.TemplateRef == nil && (in.Name == RequestSuccessRateCheck || in.Name == RequestDurationCheck || in.Name == GRPCSuccessRateCheck)
}

// IsPodCheck reports whether the metric is the built-in pod-restarts,
// read from the API server rather than a metrics provider: named so,
// without templateRef.
func (in *CanaryMetric) IsPodCheck() bool {
	return in.TemplateRef == nil && in.Name == PodRestartsCheck
}

// RoutesByReplicas reports whether the canary's weight is its share of the
// target's replicas (routing.provider replicas): no Service, no route.
func (in *Canary) RoutesByReplicas() bool {
	return in.GetRoutingProvider() == ReplicasRouting
}

// IsSuccessRate reports whether the metric is a built-in success rate,
// whose requests the judge counts: request-success-rate or
// grpc-success-rate.
func (in *CanaryMetric) IsSuccessRate() bool {
	return in.IsBuiltin() && (in.Name == RequestSuccessRateCheck || in.Name == GRPCSuccessRateCheck)
}

// GetPromote returns the stages of the wave, or none without spec.gitops.
func (in *GitOpsSpec) GetPromote() []PromotionTarget {
	if in == nil {
		return nil
	}
	return in.Promote
}
