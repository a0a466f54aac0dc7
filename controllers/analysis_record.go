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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serin-dev/serin/analysis"
	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/record"
)

// recordStep records an analysis step in status.analyses, written with the
// step's status patch, and its check values on /metrics
// (serin_canary_metric_value): the weight the canary served, each check's
// value against its range, each webhook's answer, and the verdict.
func (r *CanaryReconciler) recordStep(obj *v1alpha1.Canary, weight int, out analysis.Outcome, verdict, msg string) {
	s := stepOf(weight, out, verdict, msg)
	s.Iteration = iterationOf(obj, weight)
	record.AddStep(&obj.Status, s)
	r.metrics.setValues(obj, s.Checks)
}

// iterationOf is the number, from 1, of the iteration a step at weight is
// (status.iterations counts the iterations done), or 0 when the analysis
// moves weights: every step of blue/green is an iteration; in an A/B test,
// the steps once the matched requests reach the canary.
func iterationOf(obj *v1alpha1.Canary, weight int) int {
	if obj.IsBlueGreen() || (obj.IsABTest() && weight > 0) {
		return obj.Status.Iterations + 1
	}
	return 0
}

// stepOf is the record of an analysis step's outcome.
func stepOf(weight int, out analysis.Outcome, verdict, msg string) v1alpha1.AnalysisStep {
	s := v1alpha1.AnalysisStep{At: metav1.NewMicroTime(out.At), Weight: weight, Verdict: verdict, Message: msg}
	for _, m := range out.Metrics {
		c := v1alpha1.CheckResult{Name: m.Name, Verdict: v1alpha1.VerdictPassed}
		if m.HasValue {
			c.Value = record.FormatValue(m.Value)
		}
		if m.Min != nil {
			c.Min = record.FormatValue(*m.Min)
		}
		if m.Max != nil {
			c.Max = record.FormatValue(*m.Max)
		}
		if !m.Passed {
			c.Verdict, c.Message = v1alpha1.VerdictFailed, m.Message
		}
		s.Checks = append(s.Checks, c)
	}
	for _, h := range out.Hooks {
		s.Webhooks = append(s.Webhooks, webhookOf(h))
	}
	return s
}

// webhookOf is what a webhook's answer did to the step.
func webhookOf(h analysis.HookResult) v1alpha1.WebhookResult {
	w := v1alpha1.WebhookResult{Name: h.Name, Type: h.Type, Verdict: v1alpha1.VerdictPassed}
	switch {
	case h.Type == v1alpha1.RollbackHook && h.Err == nil:
		w.Verdict = v1alpha1.VerdictRollback
	case h.Type == v1alpha1.RollbackHook || h.Err == nil:
		// A rollback webhook's refusal is the rollout going on.
	case h.Type == v1alpha1.ConfirmTrafficIncreaseHook || h.Type == v1alpha1.ConfirmPromotionHook:
		w.Verdict, w.Message = v1alpha1.VerdictWaiting, h.Err.Error()
	default:
		w.Verdict, w.Message = v1alpha1.VerdictFailed, h.Err.Error()
	}
	return w
}
