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

package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/outbound"
)

// writeChecks lists the metrics and webhooks of the analysis.
func (d canaryDescription) writeChecks(w io.Writer) {
	analysis := d.canary.Spec.Analysis
	if analysis == nil || len(analysis.Metrics) == 0 {
		fmt.Fprintf(w, "\nMetrics:\t<none>\n")
	} else {
		fmt.Fprintf(w, "\nMetrics:\n")
		fmt.Fprintf(w, "  NAME\tTEMPLATE\tRANGE\tINTERVAL\n")
		for _, metric := range analysis.Metrics {
			interval := "analysis interval"
			if metric.Interval != nil {
				interval = metric.Interval.Duration.String()
			}
			fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", metric.Name, metricSource(metric, d.canary.Spec.Routing.DataPlane),
				describeRange(metric.ThresholdRange), interval)
		}
	}
	if analysis == nil || len(analysis.Webhooks) == 0 {
		fmt.Fprintf(w, "\nWebhooks:\t<none>\n")
		return
	}
	fmt.Fprintf(w, "\nWebhooks:\n")
	fmt.Fprintf(w, "  NAME\tTYPE\tURL\n")
	for _, hook := range analysis.Webhooks {
		hookType := hook.Type
		if hookType == "" {
			hookType = v1alpha1.RolloutHook
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\n", hook.Name, hookType, outbound.Redact(hook.URL))
	}
}

// metricSource names where a check's query comes from: its MetricTemplate,
// or the built-in check of the Canary's data plane (the agent's when empty).
func metricSource(metric v1alpha1.CanaryMetric, dataPlane v1alpha1.DataPlane) string {
	ref := metric.TemplateRef
	switch {
	case ref == nil && dataPlane != "":
		return "built-in (" + string(dataPlane) + ")"
	case ref == nil:
		return "built-in"
	case ref.Namespace == "":
		return ref.Name
	}
	return ref.Namespace + "/" + ref.Name
}

func describeRange(r *v1alpha1.ThresholdRange) string {
	if r == nil {
		return "<any>"
	}
	var bounds []string
	if r.Min != nil {
		bounds = append(bounds, fmt.Sprintf("min %g", *r.Min))
	}
	if r.Max != nil {
		bounds = append(bounds, fmt.Sprintf("max %g", *r.Max))
	}
	return strings.Join(bounds, ", ")
}

// writeRevert shows the GitOps revert of the last bad revision.
func (d canaryDescription) writeRevert(w io.Writer) {
	revert := d.canary.Status.Revert
	if revert == nil {
		fmt.Fprintf(w, "\nRevert:\t%s\n", d.revertConfiguration())
		return
	}
	fmt.Fprintf(w, "\nRevert:\n")
	fmt.Fprintf(w, "  State:\t%s\n", orNone(revert.State))
	fmt.Fprintf(w, "  Revision:\t%s\n", orNone(revert.Revision))
	fmt.Fprintf(w, "  Branch:\t%s\n", orNone(revert.Branch))
	fmt.Fprintf(w, "  Commit:\t%s\n", orNone(revert.Commit))
	fmt.Fprintf(w, "  Pull request:\t%s\n", orNone(revert.PullRequestURL))
	if revert.Message != "" {
		fmt.Fprintf(w, "  Message:\t%s\n", revert.Message)
	}
}

func (d canaryDescription) revertConfiguration() string {
	triggers := d.canary.GetRevertTriggers()
	if triggers == nil {
		return "<none> (spec.gitops.revert is not set)"
	}
	on := make([]string, len(triggers))
	for i, trigger := range triggers {
		on[i] = string(trigger)
	}
	mode := d.canary.Spec.GitOps.Revert.Mode
	if mode == "" {
		mode = v1alpha1.PullRequestRevert
	}
	return fmt.Sprintf("<none> (a %s revert opens when %s)", mode, strings.Join(on, " or "))
}

// writeWave shows where the promoted revision stands in each next stage
// of the wave (status.promotions), in the order of spec.gitops.promote, a
// line for the stage and its phase and the stage's details below: a stage
// the agent has not started yet says so, and a stage the spec no longer
// lists comes last.
func (d canaryDescription) writeWave(w io.Writer) {
	stages := stageNames(d.canary)
	if len(stages) == 0 && len(d.canary.Status.Promotions) == 0 {
		fmt.Fprintf(w, "\nWave:\t<none> (spec.gitops.promote is not set)\n")
		return
	}
	for _, p := range d.canary.Status.Promotions {
		if !slices.Contains(stages, p.Stage) {
			stages = append(stages, p.Stage)
		}
	}
	fmt.Fprintf(w, "\nWave:\n")
	for _, stage := range stages {
		p := promotionOf(d.canary, stage)
		if p == nil {
			fmt.Fprintf(w, "  %s:\t<none> (waits for the next promoted revision)\n", stage)
			continue
		}
		d.writeStage(w, p)
	}
}

// writeStage shows one stage of the wave: its phase (with the end of the
// soak), the revision, what was written to Git and the stage's verdict,
// the message, and the failed attempts while they are retried.
func (d canaryDescription) writeStage(w io.Writer, p *v1alpha1.PromotionStatus) {
	phase := orNone(d.colors.wavePhase(p.Phase))
	if t := p.LastTransitionTime; t != nil {
		phase += fmt.Sprintf(" (%s ago)", d.age(t.Time))
	}
	fmt.Fprintf(w, "  %s:\t%s\n", p.Stage, phase)
	if p.Phase == v1alpha1.WaveSoaking && p.SoakUntil != nil {
		fmt.Fprintf(w, "    Soak until:\t%s\n", d.when(p.SoakUntil.Time))
	}
	fmt.Fprintf(w, "    Revision:\t%s\n", orNone(shortenHashes(p.Revision)))
	if p.PullRequestURL != "" {
		fmt.Fprintf(w, "    Pull request:\t%s\n", p.PullRequestURL)
	}
	if p.Commit != "" {
		fmt.Fprintf(w, "    Commit:\t%s\n", joinNonEmpty(" on ", shortCommit(p.Commit), p.Branch))
	}
	if p.StageCommit != "" {
		fmt.Fprintf(w, "    Stage commit:\t%s\n", shortCommit(p.StageCommit))
	}
	if p.URL != "" {
		fmt.Fprintf(w, "    Link:\t%s\n", p.URL)
	}
	if p.Message != "" {
		fmt.Fprintf(w, "    Message:\t%s\n", shortenHashes(p.Message))
	}
	if p.Attempts > 0 {
		attempts := fmt.Sprintf("%d failed", p.Attempts)
		if p.NextAttemptTime != nil {
			attempts += ", next " + d.when(p.NextAttemptTime.Time)
		}
		fmt.Fprintf(w, "    Attempts:\t%s\n", attempts)
	}
}

// when is a time to come, or just past, as "in 5m (2026-05-04T10:05:00Z)".
func (d canaryDescription) when(t time.Time) string {
	at := t.UTC().Format(time.RFC3339)
	if t.After(d.now) {
		return fmt.Sprintf("in %s (%s)", duration.HumanDuration(t.Sub(d.now)), at)
	}
	return fmt.Sprintf("%s ago (%s)", d.age(t), at)
}

// shortCommit is a commit's hash cut to its first 8 characters.
func shortCommit(commit string) string {
	if len(commit) > 8 {
		return commit[:8]
	}
	return commit
}

func (d canaryDescription) writeConditions(w io.Writer) {
	writeConditions(w, d.canary.Status.Conditions, d.now)
}

func (d canaryDescription) writeEvents(w io.Writer) {
	writeEvents(w, d.events, d.eventsErr, d.now)
}

// writeConditions lists an object's conditions with their age at now.
func writeConditions(w io.Writer, conditions []metav1.Condition, now time.Time) {
	if len(conditions) == 0 {
		fmt.Fprintf(w, "\nConditions:\t<none>\n")
		return
	}
	fmt.Fprintf(w, "\nConditions:\n")
	fmt.Fprintf(w, "  TYPE\tSTATUS\tREASON\tAGE\tMESSAGE\n")
	for _, c := range conditions {
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\n", c.Type, c.Status, c.Reason, ageAt(now, c.LastTransitionTime.Time), c.Message)
	}
}

// writeEvents lists an object's latest Events, or why they could not be
// listed.
func writeEvents(w io.Writer, events []corev1.Event, eventsErr error, now time.Time) {
	switch {
	case eventsErr != nil:
		fmt.Fprintf(w, "\nEvents:\t<unavailable: %v>\n", eventsErr)
		return
	case len(events) == 0:
		fmt.Fprintf(w, "\nEvents:\t<none>\n")
		return
	}
	fmt.Fprintf(w, "\nEvents:\n")
	fmt.Fprintf(w, "  LAST SEEN\tTYPE\tREASON\tMESSAGE\n")
	for i := range events {
		event := &events[i]
		message := strings.TrimSpace(strings.ReplaceAll(event.Message, "\n", " "))
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", ageAt(now, eventLastSeen(event)), event.Type, event.Reason, message)
	}
}
