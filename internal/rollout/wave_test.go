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

package rollout

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// waveCanary is a Succeeded Canary (interval 1m, threshold 2 unless
// mutated) with a production stage that soaks for soak (none when 0) and
// one check.
func waveCanary(soak time.Duration, mutate ...func(*v1alpha1.Canary)) *v1alpha1.Canary {
	stage := v1alpha1.PromotionTarget{Stage: "production", Path: "./production"}
	if soak > 0 {
		stage.Soak = &metav1.Duration{Duration: soak}
	}
	return canary(v1alpha1.PhaseSucceeded, append([]func(*v1alpha1.Canary){func(c *v1alpha1.Canary) {
		c.Status.LastPromotedRevision = "main@sha1:v2"
		c.Spec.GitOps = &v1alpha1.GitOpsSpec{Promote: []v1alpha1.PromotionTarget{stage}}
		c.Spec.Analysis.Metrics = []v1alpha1.CanaryMetric{{Name: v1alpha1.RequestSuccessRateCheck}}
	}}, mutate...)...)
}

func mt(t time.Time) *metav1.Time {
	m := metav1.NewTime(t)
	return &m
}

// soaking is production's stage soaking since t0 until until, with checks
// made (the last at checkedAt, failed of them failed in a row).
func soaking(until time.Time, checks, failed int32, checkedAt time.Time) v1alpha1.PromotionStatus {
	p := v1alpha1.PromotionStatus{Stage: "production", Revision: "main@sha1:v2", Phase: v1alpha1.WaveSoaking,
		LastTransitionTime: mt(t0), SoakUntil: mt(until), Checks: checks, FailedChecks: failed}
	if !checkedAt.IsZero() {
		p.CheckedAt = mt(checkedAt)
	}
	return p
}

func TestDecideWave(t *testing.T) {
	cases := map[string]struct {
		c    *v1alpha1.Canary
		want Action
	}{
		"succeeded with a stage": {waveCanary(0), AdvanceWave{}},
		"progressing: the wave is frozen": {waveCanary(0, func(c *v1alpha1.Canary) {
			c.Status.Phase = v1alpha1.PhaseProgressing
		}), nil},
		"nothing promoted yet": {waveCanary(0, func(c *v1alpha1.Canary) { c.Status.LastPromotedRevision = "" }), nil},
		"no stage, no entry":   {canary(v1alpha1.PhaseSucceeded), nil},
		"a removed stage's entry is dropped in any phase": {canary(v1alpha1.PhaseFailed, func(c *v1alpha1.Canary) {
			c.Status.Promotions = []v1alpha1.PromotionStatus{{Stage: "production"}}
		}), AdvanceWave{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := DecideWave(tc.c)
			if ok != (tc.want != nil) || (ok && got != tc.want) {
				t.Errorf("DecideWave = %v, %v; want %v", got, ok, tc.want)
			}
		})
	}
	// Decide moves the wave only where the rollout would idle.
	c := waveCanary(0)
	o := observed(t0, "v2", ready, "v2", ready)
	o.Target.Replicas = 0
	c.Status.LastAppliedSpec, c.Status.LastPromotedSpec = "v2", "v2"
	if got := Decide(c, o); got != (AdvanceWave{}) {
		t.Errorf("Decide of an idle Succeeded Canary with a stage = %v, want advance-wave", got)
	}
	o.Target.SpecHash = "v3"
	if got := Decide(c, o); got != (StartRollout{}) {
		t.Errorf("Decide with a new revision = %v, want start-rollout (the wave waits)", got)
	}
}

func TestPromoteToRefusal(t *testing.T) {
	cases := map[string]struct {
		c     *v1alpha1.Canary
		stage string
		want  string
	}{
		"acted on":      {waveCanary(0), "production", ""},
		"unknown stage": {waveCanary(0), "prod", `names stage "prod", which spec.gitops.promote does not list`},
		"no stage":      {canary(v1alpha1.PhaseSucceeded), "production", "spec.gitops.promote lists no stage"},
		"progressing": {waveCanary(0, func(c *v1alpha1.Canary) { c.Status.Phase = v1alpha1.PhaseProgressing }),
			"production", "the Canary is Progressing, not Succeeded"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := PromoteToRefusal(tc.c, tc.stage)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("PromoteToRefusal = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWaveEntries(t *testing.T) {
	now := t0.Add(time.Hour)
	cases := map[string]struct {
		c         *v1alpha1.Canary
		byHand    string
		wantPhase string
		wantEvent string
	}{
		"a new revision soaks":          {waveCanary(30 * time.Minute), "", v1alpha1.WaveSoaking, v1alpha1.StageSoakingReason},
		"without a soak it is promoted": {waveCanary(0), "", v1alpha1.WavePromoting, ""},
		"an older revision's entry starts over": {waveCanary(0, func(c *v1alpha1.Canary) {
			c.Status.Promotions = []v1alpha1.PromotionStatus{{Stage: "production", Revision: "main@sha1:v1", Phase: v1alpha1.WaveSucceeded}}
		}), "", v1alpha1.WavePromoting, ""},
		"by hand during the soak": {waveCanary(30*time.Minute, func(c *v1alpha1.Canary) {
			c.Status.Promotions = []v1alpha1.PromotionStatus{soaking(t0.Add(2*time.Hour), 3, 0, t0.Add(3*time.Minute))}
		}), "production", v1alpha1.WavePromoting, v1alpha1.StagePromoteRequestedReason},
		"by hand on a stopped stage": {waveCanary(0, func(c *v1alpha1.Canary) {
			c.Status.Promotions = []v1alpha1.PromotionStatus{{Stage: "production", Revision: "main@sha1:v2", Phase: v1alpha1.WaveStopped}}
		}), "production", v1alpha1.WavePromoting, v1alpha1.StagePromoteRequestedReason},
		"by hand on a succeeded stage: nothing written again": {waveCanary(0, func(c *v1alpha1.Canary) {
			c.Status.Promotions = []v1alpha1.PromotionStatus{{Stage: "production", Revision: "main@sha1:v2", Phase: v1alpha1.WaveSucceeded}}
		}), "production", v1alpha1.WaveSucceeded, v1alpha1.StagePromoteRequestedReason},
		"a removed stage's entry goes": {waveCanary(0, func(c *v1alpha1.Canary) {
			c.Status.Promotions = []v1alpha1.PromotionStatus{{Stage: "staging", Revision: "main@sha1:v2", Phase: v1alpha1.WaveSucceeded}}
		}), "", v1alpha1.WavePromoting, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, events := WaveEntries(tc.c, now, tc.byHand)
			if len(got) != 1 || got[0].Stage != "production" || got[0].Phase != tc.wantPhase {
				t.Fatalf("entries = %+v, want production %s", got, tc.wantPhase)
			}
			var reasons []string
			for _, e := range events {
				reasons = append(reasons, e.Reason)
			}
			if want := []string{tc.wantEvent}; tc.wantEvent == "" && len(reasons) > 0 || tc.wantEvent != "" && !cmp.Equal(reasons, want) {
				t.Errorf("events = %v, want %q", reasons, tc.wantEvent)
			}
		})
	}
}

func TestNextStageWork(t *testing.T) {
	until := t0.Add(3 * time.Minute)
	later := mt(t0.Add(10 * time.Minute))
	cases := map[string]struct {
		c         *v1alpha1.Canary
		p         v1alpha1.PromotionStatus
		now       time.Time
		work      StageWork
		wait      time.Duration
		wantPhase string
	}{
		"soaking: waits for the soak's end":            {waveCanary(3 * time.Minute), soaking(until, 1, 0, t0.Add(time.Minute)), t0.Add(time.Minute), NoWork, 2 * time.Minute, v1alpha1.WaveSoaking},
		"soak over, a check short (missed while down)": {waveCanary(3 * time.Minute), soaking(until, 2, 0, t0.Add(5*time.Minute)), t0.Add(5 * time.Minute), NoWork, 0, v1alpha1.WaveSoaking},
		"soak over, the last check failed":             {waveCanary(3 * time.Minute), soaking(until, 3, 1, t0.Add(3*time.Minute)), t0.Add(3 * time.Minute), NoWork, 0, v1alpha1.WaveSoaking},
		"soaked: written":                              {waveCanary(3 * time.Minute), soaking(until, 3, 0, t0.Add(3*time.Minute)), t0.Add(3 * time.Minute), WritePromotion, 0, v1alpha1.WavePromoting},
		"no checks: soaked at its end": {waveCanary(3*time.Minute, func(c *v1alpha1.Canary) { c.Spec.Analysis.Metrics = nil }),
			soaking(until, 0, 0, time.Time{}), until, WritePromotion, 0, v1alpha1.WavePromoting},
		"promoting":                     {waveCanary(0), v1alpha1.PromotionStatus{Phase: v1alpha1.WavePromoting}, t0, WritePromotion, 0, v1alpha1.WavePromoting},
		"promoting in a backoff":        {waveCanary(0), v1alpha1.PromotionStatus{Phase: v1alpha1.WavePromoting, NextAttemptTime: later}, t0, NoWork, 10 * time.Minute, v1alpha1.WavePromoting},
		"opened: the verdict is read":   {waveCanary(0), v1alpha1.PromotionStatus{Phase: v1alpha1.WaveOpened}, t0, ReadVerdict, 0, v1alpha1.WaveOpened},
		"progressing: read at its time": {waveCanary(0), v1alpha1.PromotionStatus{Phase: v1alpha1.WaveProgressing, NextAttemptTime: later}, t0, NoWork, 10 * time.Minute, v1alpha1.WaveProgressing},
		"succeeded: final":              {waveCanary(0), v1alpha1.PromotionStatus{Phase: v1alpha1.WaveSucceeded}, t0, NoWork, 0, v1alpha1.WaveSucceeded},
		"stopped: final":                {waveCanary(0), v1alpha1.PromotionStatus{Phase: v1alpha1.WaveStopped}, t0, NoWork, 0, v1alpha1.WaveStopped},
		"up to date: final":             {waveCanary(0), v1alpha1.PromotionStatus{Phase: v1alpha1.WaveUpToDate}, t0, NoWork, 0, v1alpha1.WaveUpToDate},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := tc.p
			work, wait := NextStageWork(tc.c, &p, tc.now)
			if work != tc.work || wait != tc.wait || p.Phase != tc.wantPhase {
				t.Errorf("NextStageWork = %v, %s, phase %s; want %v, %s, %s", work, wait, p.Phase, tc.work, tc.wait, tc.wantPhase)
			}
		})
	}
}

func TestSoakCheck(t *testing.T) {
	until := t0.Add(30 * time.Minute)
	cases := map[string]struct {
		c       *v1alpha1.Canary
		ps      []v1alpha1.PromotionStatus
		wantN   int32
		wantDue time.Time
	}{
		"the first: one interval after the soak began": {waveCanary(30 * time.Minute), []v1alpha1.PromotionStatus{soaking(until, 0, 0, time.Time{})}, 1, t0.Add(time.Minute)},
		"the next: one interval after the last":        {waveCanary(30 * time.Minute), []v1alpha1.PromotionStatus{soaking(until, 4, 0, t0.Add(4*time.Minute))}, 5, t0.Add(5 * time.Minute)},
		"after a restart: numbered by the checks made, due at once": {waveCanary(30 * time.Minute),
			[]v1alpha1.PromotionStatus{soaking(until, 2, 0, t0.Add(2*time.Minute))}, 3, t0.Add(3 * time.Minute)},
		"no stage soaks": {waveCanary(30 * time.Minute), []v1alpha1.PromotionStatus{{Phase: v1alpha1.WaveOpened}}, 0, time.Time{}},
		"no checks":      {waveCanary(30*time.Minute, func(c *v1alpha1.Canary) { c.Spec.Analysis.Metrics = nil }), []v1alpha1.PromotionStatus{soaking(until, 0, 0, time.Time{})}, 0, time.Time{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n, due, ok := SoakCheck(tc.c, tc.ps)
			if ok != (tc.wantN > 0) || n != tc.wantN || !due.Equal(tc.wantDue) {
				t.Errorf("SoakCheck = %d, %s, %v; want %d, %s", n, due, ok, tc.wantN, tc.wantDue)
			}
		})
	}
}

func TestWaveSoakCheck(t *testing.T) {
	until := t0.Add(30 * time.Minute)
	at := t0.Add(5 * time.Minute)
	failed := SoakOutcome{At: at, Failure: "success rate 80 < 99"}
	cases := map[string]struct {
		c          *v1alpha1.Canary
		p          v1alpha1.PromotionStatus
		out        SoakOutcome
		wantPhase  string
		wantChecks int32
		wantFailed int32
		wantEvent  string
	}{
		"a pass clears the failures":           {waveCanary(30 * time.Minute), soaking(until, 4, 1, t0.Add(4*time.Minute)), SoakOutcome{At: at}, v1alpha1.WaveSoaking, 5, 0, ""},
		"a failure under the threshold":        {waveCanary(30 * time.Minute), soaking(until, 4, 0, t0.Add(4*time.Minute)), failed, v1alpha1.WaveSoaking, 5, 1, ""},
		"at analysis.threshold the wave stops": {waveCanary(30 * time.Minute), soaking(until, 4, 1, t0.Add(4*time.Minute)), failed, v1alpha1.WaveStopped, 5, 2, v1alpha1.StageStoppedReason},
		"no threshold set: the default, 5": {waveCanary(30*time.Minute, func(c *v1alpha1.Canary) { c.Spec.Analysis.Threshold = 0 }),
			soaking(until, 4, 1, t0.Add(4*time.Minute)), failed, v1alpha1.WaveSoaking, 5, 2, ""},
		"the default threshold reached": {waveCanary(30*time.Minute, func(c *v1alpha1.Canary) { c.Spec.Analysis.Threshold = 0 }),
			soaking(until, 4, 4, t0.Add(4*time.Minute)), failed, v1alpha1.WaveStopped, 5, 5, v1alpha1.StageStoppedReason},
		"an outcome counted already": {waveCanary(30 * time.Minute), soaking(until, 5, 1, at), failed, v1alpha1.WaveSoaking, 5, 1, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ps := []v1alpha1.PromotionStatus{tc.p}
			events := WaveSoakCheck(tc.c, ps, tc.out, at)
			p := ps[0]
			if p.Phase != tc.wantPhase || p.Checks != tc.wantChecks || p.FailedChecks != tc.wantFailed {
				t.Errorf("after the check: %s, %d checks, %d failed; want %s, %d, %d", p.Phase, p.Checks, p.FailedChecks, tc.wantPhase, tc.wantChecks, tc.wantFailed)
			}
			if (tc.wantEvent == "") != (len(events) == 0) || (len(events) > 0 && (events[0].Reason != tc.wantEvent || events[0].Severity != WaveWarning)) {
				t.Errorf("events = %+v, want %q as a warning", events, tc.wantEvent)
			}
		})
	}
}

func TestWavePromotionWritten(t *testing.T) {
	cases := map[string]struct {
		res       PromotionWritten
		wantPhase string
		wantWait  time.Duration
	}{
		"opened: the merge is awaited": {PromotionWritten{State: PromotionOpened, PullRequestURL: "https://git.example/pulls/3"}, v1alpha1.WaveOpened, time.Minute / 6},
		"pushed":                       {PromotionWritten{State: PromotionPushed, Commit: "c0ffee"}, v1alpha1.WaveMerged, time.Minute / 6},
		"merged before a restart":      {PromotionWritten{State: PromotionMerged, Commit: "c0ffee"}, v1alpha1.WaveMerged, time.Minute / 6},
		"up to date: final":            {PromotionWritten{State: PromotionUpToDate, Message: "main already runs podinfo:v2"}, v1alpha1.WaveUpToDate, 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := v1alpha1.PromotionStatus{Stage: "production", Phase: v1alpha1.WavePromoting, Attempts: 3, NextAttemptTime: mt(t0)}
			ev, wait := WavePromotionWritten(waveCanary(0), &p, tc.res, t0)
			// The poll is the interval between 5 s and 10 s.
			if tc.wantWait > 0 {
				tc.wantWait = 10 * time.Second
			}
			if p.Phase != tc.wantPhase || wait != tc.wantWait || p.Attempts != 0 || ev.Reason != v1alpha1.StageOpenedReason {
				t.Errorf("written: %s (attempts %d), read in %s, event %q; want %s, %s", p.Phase, p.Attempts, wait, ev.Reason, tc.wantPhase, tc.wantWait)
			}
		})
	}
}

// The verdict-to-phase mapping.
func TestWaveVerdict(t *testing.T) {
	stage := v1alpha1.PromotionTarget{Stage: "production", Branch: "prod"}
	merged := func(state string) StageVerdict {
		return StageVerdict{Merged: true, State: state, StageCommit: "beef0123456789", StageCanary: "apps/podinfo", Description: "said"}
	}
	cases := map[string]struct {
		phase     string
		v         StageVerdict
		wantPhase string
		wantMsg   string
		wantEvent WaveEvent
		final     bool
	}{
		"closed without a merge": {v1alpha1.WaveOpened, StageVerdict{Closed: true}, v1alpha1.WaveError, "closed without a merge",
			WaveEvent{Severity: WaveError, Reason: v1alpha1.StageErrorReason}, true},
		"open, not merged":          {v1alpha1.WaveOpened, StageVerdict{}, v1alpha1.WaveOpened, "waiting for the pull request to be merged", WaveEvent{}, false},
		"pushed, not yet in branch": {v1alpha1.WaveMerged, StageVerdict{}, v1alpha1.WaveMerged, "no longer among the last commits", WaveEvent{}, false},
		"merged, no status":         {v1alpha1.WaveOpened, merged(""), v1alpha1.WaveMerged, "merged as beef0123; waiting for Canary apps/podinfo", WaveEvent{}, false},
		"pending":                   {v1alpha1.WaveMerged, merged(VerdictPending), v1alpha1.WaveProgressing, "Canary apps/podinfo: said", WaveEvent{}, false},
		"success":                   {v1alpha1.WaveProgressing, merged(VerdictSuccess), v1alpha1.WaveSucceeded, "Canary apps/podinfo: said", WaveEvent{Severity: WaveInfo, Reason: v1alpha1.StageSucceededReason}, true},
		"failure: a warning, not an error": {v1alpha1.WaveProgressing, merged("failure"), v1alpha1.WaveFailed, "Canary apps/podinfo: said",
			WaveEvent{Severity: WaveWarning, Reason: v1alpha1.StageFailedReason}, true},
		"error": {v1alpha1.WaveProgressing, merged("error"), v1alpha1.WaveFailed, "Canary apps/podinfo: said", WaveEvent{Severity: WaveWarning, Reason: v1alpha1.StageFailedReason}, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := v1alpha1.PromotionStatus{Stage: "production", Revision: "main@sha1:v2", Phase: tc.phase, PullRequestURL: "https://git.example/pulls/3", LastTransitionTime: mt(t0)}
			ev, wait := WaveVerdict(waveCanary(0), stage, &p, tc.v, t0)
			ev.Message = ""
			if p.Phase != tc.wantPhase || !strings.Contains(p.Message, tc.wantMsg) || ev != tc.wantEvent || (wait == 0) != tc.final {
				t.Errorf("verdict: %s %q, event %+v, next read in %s; want %s %q, %+v, final %v", p.Phase, p.Message, ev, wait, tc.wantPhase, tc.wantMsg, tc.wantEvent, tc.final)
			}
		})
	}
}

func TestWaveRetryAndPolls(t *testing.T) {
	p := v1alpha1.PromotionStatus{Stage: "production", Revision: "main@sha1:v2", Phase: v1alpha1.WavePromoting}
	var waits []time.Duration
	var warned int
	for range 8 {
		ev, wait := WaveRetry(&p, "writing the promotion", "connection refused", t0)
		waits = append(waits, wait)
		if ev.Reason == v1alpha1.StageRetryingReason {
			warned++
		}
	}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 5 * time.Minute, 5 * time.Minute}
	if diff := cmp.Diff(want, waits); diff != "" || warned != 1 {
		t.Errorf("backoff (-want +got):\n%s; warned %d times, want once per outage", diff, warned)
	}
	// The longer a stage waits in its phase, the less often it is read.
	reads := map[time.Duration]time.Duration{0: 10 * time.Second, 10 * time.Minute: time.Minute, 2 * time.Hour: MaxVerdictPoll}
	for waited, want := range reads {
		p := v1alpha1.PromotionStatus{Phase: v1alpha1.WaveOpened, LastTransitionTime: mt(t0)}
		if got := NextVerdictRead(waveCanary(0), &p, t0.Add(waited)); got != want || !p.NextAttemptTime.Time.Equal(t0.Add(waited+want)) {
			t.Errorf("after %s in the phase: read in %s (at %s), want %s", waited, got, p.NextAttemptTime, want)
		}
	}
}

// A stage that waits past its phase's bound warns once, saying what it
// waits for; a new phase starts the clock again.
func TestWaveOverdue(t *testing.T) {
	stage := v1alpha1.PromotionTarget{Stage: "production"}
	merged := StageVerdict{Merged: true, StageCommit: "beef0123456789", StageCanary: "production/podinfo"}
	p := v1alpha1.PromotionStatus{Stage: "production", Revision: "main@sha1:v2", Phase: v1alpha1.WaveMerged, LastTransitionTime: mt(t0), StageCommit: "beef0123456789"}
	if ev, _ := WaveVerdict(waveCanary(0), stage, &p, merged, t0.Add(29*time.Minute)); ev.Reason != "" || p.Overdue {
		t.Fatalf("within the bound: %+v", ev)
	}
	ev, wait := WaveVerdict(waveCanary(0), stage, &p, merged, t0.Add(31*time.Minute))
	if ev.Reason != v1alpha1.StageOverdueReason || ev.Severity != WaveWarning || !strings.Contains(ev.Message, "has not reported on beef0123") || !strings.Contains(ev.Message, "--cluster-name") || wait == 0 || !p.Overdue {
		t.Fatalf("past the bound: %+v, next read in %s", ev, wait)
	}
	if ev, _ := WaveVerdict(waveCanary(0), stage, &p, merged, t0.Add(time.Hour)); ev.Reason != "" {
		t.Errorf("warned twice: %+v", ev)
	}
	// Progressing: a new phase, a new clock.
	pending := merged
	pending.State = VerdictPending
	WaveVerdict(waveCanary(0), stage, &p, pending, t0.Add(time.Hour))
	if p.Overdue || p.Phase != v1alpha1.WaveProgressing {
		t.Errorf("a new phase keeps the warning: %+v", p)
	}
}
