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
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// This file is the CanaryGroup's side of a release: which release its
// members are in, where each is, and the verdict, as the group's status
// reports them. The members decide for themselves (group.go); the group
// only reports.

// ReleaseMember is a member of a CanaryGroup as the group reads it to
// report its release.
type ReleaseMember struct {
	// Name, Found, Phase, Status and Message are as a member reads its
	// peers (Since is not read here).
	GroupPeer
	// ListedBy are the CanaryGroups that list the member, sorted by name.
	ListedBy []string
	// OtherShard, for a member not Found, says how the Canary that exists
	// by that name is outside the agent's shard (its labels and the
	// agent's selector); "" when there is no such Canary.
	OtherShard string
	// Weight is the canary's traffic percentage (status.canaryWeight).
	Weight int
	// AnalysisSummary summarises the member's latest analysis record.
	AnalysisSummary string
	// LastAttemptedRevision is the Flux revision the member analyses or
	// analysed last.
	LastAttemptedRevision string
	// Revert is the member's status.revert.
	Revert *v1alpha1.RevertStatus
}

// maxGroupHistory bounds status.history.
const maxGroupHistory = 5

// RecordRelease writes the group's current release into its status: the
// release before it goes to the history (unless it merged into this one),
// the verdict's time is kept once reached, and the group's phase is the
// release's (Initialized before the first).
func RecordRelease(st *v1alpha1.CanaryGroupStatus, group string, members []ReleaseMember, now time.Time) {
	release := CurrentRelease(group, members)
	if release == nil {
		if st.Phase == "" {
			st.Phase = v1alpha1.PhaseInitialized
		}
		return
	}
	if cur := st.Release; cur != nil && cur.Revision != release.Revision && (IsVerdict(cur.Phase) || heldByAMember(cur.Revision, members)) {
		// A release merged into another (members that began theirs at
		// the same moment) is no release of its own: not kept.
		st.History = append([]v1alpha1.GroupRelease{*cur}, st.History...)
		if len(st.History) > maxGroupHistory {
			st.History = st.History[:maxGroupHistory]
		}
	}
	if cur := st.Release; cur != nil && cur.Revision == release.Revision && cur.FinishedAt != nil && release.Phase == cur.Phase {
		release.FinishedAt = cur.FinishedAt
	}
	if release.FinishedAt == nil && IsVerdict(release.Phase) {
		t := metav1.NewTime(now)
		release.FinishedAt = &t
	}
	st.Release = release
	st.Phase = release.Phase
}

// heldByAMember reports whether a member's status names the release.
func heldByAMember(release string, members []ReleaseMember) bool {
	for _, m := range members {
		if st := m.Status; m.Found && st != nil && st.Release == release {
			return true
		}
	}
	return false
}

// IsVerdict reports whether a phase is a release's verdict.
func IsVerdict(p v1alpha1.CanaryPhase) bool {
	return p == v1alpha1.PhaseSucceeded || p == v1alpha1.PhaseFailed || p == v1alpha1.PhaseHalted
}

// CurrentRelease is the newest release the members (in spec.members
// order) joined, with each member's place in it and the verdict: Halted
// when a member's promotion halted, Failed when one failed, Succeeded
// when all were promoted; nil before the first.
func CurrentRelease(group string, members []ReleaseMember) *v1alpha1.GroupRelease {
	var key string
	var start time.Time
	for _, m := range members {
		st := m.Status
		if !m.Found || st == nil || st.Name != group || st.Release == "" || st.StartedAt == nil {
			continue
		}
		if key == "" || st.StartedAt.After(start) || (st.StartedAt.Time.Equal(start) && st.Release > key) {
			key, start = st.Release, st.StartedAt.Time
		}
	}
	if key == "" {
		return nil
	}
	rel := &v1alpha1.GroupRelease{Revision: key, Phase: v1alpha1.PhaseSucceeded}
	var in []ReleaseMember
	var halted, failed, firstFailed string
	for _, m := range members {
		st := m.Status
		if !m.Found || st == nil || st.Name != group || st.Release != key {
			continue
		}
		in = append(in, m)
		if st.StartedAt != nil && (rel.StartedAt == nil || st.StartedAt.Before(rel.StartedAt)) {
			rel.StartedAt = st.StartedAt.DeepCopy()
		}
		rel.Members = append(rel.Members, v1alpha1.GroupReleaseMember{
			Name: m.Name, Phase: m.Phase, Weight: m.Weight, StepsPassed: st.StepsPassed, Message: m.Message,
		})
		switch m.Phase {
		case v1alpha1.PhaseHalted:
			if halted == "" {
				halted = m.Name
			}
		case v1alpha1.PhaseFailed:
			if failed == "" {
				failed = m.Name
			}
			if st.FailedBy == "" && firstFailed == "" {
				firstFailed = m.Name
			}
		case v1alpha1.PhaseSucceeded:
		default:
			rel.Phase = v1alpha1.PhaseProgressing
		}
	}
	decider := func(name string) {
		m := in[slices.IndexFunc(in, func(m ReleaseMember) bool { return m.Name == name })]
		rel.DecidedBy = name
		rel.Message = fmt.Sprintf("%s %s: %s", name, strings.ToLower(string(m.Phase)), m.Message)
		if m.AnalysisSummary != "" && m.Phase == v1alpha1.PhaseFailed {
			rel.Message += "; analysis " + m.AnalysisSummary
		}
		if m.revertsItsRevision() {
			rel.RevertURL = cmp.Or(m.Revert.PullRequestURL, m.Revert.Branch)
		}
	}
	switch {
	case halted != "":
		rel.Phase = v1alpha1.PhaseHalted
		decider(halted)
	case firstFailed != "" || failed != "":
		rel.Phase = v1alpha1.PhaseFailed
		decider(cmp.Or(firstFailed, failed))
	case rel.Phase == v1alpha1.PhaseSucceeded:
		rel.Message = fmt.Sprintf("release %s promoted: %s", key, memberNames(rel.Members))
	default:
		rel.Message = fmt.Sprintf("release %s in progress: %s", key, memberSteps(rel.Members))
	}
	rel.Stages = ReleaseStages(key, members)
	if rel.Phase == v1alpha1.PhaseFailed && rel.RevertURL == "" {
		// The member that decided may not revert; another may have.
		for _, m := range in {
			if m.revertsItsRevision() && m.Revert.PullRequestURL != "" {
				rel.RevertURL = m.Revert.PullRequestURL
			}
		}
	}
	return rel
}

// revertsItsRevision reports whether the member's revert is of the
// revision it analysed last.
func (m ReleaseMember) revertsItsRevision() bool {
	return m.Revert != nil && m.Revert.Revision == m.LastAttemptedRevision
}

// memberNames lists the members of a release.
func memberNames(ms []v1alpha1.GroupReleaseMember) string {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Name
	}
	return strings.Join(names, ", ")
}

// memberSteps says where each member of a release is.
func memberSteps(ms []v1alpha1.GroupReleaseMember) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = fmt.Sprintf("%s %s (%d steps passed, weight %d)", m.Name, m.Phase, m.StepsPassed, m.Weight)
	}
	return strings.Join(parts, ", ")
}

// StrandedMembers names the members rolled back with an earlier release
// (than current) whose target Git still has at the revision that was
// rolled back: they serve their last promoted revision until a new
// revision or a retry, and the group is not Ready meanwhile.
func StrandedMembers(group string, current *v1alpha1.GroupRelease, members []ReleaseMember) []string {
	var out []string
	for _, m := range members {
		if !m.Found || m.Phase != v1alpha1.PhaseFailed || m.Status == nil || m.Status.FailedBy == "" {
			continue
		}
		if current != nil && current.Revision == m.Status.Release {
			continue // the current release's verdict says it
		}
		out = append(out, fmt.Sprintf("member %s was rolled back with release %s (%s failed) and serves its last promoted revision: commit a new revision or run serin retry --group %s",
			m.Name, m.Status.Release, m.Status.FailedBy, group))
	}
	return out
}

// VerdictVia names the member whose Flux bridge sends the release's
// verdict: the one that decided it, else the first member by name.
func VerdictVia(rel *v1alpha1.GroupRelease) string {
	if rel.DecidedBy != "" || len(rel.Members) == 0 {
		return rel.DecidedBy
	}
	return slices.MinFunc(rel.Members, func(a, b v1alpha1.GroupReleaseMember) int { return strings.Compare(a.Name, b.Name) }).Name
}
