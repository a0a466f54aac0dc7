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

	"github.com/serin-dev/serin/api/v1alpha1"
)

// This file is the waves of a group's release: a release promoted whole
// (ReleaseWaveGate) goes to each next stage as one promotion, written by
// one member for every member of the release that promotes to the same
// stage of the same repository and branch (ReleaseStageOf), with one
// verdict for all of them (ReleaseVerdict); the other members show that
// promotion (CoveredStage), and the group shows the release's stages
// (ReleaseStages).

// ReleaseStage says who writes a stage's promotion of the Canary's
// release.
type ReleaseStage struct {
	// Writer is the member that writes the promotion: the first by name
	// of the members of the release that promote to the stage alike
	// (same stage name, sourceRef, branch and mode).
	Writer string
	// Covers are the other members whose images the promotion carries,
	// by name.
	Covers []string
	// Hold says what the writer waits for before it writes (a covered
	// member whose wave of the stage has not left its soak); Stop why it
	// writes nothing (a covered member's soak stopped the stage).
	Hold, Stop string
}

// Alone reports whether the Canary writes the stage's promotion for
// itself only.
func (s ReleaseStage) Alone() bool { return len(s.Covers) == 0 }

// ReleaseStageOf says who writes the Canary's promotion to stage: outside
// a release, or when no other member of its release promotes to the same
// stage alike, the Canary itself, for itself. Otherwise the first member
// by name writes it for the others; once written, the members it could
// not carry (their stage is in another repository or branch: not in its
// covers) are written by the first of them, and so on: one promotion
// per repository.
func ReleaseStageOf(c *v1alpha1.Canary, o Observation, stage v1alpha1.PromotionTarget) ReleaseStage {
	rs := ReleaseStage{Writer: c.Name}
	st := c.Status.Group
	if !o.Group.InGroup() || st == nil || st.Name != o.Group.Name || st.Release == "" {
		return rs
	}
	var alike []GroupPeer
	for _, p := range o.Group.ReleasePeers(c) {
		if p.inItsRelease() && slices.ContainsFunc(p.Promote, func(t v1alpha1.PromotionTarget) bool { return sameStage(t, stage) }) {
			alike = append(alike, p)
		}
	}
	if len(alike) == 0 {
		return rs
	}
	remaining := []string{c.Name}
	for _, p := range alike {
		remaining = append(remaining, p.Name)
	}
	slices.Sort(remaining)
	for {
		rs.Writer = remaining[0]
		rs.Covers = remaining[1:]
		e, ok := writtenStage(rs.Writer, c, alike, stage.Stage)
		if ok && slices.Contains(e.Covers, c.Name) {
			rs.Covers = e.Covers
			break
		}
		if !ok || rs.Writer == c.Name {
			break
		}
		// Written without this Canary: the next promotion is the
		// others'.
		remaining = slices.DeleteFunc(remaining[1:], func(n string) bool { return slices.Contains(e.Covers, n) })
	}
	if rs.Writer != c.Name {
		return rs
	}
	return holdForCovered(rs, st.Release, alike, stage.Stage)
}

// writtenStage is the stage's entry of the member name (the Canary or one
// of peers) when that member wrote its promotion for its release (or
// failed to: Error), not another's shown. A stage stopped before it was
// written stops its covered members with it.
func writtenStage(name string, c *v1alpha1.Canary, peers []GroupPeer, stage string) (v1alpha1.PromotionStatus, bool) {
	ps, rev := c.Status.Promotions, c.Status.LastPromotedRevision
	if name != c.Name {
		i := slices.IndexFunc(peers, func(p GroupPeer) bool { return p.Name == name })
		ps, rev = peers[i].Promotions, peers[i].Revision
	}
	e, ok := promotionOf(ps, stage)
	switch e.Phase {
	case v1alpha1.WaveOpened, v1alpha1.WaveMerged, v1alpha1.WaveProgressing, v1alpha1.WaveSucceeded, v1alpha1.WaveFailed,
		v1alpha1.WaveUpToDate, v1alpha1.WaveError:
		return e, ok && e.Revision == rev && e.CoveredBy == ""
	}
	return e, false
}

// holdForCovered says what the writer of a release's promotion waits for
// before it writes: every member it covers out of its soak; and stops
// the stage when one's soak stopped it.
func holdForCovered(rs ReleaseStage, release string, alike []GroupPeer, stage string) ReleaseStage {
	var soaking []string
	for _, p := range alike {
		if !slices.Contains(rs.Covers, p.Name) {
			continue
		}
		e, ok := promotionOf(p.Promotions, stage)
		switch {
		case !ok || e.Revision != p.Revision:
			soaking = append(soaking, p.Name+" (its wave has not started)")
		case e.Phase == v1alpha1.WaveSoaking:
			soaking = append(soaking, p.Name+" (soaking)")
		case e.Phase == v1alpha1.WaveStopped && e.CoveredBy == "":
			rs.Stop = fmt.Sprintf("release %s is not promoted to %s: %s's stage stopped: %s", release, stage, p.Name, e.Message)
			return rs
		}
	}
	if len(soaking) > 0 {
		rs.Hold = fmt.Sprintf("waiting for every member of release %s to leave its soak before writing the release's promotion: %s",
			release, strings.Join(soaking, ", "))
	}
	return rs
}

// sameStage reports whether two members' stages go to one place: the
// same stage name, GitRepository, branch and mode.
func sameStage(a, b v1alpha1.PromotionTarget) bool {
	ref := func(t v1alpha1.PromotionTarget) string {
		if t.SourceRef == nil {
			return ""
		}
		return t.SourceRef.Name
	}
	mode := func(t v1alpha1.PromotionTarget) v1alpha1.RevertMode {
		return cmp.Or(t.Mode, v1alpha1.PullRequestRevert)
	}
	return a.Stage == b.Stage && ref(a) == ref(b) && a.Branch == b.Branch && mode(a) == mode(b)
}

// CoveredStage records, on a member whose stage the release's promotion
// written by another member carries (rs.Writer, whose status.promotions
// is writer), that promotion's state: its phase once it is written, its
// pull request, commit and verdict. Nothing is written or read for the
// member itself. It returns the event of a verdict reached.
func CoveredStage(p *v1alpha1.PromotionStatus, rs ReleaseStage, writer GroupPeer, now time.Time) WaveEvent {
	p.CoveredBy, p.Covers, p.CoveredImages, p.NextAttemptTime, p.Attempts = rs.Writer, nil, nil, nil, 0
	e, ok := promotionOf(writer.Promotions, p.Stage)
	if !ok || e.Revision != writer.Revision || e.Phase == v1alpha1.WaveSoaking || e.Phase == v1alpha1.WavePromoting {
		p.Message = fmt.Sprintf("covered by the release's promotion, which %s writes once every member is promoted and soaked", rs.Writer)
		if ok && e.Message != "" && e.Revision == writer.Revision {
			p.Message += ": " + e.Message
		}
		return WaveEvent{}
	}
	was := p.Phase
	p.Branch, p.Commit, p.PullRequestURL, p.StageCommit, p.URL = e.Branch, e.Commit, e.PullRequestURL, e.StageCommit, e.URL
	setWavePhase(p, e.Phase, fmt.Sprintf("the release's promotion, written by %s: %s", rs.Writer, e.Message), now)
	if was == p.Phase {
		return WaveEvent{}
	}
	switch p.Phase {
	case v1alpha1.WaveSucceeded:
		return WaveEvent{WaveInfo, v1alpha1.StageSucceededReason, fmt.Sprintf("%s: revision %s succeeded with its release: %s", p.Stage, p.Revision, p.Message)}
	case v1alpha1.WaveFailed:
		return WaveEvent{WaveWarning, v1alpha1.StageFailedReason, fmt.Sprintf("%s: revision %s failed with its release: %s", p.Stage, p.Revision, p.Message)}
	}
	return WaveEvent{}
}

// MemberVerdict is what one member's Canary in the next stage says of a
// release's promotion (its commit status).
type MemberVerdict struct {
	// StageCanary is the stage's Canary (namespace/name).
	StageCanary string
	// State, Description, URL and StageCommit are its commit status's.
	State, Description, URL, StageCommit string
}

// ReleaseVerdict is the verdict of a release's promotion from its
// members' (in the release's order): not merged, as v says; Failed as
// soon as one member's Canary failed it; else no verdict while one has
// not reported, pending while one rolls out, success once all succeeded.
func ReleaseVerdict(v StageVerdict, members []MemberVerdict) StageVerdict {
	if !v.Merged || len(members) == 0 {
		return v
	}
	names := make([]string, len(members))
	var silent, pending []string
	for i, m := range members {
		names[i] = m.StageCanary
		switch m.State {
		case VerdictSuccess:
		case VerdictPending:
			pending = append(pending, m.StageCanary)
		case "":
			silent = append(silent, m.StageCanary)
		default:
			v.State, v.StageCommit, v.URL, v.StageCanary = m.State, cmp.Or(m.StageCommit, v.StageCommit), m.URL, m.StageCanary
			v.Description = cmp.Or(m.Description, m.State)
			return v
		}
	}
	v.StageCanary = strings.Join(names, ", ")
	switch {
	case len(silent) > 0:
		v.State, v.Description = "", ""
		v.StageCanary = strings.Join(silent, ", ")
	case len(pending) > 0:
		v.State, v.Description = VerdictPending, "rolling out: "+strings.Join(pending, ", ")
	default:
		v.State, v.Description = VerdictSuccess, "every member succeeded"
		v.StageCommit = cmp.Or(members[0].StageCommit, v.StageCommit)
	}
	return v
}

// ReleaseStages are the promotions of a release to its next stages, as
// the group shows them: each member's own promotion of a stage (not one
// another member's carries), of the revision it promoted in the release,
// by stage, then writer.
func ReleaseStages(release string, members []ReleaseMember) []v1alpha1.GroupReleaseStage {
	var out []v1alpha1.GroupReleaseStage
	for _, m := range members {
		if !m.Found || m.Status == nil || m.Status.Release != release {
			continue
		}
		for _, p := range m.Promotions {
			if p.CoveredBy != "" || p.Revision != m.LastAttemptedRevision {
				continue
			}
			out = append(out, v1alpha1.GroupReleaseStage{
				Stage: p.Stage, Phase: p.Phase, WrittenBy: m.Name, Members: append([]string{m.Name}, p.Covers...),
				PullRequestURL: p.PullRequestURL, StageCommit: p.StageCommit, Message: p.Message,
			})
		}
	}
	slices.SortStableFunc(out, func(a, b v1alpha1.GroupReleaseStage) int {
		return cmp.Or(strings.Compare(a.Stage, b.Stage), strings.Compare(a.WrittenBy, b.WrittenBy))
	})
	return out
}

// wavePhases lists a status's stages and their phases, to tell a peer's
// wave moved.
func wavePhases(st *v1alpha1.CanaryStatus) string {
	var b strings.Builder
	for _, p := range st.Promotions {
		fmt.Fprintf(&b, "%s=%s@%s;", p.Stage, p.Phase, p.Revision)
	}
	return b.String()
}
