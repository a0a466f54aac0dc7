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
	"strings"

	"github.com/fluxcd/pkg/apis/meta"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/record"
)

// verdictKind is where `serin wait` stands on a rollout.
type verdictKind int

const (
	// verdictPending: the rollout is under way, or has not started.
	verdictPending verdictKind = iota
	// verdictSucceeded: the revision serves (promoted, or nothing to roll out).
	verdictSucceeded
	// verdictFailed: the rollout failed or halted, or the object stalled.
	verdictFailed
)

// verdict is what `serin wait` makes of a Canary or a CanaryGroup: whether
// to go on waiting, and a line saying why.
type verdict struct {
	kind verdictKind
	// state is a line on where the object stands: phase, weight, message.
	state string
	// details are lines under a failure: the failed checks, the revert.
	details []string
}

// canaryVerdict decides a Canary's rollout of revision, or of whatever it
// rolls out when revision is empty. It is pure, so that every case is a
// row of a table test.
//
// With a revision, the Canary must have seen it: it is the revision under
// analysis (status.lastAttemptedRevision) and the rollout ended, or it was
// promoted before a later one came (status.lastPromotedRevision). A
// revision whose spec the primary already runs is accepted without
// analysis, whatever the phase of the rollout before.
func canaryVerdict(c *v1alpha1.Canary, revision string) verdict {
	st := c.Status
	state := canaryState(c)
	if revision != "" {
		attempted := revisionCovers(st.LastAttemptedRevision, revision)
		switch {
		case !attempted && revisionCovers(st.LastPromotedRevision, revision):
			return verdict{kind: verdictSucceeded, state: fmt.Sprintf("revision %s was promoted; now %s", st.LastPromotedRevision, state)}
		case !attempted:
			if v, ok := stalledBeforeRevision(c, st.Conditions, st.ObservedGeneration, string(st.Phase)); ok {
				// Stalled on its spec or target: it will not attempt the
				// revision until a person acts.
				return v
			}
			return verdict{state: fmt.Sprintf("waiting for the Canary to see revision %s (it has %s); %s",
				revision, orNone(st.LastAttemptedRevision), state)}
		case st.Phase == v1alpha1.PhaseFailed && st.LastAppliedSpec != "" && st.LastAppliedSpec == st.LastPromotedSpec:
			return verdict{kind: verdictSucceeded, state: fmt.Sprintf("revision %s runs on the primary already: no analysis needed", st.LastAttemptedRevision)}
		}
	}
	if v, blocked := stalledOrUnobserved(c, st.Conditions, st.ObservedGeneration, string(st.Phase), state); blocked {
		if v.kind == verdictFailed {
			v.details = failureDetails(c)
		}
		return v
	}
	switch st.Phase {
	case v1alpha1.PhaseSucceeded, v1alpha1.PhaseInitialized:
		if ready := apimeta.FindStatusCondition(st.Conditions, meta.ReadyCondition); ready == nil || ready.Status != metav1.ConditionTrue {
			// Promoted, but the primary does not serve yet.
			return verdict{state: state}
		}
		return verdict{kind: verdictSucceeded, state: state}
	case v1alpha1.PhaseFailed, v1alpha1.PhaseHalted:
		return verdict{kind: verdictFailed, state: state, details: failureDetails(c)}
	}
	return verdict{state: state}
}

// canaryState says where a Canary stands: "Progressing, weight 20:
// advancing canary weight to 20", with the revision under analysis.
func canaryState(c *v1alpha1.Canary) string {
	_, message := readyStatusAndMessage(c.Status.Conditions)
	head := phaseOrUnreconciled(c.Status.Phase)
	if c.Status.CanaryWeight > 0 {
		head += fmt.Sprintf(", weight %d", c.Status.CanaryWeight)
	}
	if r := c.Status.LastAttemptedRevision; r != "" {
		head += ", revision " + shortenHashes(r)
	}
	return joinNonEmpty(": ", head, message)
}

// failureDetails are the lines under a failed rollout: the checks and
// webhooks of the step that decided it, and the GitOps revert.
func failureDetails(c *v1alpha1.Canary) []string {
	var lines []string
	if step := record.Decisive(record.Latest(&c.Status)); step != nil && step.Verdict != v1alpha1.VerdictPassed {
		for _, check := range step.Checks {
			if check.Verdict != v1alpha1.VerdictPassed {
				lines = append(lines, "failed check: "+record.CheckLine(check))
			}
		}
		for _, hook := range step.Webhooks {
			if hook.Verdict != v1alpha1.VerdictPassed {
				lines = append(lines, fmt.Sprintf("failed webhook: %s (%s): %s", hook.Name, hook.Type, joinNonEmpty(": ", hook.Verdict, hook.Message)))
			}
		}
		if len(lines) == 0 && step.Message != "" {
			lines = append(lines, "failed step: "+step.Message)
		}
	}
	if r := c.Status.Revert; r != nil {
		lines = append(lines, "revert: "+joinNonEmpty(" ", r.State, r.PullRequestURL))
	}
	return lines
}

// groupVerdict decides a CanaryGroup's release of revision, or its current
// release when revision is empty: a release of the revision among the
// earlier ones is final too.
func groupVerdict(g *v1alpha1.CanaryGroup, revision string) verdict {
	st := g.Status
	if revision != "" {
		release := st.Release
		if release == nil || !revisionCovers(release.Revision, revision) {
			release = nil
			for i := range st.History {
				if revisionCovers(st.History[i].Revision, revision) {
					release = &st.History[i]
					break
				}
			}
		}
		if release != nil {
			if v := releaseVerdict(*release); v.kind != verdictPending {
				return v
			}
		}
		if v, ok := stalledBeforeRevision(g, st.Conditions, st.ObservedGeneration, string(st.Phase)); ok {
			// Stalled (an invalid group, members left unreleased): no
			// release of the revision ends until a person acts.
			return v
		}
		if release != nil {
			return releaseVerdict(*release)
		}
		current := "none"
		if st.Release != nil {
			current = st.Release.Revision
		}
		return verdict{state: fmt.Sprintf("waiting for a release of revision %s (the current release is %s); %s",
			revision, current, groupState(g))}
	}
	v, blocked := stalledOrUnobserved(g, st.Conditions, st.ObservedGeneration, string(st.Phase), groupState(g))
	if !blocked {
		switch st.Phase {
		case v1alpha1.PhaseSucceeded, v1alpha1.PhaseInitialized:
			v.kind = verdictSucceeded
		case v1alpha1.PhaseFailed, v1alpha1.PhaseHalted:
			v.kind = verdictFailed
		}
	}
	if v.kind == verdictFailed && st.Release != nil {
		v.details = releaseDetails(*st.Release)
	}
	return v
}

// stalledOrUnobserved is the verdict on an object that kstatus reads as
// failed (Stalled is True: a person must act) or as not reconciled yet
// (the agent has not observed its generation), and whether it is either;
// else a pending verdict saying state.
//
// As kstatus reads it, a Stalled condition of a generation the agent has
// not reconciled yet is not the object's word on its spec: a fix applied
// since waits for the agent instead of failing.
func stalledOrUnobserved(object metav1.Object, conditions []metav1.Condition, observedGeneration int64, phase, state string) (verdict, bool) {
	if object.GetGeneration() > observedGeneration {
		return verdict{state: fmt.Sprintf("waiting for serin to reconcile generation %d; %s", object.GetGeneration(), state)}, true
	}
	if stalled := stalledCondition(conditions); stalled != nil {
		return verdict{kind: verdictFailed, state: joinNonEmpty(": ", phase, stalled.Message)}, true
	}
	return verdict{state: state}, false
}

// stalledCondition is the Stalled condition when it is True, else nil.
func stalledCondition(conditions []metav1.Condition) *metav1.Condition {
	stalled := apimeta.FindStatusCondition(conditions, meta.StalledCondition)
	if stalled == nil || stalled.Status != metav1.ConditionTrue {
		return nil
	}
	return stalled
}

// earlierVerdictReasons are the Stalled reasons that record the verdict of
// a rollout or release that ended (rolled back, halted): about the
// revision it rolled out, not about one that comes after it.
var earlierVerdictReasons = map[string]bool{
	v1alpha1.FailedReason:          true,
	v1alpha1.HaltedReason:          true,
	v1alpha1.PromotionFailedReason: true,
	v1alpha1.GroupFailedReason:     true,
}

// stalledBeforeRevision is the failed verdict on an object that has no
// verdict on the revision waited for yet and is Stalled, and whether it
// is: a stall on its spec, its target or its members (a person must act
// before it rolls out anything), once the agent reconciled its generation.
// The stall that records an earlier revision's failure (a Failed or
// Halted phase, for that reason) is not one: the waited revision may
// still come and be rolled out.
func stalledBeforeRevision(object metav1.Object, conditions []metav1.Condition, observedGeneration int64, phase string) (verdict, bool) {
	stalled := stalledCondition(conditions)
	if stalled == nil || object.GetGeneration() > observedGeneration {
		return verdict{}, false
	}
	failedPhase := phase == string(v1alpha1.PhaseFailed) || phase == string(v1alpha1.PhaseHalted)
	if failedPhase && earlierVerdictReasons[stalled.Reason] {
		return verdict{}, false
	}
	return verdict{kind: verdictFailed, state: joinNonEmpty(": ", phase, stalled.Message)}, true
}

// phaseOrUnreconciled names a phase, or says there is none yet.
func phaseOrUnreconciled(phase v1alpha1.CanaryPhase) string {
	if phase == "" {
		return "not reconciled yet"
	}
	return string(phase)
}

// releaseVerdict decides one release of a group.
func releaseVerdict(r v1alpha1.GroupRelease) verdict {
	state := joinNonEmpty(": ", fmt.Sprintf("release %s %s", shortenHashes(r.Revision), r.Phase), r.Message)
	switch r.Phase {
	case v1alpha1.PhaseSucceeded:
		return verdict{kind: verdictSucceeded, state: state}
	case v1alpha1.PhaseFailed, v1alpha1.PhaseHalted:
		return verdict{kind: verdictFailed, state: state, details: releaseDetails(r)}
	}
	return verdict{state: state}
}

// groupState says where a group stands: its phase, the release and each
// member, and the Ready message.
func groupState(g *v1alpha1.CanaryGroup) string {
	_, message := readyStatusAndMessage(g.Status.Conditions)
	phase := phaseOrUnreconciled(g.Status.Phase)
	if r := g.Status.Release; r != nil {
		members := make([]string, len(r.Members))
		for i, m := range r.Members {
			members[i] = m.Name + ":" + string(m.Phase)
		}
		phase += fmt.Sprintf(", release %s (%s)", shortenHashes(r.Revision), strings.Join(members, " "))
	}
	return joinNonEmpty(": ", phase, message)
}

// releaseDetails are the lines under a failed release: the member that
// decided it, and the revert.
func releaseDetails(r v1alpha1.GroupRelease) []string {
	var lines []string
	if r.DecidedBy != "" {
		lines = append(lines, "decided by: "+r.DecidedBy)
	}
	if r.RevertURL != "" {
		lines = append(lines, "revert: "+r.RevertURL)
	}
	return lines
}

// minDigestPrefix is the shortest digest --revision may give: Git's short
// SHA.
const minDigestPrefix = 7

// revisionCovers tells whether have, a Flux revision (main@sha1:<sha>,
// v1.2.3@sha256:<digest>, sha256:<digest>, or the older main/<sha>), is
// the revision want names: the same string, or one whose digest starts
// with want's digest (at least minDigestPrefix characters) and, when want
// names a ref (main@…), of that ref. want may be a bare SHA or its prefix.
func revisionCovers(have, want string) bool {
	if have == "" || want == "" {
		return false
	}
	if have == want {
		return true
	}
	haveRef, haveDigest := splitRevision(have)
	wantRef, wantDigest := splitRevision(want)
	if wantRef != "" && wantRef != haveRef {
		return false
	}
	wantDigest = strings.ToLower(wantDigest)
	return len(wantDigest) >= minDigestPrefix && haveDigest != "" && strings.HasPrefix(haveDigest, wantDigest)
}

// splitRevision splits a Flux revision into its ref and its digest without
// the algorithm: main@sha1:abc → main, abc; sha1:abc → "", abc; abc → "",
// abc; main/abc (Flux before v2.0) → main, abc.
func splitRevision(revision string) (ref, digest string) {
	if at := strings.LastIndex(revision, "@"); at >= 0 {
		ref, digest = revision[:at], revision[at+1:]
	} else if slash := strings.LastIndex(revision, "/"); slash >= 0 && isHex(revision[slash+1:]) {
		ref, digest = revision[:slash], revision[slash+1:]
	} else {
		digest = revision
	}
	if _, d, ok := strings.Cut(digest, ":"); ok {
		digest = d
	}
	if !isHex(digest) {
		return ref, ""
	}
	return ref, digest
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range strings.ToLower(s) {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}
