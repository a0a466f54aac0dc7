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

// Package record keeps a Canary's analysis record (status.analyses): the
// steps of each rollout with their check values and webhook answers, and
// how the rollout ended, bounded in size. The agent writes it with each
// step's status patch; the CLI, the dashboard, the revert pull request and
// the alerts read it.
package record

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// Current returns the newest record when it is the rollout of the spec
// under analysis (status.lastAppliedSpec) and has not ended, else nil.
func Current(st *v1alpha1.CanaryStatus) *v1alpha1.AnalysisRecord {
	if len(st.Analyses) == 0 {
		return nil
	}
	rec := &st.Analyses[0]
	if rec.Spec != st.LastAppliedSpec || rec.FinishedAt != nil {
		return nil
	}
	return rec
}

// Latest returns the newest record, or nil.
func Latest(st *v1alpha1.CanaryStatus) *v1alpha1.AnalysisRecord {
	if len(st.Analyses) == 0 {
		return nil
	}
	return &st.Analyses[0]
}

// begin starts the record of the spec under analysis at, ending a newer
// record of another spec that never ended (a new revision replaced it),
// and trims the older records to their last steps.
func begin(st *v1alpha1.CanaryStatus, at time.Time) *v1alpha1.AnalysisRecord {
	if prev := Latest(st); prev != nil && prev.FinishedAt == nil {
		// It ended in the middle of its analysis.
		end(prev, v1alpha1.PhaseProgressing, at, "superseded by revision "+st.LastAppliedSpec)
	}
	rec := v1alpha1.AnalysisRecord{
		Revision:  st.LastAttemptedRevision,
		Spec:      st.LastAppliedSpec,
		StartedAt: metav1.NewMicroTime(at),
	}
	st.Analyses = append([]v1alpha1.AnalysisRecord{rec}, st.Analyses...)
	if len(st.Analyses) > v1alpha1.MaxAnalysisRecords {
		st.Analyses = st.Analyses[:v1alpha1.MaxAnalysisRecords]
	}
	for i := 1; i < len(st.Analyses); i++ {
		trim(&st.Analyses[i], v1alpha1.MaxPastAnalysisSteps)
	}
	return &st.Analyses[0]
}

// AddStep records a step of the rollout under analysis, beginning its
// record if needed. A step already recorded (same time) is not added
// again, so that a reconcile that reads the same outcome twice records it
// once.
func AddStep(st *v1alpha1.CanaryStatus, s v1alpha1.AnalysisStep) {
	rec := Current(st)
	if rec == nil {
		rec = begin(st, s.At.Time)
	}
	if n := len(rec.Steps); n > 0 && rec.Steps[n-1].At.Equal(&s.At) {
		return
	}
	var dropped int
	s.Checks, dropped = keep(s.Checks, func(c v1alpha1.CheckResult) bool { return c.Verdict == v1alpha1.VerdictPassed })
	omitted := dropped
	s.Webhooks, dropped = keep(s.Webhooks, func(w v1alpha1.WebhookResult) bool { return w.Verdict == v1alpha1.VerdictPassed })
	omitted += dropped
	if omitted > 0 {
		s.Message = strings.TrimPrefix(fmt.Sprintf("%s; %d checks or webhooks not recorded (%d of each at most, those that passed dropped first)",
			s.Message, omitted, v1alpha1.MaxStepEntries), "; ")
	}
	budget := v1alpha1.MaxStepMessages
	s.Message = spend(s.Message, &budget)
	for i := range s.Checks {
		s.Checks[i].Message = spend(s.Checks[i].Message, &budget)
	}
	for i := range s.Webhooks {
		s.Webhooks[i].Message = spend(s.Webhooks[i].Message, &budget)
	}
	rec.Steps = append(rec.Steps, s)
	trim(rec, v1alpha1.MaxAnalysisSteps)
}

// Finish records how the rollout of the spec under analysis ended: a
// record without steps when it ended before its first step (a canary that
// never became ready). A record that ended already (Halted, then promoted
// once the primary recovered) takes the later end.
func Finish(st *v1alpha1.CanaryStatus, phase v1alpha1.CanaryPhase, at time.Time, msg string) {
	rec := Latest(st)
	switch {
	case rec == nil || rec.Spec != st.LastAppliedSpec:
		rec = begin(st, at)
	case rec.Result == phase && rec.FinishedAt != nil:
		return // ended so already: the first end says when
	}
	end(rec, phase, at, msg)
}

func end(rec *v1alpha1.AnalysisRecord, phase v1alpha1.CanaryPhase, at time.Time, msg string) {
	t := metav1.NewMicroTime(at)
	rec.FinishedAt = &t
	rec.Result = phase
	rec.Message = Truncate(msg)
}

// keep bounds a step's entries to MaxStepEntries, in order: the last of
// those that passed go first, then, if failed entries alone are too many,
// the last of those; dropped counts them.
func keep[T any](entries []T, passed func(T) bool) (kept []T, dropped int) {
	dropped = len(entries) - v1alpha1.MaxStepEntries
	if dropped <= 0 {
		return entries, 0
	}
	drop := make([]bool, len(entries))
	n := dropped
	for _, onlyPassed := range []bool{true, false} {
		for i := len(entries) - 1; i >= 0 && n > 0; i-- {
			if !drop[i] && (!onlyPassed || passed(entries[i])) {
				drop[i], n = true, n-1
			}
		}
	}
	for i, e := range entries {
		if !drop[i] {
			kept = append(kept, e)
		}
	}
	return kept, dropped
}

// trim keeps the last n steps of a record, counting those dropped.
func trim(rec *v1alpha1.AnalysisRecord, n int) {
	if drop := len(rec.Steps) - n; drop > 0 {
		rec.Steps = append([]v1alpha1.AnalysisStep(nil), rec.Steps[drop:]...)
		rec.OmittedSteps += drop
	}
}

// Decisive returns the step that decided a record: its last step that did
// not pass, else its last step; nil without steps.
func Decisive(rec *v1alpha1.AnalysisRecord) *v1alpha1.AnalysisStep {
	if rec == nil || len(rec.Steps) == 0 {
		return nil
	}
	for i := len(rec.Steps) - 1; i >= 0; i-- {
		if rec.Steps[i].Verdict != v1alpha1.VerdictPassed {
			return &rec.Steps[i]
		}
	}
	return &rec.Steps[len(rec.Steps)-1]
}

// Lines describes a step's checks and webhooks, a line each, as
// "request-success-rate 42.5 (min 99): Failed".
func Lines(s *v1alpha1.AnalysisStep) []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, c := range s.Checks {
		out = append(out, CheckLine(c))
	}
	for _, h := range s.Webhooks {
		line := fmt.Sprintf("webhook %s (%s): %s", h.Name, h.Type, h.Verdict)
		if h.Message != "" {
			line += ": " + h.Message
		}
		out = append(out, line)
	}
	return out
}

// CheckLine describes one check: name, value, range and verdict.
func CheckLine(c v1alpha1.CheckResult) string {
	value := Display(c.Value)
	if value == "" {
		value = "no value"
	}
	line := fmt.Sprintf("%s %s", c.Name, value)
	if r := Range(c); r != "" {
		line += " (" + r + ")"
	}
	line += ": " + c.Verdict
	if c.Verdict != v1alpha1.VerdictPassed && c.Message != "" {
		line += ": " + c.Message
	}
	return line
}

// Range is a check's thresholdRange as "min 99", "max 500" or
// "min 1, max 5"; empty without one.
func Range(c v1alpha1.CheckResult) string {
	var parts []string
	if c.Min != "" {
		parts = append(parts, "min "+c.Min)
	}
	if c.Max != "" {
		parts = append(parts, "max "+c.Max)
	}
	return strings.Join(parts, ", ")
}

// Summary is the decisive step of a record in one line, for alerts:
// "at weight 20: request-success-rate 42.5 (min 99): Failed; …"; empty
// without steps.
func Summary(rec *v1alpha1.AnalysisRecord) string {
	s := Decisive(rec)
	if s == nil {
		return ""
	}
	lines := Lines(s)
	if len(lines) == 0 {
		return fmt.Sprintf("at weight %d: %s", s.Weight, s.Verdict)
	}
	return fmt.Sprintf("at weight %d: %s", s.Weight, strings.Join(lines, "; "))
}

// FormatValue writes a value as the record keeps it: the shortest decimal
// that reads back as the same float64.
func FormatValue(v float64) string {
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Display writes a value of the record for people: four significant
// digits below 1000 ("88.89", "0.001235"), whole numbers above; a value
// that is not a number is written as it is.
func Display(value string) string {
	v, ok := ParseValue(value)
	if !ok {
		return value
	}
	if a := math.Abs(v); a >= 1000 || a == 0 {
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	}
	// Rounded to 4 significant digits, written without an exponent.
	rounded, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	return strconv.FormatFloat(rounded, 'f', -1, 64)
}

// ParseValue reads a value of the record; ok is false for an empty or
// malformed one.
func ParseValue(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// spend truncates a message of a step to MaxAnalysisMessage and to what is
// left of the step's budget, and takes it from the budget; a message that
// would be cut to less than a few words is dropped.
func spend(msg string, budget *int) string {
	msg = Truncate(msg)
	if len(msg) > *budget {
		if *budget < 32 {
			return ""
		}
		msg = truncate(msg, *budget)
	}
	*budget -= len(msg)
	return msg
}

// Truncate bounds a message of the record to MaxAnalysisMessage bytes, cut
// on a rune boundary, with "…" when cut.
func Truncate(msg string) string {
	return truncate(msg, v1alpha1.MaxAnalysisMessage)
}

func truncate(msg string, n int) string {
	if len(msg) <= n {
		return msg
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "…"
}
