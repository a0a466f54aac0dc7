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
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// Group is what the Canary's CanaryGroup says about its rollout: the
// group's rules and the other members as the cache holds them.
type Group struct {
	// Name of the CanaryGroup that lists the Canary; "" when none does.
	Name string
	// DependsOn are the members whose new revision must be promoted before
	// this member's analysis starts.
	DependsOn []string
	// Window is how long a release waits for the members that change with it.
	Window time.Duration
	// Members are the group's other members.
	Members []GroupPeer
	// Invalid, when not empty, says why the group cannot be followed (the
	// Canary listed by two groups, a dependsOn cycle): no rollout starts,
	// one under way goes on alone.
	Invalid string
}

// GroupPeer is another member of the group.
type GroupPeer struct {
	Name string
	// Found is false when the group lists a Canary that does not exist.
	Found bool
	Phase v1alpha1.CanaryPhase
	// Status is the member's status.group, nil before its first release.
	Status *v1alpha1.GroupStatus
	// Message is the member's Ready message.
	Message string
	// Since is when the member entered its phase (status.lastTransitionTime).
	Since time.Time
	// Suspended is the member's spec.suspend: it takes no step, and no
	// promotion, until resumed.
	Suspended bool
	// Revision is the Flux revision the member analyses or analysed last
	// (status.lastAttemptedRevision).
	Revision string
	// Revert is the member's status.revert: the revert it opened, and the
	// members of its release that revert restores (covered).
	Revert *v1alpha1.RevertStatus
	// Promote are the member's next stages (spec.gitops.promote), and
	// Promotions its wave (status.promotions): one member writes the
	// release's promotion to a stage for the others (ReleaseStageOf).
	Promote    []v1alpha1.PromotionTarget
	Promotions []v1alpha1.PromotionStatus
}

// peer returns the member of the group named name.
func (g Group) peer(name string) (GroupPeer, bool) {
	for _, p := range g.Members {
		if p.Name == name && p.Found {
			return p, true
		}
	}
	return GroupPeer{}, false
}

// Peer returns the member of the group named name, when it exists.
func (g Group) Peer(name string) (GroupPeer, bool) { return g.peer(name) }

// inItsRelease reports whether the peer entered its phase in the release
// its status.group names, rather than in an earlier one (its release key
// is written with its next phase, but the cache may show one before the
// other).
func (p GroupPeer) inItsRelease() bool {
	return p.Status != nil && (p.Status.StartedAt == nil || !p.Since.Before(p.Status.StartedAt.Time))
}

// InGroup reports whether the Canary follows a group.
func (g Group) InGroup() bool { return g.Name != "" }

// ReleasePeers returns the peers that belong to the Canary's current release.
func (g Group) ReleasePeers(c *v1alpha1.Canary) []GroupPeer {
	st := c.Status.Group
	if st == nil || st.Release == "" || st.Name != g.Name {
		return nil
	}
	var out []GroupPeer
	for _, p := range g.Members {
		if p.Found && p.Status != nil && p.Status.Name == g.Name && p.Status.Release == st.Release {
			out = append(out, p)
		}
	}
	return out
}

// ReleaseKey identifies the release a rollout that starts now joins: the
// Flux revision of the target when there is one, which every member
// applied by that revision shares; else the release of a member that
// started one within the window, or a new one that begins now. It returns
// the key and when the release began.
func ReleaseKey(c *v1alpha1.Canary, o Observation) (string, time.Time) {
	if join, _, ok := newerRelease(c, o); ok && o.Target.SpecHash == c.Status.LastAppliedSpec {
		// What it has not promoted belongs to the newest release.
		return join.Release, join.StartedAt
	}
	if st := c.Status.Group; st != nil && st.Release != "" && st.Name == o.Group.Name &&
		c.Status.LastAppliedSpec == o.Target.SpecHash && c.Status.Phase == v1alpha1.PhaseWaiting {
		// Started already, waiting for the members it depends on.
		return st.Release, releaseStart(c, o)
	}
	if rev := o.Target.Revision; rev != "" {
		if o.Requests.Retry != "" && c.Status.Phase == v1alpha1.PhaseFailed && o.Target.SpecHash == c.Status.LastAppliedSpec {
			// A retry is a release of its own: the failed one's verdict
			// stays with it. A group's retry (serin retry --group NAME)
			// asks every member with the same value.
			rev += "#retry=" + o.Requests.Retry
		}
		start, open, taken := o.Now, false, false
		for _, p := range o.Group.Members {
			if p.Status == nil || p.Status.Name != o.Group.Name || p.Status.Release != rev {
				continue
			}
			taken = true
			if p.Status.StartedAt != nil && p.Status.StartedAt.Time.Before(start) {
				start = p.Status.StartedAt.Time
			}
			if releaseOpen(p) || (p.Status.StartedAt != nil && o.Now.Sub(p.Status.StartedAt.Time) <= o.Group.Window) {
				open = true
			}
		}
		if taken && !open {
			// The revision's release is over: a change that is no new
			// revision (kubectl, a config, drift) is a release of its own,
			// joined by the changes within the window.
			return atKey(rev, o)
		}
		return rev, start
	}
	return atKey("", o)
}

// newerRelease returns the newest release of the group under way that
// began after the member's own, and the member that began it, when the
// member has something unpromoted (its applied spec is not its promoted
// one): what Git asks of it is part of the newest release, whichever
// commit changed it, so a second commit supersedes the release under way
// for every member that has not promoted. A release that merges into the
// member's own (earlierRelease, the same base within the window) is not a
// newer one.
func newerRelease(c *v1alpha1.Canary, o Observation) (JoinRelease, string, bool) {
	st := c.Status.Group
	if !o.Group.InGroup() || st == nil || st.Name != o.Group.Name || st.Release == "" || st.StartedAt == nil ||
		c.Status.LastAppliedSpec == "" || c.Status.LastAppliedSpec == c.Status.LastPromotedSpec {
		return JoinRelease{}, "", false
	}
	mine := st.StartedAt.Time
	myBase, myAt, myTimed := timedKey(st.Release)
	best, by := JoinRelease{}, ""
	for _, p := range o.Group.Members {
		ps := p.Status
		if !p.Found || ps == nil || ps.Name != o.Group.Name || ps.Release == st.Release || ps.StartedAt == nil ||
			!ps.StartedAt.Time.After(mine) || !releaseOpen(p) || !p.inItsRelease() {
			continue
		}
		if base, at, ok := timedKey(ps.Release); ok && myTimed && base == myBase && at.Sub(myAt) <= o.Group.Window {
			// It merges into this member's release.
			continue
		}
		if by == "" || ps.StartedAt.Time.After(best.StartedAt) {
			best, by = JoinRelease{Release: ps.Release, StartedAt: ps.StartedAt.Time}, p.Name
		}
	}
	return best, by, by != ""
}

// supersededBy returns the move of a member that has not promoted into the
// group's newer release, when one is under way.
func supersededBy(c *v1alpha1.Canary, o Observation) (SupersedeRelease, bool) {
	join, by, ok := newerRelease(c, o)
	if !ok {
		return SupersedeRelease{}, false
	}
	return SupersedeRelease{Release: join.Release, By: by}, true
}

// inNewerRelease reports whether a newer release of the group is under
// way that the member's unpromoted revision belongs to.
func inNewerRelease(c *v1alpha1.Canary, o Observation) bool {
	_, _, ok := newerRelease(c, o)
	return ok
}

// releasePromotionGate is what a member of a release waits for before it
// may promote (GroupGate for the promotion); "" outside a release.
func releasePromotionGate(c *v1alpha1.Canary, o Observation) string {
	st := c.Status.Group
	if !o.Group.InGroup() || st == nil || st.Name != o.Group.Name || st.Release == "" {
		return ""
	}
	return GroupGate(c, o, st.StepsPassed, true)
}

// atKey is the key of a release that begins now: base (a revision, or
// none) and the time, or the release of a member that began one on the
// same base within the window.
func atKey(base string, o Observation) (string, time.Time) {
	for _, p := range o.Group.Members {
		if p.Status == nil || p.Status.Name != o.Group.Name {
			continue
		}
		if b, begun, ok := timedKey(p.Status.Release); ok && b == base && o.Now.Sub(begun) <= o.Group.Window {
			return p.Status.Release, begun
		}
	}
	at := o.Now.UTC().Format(time.RFC3339Nano)
	if base == "" {
		return windowKeyPrefix + at, o.Now
	}
	return base + atSeparator + at, o.Now
}

// atSeparator separates a revision from the time in the key of a release
// that is not the revision's first.
const atSeparator = "#at="

// releaseOpen reports whether a member's release is under way for it.
func releaseOpen(p GroupPeer) bool {
	switch p.Phase {
	case v1alpha1.PhaseProgressing, v1alpha1.PhaseWaitingPromotion, v1alpha1.PhaseWaiting, v1alpha1.PhasePromoting, v1alpha1.PhaseFinalising:
		return true
	}
	return false
}

// windowKeyPrefix starts the key of a release without a Flux revision:
// the time it began.
const windowKeyPrefix = "window@"

// timedKey splits the key of a release keyed by the time it began (no
// Flux revision, or not the revision's first) into its base and time.
func timedKey(key string) (string, time.Time, bool) {
	base, at, ok := "", key, false
	if rest, isWindow := strings.CutPrefix(key, windowKeyPrefix); isWindow {
		at, ok = rest, true
	} else if i := strings.LastIndex(key, atSeparator); i >= 0 {
		base, at, ok = key[:i], key[i+len(atSeparator):], true
	}
	if !ok {
		return "", time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	return base, t, err == nil
}

// earlierRelease returns the release a member must merge its own into:
// members without a Flux revision that start at the same moment each
// begin a release before they see the others' (the cache lags); the
// earliest one begun within the window of the member's own is theirs.
// The first step waits for the window, so they merge before any acts.
func earlierRelease(c *v1alpha1.Canary, o Observation) (JoinRelease, bool) {
	st := c.Status.Group
	if st == nil || st.Name != o.Group.Name {
		return JoinRelease{}, false
	}
	base, mine, ok := timedKey(st.Release)
	if !ok {
		return JoinRelease{}, false
	}
	best := JoinRelease{}
	for _, p := range o.Group.Members {
		if !p.Found || p.Status == nil || p.Status.Name != o.Group.Name || (!analysing(p) && p.Phase != v1alpha1.PhaseWaiting) {
			continue
		}
		theirBase, theirs, ok := timedKey(p.Status.Release)
		if !ok || theirBase != base || !theirs.Before(mine) || mine.Sub(theirs) > o.Group.Window {
			continue
		}
		if best.Release == "" || theirs.Before(best.StartedAt) {
			best = JoinRelease{Release: p.Status.Release, StartedAt: theirs}
		}
	}
	return best, best.Release != ""
}

// releaseStart is when the Canary's release began: the earliest start of
// its members.
func releaseStart(c *v1alpha1.Canary, o Observation) time.Time {
	st := c.Status.Group
	var start time.Time
	if st != nil && st.StartedAt != nil {
		start = st.StartedAt.Time
	}
	for _, p := range o.Group.ReleasePeers(c) {
		if p.Status.StartedAt != nil && (start.IsZero() || p.Status.StartedAt.Time.Before(start)) {
			start = p.Status.StartedAt.Time
		}
	}
	return start
}

// windowLeft is how long the release still waits for members that change
// with it, or 0 once every member joined or the window is over.
func windowLeft(c *v1alpha1.Canary, o Observation) time.Duration {
	joined, members := len(o.Group.ReleasePeers(c)), 0
	for _, p := range o.Group.Members {
		if p.Found {
			members++
		}
	}
	if joined >= members {
		return 0
	}
	return max(releaseStart(c, o).Add(o.Group.Window).Sub(o.Now), 0)
}

// ReleaseFailure names the member of the Canary's release whose failure
// fails the whole release, and says why; "" when none failed.
func ReleaseFailure(c *v1alpha1.Canary, o Observation) (member, message string) {
	for _, p := range o.Group.ReleasePeers(c) {
		if p.Phase != v1alpha1.PhaseFailed || !p.inItsRelease() || p.Status.FailedBy == c.Name {
			continue
		}
		// The member whose own failure decided, rather than one rolled
		// back with it.
		if p.Status.FailedBy == "" {
			return p.Name, p.Message
		}
		if member == "" {
			member, message = p.Status.FailedBy, p.Message
		}
	}
	return member, message
}

// releaseHalted names a member of the release whose promotion halted.
func releaseHalted(c *v1alpha1.Canary, o Observation) string {
	for _, p := range o.Group.ReleasePeers(c) {
		if p.Phase == v1alpha1.PhaseHalted && p.inItsRelease() {
			return p.Name
		}
	}
	return ""
}

// PendingDependencies returns the members the Canary depends on that are
// not ready for it, as Flux's dependsOn waits for Ready: a dependency that
// changed with the release until it is promoted in it; one that did not
// (it has not joined within the window) until it serves a promoted
// revision (Succeeded or Initialized, not analysing another release, not
// Failed or Halted). One the group lists but that does not exist counts
// as done.
func PendingDependencies(c *v1alpha1.Canary, o Observation) []string {
	var pending []string
	inRelease := o.Group.ReleasePeers(c)
	for _, d := range o.Group.DependsOn {
		if i := slices.IndexFunc(inRelease, func(p GroupPeer) bool { return p.Name == d }); i >= 0 {
			if inRelease[i].Phase != v1alpha1.PhaseSucceeded {
				pending = append(pending, d)
			}
			continue
		}
		p, found := o.Group.peer(d)
		switch {
		case !found:
		case windowLeft(c, o) > 0:
			// It may still change with this release.
			pending = append(pending, d)
		case p.Phase != v1alpha1.PhaseSucceeded && p.Phase != v1alpha1.PhaseInitialized:
			pending = append(pending, d)
		}
	}
	return pending
}

// finished reports whether a member passed every step of the release:
// it holds for the promotion, or is promoting or promoted.
func finished(p GroupPeer) bool {
	switch p.Phase {
	case v1alpha1.PhasePromoting, v1alpha1.PhaseFinalising, v1alpha1.PhaseSucceeded:
		return true
	}
	return p.Status.Holding == v1alpha1.HoldingPromotion
}

// promoted reports whether a member's promotion is under way or done.
func promoted(p GroupPeer) bool {
	switch p.Phase {
	case v1alpha1.PhasePromoting, v1alpha1.PhaseFinalising, v1alpha1.PhaseSucceeded:
		return true
	}
	return false
}

// analysing reports whether a member of the release takes part in its
// lockstep: it analyses, or waits for its confirm-rollout gate; a member
// that waits for the members it depends on does not yet.
func analysing(p GroupPeer) bool {
	switch p.Phase {
	case v1alpha1.PhaseProgressing, v1alpha1.PhaseWaitingPromotion:
		return true
	case v1alpha1.PhaseWaiting:
		return len(p.Status.WaitingFor) == 0
	}
	return false
}

// GroupGate says whether the Canary may act on the step it passed (its
// passed-th step of the release; promotion when it was the last): not
// until every other member of the release passed as many steps (or all
// of theirs), nor, for the promotion, until every one passed all of its
// steps, so that no member is ever more than one step ahead of another
// and the release is promoted as one. It returns "" when open, else what
// the Canary waits for.
func GroupGate(c *v1alpha1.Canary, o Observation, passed int, promotion bool) string {
	if !o.Group.InGroup() {
		return ""
	}
	if m := releaseHalted(c, o); m != "" {
		return fmt.Sprintf("the promotion of %s halted: the release stops here", m)
	}
	if left := windowLeft(c, o); left > 0 {
		return fmt.Sprintf("waiting up to %s for the members that change with release %s", left.Round(time.Second), releaseName(c))
	}
	var behind []string
	for _, p := range o.Group.ReleasePeers(c) {
		switch {
		case promotion && p.Suspended && !promoted(p):
			// Its promotion would wait for the resume: the release's
			// waits with it, rather than leave it behind.
			behind = append(behind, p.Name+" (suspended)")
		case finished(p), !analysing(p):
		case promotion:
			behind = append(behind, fmt.Sprintf("%s (%d steps passed)", p.Name, p.Status.StepsPassed))
		case p.Status.StepsPassed < passed:
			behind = append(behind, fmt.Sprintf("%s (%d of %d steps passed)", p.Name, p.Status.StepsPassed, passed))
		}
	}
	if len(behind) == 0 {
		return ""
	}
	what := fmt.Sprintf("step %d passed", passed)
	if promotion {
		what = "analysis passed"
	}
	return fmt.Sprintf("%s; waiting for %s", what, strings.Join(behind, ", "))
}

// LockstepStep reports whether an action carries out a step of the
// analysis that the group's lockstep counts (GroupGate): a weight step or
// an iteration, or the promotion.
func LockstepStep(a Action) (step, promotion bool) {
	switch a.(type) {
	case AdvanceWeight, CountIteration:
		return true, false
	case Promote:
		return true, true
	}
	return false, false
}

// releaseName is the release's key as messages show it.
func releaseName(c *v1alpha1.Canary) string {
	if st := c.Status.Group; st != nil {
		return st.Release
	}
	return ""
}

// decideInGroup decides, for a Canary of a group in the middle of an
// analysis, what the group imposes: a rollback when another member of
// the release failed, the held step once the others caught up, or a wait.
func decideInGroup(c *v1alpha1.Canary, o Observation) (Action, bool) {
	st := c.Status.Group
	if st == nil {
		return nil, false
	}
	if st.Holding != "" && o.Routes.Programmed && o.CanaryWeight != c.Status.CanaryWeight {
		// The held step's weights were written, its status was not (a
		// killed agent): record them rather than advance again.
		return RecordWeights{}, true
	}
	if !o.Group.InGroup() || st.Name != o.Group.Name {
		if st.Holding != "" && o.Target.Health.Ready {
			// No longer in that group: the held step goes on alone.
			return whenRoutesProgrammed(c, o, 0, GroupAdvance{}), true
		}
		return nil, false
	}
	if join, ok := earlierRelease(c, o); ok {
		return join, true
	}
	if move, ok := supersededBy(c, o); ok {
		// Never promoted into a release its peers left.
		return move, true
	}
	if m, msg := ReleaseFailure(c, o); m != "" {
		return Rollback{Reason: fmt.Sprintf("release %s failed: %s failed: %s", st.Release, m, msg), FailedBy: m}, true
	}
	if !o.Target.Health.Ready {
		return nil, false
	}
	switch {
	case st.Holding != "":
		if why := GroupGate(c, o, st.StepsPassed, st.Holding == v1alpha1.HoldingPromotion); why != "" {
			return WaitForGroup{Message: why, RequeueAfter: windowLeft(c, o)}, true
		}
		return whenRoutesProgrammed(c, o, 0, GroupAdvance{}), true
	case st.StepsPassed == 0 && o.CanaryWeight == 0 && c.Status.Iterations == 0 && windowLeft(c, o) > 0:
		// No member takes its first step before the members that change
		// with the release joined it, or its window is over.
		return WaitForGroup{Message: GroupGate(c, o, 0, false), RequeueAfter: windowLeft(c, o)}, true
	}
	return nil, false
}

// decideGroupWaiting decides for a member that waits for the members it
// depends on: it never starts when the release failed, and starts once
// they are promoted.
func decideGroupWaiting(c *v1alpha1.Canary, o Observation) (Action, bool) {
	st := c.Status.Group
	if st == nil || len(st.WaitingFor) == 0 {
		return nil, false
	}
	switch {
	case o.Requests.Abort != "":
		return Rollback{Reason: "rollout aborted on request"}, true
	case o.Target.SpecHash == c.Status.LastPromotedSpec:
		// Git went back to the promoted spec (the release's revert).
		return AcceptRevision{}, true
	case o.Target.SpecHash != c.Status.LastAppliedSpec:
		return StartRollout{}, true
	}
	if join, ok := earlierRelease(c, o); ok {
		return join, true
	}
	if move, ok := supersededBy(c, o); ok {
		return move, true
	}
	if m, msg := ReleaseFailure(c, o); m != "" && o.Group.InGroup() {
		return Rollback{Reason: fmt.Sprintf("release %s failed before this member started: %s failed: %s", st.Release, m, msg), FailedBy: m}, true
	}
	if o.Group.InGroup() && st.Name == o.Group.Name {
		if pending := PendingDependencies(c, o); len(pending) > 0 {
			return WaitForGroup{Message: WaitingForMessage(pending), RequeueAfter: windowLeft(c, o)}, true
		}
	}
	return StartRollout{}, true
}

// revertState is a revert's revision and state, "" for none.
func revertState(r *v1alpha1.RevertStatus) string {
	if r == nil {
		return ""
	}
	return r.Revision + "/" + r.State
}

// revertCovers reports whether the revert of the member that decided a
// release is over for its revision (written, or failed), and whether it
// restores the member named name: a member of another repository is left
// to its own.
func revertCovers(decider GroupPeer, name string) (done, covers bool) {
	r := decider.Revert
	if r == nil || r.Revision != decider.Revision {
		return false, false
	}
	switch r.State {
	case "", revertPending, revertRetrying:
		return false, false
	}
	return true, r.State != revertFailed && slices.Contains(r.Covered, name)
}

// WaitingForMessage says which members a dependent member waits for.
func WaitingForMessage(pending []string) string {
	return fmt.Sprintf("waiting for %s to be promoted (dependsOn)", strings.Join(pending, ", "))
}

// PeerMoved reports whether a member's rollout moved in a way its peers
// must see (the group rules read their phase and status.group): its phase
// changed, its status.group came or went, it joined another release,
// passed a step, began or stopped holding one, the number of members
// it waits for (dependsOn) changed, or a stage of its wave changed phase
// (the release's promotion is one member's, the others show it).
func PeerMoved(old, cur *v1alpha1.CanaryStatus) bool {
	if old.Phase != cur.Phase || revertState(old.Revert) != revertState(cur.Revert) || wavePhases(old) != wavePhases(cur) {
		// A revert that ended tells the members rolled back with it
		// whether it restores them (wantsRevert).
		return true
	}
	a, b := old.Group, cur.Group
	if a == nil || b == nil {
		return a != b
	}
	return a.Release != b.Release || a.StepsPassed != b.StepsPassed || a.Holding != b.Holding || len(a.WaitingFor) != len(b.WaitingFor)
}
