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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

const (
	waitedRevision = "main@sha1:5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed"
	otherRevision  = "main@sha1:0ddba11c0ddba11c0ddba11c0ddba11c0ddba11c"
)

func TestRevisionCovers(t *testing.T) {
	tests := map[string]struct {
		have, want string
		covers     bool
	}{
		"the same revision":                {waitedRevision, waitedRevision, true},
		"a prefix of the SHA":              {waitedRevision, "5eed5ee", true},
		"a prefix with the algorithm":      {waitedRevision, "sha1:5eed5eed", true},
		"a prefix with the ref":            {waitedRevision, "main@sha1:5eed5eed", true},
		"upper case":                       {waitedRevision, "5EED5EED", true},
		"too short a prefix":               {waitedRevision, "5eed5e", false},
		"another SHA":                      {waitedRevision, "0ddba11c", false},
		"another ref":                      {waitedRevision, "dev@sha1:5eed5eed", false},
		"an OCI digest":                    {"v1.2.3@sha256:" + strings.Repeat("ab", 32), "sha256:abababab", true},
		"Flux v1's ref/sha":                {"main/5eed5eed5eed5eed", "5eed5eed", true},
		"nothing seen yet":                 {"", "5eed5eed", false},
		"a group's window revision, exact": {"window@2026-05-04T10:00:00Z", "window@2026-05-04T10:00:00Z", true},
		"not hexadecimal":                  {"main@sha1:5eed5eed", "main", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := revisionCovers(tc.have, tc.want); got != tc.covers {
				t.Errorf("revisionCovers(%q, %q) = %v, want %v", tc.have, tc.want, got, tc.covers)
			}
		})
	}
}

// settled is a Canary the agent has reconciled, at revision.
func settled(phase v1alpha1.CanaryPhase, attempted, promoted string) *canaryBuilder {
	return makeCanary("apps", "podinfo").generation(1, 1).revisions(attempted, promoted).phase(phase, 0)
}

// failedAnalysis records a rollout of revision that a check failed.
func failedAnalysis(c *v1alpha1.Canary, revision string) *v1alpha1.Canary {
	c.Status.Analyses = []v1alpha1.AnalysisRecord{{Revision: revision, Spec: "bad", Result: v1alpha1.PhaseFailed,
		Steps: []v1alpha1.AnalysisStep{{Weight: 10, Verdict: v1alpha1.VerdictFailed, Checks: []v1alpha1.CheckResult{
			{Name: "error-rate", Value: "1.5", Max: "1", Verdict: v1alpha1.VerdictFailed},
			{Name: "latency", Value: "200", Max: "500", Verdict: v1alpha1.VerdictPassed},
		}}}}}
	c.Status.Revert = &v1alpha1.RevertStatus{Revision: revision, State: "Opened", PullRequestURL: "https://github.com/example/fleet/pull/42"}
	return c
}

func TestCanaryVerdict(t *testing.T) {
	stalled := func(b *canaryBuilder, reason, message string) *v1alpha1.Canary {
		return b.ready(metav1.ConditionFalse, reason, message).condition("Stalled", metav1.ConditionTrue, reason, message).obj()
	}
	accepted := settled(v1alpha1.PhaseFailed, waitedRevision, otherRevision).
		ready(metav1.ConditionFalse, "Failed", "rolled back").obj()
	accepted.Status.LastAppliedSpec, accepted.Status.LastPromotedSpec = "same", "same"

	tests := map[string]struct {
		canary      *v1alpha1.Canary
		revision    string
		wantKind    verdictKind
		wantState   string
		wantDetails []string
	}{
		"succeeded": {
			canary:   settled(v1alpha1.PhaseSucceeded, waitedRevision, waitedRevision).ready(metav1.ConditionTrue, "Succeeded", "promoted").obj(),
			wantKind: verdictSucceeded, wantState: "Succeeded, revision main@sha1:5eed5eed: promoted",
		},
		"initialized, nothing to roll out": {
			canary:   settled(v1alpha1.PhaseInitialized, "", "").ready(metav1.ConditionTrue, "Initialized", "initialized").obj(),
			wantKind: verdictSucceeded, wantState: "Initialized: initialized",
		},
		"progressing": {
			canary:    settled(v1alpha1.PhaseProgressing, waitedRevision, otherRevision).phase(v1alpha1.PhaseProgressing, 20).ready(metav1.ConditionFalse, "Progressing", "advancing canary weight to 20").obj(),
			wantState: "Progressing, weight 20, revision main@sha1:5eed5eed: advancing canary weight to 20",
		},
		"succeeded, but the primary does not serve yet": {
			canary:    settled(v1alpha1.PhaseSucceeded, waitedRevision, waitedRevision).ready(metav1.ConditionFalse, "PrimaryUnavailable", "no pod ready").obj(),
			wantState: "Succeeded, revision main@sha1:5eed5eed: no pod ready",
		},
		"never reconciled": {
			canary:    makeCanary("apps", "podinfo").obj(),
			wantState: "waiting for serin to reconcile generation 1; not reconciled yet: waiting to be reconciled",
		},
		"failed: the failed check and the revert": {
			canary:    failedAnalysis(stalled(settled(v1alpha1.PhaseFailed, waitedRevision, otherRevision), "Failed", "rolled back: failed checks threshold reached 1"), waitedRevision),
			wantKind:  verdictFailed,
			wantState: "Failed: rolled back: failed checks threshold reached 1",
			wantDetails: []string{"failed check: error-rate 1.5 (max 1): Failed",
				"revert: Opened https://github.com/example/fleet/pull/42"},
		},
		"halted": {
			canary:   settled(v1alpha1.PhaseHalted, waitedRevision, otherRevision).ready(metav1.ConditionFalse, "Halted", "primary not ready").obj(),
			wantKind: verdictFailed, wantState: "Halted, revision main@sha1:5eed5eed: primary not ready",
		},
		"stalled before any rollout": {
			canary:   stalled(settled(v1alpha1.PhaseInitializing, "", ""), "TargetNotFound", "Deployment podinfo not found"),
			wantKind: verdictFailed, wantState: "Initializing: Deployment podinfo not found",
		},
		"revision: not seen yet, the failure of the one before does not count": {
			canary:    stalled(settled(v1alpha1.PhaseFailed, otherRevision, ""), "Failed", "rolled back"),
			revision:  "5eed5eed",
			wantState: "waiting for the Canary to see revision 5eed5eed (it has main@sha1:0ddba11c0ddba11c0ddba11c0ddba11c0ddba11c); Failed, revision main@sha1:0ddba11c: rolled back",
		},
		"revision: under analysis": {
			canary:    settled(v1alpha1.PhaseProgressing, waitedRevision, otherRevision).ready(metav1.ConditionFalse, "Progressing", "step 1").obj(),
			revision:  "main@sha1:5eed5eed",
			wantState: "Progressing, revision main@sha1:5eed5eed: step 1",
		},
		"revision: promoted": {
			canary:   settled(v1alpha1.PhaseSucceeded, waitedRevision, waitedRevision).ready(metav1.ConditionTrue, "Succeeded", "promoted").obj(),
			revision: "5eed5eed", wantKind: verdictSucceeded, wantState: "Succeeded, revision main@sha1:5eed5eed: promoted",
		},
		"revision: promoted, and a later one failed since": {
			canary:   stalled(settled(v1alpha1.PhaseFailed, otherRevision, waitedRevision), "Failed", "rolled back"),
			revision: "5eed5eed", wantKind: verdictSucceeded,
			wantState: "revision main@sha1:5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed was promoted; now Failed, revision main@sha1:0ddba11c: rolled back",
		},
		"revision: failed": {
			canary:   stalled(settled(v1alpha1.PhaseFailed, waitedRevision, otherRevision), "Failed", "rolled back"),
			revision: "5eed5eed", wantKind: verdictFailed, wantState: "Failed: rolled back",
		},
		"revision: stalled on its target before attempting it": {
			canary:   stalled(settled(v1alpha1.PhaseInitialized, otherRevision, otherRevision), "TargetNotFound", "Deployment podinfo not found"),
			revision: "5eed5eed", wantKind: verdictFailed, wantState: "Initialized: Deployment podinfo not found",
		},
		"revision: stalled on its spec after an earlier revision failed": {
			canary:   stalled(settled(v1alpha1.PhaseFailed, otherRevision, ""), "InvalidGeneratedObject", "Service podinfo-canary: spec.ports[0].port: Invalid value"),
			revision: "5eed5eed", wantKind: verdictFailed, wantState: "Failed: Service podinfo-canary: spec.ports[0].port: Invalid value",
		},
		"revision: a stall of a generation the agent has not reconciled yet": {
			canary:    stalled(settled(v1alpha1.PhaseInitialized, otherRevision, otherRevision).generation(2, 1), "TargetNotFound", "Deployment podinfo not found"),
			revision:  "5eed5eed",
			wantState: "waiting for the Canary to see revision 5eed5eed (it has main@sha1:0ddba11c0ddba11c0ddba11c0ddba11c0ddba11c); Initialized, revision main@sha1:0ddba11c: Deployment podinfo not found",
		},
		"stalled, but on a generation the agent has not reconciled yet": {
			canary:    stalled(settled(v1alpha1.PhaseInitializing, "", "").generation(2, 1), "TargetNotFound", "Deployment podinfo not found"),
			wantState: "waiting for serin to reconcile generation 2; Initializing: Deployment podinfo not found",
		},
		"revision: the primary runs its spec already (a revert in Git after a failure)": {
			canary: accepted, revision: waitedRevision, wantKind: verdictSucceeded,
			wantState: "revision main@sha1:5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed runs on the primary already: no analysis needed",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := canaryVerdict(tc.canary, tc.revision)
			want := verdict{kind: tc.wantKind, state: tc.wantState, details: tc.wantDetails}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(verdict{})); diff != "" {
				t.Errorf("verdict differs (-want +got):\n%s", diff)
			}
		})
	}
}

// reconciled makes the agent have reconciled the group's generation.
func reconciled(b *groupBuilder) *groupBuilder {
	b.group.Status.ObservedGeneration = b.group.Generation
	return b
}

func TestGroupVerdict(t *testing.T) {
	member := func(name string, phase v1alpha1.CanaryPhase) v1alpha1.GroupReleaseMember {
		return releaseMember(name, phase, 0, 1, "")
	}
	failed := reconciled(makeGroup("apps", "storefront", "api", "web").
		release(waitedRevision, v1alpha1.PhaseFailed, time.Hour, member("api", v1alpha1.PhaseFailed), member("web", v1alpha1.PhaseFailed)).
		verdict(time.Minute, "api", "api failed", "https://github.com/example/fleet/pull/43")).
		ready(metav1.ConditionFalse, "Failed", "release failed: api failed").obj()
	succeededBefore := reconciled(makeGroup("apps", "storefront", "api").
		release(otherRevision, v1alpha1.PhaseProgressing, time.Minute, member("api", v1alpha1.PhaseProgressing)).
		history(v1alpha1.GroupRelease{Revision: waitedRevision, Phase: v1alpha1.PhaseSucceeded, Message: "all 1 members promoted"})).
		ready(metav1.ConditionFalse, "Progressing", "release under way").obj()

	tests := map[string]struct {
		group       *v1alpha1.CanaryGroup
		revision    string
		wantKind    verdictKind
		wantState   string
		wantDetails []string
	}{
		"no release yet": {
			group:    reconciled(makeGroup("apps", "billing", "invoices").phase(v1alpha1.PhaseInitialized)).ready(metav1.ConditionTrue, "Initialized", "no release yet").obj(),
			wantKind: verdictSucceeded, wantState: "Initialized: no release yet",
		},
		"failed release: who decided it, the revert": {
			group: failed, wantKind: verdictFailed,
			wantState:   "Failed, release main@sha1:5eed5eed (api:Failed web:Failed): release failed: api failed",
			wantDetails: []string{"decided by: api", "revert: https://github.com/example/fleet/pull/43"},
		},
		"release under way": {
			group:     succeededBefore,
			wantState: "Progressing, release main@sha1:0ddba11c (api:Progressing): release under way",
		},
		"revision: an earlier release succeeded": {
			group: succeededBefore, revision: "5eed5eed", wantKind: verdictSucceeded,
			wantState: "release main@sha1:5eed5eed Succeeded: all 1 members promoted",
		},
		"revision: no release of it, the group stalled": {
			group: reconciled(makeGroup("apps", "storefront", "api").phase(v1alpha1.PhaseInitialized)).
				stalled("InvalidGroup", "member api: dependsOn forms a cycle").obj(),
			revision: "5eed5eed", wantKind: verdictFailed, wantState: "Initialized: member api: dependsOn forms a cycle",
		},
		"revision: its release under way, the group stalled": {
			group: reconciled(makeGroup("apps", "storefront", "api").
				release(waitedRevision, v1alpha1.PhaseProgressing, time.Minute, member("api", v1alpha1.PhaseProgressing))).
				stalled("InvalidGroup", "Canary api is listed by two groups").obj(),
			revision: "5eed5eed", wantKind: verdictFailed, wantState: "Progressing: Canary api is listed by two groups",
		},
		"revision: no release of it yet, the earlier release failed": {
			group: reconciled(makeGroup("apps", "storefront", "api").
				release(otherRevision, v1alpha1.PhaseFailed, time.Hour, member("api", v1alpha1.PhaseFailed))).
				stalled("Failed", "release failed: api failed").obj(),
			revision: "5eed5eed",
			wantState: "waiting for a release of revision 5eed5eed (the current release is main@sha1:0ddba11c0ddba11c0ddba11c0ddba11c0ddba11c); " +
				"Failed, release main@sha1:0ddba11c (api:Failed): release failed: api failed",
		},
		"revision: no release of it yet": {
			group: failed, revision: "0ddba11c",
			wantState: "waiting for a release of revision 0ddba11c (the current release is main@sha1:5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed); " +
				"Failed, release main@sha1:5eed5eed (api:Failed web:Failed): release failed: api failed",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := groupVerdict(tc.group, tc.revision)
			want := verdict{kind: tc.wantKind, state: tc.wantState, details: tc.wantDetails}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(verdict{})); diff != "" {
				t.Errorf("verdict differs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWait(t *testing.T) {
	progressing := settled(v1alpha1.PhaseProgressing, waitedRevision, otherRevision).phase(v1alpha1.PhaseProgressing, 10).
		ready(metav1.ConditionFalse, "Progressing", "advancing canary weight to 10").obj()
	succeed := func(c *v1alpha1.Canary) bool {
		if c.Status.Phase == v1alpha1.PhaseSucceeded {
			return false
		}
		c.Status.Phase, c.Status.CanaryWeight, c.Status.LastPromotedRevision = v1alpha1.PhaseSucceeded, 0, c.Status.LastAttemptedRevision
		c.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Succeeded",
			Message: "promotion completed", LastTransitionTime: metav1.NewTime(testNow)}}
		return true
	}
	tests := map[string]struct {
		args     []string
		objects  []client.Object
		agent    func(*v1alpha1.Canary) bool
		wantCode int
		wantErr  string
		// wantStderr are lines standard error must hold.
		wantStderr []string
	}{
		"the rollout succeeds": {
			args: []string{"wait", "canary", "podinfo", "--revision", "5eed5eed"}, objects: []client.Object{progressing}, agent: succeed,
			wantStderr: []string{
				"◎ waiting for Canary podinfo in apps namespace: the verdict of revision 5eed5eed (timeout 10m0s)",
				"◎ Progressing, weight 10, revision main@sha1:5eed5eed: advancing canary weight to 10",
				"✔ Canary podinfo in apps namespace succeeded: Succeeded, revision main@sha1:5eed5eed: promotion completed",
			},
		},
		"the rollout failed": {
			args:     []string{"wait", "canary", "podinfo"},
			objects:  []client.Object{failedAnalysis(settled(v1alpha1.PhaseFailed, waitedRevision, otherRevision).ready(metav1.ConditionFalse, "Failed", "rolled back").obj(), waitedRevision)},
			wantCode: ExitFailed,
			wantErr: "Canary podinfo in apps namespace failed: Failed, revision main@sha1:5eed5eed: rolled back\n" +
				"  failed check: error-rate 1.5 (max 1): Failed\n  revert: Opened https://github.com/example/fleet/pull/42",
		},
		"timeout": {
			args: []string{"wait", "canary", "podinfo", "--timeout", "100ms"}, objects: []client.Object{progressing},
			wantCode: ExitTimeout,
			wantErr:  "timed out after 100ms waiting for Canary podinfo in apps namespace: Progressing, weight 10, revision main@sha1:5eed5eed: advancing canary weight to 10",
		},
		"not found": {
			args: []string{"wait", "canary", "nope"}, wantCode: ExitCannotWait, wantErr: `Canary object 'nope' not found in "apps" namespace`,
		},
		"suspended": {
			args: []string{"wait", "canary", "podinfo"}, objects: []client.Object{settled(v1alpha1.PhaseProgressing, waitedRevision, "").suspended().obj()},
			wantCode: ExitCannotWait,
			wantErr:  "Canary podinfo in apps namespace is suspended: it takes no step until resumed (serin resume podinfo)",
		},
		"no name": {
			args: []string{"wait", "canary"}, wantCode: ExitCannotWait, wantErr: "accepts 1 arg(s), received 0",
		},
		"an unknown flag": {
			args: []string{"wait", "canary", "podinfo", "--for", "ready"}, wantCode: ExitCannotWait, wantErr: "unknown flag: --for",
		},
		"stalled before the revision is attempted": {
			args: []string{"wait", "canary", "podinfo", "--revision", "5eed5eed", "--timeout", "5s"},
			objects: []client.Object{settled(v1alpha1.PhaseInitialized, otherRevision, otherRevision).
				ready(metav1.ConditionFalse, "TargetNotFound", "Deployment podinfo not found").
				condition("Stalled", metav1.ConditionTrue, "TargetNotFound", "Deployment podinfo not found").obj()},
			wantCode: ExitFailed,
			wantErr:  "Canary podinfo in apps namespace failed: Initialized: Deployment podinfo not found",
		},
		"stalled, no revision": {
			args: []string{"wait", "canary", "podinfo"},
			objects: []client.Object{settled(v1alpha1.PhaseInitializing, "", "").
				ready(metav1.ConditionFalse, "AccessDenied", "cross-namespace reference refused").
				condition("Stalled", metav1.ConditionTrue, "AccessDenied", "cross-namespace reference refused").obj()},
			wantCode: ExitFailed,
			wantErr:  "Canary podinfo in apps namespace failed: Initializing: cross-namespace reference refused",
		},
		"a stalled group, with a revision": {
			args: []string{"wait", "group", "storefront", "--revision", "5eed5eed", "--timeout", "5s"},
			objects: []client.Object{reconciled(makeGroup("apps", "storefront", "podinfo").phase(v1alpha1.PhaseInitialized)).
				stalled("InvalidGroup", "member podinfo: dependsOn forms a cycle").obj()},
			wantCode: ExitFailed,
			wantErr:  "CanaryGroup storefront in apps namespace failed: Initialized: member podinfo: dependsOn forms a cycle",
		},
		"a stalled group, no revision": {
			args: []string{"wait", "group", "storefront"},
			objects: []client.Object{reconciled(makeGroup("apps", "storefront", "podinfo").phase(v1alpha1.PhaseInitialized)).
				stalled("InvalidGroup", "member podinfo: dependsOn forms a cycle").obj()},
			wantCode: ExitFailed,
			wantErr:  "CanaryGroup storefront in apps namespace failed: Initialized: member podinfo: dependsOn forms a cycle",
		},
		"a group whose release failed": {
			args: []string{"wait", "group", "storefront"},
			objects: []client.Object{reconciled(makeGroup("apps", "storefront", "podinfo").
				release(waitedRevision, v1alpha1.PhaseFailed, time.Hour, releaseMember("podinfo", v1alpha1.PhaseFailed, 0, 1, "")).
				verdict(time.Minute, "podinfo", "podinfo failed", "")).ready(metav1.ConditionFalse, "Failed", "release failed: podinfo failed").obj()},
			wantCode: ExitFailed,
			wantErr: "CanaryGroup storefront in apps namespace failed: Failed, release main@sha1:5eed5eed (podinfo:Failed): release failed: podinfo failed\n" +
				"  decided by: podinfo",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			kube := newFakeClient(tc.objects...)
			env := newTestEnvironment(t, kube)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.agent != nil {
				go func() {
					time.Sleep(50 * time.Millisecond) // the command sees the rollout under way first
					fakeAgent(ctx, kube, client.ObjectKey{Namespace: "apps", Name: "podinfo"}, tc.agent)
				}()
			}
			run := runCommand(ctx, env, tc.args...)
			if diff := cmp.Diff(tc.wantErr, errorText(run.err)); diff != "" {
				t.Errorf("error differs (-want +got):\n%s", diff)
			}
			if got := ExitCode(run.err); got != tc.wantCode {
				t.Errorf("exit code %d, want %d", got, tc.wantCode)
			}
			for _, line := range tc.wantStderr {
				if !strings.Contains(run.stderr, line+"\n") {
					t.Errorf("standard error lacks %q:\n%s", line, run.stderr)
				}
			}
		})
	}
}
