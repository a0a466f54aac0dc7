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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The bounds of the analysis record in a Canary's status: it is written
// with the step's status patch (one write per step) and cached by the
// agent for every Canary, so its size is capped whatever the rollout.
const (
	// MaxAnalysisRecords is how many rollouts the status keeps, newest first.
	MaxAnalysisRecords = 3
	// MaxAnalysisSteps is how many steps the newest record keeps: past it,
	// the oldest steps are dropped and counted in omittedSteps.
	MaxAnalysisSteps = 20
	// MaxPastAnalysisSteps is how many steps an older record keeps: its
	// last ones, which decided it.
	MaxPastAnalysisSteps = 3
	// MaxStepEntries is how many checks, and how many webhooks, a step
	// keeps: past it, those that passed are dropped first.
	MaxStepEntries = 16
	// MaxAnalysisMessage bounds each message in the record, in bytes.
	MaxAnalysisMessage = 160
	// MaxStepMessages bounds the messages of a step together, in bytes:
	// the step's first, then its checks' and webhooks' in order.
	MaxStepMessages = 512
)

// The verdict of an analysis step, a check or a webhook.
const (
	// VerdictPassed is a check in its range, a webhook that answered 2xx,
	// a step whose checks all passed.
	VerdictPassed = "Passed"
	// VerdictFailed is a check out of its range or that got no value, a
	// webhook that did not answer 2xx, a step that counted a failed check.
	VerdictFailed = "Failed"
	// VerdictWaiting is a step whose checks passed and whose gate
	// (confirm-traffic-increase, confirm-promotion) is closed.
	VerdictWaiting = "Waiting"
	// VerdictRollback is a step in which a rollback webhook answered 2xx.
	VerdictRollback = "Rollback"
)

// AnalysisRecord is the analysis of one rollout: the revision, each step
// with its weight, check values and webhook answers, and how it ended. It
// outlives the rollout's Kubernetes Events, which expire within an hour.
type AnalysisRecord struct {
	// Revision is the Flux source revision analysed (main@sha1:…), when a
	// Flux object applied it.
	// +optional
	Revision string `json:"revision,omitempty"`

	// Spec is the hash of the target spec analysed (status.lastAppliedSpec).
	Spec string `json:"spec"`

	// StartedAt is when the first step was recorded.
	StartedAt metav1.MicroTime `json:"startedAt"`

	// FinishedAt is when the rollout ended (Succeeded, Failed, Halted).
	// +optional
	FinishedAt *metav1.MicroTime `json:"finishedAt,omitempty"`

	// Result is the phase the rollout ended in; empty while it runs.
	// +optional
	Result CanaryPhase `json:"result,omitempty"`

	// Message is why it ended, as the Ready condition said.
	// +optional
	Message string `json:"message,omitempty"`

	// Steps are the analysis steps, oldest first; the oldest are dropped
	// past MaxAnalysisSteps (MaxPastAnalysisSteps once a newer rollout
	// began).
	// +optional
	// +kubebuilder:validation:MaxItems=20
	Steps []AnalysisStep `json:"steps,omitempty"`

	// OmittedSteps counts the steps dropped to keep the record bounded.
	// +optional
	OmittedSteps int `json:"omittedSteps,omitempty"`
}

// AnalysisStep is one analysis step: what the canary was judged on, and
// the verdict.
type AnalysisStep struct {
	// At is when the step began.
	At metav1.MicroTime `json:"at"`

	// Weight is the canary's traffic weight during the step.
	Weight int `json:"weight"`

	// Iteration is the step's number among the iterations (blue/green).
	// +optional
	Iteration int `json:"iteration,omitempty"`

	// Verdict is Passed, Failed, Waiting or Rollback.
	Verdict string `json:"verdict"`

	// Message explains a verdict other than Passed.
	// +optional
	Message string `json:"message,omitempty"`

	// Checks are the metric checks, in the Canary's order.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Checks []CheckResult `json:"checks,omitempty"`

	// Webhooks are the webhooks the step called, in the Canary's order.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Webhooks []WebhookResult `json:"webhooks,omitempty"`
}

// CheckResult is one metric check of a step.
type CheckResult struct {
	// Name of the check.
	Name string `json:"name"`

	// Value is the query's result (a decimal number); empty when the query
	// gave none.
	// +optional
	Value string `json:"value,omitempty"`

	// Min and Max are the check's thresholdRange.
	// +optional
	Min string `json:"min,omitempty"`
	// +optional
	Max string `json:"max,omitempty"`

	// Verdict is Passed or Failed.
	Verdict string `json:"verdict"`

	// Message explains a failure.
	// +optional
	Message string `json:"message,omitempty"`
}

// WebhookResult is the answer of one webhook of a step.
type WebhookResult struct {
	// Name of the webhook.
	Name string `json:"name"`

	// Type of the webhook (pre-rollout, rollout, rollback, confirm-…).
	Type HookType `json:"type"`

	// Verdict is what the answer did to the rollout: Passed (a 2xx, or a
	// rollback webhook's refusal), Failed (a check webhook that did not
	// answer 2xx), Rollback (a rollback webhook's 2xx) or Waiting (a gate
	// webhook that did not answer 2xx).
	Verdict string `json:"verdict"`

	// Message explains a failure.
	// +optional
	Message string `json:"message,omitempty"`
}
