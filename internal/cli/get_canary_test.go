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
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

func canaryEvent(name, canary string, uid types.UID, age time.Duration, eventType, reason, message string) *corev1.Event {
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "apps"},
		InvolvedObject: corev1.ObjectReference{
			Kind: v1alpha1.CanaryKind, APIVersion: v1alpha1.GroupVersion.String(),
			Namespace: "apps", Name: canary, UID: uid,
		},
		LastTimestamp: metav1.NewTime(testNow.Add(-age)),
		Type:          eventType,
		Reason:        reason,
		Message:       message,
	}
}

// describedCanaries are a Gateway API Canary in the middle of a rollout,
// with a revert, and a blue/green one that was never reconciled.
func describedCanaries() []client.Object {
	minute := &metav1.Duration{Duration: time.Minute}
	progressing := makeCanary("apps", "podinfo").
		revisions(longRevision, promotedRevision).
		phase(v1alpha1.PhaseProgressing, 20).
		ready(metav1.ConditionFalse, "Progressing", "advancing canary weight to 20").
		condition("Reconciling", metav1.ConditionTrue, "Progressing", "analysis step 2 of 5").
		analysis(v1alpha1.CanaryAnalysis{
			Interval:   &metav1.Duration{Duration: 30 * time.Second},
			Threshold:  3,
			StepWeight: 10,
			Metrics: []v1alpha1.CanaryMetric{
				{Name: "error-rate", TemplateRef: &v1alpha1.TemplateReference{Name: "error-rate", Namespace: "serin-system"},
					ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(1.0)}, Interval: minute},
				{Name: "latency", TemplateRef: &v1alpha1.TemplateReference{Name: "latency"},
					ThresholdRange: &v1alpha1.ThresholdRange{Min: ptr.To(0.0), Max: ptr.To(500.0)}},
				{Name: v1alpha1.RequestSuccessRateCheck, ThresholdRange: &v1alpha1.ThresholdRange{Min: ptr.To(99.0)}, Interval: minute},
			},
			Webhooks: []v1alpha1.CanaryWebhook{
				{Name: "load-test", URL: "http://flagger-loadtester.test/"},
				{Name: "approve", Type: v1alpha1.ConfirmPromotionHook, URL: "http://gate.example/approve"},
			},
		}).obj()
	progressing.Status.FailedChecks = 1
	progressing.Status.LastTransitionTime = &metav1.MicroTime{Time: testNow.Add(-42 * time.Second)}
	progressing.Spec.GitOps = &v1alpha1.GitOpsSpec{Revert: &v1alpha1.RevertSpec{}}
	progressing.Status.Revert = &v1alpha1.RevertStatus{
		Revision:       "main@sha1:0badc0de",
		Branch:         "serin/revert/apps/podinfo/0badc0de",
		Commit:         "5ca1ab1e",
		PullRequestURL: "https://github.com/example/fleet/pull/42",
		State:          "Opened",
	}
	checks := func(rate, errRate string, verdict string) []v1alpha1.CheckResult {
		return []v1alpha1.CheckResult{
			{Name: "error-rate", Value: errRate, Max: "1", Verdict: verdict},
			{Name: v1alpha1.RequestSuccessRateCheck, Value: rate, Min: "99", Verdict: v1alpha1.VerdictPassed},
		}
	}
	at := func(ago time.Duration) metav1.MicroTime { return metav1.NewMicroTime(testNow.Add(-ago)) }
	progressing.Status.Analyses = []v1alpha1.AnalysisRecord{{
		Revision: longRevision, Spec: "5d8f7c", StartedAt: at(2 * time.Minute),
		Steps: []v1alpha1.AnalysisStep{
			{At: at(2 * time.Minute), Weight: 10, Verdict: v1alpha1.VerdictPassed, Checks: checks("100", "0.2", v1alpha1.VerdictPassed),
				Webhooks: []v1alpha1.WebhookResult{{Name: "load-test", Type: v1alpha1.RolloutHook, Verdict: v1alpha1.VerdictPassed}}},
			{At: at(42 * time.Second), Weight: 20, Verdict: v1alpha1.VerdictFailed, Message: "halting advancement: metric error-rate: 1.5 > 1 (thresholdRange.max)",
				Checks: checks("99.2", "1.5", v1alpha1.VerdictFailed), Webhooks: []v1alpha1.WebhookResult{{Name: "load-test", Type: v1alpha1.RolloutHook, Verdict: v1alpha1.VerdictPassed}}},
		},
	}}
	progressing.Status.Analyses[0].Steps[1].Checks[0].Message = "metric error-rate: 1.5 > 1 (thresholdRange.max)"

	// failed rolled back two hours ago: its events are gone, its record
	// says why.
	failed := makeCanary("apps", "checkout").revisions("main@sha1:badbadbad", promotedRevision).phase(v1alpha1.PhaseFailed, 0).
		ready(metav1.ConditionFalse, "Failed", "rolled back revision 7f7f7f: failed checks threshold reached 2").obj()
	failed.Status.Analyses = []v1alpha1.AnalysisRecord{
		{
			Revision: "main@sha1:badbadbad", Spec: "7f7f7f", StartedAt: at(3 * time.Hour), FinishedAt: ptr.To(at(2 * time.Hour)),
			Result: v1alpha1.PhaseFailed, Message: "rolled back revision 7f7f7f: failed checks threshold reached 2", OmittedSteps: 1,
			Steps: []v1alpha1.AnalysisStep{
				{At: at(150 * time.Minute), Weight: 20, Verdict: v1alpha1.VerdictPassed, Checks: checks("100", "0", v1alpha1.VerdictPassed)},
				{At: at(140 * time.Minute), Weight: 30, Verdict: v1alpha1.VerdictFailed, Checks: []v1alpha1.CheckResult{
					{Name: "error-rate", Max: "1", Verdict: v1alpha1.VerdictFailed, Message: "metric error-rate: no values found"},
					{Name: v1alpha1.RequestSuccessRateCheck, Value: "97.1", Min: "99", Verdict: v1alpha1.VerdictFailed, Message: "metric request-success-rate: 97.1 < 99 (thresholdRange.min)"},
				}, Webhooks: []v1alpha1.WebhookResult{{Name: "smoke", Type: v1alpha1.RolloutHook, Verdict: v1alpha1.VerdictFailed, Message: "answered 503"}}},
			},
		},
		{Revision: promotedRevision, Spec: "1a1a1a", StartedAt: at(48 * time.Hour), FinishedAt: ptr.To(at(47 * time.Hour)), Result: v1alpha1.PhaseSucceeded,
			Message: "revision 1a1a1a promoted", OmittedSteps: 2, Steps: []v1alpha1.AnalysisStep{{At: at(47 * time.Hour), Weight: 50, Verdict: v1alpha1.VerdictPassed}}},
	}
	uid := progressing.UID
	return []client.Object{
		progressing,
		failed,
		waveCanary(),
		makeCanary("apps", "bluegreen").blueGreen(10, 0).obj(),
		abTestCanary(),
		canaryEvent("e1", "podinfo", uid, 5*time.Minute, corev1.EventTypeNormal, "Progressing", "New revision detected"),
		canaryEvent("e2", "podinfo", uid, 30*time.Second, corev1.EventTypeWarning, "Progressing", "error-rate 1.5 > 1"),
		canaryEvent("e3", "podinfo", uid, 2*time.Minute, corev1.EventTypeNormal, "Progressing", "advancing canary weight to 10"),
		canaryEvent("old", "podinfo", "an-earlier-podinfo", time.Minute, corev1.EventTypeNormal, "Deleted", "not this one"),
		canaryEvent("other", "frontend", "uid-apps-frontend", time.Minute, corev1.EventTypeNormal, "Other", "not this one"),
	}
}

func TestGetCanary(t *testing.T) {
	tests := map[string]struct {
		args    []string
		golden  string
		wantErr string
	}{
		"rollout in progress with a revert": {
			args: []string{"get", "canary", "podinfo"}, golden: "progressing.golden",
		},
		"failed two hours ago: the analysis record says why": {
			args: []string{"get", "canary", "checkout"}, golden: "failed.golden",
		},
		"blue/green never reconciled": {
			args: []string{"get", "canary", "bluegreen", "-n", "apps"}, golden: "bluegreen.golden",
		},
		"promoted: its wave through three stages, and one not started": {
			args: []string{"get", "canary", "catalog"}, golden: "wave.golden",
		},
		"an A/B test, iterating": {
			args: []string{"get", "canary", "abtest", "-n", "apps"}, golden: "abtest.golden",
		},
		"not found": {
			args: []string{"get", "canary", "nope"}, wantErr: `Canary object 'nope' not found in "apps" namespace`,
		},
		"as JSON: the summary of get canaries and the Canary": {
			args: []string{"get", "canary", "checkout", "-o", "json"}, golden: "failed.json.golden",
		},
		"wide is for lists": {
			args: []string{"get", "canary", "checkout", "-o", "wide"}, wantErr: `unknown output format "wide": use json, yaml, or leave --output out`,
		},
		"name is required": {
			args: []string{"get", "canary"}, wantErr: "accepts 1 arg(s), received 0",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := newTestEnvironment(t, newFakeClient(describedCanaries()...))
			run := runCommand(context.Background(), env, tc.args...)
			if diff := cmp.Diff(tc.wantErr, errorText(run.err)); diff != "" {
				t.Fatalf("error differs (-want +got):\n%s", diff)
			}
			if tc.golden != "" {
				assertGolden(t, "get_canary/"+tc.golden, run.stdout)
			}
		})
	}
}

// waveCanary promoted a revision an hour ago, which is in its wave: qa
// promoted it (its pull request merged, the stage's Canary succeeded),
// staging's Git host failed twice, production soaks for another half
// hour; dr was added to the spec since and waits for the next revision.
func waveCanary() *v1alpha1.Canary {
	return makeCanary("apps", "catalog").revisions(promotedRevision, promotedRevision).phase(v1alpha1.PhaseSucceeded, 0).
		ready(metav1.ConditionTrue, "Succeeded", "promotion completed").stages("qa", "staging", "production", "dr").
		promotion(v1alpha1.PromotionStatus{
			Stage: "qa", Revision: promotedRevision, Phase: v1alpha1.WaveSucceeded, Images: []string{"ghcr.io/example/catalog:1.2.0"},
			Branch: "serin/promote/qa/catalog-89abcdef", Commit: "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00",
			PullRequestURL: "https://github.com/example/fleet/pull/51", StageCommit: "feedface00feedface00feedface00feedface00",
			URL: "https://serin.qa.example/canaries/apps/catalog", Message: "Canary apps/catalog: revision promoted",
		}, 20*time.Minute).
		promotion(v1alpha1.PromotionStatus{
			Stage: "staging", Revision: promotedRevision, Phase: v1alpha1.WavePromoting, Attempts: 2,
			NextAttemptTime: ptrTime(testNow.Add(40 * time.Second)),
			Message:         "attempt 2 failed, next in 40s: push to github.com/example/fleet: 503 Service Unavailable",
		}, 5*time.Minute).
		promotion(v1alpha1.PromotionStatus{
			Stage: "production", Revision: promotedRevision, Phase: v1alpha1.WaveSoaking,
			SoakUntil: ptrTime(testNow.Add(30 * time.Minute)),
			Message:   "soaking until 2026-05-04T10:30:00Z: the checks must keep passing on the primary",
		}, time.Hour).obj()
}

// abTestCanary is an A/B test of the insiders, at its second iteration.
func abTestCanary() *v1alpha1.Canary {
	c := makeCanary("apps", "abtest").phase(v1alpha1.PhaseProgressing, 100).analysis(v1alpha1.CanaryAnalysis{
		Iterations: 5,
		Match:      []v1alpha1.AnalysisMatch{{Headers: []v1alpha1.HTTPHeaderMatch{{Name: "x-canary", Value: "insider"}}}},
	}).obj()
	c.Spec.Routing = v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: []v1alpha1.GatewayReference{{Name: "public"}}}
	c.Status.Iterations = 2
	return c
}
