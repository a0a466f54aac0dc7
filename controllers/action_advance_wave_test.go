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
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/internal/rollout"
)

// fakePromoter answers promotions and verdicts from queues; the last
// answer of a queue repeats.
type fakePromoter struct {
	mu       sync.Mutex
	promote  []promoteAnswer
	verdicts []verdictAnswer
	requests []gitops.PromotionRequest
	// verdictRequests are the requests its verdicts were read for.
	verdictRequests []gitops.PromotionRequest
}

type promoteAnswer struct {
	res gitops.PromotionResult
	err error
}

type verdictAnswer struct {
	v   gitops.Verdict
	err error
}

func (p *fakePromoter) Promote(_ context.Context, req gitops.PromotionRequest) (gitops.PromotionResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests = append(p.requests, req)
	a := p.promote[0]
	if len(p.promote) > 1 {
		p.promote = p.promote[1:]
	}
	return a.res, a.err
}

func (p *fakePromoter) Verdict(_ context.Context, req gitops.PromotionRequest, _ string) (gitops.Verdict, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.verdictRequests = append(p.verdictRequests, req)
	a := p.verdicts[0]
	if len(p.verdicts) > 1 {
		p.verdicts = p.verdicts[1:]
	}
	return a.v, a.err
}

// waveWorld is a Succeeded podinfo Canary with a production stage, its
// primary (running podinfo:v2) and a reconciler whose clock a test moves.
type waveWorld struct {
	*actionFixture
	obj      *v1alpha1.Canary
	promoter *fakePromoter
	now      time.Time
}

func newWaveWorld(t *testing.T, stage v1alpha1.PromotionTarget, p *fakePromoter) *waveWorld {
	c := weightedPodinfo().Phase(v1alpha1.PhaseSucceeded).Applied("v2", "main@sha1:v2").Promoted("v2", "main@sha1:v2").Obj()
	c.Spec.GitOps = &v1alpha1.GitOpsSpec{Promote: []v1alpha1.PromotionTarget{stage}}
	target := podinfoTarget(2)
	target.Spec.Template.Spec.Containers[0].Image = "podinfo:v2"
	primary := primaryOf(c, target, "v2")
	f := newActionReconciler(t, c, target, primary)
	w := &waveWorld{actionFixture: f, obj: c, promoter: p, now: actionNow}
	f.r.Promoter = p
	f.r.Clock = func() time.Time { return w.now }
	return w
}

// advance moves the wave until its Git jobs are read, and returns when
// the wave asks to look again.
func (w *waveWorld) advance() time.Duration {
	w.t.Helper()
	ctx := context.Background()
	for range 500 {
		obs := rollout.Observation{Now: w.now, Requests: pendingRequests(w.obj)}
		w.r.answerPromoteTo(ctx, w.obj, &obs)
		var d time.Duration
		if a, ok := rollout.DecideWave(w.obj); ok {
			res, err := w.r.act(ctx, w.obj, obs, a)
			if err != nil {
				w.t.Fatalf("advance-wave: %v", err)
			}
			d = res.RequeueAfter
		}
		if !w.r.promotions.running(client.ObjectKeyFromObject(w.obj)) {
			return d
		}
		time.Sleep(5 * time.Millisecond)
	}
	w.t.Fatal("the wave's Git job never ended")
	return 0
}

func (w *waveWorld) stage() v1alpha1.PromotionStatus {
	w.t.Helper()
	if len(w.obj.Status.Promotions) != 1 {
		w.t.Fatalf("promotions = %+v", w.obj.Status.Promotions)
	}
	return w.obj.Status.Promotions[0]
}

func (w *waveWorld) reasons() []string {
	var out []string
	for _, e := range w.events() {
		out = append(out, e.Type+" "+e.Reason)
	}
	return out
}

var production = v1alpha1.PromotionTarget{Stage: "production", Path: "./production"}

// A promoted revision soaks, then its promotion is written with the
// primary's images; the stage's verdict is read every poll interval
// through Opened, Merged and Progressing to Succeeded, with one event at
// each milestone.
func TestWave_SoakOpenMergeSucceed(t *testing.T) {
	stage := production
	stage.Soak = &metav1.Duration{Duration: time.Minute}
	p := &fakePromoter{
		promote: []promoteAnswer{{res: gitops.PromotionResult{Branch: "serin/promote/production/apps/podinfo/v2", Commit: "c0ffee", PullRequestURL: "https://git.example/pulls/3", State: gitops.PromotionOpened}}},
		verdicts: []verdictAnswer{
			{v: gitops.Verdict{}},
			{v: gitops.Verdict{Merged: true, StageCommit: "beef01"}},
			{v: gitops.Verdict{Merged: true, StageCommit: "beef01", State: gitops.CommitPending, Description: "analysing"}},
			{v: gitops.Verdict{Merged: true, StageCommit: "beef01", State: gitops.CommitSuccess, Description: "promoted", URL: "https://dash"}},
		},
	}
	w := newWaveWorld(t, stage, p)

	if d := w.advance(); d != time.Minute || w.stage().Phase != v1alpha1.WaveSoaking {
		t.Fatalf("first look: %s, %+v", d, w.stage())
	}
	if got := w.reasons(); len(got) != 1 || got[0] != "Normal "+v1alpha1.StageSoakingReason {
		t.Errorf("events = %v", got)
	}
	w.now = w.now.Add(30 * time.Second)
	if w.advance(); w.stage().Phase != v1alpha1.WaveSoaking || len(p.requests) != 0 {
		t.Fatalf("mid-soak: %+v, %d promotions", w.stage(), len(p.requests))
	}
	w.now = w.now.Add(31 * time.Second)
	w.advance()
	if s := w.stage(); s.Phase != v1alpha1.WaveOpened || s.PullRequestURL != "https://git.example/pulls/3" || s.SoakUntil != nil {
		t.Fatalf("after the soak: %+v", s)
	}
	if len(p.requests) != 1 || fmt.Sprint(p.requests[0].Images) != "[podinfo:v2]" || p.requests[0].Revision != "main@sha1:v2" {
		t.Fatalf("promotion requests = %+v", p.requests)
	}
	for _, want := range []string{v1alpha1.WaveOpened, v1alpha1.WaveOpened, v1alpha1.WaveMerged, v1alpha1.WaveProgressing} {
		if got := w.stage().Phase; got != want {
			t.Fatalf("phase = %s, want %s: %+v", got, want, w.stage())
		}
		w.now = w.now.Add(rollout.VerdictPoll(w.obj))
		w.advance()
	}
	if got := w.stage().Phase; got != v1alpha1.WaveSucceeded {
		t.Fatalf("phase = %s, want Succeeded: %+v", got, w.stage())
	}
	if s := w.stage(); s.StageCommit != "beef01" || s.URL != "https://dash" || s.NextAttemptTime != nil || !strings.Contains(s.Message, "promoted") {
		t.Errorf("succeeded stage = %+v", s)
	}
	if got := strings.Join(w.reasons(), ","); got != "Normal "+v1alpha1.StageOpenedReason+",Normal "+v1alpha1.StageSucceededReason {
		t.Errorf("events = %s", got)
	}
	if d := w.advance(); d != 0 {
		t.Errorf("a succeeded stage asks to look again in %s", d)
	}
}

// A Git host that fails is retried with backoff, one warning per outage;
// a promotion that cannot be written is Error, alerted, and written again
// on serin promote --to.
func TestWave_RetryErrorAndPromoteByHand(t *testing.T) {
	refused := fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
	opened := gitops.PromotionResult{PullRequestURL: "https://git.example/pulls/1", State: gitops.PromotionOpened}
	p := &fakePromoter{
		promote:  []promoteAnswer{{err: refused}, {err: refused}, {err: errors.New("403 Forbidden")}, {res: opened}},
		verdicts: []verdictAnswer{{}},
	}
	w := newWaveWorld(t, production, p)

	if d := w.advance(); d != 5*time.Second || w.stage().Attempts != 1 || w.stage().Phase != v1alpha1.WavePromoting {
		t.Fatalf("first failure: %s, %+v", d, w.stage())
	}
	w.now = w.now.Add(2 * time.Second)
	if w.advance(); len(p.requests) != 1 {
		t.Fatalf("retried before its time: %d requests", len(p.requests))
	}
	w.now = w.now.Add(3 * time.Second)
	if d := w.advance(); d != 10*time.Second || w.stage().Attempts != 2 || !strings.Contains(w.stage().Message, "connection refused") {
		t.Fatalf("second failure: %s, %+v", d, w.stage())
	}
	w.now = w.now.Add(10 * time.Second)
	w.advance()
	if s := w.stage(); s.Phase != v1alpha1.WaveError || !strings.Contains(s.Message, "403") {
		t.Fatalf("a refused promotion: %+v", s)
	}
	if got := strings.Join(w.reasons(), ","); got != "Warning "+v1alpha1.StageRetryingReason+",Warning "+v1alpha1.StageErrorReason {
		t.Errorf("events = %s", got)
	}
	w.now = w.now.Add(time.Hour)
	if w.advance(); len(p.requests) != 3 {
		t.Fatalf("an Error stage was tried again by itself: %d requests", len(p.requests))
	}

	w.obj.Annotations = map[string]string{v1alpha1.PromoteToRequestAnnotation: "production@now"}
	w.advance()
	if s := w.stage(); s.Phase != v1alpha1.WaveOpened || w.obj.Status.HandledRequests.PromoteTo != "production@now" {
		t.Fatalf("promoted by hand: %+v, handled %q", s, w.obj.Status.HandledRequests.PromoteTo)
	}
	// A request naming a stage the Canary does not have is handled with a
	// warning.
	w.obj.Annotations[v1alpha1.PromoteToRequestAnnotation] = "prod@later"
	w.events()
	w.advance()
	if w.obj.Status.HandledRequests.PromoteTo != "prod@later" || !strings.Contains(strings.Join(w.reasons(), ","), v1alpha1.StagePromoteRequestedReason) {
		t.Errorf("unknown stage: handled %q", w.obj.Status.HandledRequests.PromoteTo)
	}
}

// Only a Succeeded Canary moves its wave; a stage already running the
// images succeeds at once; a failed stage is a warning; a stage removed
// from the spec leaves the status; a Service target has no image to
// promote.
func TestWave_Edges(t *testing.T) {
	t.Run("not while progressing", func(t *testing.T) {
		w := newWaveWorld(t, production, &fakePromoter{promote: []promoteAnswer{{}}})
		w.obj.Status.Phase = v1alpha1.PhaseProgressing
		w.obj.Annotations = map[string]string{v1alpha1.PromoteToRequestAnnotation: "production@now"}
		if d := w.advance(); d != 0 || len(w.obj.Status.Promotions) != 0 {
			t.Errorf("a progressing Canary moved its wave: %+v", w.obj.Status.Promotions)
		}
		// serin promote --to is answered, not left waiting for a state
		// it did not ask for.
		if got := w.events(); w.obj.Status.HandledRequests.PromoteTo != "production@now" || len(got) != 1 || !strings.Contains(got[0].Message, "Progressing, not Succeeded") {
			t.Errorf("a request to a progressing Canary: handled %q, events %+v", w.obj.Status.HandledRequests.PromoteTo, got)
		}
	})
	t.Run("up to date", func(t *testing.T) {
		w := newWaveWorld(t, production, &fakePromoter{promote: []promoteAnswer{{res: gitops.PromotionResult{State: gitops.PromotionUpToDate, Message: "main already runs podinfo:v2"}}}})
		w.advance()
		if s := w.stage(); s.Phase != v1alpha1.WaveUpToDate || !strings.HasPrefix(s.Message, "main already runs podinfo:v2") {
			t.Errorf("stage = %+v", s)
		}
	})
	t.Run("failed downstream", func(t *testing.T) {
		w := newWaveWorld(t, production, &fakePromoter{
			promote:  []promoteAnswer{{res: gitops.PromotionResult{Commit: "c0ffee", State: gitops.PromotionPushed}}},
			verdicts: []verdictAnswer{{v: gitops.Verdict{Merged: true, StageCommit: "c0ffee", State: gitops.CommitFailure, Description: "rolled back"}}},
		})
		w.advance()
		if w.stage().Phase != v1alpha1.WaveMerged {
			t.Fatalf("pushed: %+v", w.stage())
		}
		w.now = w.now.Add(time.Minute)
		w.advance()
		if s := w.stage(); s.Phase != v1alpha1.WaveFailed || !strings.Contains(s.Message, "rolled back") {
			t.Errorf("stage = %+v", s)
		}
		if got := strings.Join(w.reasons(), ","); !strings.Contains(got, "Warning "+v1alpha1.StageFailedReason) {
			t.Errorf("events = %s", got)
		}
	})
	t.Run("stage removed", func(t *testing.T) {
		w := newWaveWorld(t, production, &fakePromoter{promote: []promoteAnswer{{res: gitops.PromotionResult{State: gitops.PromotionUpToDate}}}})
		w.advance()
		w.obj.Spec.GitOps.Promote = nil
		w.advance()
		if len(w.obj.Status.Promotions) != 0 {
			t.Errorf("promotions of a removed stage = %+v", w.obj.Status.Promotions)
		}
	})
	t.Run("service target", func(t *testing.T) {
		w := newWaveWorld(t, production, &fakePromoter{promote: []promoteAnswer{{}}})
		w.obj.Spec.TargetRef = v1alpha1.TargetReference{APIVersion: "v1", Kind: v1alpha1.ServiceKind, Name: "podinfo"}
		w.advance()
		if s := w.stage(); s.Phase != v1alpha1.WaveError || !strings.Contains(s.Message, "a Deployment, a DaemonSet or a StatefulSet") {
			t.Errorf("stage = %+v", s)
		}
	})
}

// The soak's checks run on the primary once per interval, each outcome
// counted once: as many failures in a row as the threshold stop the wave
// (here the built-in check fails: the fixture has no Prometheus).
func TestWave_SoakChecksStopAtTheThreshold(t *testing.T) {
	stage := production
	stage.Soak = &metav1.Duration{Duration: time.Hour}
	w := newWaveWorld(t, stage, &fakePromoter{promote: []promoteAnswer{{}}})
	w.obj.Spec.Analysis.Metrics = []v1alpha1.CanaryMetric{{Name: v1alpha1.RequestSuccessRateCheck}}
	w.advance()
	interval := w.obj.GetAnalysisInterval()
	for i := 1; i <= 2; i++ {
		w.now = w.now.Add(interval)
		w.advance()
		w.awaitAnalysis()
		w.advance()
		w.advance() // the same outcome read again counts once
		if s := w.stage(); s.FailedChecks != int32(i) && s.Phase != v1alpha1.WaveStopped {
			t.Fatalf("after check %d: %+v", i, s)
		}
	}
	if s := w.stage(); s.Phase != v1alpha1.WaveStopped || !strings.Contains(s.Message, "2 failed checks in a row") || !strings.Contains(s.Message, "Prometheus") {
		t.Errorf("stage = %+v", s)
	}
	if len(w.promoter.requests) != 0 {
		t.Errorf("a stopped wave wrote %d promotions", len(w.promoter.requests))
	}
}

// A pull request closed without a merge is an Error a person acts on;
// serin promote --to during a Git host's backoff tries at once; the
// verdict is read less often the longer a pull request waits.
func TestWave_ClosedBackoffAndPollGrowth(t *testing.T) {
	opened := gitops.PromotionResult{PullRequestURL: "https://git.example/pulls/4", State: gitops.PromotionOpened}
	p := &fakePromoter{promote: []promoteAnswer{{err: fmt.Errorf("dial: %w", syscall.ECONNREFUSED)}, {res: opened}},
		verdicts: []verdictAnswer{{}}}
	w := newWaveWorld(t, production, p)
	if d := w.advance(); d != 5*time.Second {
		t.Fatalf("first failure waits %s", d)
	}
	w.obj.Annotations = map[string]string{v1alpha1.PromoteToRequestAnnotation: "production@now"}
	w.advance()
	if s := w.stage(); s.Phase != v1alpha1.WaveOpened || len(p.requests) != 2 {
		t.Fatalf("promote --to during the backoff: %+v after %d requests", s, len(p.requests))
	}
	// Waiting for a merge: the reads space out, up to 5 minutes.
	var waits []time.Duration
	for range 6 {
		w.now = w.now.Add(time.Hour)
		waits = append(waits, w.advance())
	}
	if waits[len(waits)-1] != rollout.MaxVerdictPoll {
		t.Errorf("verdict reads every %v, want them to grow to %s", waits, rollout.MaxVerdictPoll)
	}
	p.verdicts = []verdictAnswer{{v: gitops.Verdict{Closed: true}}}
	w.now = w.now.Add(time.Hour)
	w.advance()
	if s := w.stage(); s.Phase != v1alpha1.WaveError || !strings.Contains(s.Message, "closed without a merge") {
		t.Errorf("closed pull request: %+v", s)
	}
}

// soakCheck moves the clock to when the next soak check is due, makes
// it, and reads its outcome.
func (w *waveWorld) soakCheck(at time.Time) {
	w.t.Helper()
	w.now = at
	w.advance()
	w.awaitAnalysis()
	w.advance()
}

// The soak stops at analysis.threshold failed checks in a row, and a
// Canary that sets none gets the documented default (5), as every other
// path of the engine does.
func TestWave_SoakThresholdDefaultsToFive(t *testing.T) {
	stage := production
	stage.Soak = &metav1.Duration{Duration: time.Hour}
	w := newWaveWorld(t, stage, &fakePromoter{promote: []promoteAnswer{{}}})
	w.obj.Spec.Analysis.Threshold = 0
	w.obj.Spec.Analysis.Metrics = []v1alpha1.CanaryMetric{{Name: v1alpha1.RequestSuccessRateCheck}}
	w.advance()
	interval := w.obj.GetAnalysisInterval()
	for i := 1; i <= v1alpha1.DefaultThreshold; i++ {
		w.soakCheck(w.now.Add(interval))
		s := w.stage()
		if i < v1alpha1.DefaultThreshold && (s.Phase != v1alpha1.WaveSoaking || s.FailedChecks != int32(i)) {
			t.Fatalf("after failed check %d of the default threshold %d: %+v", i, v1alpha1.DefaultThreshold, s)
		}
	}
	if s := w.stage(); s.Phase != v1alpha1.WaveStopped || !strings.Contains(s.Message, "5 failed checks in a row") {
		t.Errorf("after %d failed checks: %+v", v1alpha1.DefaultThreshold, s)
	}
}

// A soak makes one check per analysis interval of its duration: checks
// the agent missed while it was down are made when it is back, so a
// restart delays the promotion instead of shortening the soak.
func TestWave_SoakMakesTheChecksARestartMissed(t *testing.T) {
	stage := production
	interval := 10 * time.Second
	stage.Soak = &metav1.Duration{Duration: 3 * interval}
	w := newWaveWorld(t, stage, &fakePromoter{promote: []promoteAnswer{{res: gitops.PromotionResult{Commit: "c0ffee", State: gitops.PromotionPushed}}}, verdicts: []verdictAnswer{{}}})
	// A unit test of the handler: the Prometheus HTTP API answers 99.5 %
	// to every query (the e2e waves test runs the soak on real traffic).
	prometheus := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000,"99.5"]}]}}`)
	}))
	t.Cleanup(prometheus.Close)
	w.checks.MetricsServer = prometheus.URL
	w.obj.Spec.Analysis.Metrics = []v1alpha1.CanaryMetric{{Name: v1alpha1.RequestSuccessRateCheck, ThresholdRange: &v1alpha1.ThresholdRange{Min: ptr.To(99.0)}}}
	start := w.now
	w.advance()
	w.soakCheck(start.Add(interval))
	if s := w.stage(); s.Phase != v1alpha1.WaveSoaking || s.Checks != 1 || s.FailedChecks != 0 {
		t.Fatalf("after the first check: %+v", s)
	}
	// The agent was down for three intervals: the soak's time is over,
	// one check of three was made.
	w.r.Analysis.Forget(client.ObjectKeyFromObject(w.obj))
	w.soakCheck(start.Add(5 * interval))
	if s := w.stage(); s.Phase != v1alpha1.WaveSoaking || s.Checks != 2 || len(w.promoter.requests) != 0 {
		t.Fatalf("back after a restart, one check short: %+v, %d promotions written", s, len(w.promoter.requests))
	}
	if d := w.advance(); d != interval {
		t.Errorf("the next check is due in %s, want one interval (%s)", d, interval)
	}
	w.soakCheck(start.Add(6 * interval))
	if s := w.stage(); s.Phase != v1alpha1.WaveMerged || s.Checks != 3 || len(w.promoter.requests) != 1 {
		t.Errorf("after the third check: %+v, %d promotions written", s, len(w.promoter.requests))
	}
}
