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

package record

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/serin-dev/serin/api/v1alpha1"
)

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func step(i, weight int, verdict string, checks ...v1alpha1.CheckResult) v1alpha1.AnalysisStep {
	return v1alpha1.AnalysisStep{At: metav1.NewMicroTime(t0.Add(time.Duration(i) * time.Second)), Weight: weight, Verdict: verdict, Checks: checks}
}

func analysing(spec string) *v1alpha1.CanaryStatus {
	return &v1alpha1.CanaryStatus{LastAppliedSpec: spec, LastAttemptedRevision: "main@sha1:" + spec}
}

// summary writes records as "spec result steps/omitted".
func summary(st *v1alpha1.CanaryStatus) []string {
	var out []string
	for _, r := range st.Analyses {
		out = append(out, fmt.Sprintf("%s %s %d/%d", r.Spec, r.Result, len(r.Steps), r.OmittedSteps))
	}
	return out
}

func TestAddStep_BeginsAndAppends(t *testing.T) {
	st := analysing("v2")
	AddStep(st, step(1, 10, v1alpha1.VerdictPassed))
	AddStep(st, step(2, 20, v1alpha1.VerdictFailed))
	rec := Current(st)
	if rec == nil || rec.Revision != "main@sha1:v2" || !rec.StartedAt.Time.Equal(t0.Add(time.Second)) || len(rec.Steps) != 2 {
		t.Fatalf("record %+v, want v2's with 2 steps from its first", rec)
	}
	// The same step read twice (a reconcile that failed after reading the
	// outcome) is recorded once.
	AddStep(st, step(2, 20, v1alpha1.VerdictFailed))
	if n := len(Current(st).Steps); n != 2 {
		t.Errorf("%d steps after the same step twice, want 2", n)
	}
}

func TestAddStep_BoundsTheNewestRecord(t *testing.T) {
	st := analysing("v2")
	for i := range 50 {
		AddStep(st, step(i, i, v1alpha1.VerdictPassed))
	}
	rec := Current(st)
	if len(rec.Steps) != v1alpha1.MaxAnalysisSteps || rec.OmittedSteps != 50-v1alpha1.MaxAnalysisSteps {
		t.Fatalf("%d steps, %d omitted; want %d and %d", len(rec.Steps), rec.OmittedSteps, v1alpha1.MaxAnalysisSteps, 50-v1alpha1.MaxAnalysisSteps)
	}
	if rec.Steps[len(rec.Steps)-1].Weight != 49 || rec.Steps[0].Weight != 50-v1alpha1.MaxAnalysisSteps {
		t.Errorf("kept weights %d…%d, want the newest", rec.Steps[0].Weight, rec.Steps[len(rec.Steps)-1].Weight)
	}
}

func TestRecords_OfSuccessiveRollouts(t *testing.T) {
	st := analysing("v2")
	for i := range 8 {
		AddStep(st, step(i, 10*i, v1alpha1.VerdictPassed))
	}
	Finish(st, v1alpha1.PhaseFailed, t0.Add(time.Minute), "rolled back")
	// Failed again (a reconcile repeating the transition): the first end stands.
	Finish(st, v1alpha1.PhaseFailed, t0.Add(2*time.Minute), "rolled back again")
	if rec := Latest(st); rec.Message != "rolled back" || !rec.FinishedAt.Time.Equal(t0.Add(time.Minute)) {
		t.Errorf("end %q at %s, want the first", rec.Message, rec.FinishedAt)
	}
	if Current(st) != nil {
		t.Error("an ended record is still current")
	}
	// A retry of the same revision begins a record of its own.
	AddStep(st, step(100, 10, v1alpha1.VerdictPassed))
	// A new revision in the middle of the analysis ends it as superseded.
	st.LastAppliedSpec, st.LastAttemptedRevision = "v3", "main@sha1:v3"
	AddStep(st, step(200, 10, v1alpha1.VerdictPassed))
	// v4 ends before its first step (its canary never became ready).
	st.LastAppliedSpec = "v4"
	Finish(st, v1alpha1.PhaseFailed, t0.Add(time.Hour), "canary not ready")

	want := []string{"v4 Failed 0/0", "v3 Progressing 1/0", "v2 Progressing 1/0"}
	if diff := cmp.Diff(want, summary(st)); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if msg := st.Analyses[1].Message; msg != "superseded by revision v4" {
		t.Errorf("v3 ended with %q", msg)
	}
	// Older records keep their last steps only.
	st2 := analysing("v2")
	for i := range 10 {
		AddStep(st2, step(i, i, v1alpha1.VerdictPassed))
	}
	st2.LastAppliedSpec = "v3"
	AddStep(st2, step(20, 0, v1alpha1.VerdictPassed))
	old := st2.Analyses[1]
	if len(old.Steps) != v1alpha1.MaxPastAnalysisSteps || old.OmittedSteps != 10-v1alpha1.MaxPastAnalysisSteps || old.Steps[len(old.Steps)-1].Weight != 9 {
		t.Errorf("older record kept %d steps (%d omitted), want its last %d", len(old.Steps), old.OmittedSteps, v1alpha1.MaxPastAnalysisSteps)
	}
}

func TestFinish_HaltedThenPromoted(t *testing.T) {
	st := analysing("v2")
	AddStep(st, step(1, 50, v1alpha1.VerdictPassed))
	Finish(st, v1alpha1.PhaseHalted, t0.Add(time.Minute), "halted")
	Finish(st, v1alpha1.PhaseSucceeded, t0.Add(2*time.Minute), "promoted")
	if diff := cmp.Diff([]string{"v2 Succeeded 1/0"}, summary(st)); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}

// The record's size is bounded whatever the rollouts: the worst case, every
// record full of steps of 40 checks and 40 webhooks (16 of each kept) with
// the longest messages, stays under the bound the docs state (100 KiB),
// and a typical one (2 checks, a webhook, 10 steps) under 4 KiB.
func TestRecords_SizeIsBounded(t *testing.T) {
	long := strings.Repeat("é", 1000)
	full := func(i int) v1alpha1.AnalysisStep {
		s := step(i, 50, v1alpha1.VerdictFailed)
		s.Message = long
		for c := range 40 {
			s.Checks = append(s.Checks, v1alpha1.CheckResult{Name: fmt.Sprintf("check-%d", c), Value: FormatValue(math.Pi * 1e6), Min: "99.5", Max: "1000", Verdict: v1alpha1.VerdictFailed, Message: long})
			s.Webhooks = append(s.Webhooks, v1alpha1.WebhookResult{Name: fmt.Sprintf("hook-%d", c), Type: v1alpha1.RolloutHook, Verdict: v1alpha1.VerdictFailed, Message: long})
		}
		return s
	}
	st := analysing("v0")
	for r := range 5 {
		st.LastAppliedSpec = fmt.Sprintf("v%d", r)
		for i := range 30 {
			AddStep(st, full(r*100+i))
		}
	}
	for _, r := range st.Analyses {
		for _, s := range r.Steps {
			total := len(s.Message)
			for _, c := range s.Checks {
				if len(c.Message) > v1alpha1.MaxAnalysisMessage {
					t.Fatalf("message of %d bytes, not cut to %d", len(c.Message), v1alpha1.MaxAnalysisMessage)
				}
				total += len(c.Message)
			}
			for _, w := range s.Webhooks {
				total += len(w.Message)
			}
			if total > v1alpha1.MaxStepMessages || !strings.HasSuffix(s.Checks[0].Message, "…") {
				t.Fatalf("a step's messages take %d bytes, over %d, or were not cut", total, v1alpha1.MaxStepMessages)
			}
		}
	}
	b, err := json.Marshal(st.Analyses)
	if err != nil {
		t.Fatal(err)
	}
	steps := v1alpha1.MaxAnalysisSteps + (v1alpha1.MaxAnalysisRecords-1)*v1alpha1.MaxPastAnalysisSteps
	if len(st.Analyses) != v1alpha1.MaxAnalysisRecords {
		t.Errorf("%d records, want %d", len(st.Analyses), v1alpha1.MaxAnalysisRecords)
	}
	if len(b) > 100<<10 {
		t.Errorf("worst-case records %d bytes, over 100 KiB", len(b))
	}
	for _, s := range st.Analyses[0].Steps {
		if len(s.Checks) != v1alpha1.MaxStepEntries || len(s.Webhooks) != v1alpha1.MaxStepEntries {
			t.Fatalf("a step kept %d checks and %d webhooks, want %d", len(s.Checks), len(s.Webhooks), v1alpha1.MaxStepEntries)
		}
	}

	typical := analysing("v1")
	for i := range 10 {
		AddStep(typical, v1alpha1.AnalysisStep{At: metav1.NewMicroTime(t0.Add(time.Duration(i) * time.Minute)), Weight: 10 * i, Verdict: v1alpha1.VerdictPassed,
			Checks: []v1alpha1.CheckResult{
				{Name: v1alpha1.RequestSuccessRateCheck, Value: "99.87654321", Min: "99", Verdict: v1alpha1.VerdictPassed},
				{Name: v1alpha1.RequestDurationCheck, Value: "123.456", Max: "500", Verdict: v1alpha1.VerdictPassed},
			},
			Webhooks: []v1alpha1.WebhookResult{{Name: "load-test", Type: v1alpha1.RolloutHook, Verdict: v1alpha1.VerdictPassed}},
		})
	}
	Finish(typical, v1alpha1.PhaseSucceeded, t0.Add(time.Hour), "revision v1 promoted")
	tb, err := json.Marshal(typical.Analyses)
	if err != nil {
		t.Fatal(err)
	}
	if len(tb) > 4<<10 {
		t.Errorf("typical record %d bytes, over 4 KiB", len(tb))
	}
	t.Logf("worst case: %d steps, %d bytes; typical: 10 steps, %d bytes", steps, len(b), len(tb))
}

// A step with more checks than a step keeps drops those that passed
// first, keeps the order, and says so.
func TestAddStep_BoundsTheChecksOfAStep(t *testing.T) {
	s := step(1, 10, v1alpha1.VerdictFailed)
	for i := range v1alpha1.MaxStepEntries + 3 {
		verdict := v1alpha1.VerdictPassed
		if i == 0 || i == v1alpha1.MaxStepEntries+2 {
			verdict = v1alpha1.VerdictFailed
		}
		s.Checks = append(s.Checks, v1alpha1.CheckResult{Name: fmt.Sprintf("c%d", i), Verdict: verdict})
	}
	st := analysing("v2")
	AddStep(st, s)
	got := Latest(st).Steps[0]
	if len(got.Checks) != v1alpha1.MaxStepEntries || got.Checks[0].Name != "c0" || got.Checks[len(got.Checks)-1].Name != fmt.Sprintf("c%d", v1alpha1.MaxStepEntries+2) {
		t.Errorf("kept %d checks, first %s last %s; want the failed ones kept", len(got.Checks), got.Checks[0].Name, got.Checks[len(got.Checks)-1].Name)
	}
	if !strings.Contains(got.Message, "3 checks or webhooks not recorded") {
		t.Errorf("message %q does not say what was dropped", got.Message)
	}
}

func TestLinesAndSummary(t *testing.T) {
	rec := &v1alpha1.AnalysisRecord{Steps: []v1alpha1.AnalysisStep{
		step(1, 10, v1alpha1.VerdictPassed, v1alpha1.CheckResult{Name: "request-success-rate", Value: "100", Min: "99", Verdict: v1alpha1.VerdictPassed}),
		step(2, 20, v1alpha1.VerdictFailed,
			v1alpha1.CheckResult{Name: "request-success-rate", Value: "42.5", Min: "99", Verdict: v1alpha1.VerdictFailed, Message: "metric request-success-rate: 42.5 < 99 (thresholdRange.min)"},
			v1alpha1.CheckResult{Name: "latency", Min: "1", Max: "500", Verdict: v1alpha1.VerdictFailed, Message: "no data"}),
		step(3, 20, v1alpha1.VerdictPassed),
	}}
	rec.Steps[1].Webhooks = []v1alpha1.WebhookResult{{Name: "smoke", Type: v1alpha1.RolloutHook, Verdict: v1alpha1.VerdictFailed, Message: "answered 503"}}
	if d := Decisive(rec); d != &rec.Steps[1] {
		t.Fatalf("decisive step %+v, want the last that did not pass", d)
	}
	want := []string{
		"request-success-rate 42.5 (min 99): Failed: metric request-success-rate: 42.5 < 99 (thresholdRange.min)",
		"latency no value (min 1, max 500): Failed: no data",
		"webhook smoke (rollout): Failed: answered 503",
	}
	if diff := cmp.Diff(want, Lines(Decisive(rec))); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if got := Summary(rec); !strings.HasPrefix(got, "at weight 20: request-success-rate 42.5 (min 99): Failed") {
		t.Errorf("summary %q", got)
	}
	if Summary(&v1alpha1.AnalysisRecord{}) != "" || Summary(nil) != "" {
		t.Error("a record without steps has a summary")
	}
	if got := Summary(&v1alpha1.AnalysisRecord{Steps: []v1alpha1.AnalysisStep{step(1, 30, v1alpha1.VerdictPassed)}}); got != "at weight 30: Passed" {
		t.Errorf("summary of a step without checks %q", got)
	}
}

func TestValues(t *testing.T) {
	for _, v := range []float64{0, 99.5, 1e-9, 123456789.125, -3} {
		got, ok := ParseValue(FormatValue(v))
		if !ok || got != v {
			t.Errorf("%v → %q → %v", v, FormatValue(v), got)
		}
	}
	for value, want := range map[string]string{
		"88.8888888888889": "88.89", "19.599999999999998": "19.6", "100": "100", "0": "0", "0.0012345": "0.001234",
		"123456.7": "123457", "-3.14159": "-3.142", "1e-9": "0.000000001", "": "", "NaN?": "NaN?",
	} {
		if got := Display(value); got != want {
			t.Errorf("Display(%q) = %q, want %q", value, got, want)
		}
	}
	if _, ok := ParseValue(""); ok {
		t.Error("an empty value parsed")
	}
	if got := Truncate("short"); got != "short" {
		t.Errorf("Truncate changed a short message: %q", got)
	}
}

// The CRD's bounds are the record's: a status the agent writes is never
// refused by the API server, and the API server refuses nothing larger.
func TestRecords_BoundsMatchTheCRD(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", "serin.dev_canaries.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(b, &crd); err != nil {
		t.Fatal(err)
	}
	status := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
	analyses := status.Properties["analyses"]
	steps := analyses.Items.Schema.Properties["steps"]
	step := steps.Items.Schema
	for name, got := range map[string]*int64{
		"analyses":         analyses.MaxItems,
		"analyses.steps":   steps.MaxItems,
		"steps[].checks":   step.Properties["checks"].MaxItems,
		"steps[].webhooks": step.Properties["webhooks"].MaxItems,
	} {
		want := map[string]int64{
			"analyses": v1alpha1.MaxAnalysisRecords, "analyses.steps": v1alpha1.MaxAnalysisSteps,
			"steps[].checks": v1alpha1.MaxStepEntries, "steps[].webhooks": v1alpha1.MaxStepEntries,
		}[name]
		if got == nil || *got != want {
			t.Errorf("CRD maxItems of %s = %v, want %d", name, got, want)
		}
	}
}
