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
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestGetStepWeights(t *testing.T) {
	tests := map[string]struct {
		analysis *CanaryAnalysis
		want     []int
	}{
		"defaults: 10 up to 50":            {want: []int{10, 20, 30, 40, 50}},
		"step 20 up to 50 ends at max":     {analysis: &CanaryAnalysis{StepWeight: 20, MaxWeight: 50}, want: []int{20, 40, 50}},
		"step 25 up to 100":                {analysis: &CanaryAnalysis{StepWeight: 25, MaxWeight: 100}, want: []int{25, 50, 75, 100}},
		"explicit steps":                   {analysis: &CanaryAnalysis{StepWeights: []int{1, 5, 25, 80}}, want: []int{1, 5, 25, 80}},
		"step larger than max goes to max": {analysis: &CanaryAnalysis{StepWeight: 60, MaxWeight: 50}, want: []int{50}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := &Canary{Spec: CanarySpec{Analysis: tt.analysis}}
			if got := c.GetStepWeights(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("GetStepWeights() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestGetters_Defaults(t *testing.T) {
	c := &Canary{Spec: CanarySpec{TargetRef: TargetReference{Name: "podinfo"}}}
	if got := c.GetAnalysisInterval(); got != time.Minute {
		t.Errorf("interval = %s, want 1m", got)
	}
	if got := c.GetThreshold(); got != 5 {
		t.Errorf("threshold = %d, want 5", got)
	}
	if got := c.GetProgressDeadline(); got != 10*time.Minute {
		t.Errorf("progress deadline = %s, want 10m", got)
	}
	if got := c.GetFailurePolicy(); got != HaltPolicy {
		t.Errorf("failure policy = %s, want Halt", got)
	}
	if got := c.GetRevertTriggers(); got != nil {
		t.Errorf("revert triggers = %v, want none without spec.gitops", got)
	}
	c.Spec.GitOps = &GitOpsSpec{Revert: &RevertSpec{}}
	if got := c.GetRevertTriggers(); !reflect.DeepEqual(got, []RevertTrigger{"Halted"}) {
		t.Errorf("revert triggers = %v, want [Halted]", got)
	}
	if c.GetPrimaryName() != "podinfo-primary" || c.GetCanaryServiceName() != "podinfo-canary" || c.GetServiceName() != "podinfo" {
		t.Error("generated names do not follow Flagger's")
	}
	if p, c := c.GetPrimaryReadyThreshold(), c.GetCanaryReadyThreshold(); p != 100 || c != 100 {
		t.Errorf("ready thresholds = %d (primary), %d (canary), want 100 without spec.analysis", p, c)
	}
	c.Spec.Analysis = &CanaryAnalysis{Interval: &metav1.Duration{Duration: 10 * time.Second}}
	if got := c.GetAnalysisInterval(); got != 10*time.Second {
		t.Errorf("interval = %s, want 10s", got)
	}
	if p, c := c.GetPrimaryReadyThreshold(), c.GetCanaryReadyThreshold(); p != 100 || c != 100 {
		t.Errorf("ready thresholds = %d (primary), %d (canary), want 100 when unset", p, c)
	}
	primary, canary := 50, 1
	c.Spec.Analysis.PrimaryReadyThreshold, c.Spec.Analysis.CanaryReadyThreshold = &primary, &canary
	if p, c := c.GetPrimaryReadyThreshold(), c.GetCanaryReadyThreshold(); p != 50 || c != 1 {
		t.Errorf("ready thresholds = %d (primary), %d (canary), want 50 and 1 as set", p, c)
	}
}

func TestCanaryMetric_IsBuiltin(t *testing.T) {
	tests := map[string]struct {
		metric CanaryMetric
		want   bool
	}{
		"success rate":              {metric: CanaryMetric{Name: "request-success-rate"}, want: true},
		"duration":                  {metric: CanaryMetric{Name: "request-duration"}, want: true},
		"built-in name, a template": {metric: CanaryMetric{Name: "request-duration", TemplateRef: &TemplateReference{Name: "latency"}}},
		"other name":                {metric: CanaryMetric{Name: "error-rate", TemplateRef: &TemplateReference{Name: "errors"}}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tt.metric.IsBuiltin(); got != tt.want {
				t.Errorf("IsBuiltin() = %v, want %v", got, tt.want)
			}
		})
	}
}
