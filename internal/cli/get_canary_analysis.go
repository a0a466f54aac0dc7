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

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/record"
)

// writeAnalysis shows the analysis record (status.analyses): the newest
// rollout's steps as a table, a column per metric check with its value
// (marked ✗ out of range), the webhooks that did not pass, and how it
// ended; then a line per older rollout. It outlives the events, which the
// API server drops after an hour.
func (d canaryDescription) writeAnalysis(w io.Writer) {
	records := d.canary.Status.Analyses
	if len(records) == 0 {
		fmt.Fprintf(w, "\nAnalysis:\t<none>\n")
		return
	}
	rec := records[0]
	fmt.Fprintf(w, "\nAnalysis:\n")
	fmt.Fprintf(w, "  Revision:\t%s\n", describeRecordRevision(rec))
	fmt.Fprintf(w, "  Result:\t%s\n", d.describeRecordResult(rec))
	if s := record.Decisive(&rec); s != nil && s.Verdict != v1alpha1.VerdictPassed {
		label := "Decided by"
		if rec.FinishedAt == nil {
			label = "Last failure"
		}
		fmt.Fprintf(w, "  %s:\t%s\n", label, strings.Join(record.Lines(s), "; "))
	}
	for _, old := range records[1:] {
		fmt.Fprintf(w, "  Earlier:\t%s: %s\n", describeRecordRevision(old), d.describeRecordResult(old))
	}
	if len(rec.Steps) > 0 {
		d.writeSteps(w, rec)
	}
}

// writeSteps writes a record's steps, a row each.
func (d canaryDescription) writeSteps(w io.Writer, rec v1alpha1.AnalysisRecord) {
	checks := checkColumns(rec)
	header := []string{"    STEP", "AGE", "WEIGHT", "VERDICT"}
	for _, c := range checks {
		header = append(header, strings.ToUpper(c.name)+rangeSuffix(c.rangeText))
	}
	header = append(header, "WEBHOOKS")
	// A line without a cell, so that the table's columns are its own.
	if rec.OmittedSteps > 0 {
		fmt.Fprintf(w, "  Steps (the first %d not kept):\n", rec.OmittedSteps)
	} else {
		fmt.Fprintf(w, "  Steps:\n")
	}
	fmt.Fprintln(w, strings.Join(header, "\t"))
	for i, s := range rec.Steps {
		row := []string{fmt.Sprintf("    %d", rec.OmittedSteps+i+1), d.age(s.At.Time), fmt.Sprintf("%d%%", s.Weight), s.Verdict}
		for _, c := range checks {
			row = append(row, stepValue(s, c.name))
		}
		row = append(row, stepWebhooks(s))
		fmt.Fprintln(w, strings.Join(row, "\t"))
	}
}

// checkColumn is a metric check of a record, with the range it last had.
type checkColumn struct{ name, rangeText string }

// checkColumns lists the checks of a record's steps in the order they
// first appear.
func checkColumns(rec v1alpha1.AnalysisRecord) []checkColumn {
	var cols []checkColumn
	for _, s := range rec.Steps {
		for _, c := range s.Checks {
			i := slices.IndexFunc(cols, func(col checkColumn) bool { return col.name == c.Name })
			if i < 0 {
				cols = append(cols, checkColumn{name: c.Name})
				i = len(cols) - 1
			}
			cols[i].rangeText = record.Range(c)
		}
	}
	return cols
}

func rangeSuffix(r string) string {
	if r == "" {
		return ""
	}
	return " (" + r + ")"
}

// stepValue is a check's value in a step: "99.5", "42.5 ✗" out of range,
// "✗ no value", or "-" when the step did not run it.
func stepValue(s v1alpha1.AnalysisStep, name string) string {
	i := slices.IndexFunc(s.Checks, func(c v1alpha1.CheckResult) bool { return c.Name == name })
	if i < 0 {
		return "-"
	}
	c := s.Checks[i]
	value := record.Display(c.Value)
	if value == "" {
		value = "no value"
	}
	if c.Verdict != v1alpha1.VerdictPassed {
		return value + " ✗"
	}
	return value
}

// stepWebhooks names the webhooks of a step that did not pass, with their
// verdict; "all passed" or "-".
func stepWebhooks(s v1alpha1.AnalysisStep) string {
	if len(s.Webhooks) == 0 {
		return "-"
	}
	var out []string
	for _, h := range s.Webhooks {
		if h.Verdict != v1alpha1.VerdictPassed {
			out = append(out, h.Name+" "+h.Verdict)
		}
	}
	if len(out) == 0 {
		return fmt.Sprintf("%d passed", len(s.Webhooks))
	}
	return strings.Join(out, ", ")
}

func describeRecordRevision(rec v1alpha1.AnalysisRecord) string {
	if rec.Revision == "" {
		return "spec " + rec.Spec
	}
	return rec.Revision
}

// describeRecordResult is how a rollout ended and why, or that it runs.
func (d canaryDescription) describeRecordResult(rec v1alpha1.AnalysisRecord) string {
	if rec.FinishedAt == nil {
		return fmt.Sprintf("analysing since %s ago, %d steps", d.age(rec.StartedAt.Time), len(rec.Steps)+rec.OmittedSteps)
	}
	return joinNonEmpty(": ", fmt.Sprintf("%s %s ago after %d steps", d.colors.phase(rec.Result), d.age(rec.FinishedAt.Time), len(rec.Steps)+rec.OmittedSteps), rec.Message)
}
