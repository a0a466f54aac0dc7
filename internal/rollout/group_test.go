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

const release = "main@sha1:abc"

// member returns a member of group shop in release rel.
func member(rel string, passed int, holding string) *v1alpha1.GroupStatus {
	at := metav1.NewTime(t0)
	return &v1alpha1.GroupStatus{Name: "shop", Release: rel, StartedAt: &at, StepsPassed: passed, Holding: holding}
}

// inRelease makes the Canary a member of group shop in release, having
// passed steps.
func inRelease(passed int, holding string) func(*v1alpha1.Canary) {
	return func(c *v1alpha1.Canary) {
		c.Status.LastAttemptedRevision = release
		c.Status.Group = member(release, passed, holding)
	}
}

// grouped is an observation of a Canary of group shop (window 10s) at
// now with the other members peers.
func grouped(now time.Time, peers ...GroupPeer) Observation {
	o := observed(now, "v2", ready, "v1", ready)
	o.Target.Revision = release
	o.Group = Group{Name: "shop", Window: 10 * time.Second, Members: peers}
	return o
}

func peer(name string, phase v1alpha1.CanaryPhase, st *v1alpha1.GroupStatus) GroupPeer {
	return GroupPeer{Name: name, Found: true, Phase: phase, Status: st, Message: name + " says why", Since: t0.Add(time.Second)}
}

func TestGroupGate(t *testing.T) {
	later := t0.Add(time.Minute)
	for _, tc := range []struct {
		name      string
		passed    int
		promotion bool
		peers     []GroupPeer
		want      string // a part of the message; "" when open
	}{
		{name: "the other member passed as many steps", passed: 2,
			peers: []GroupPeer{peer("web", v1alpha1.PhaseProgressing, member(release, 2, ""))}},
		{name: "the other member is one step behind", passed: 2,
			peers: []GroupPeer{peer("web", v1alpha1.PhaseProgressing, member(release, 1, ""))},
			want:  "step 2 passed; waiting for web (1 of 2 steps passed)"},
		{name: "a member of another release does not count", passed: 2,
			peers: []GroupPeer{peer("web", v1alpha1.PhaseProgressing, member("main@sha1:old", 0, ""))}},
		{name: "a member that passed all its steps does not hold the others", passed: 4,
			peers: []GroupPeer{peer("web", v1alpha1.PhaseWaitingPromotion, member(release, 2, v1alpha1.HoldingPromotion))}},
		{name: "the promotion waits for every member to pass all its steps", passed: 3, promotion: true,
			peers: []GroupPeer{peer("web", v1alpha1.PhaseProgressing, member(release, 3, ""))},
			want:  "analysis passed; waiting for web (3 steps passed)"},
		{name: "the promotion goes once every member holds for it", passed: 3, promotion: true,
			peers: []GroupPeer{peer("web", v1alpha1.PhaseProgressing, member(release, 5, v1alpha1.HoldingPromotion))}},
		{name: "a member waiting for its dependencies is not in the lockstep", passed: 1,
			peers: []GroupPeer{peer("web", v1alpha1.PhaseWaiting, &v1alpha1.GroupStatus{Name: "shop", Release: release, WaitingFor: []string{"podinfo"}})}},
		{name: "a halted member stops the release", passed: 1,
			peers: []GroupPeer{peer("web", v1alpha1.PhaseHalted, member(release, 3, ""))},
			want:  "the promotion of web halted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := canary(v1alpha1.PhaseProgressing, inRelease(tc.passed, ""))
			got := GroupGate(c, grouped(later, tc.peers...), tc.passed, tc.promotion)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("GroupGate = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDecide_Group(t *testing.T) {
	later := t0.Add(time.Minute)
	for _, tc := range []struct {
		name  string
		c     *v1alpha1.Canary
		o     Observation
		want  Action
		check func(Action) string
	}{
		{
			name: "a member fails with its release",
			c:    canary(v1alpha1.PhaseProgressing, inRelease(1, "")),
			o:    grouped(later, peer("api", v1alpha1.PhaseFailed, member(release, 1, ""))),
			want: Rollback{Reason: "release main@sha1:abc failed: api failed: api says why", FailedBy: "api"},
		},
		{
			name: "the one whose failure decided is named, not one rolled back with it",
			c:    canary(v1alpha1.PhaseProgressing, inRelease(1, "")),
			o: grouped(later,
				peer("web", v1alpha1.PhaseFailed, &v1alpha1.GroupStatus{Name: "shop", Release: release, FailedBy: "api"}),
				peer("api", v1alpha1.PhaseFailed, member(release, 1, ""))),
			want: Rollback{Reason: "release main@sha1:abc failed: api failed: api says why", FailedBy: "api"},
		},
		{
			name: "a failed member of another release changes nothing",
			c:    canary(v1alpha1.PhaseProgressing, inRelease(1, "")),
			o:    grouped(later, peer("api", v1alpha1.PhaseFailed, member("main@sha1:old", 1, ""))),
			want: Step{},
		},
		{
			name: "a held step goes on once the others caught up",
			c:    canary(v1alpha1.PhaseProgressing, inRelease(2, v1alpha1.HoldingStep)),
			o:    grouped(t0.Add(time.Second), peer("api", v1alpha1.PhaseProgressing, member(release, 2, ""))),
			want: GroupAdvance{},
		},
		{
			name: "a held step waits for a member behind, however late",
			c:    canary(v1alpha1.PhaseProgressing, inRelease(2, v1alpha1.HoldingStep)),
			o:    grouped(later, peer("api", v1alpha1.PhaseProgressing, member(release, 1, ""))),
			want: WaitForGroup{Message: "step 2 passed; waiting for api (1 of 2 steps passed)"},
		},
		{
			name: "no first step within the window while a member may still join",
			c:    canary(v1alpha1.PhaseProgressing, inRelease(0, "")),
			o:    grouped(t0.Add(4*time.Second), peer("api", v1alpha1.PhaseSucceeded, nil)),
			want: WaitForGroup{Message: "waiting up to 6s for the members that change with release main@sha1:abc", RequeueAfter: 6 * time.Second},
		},
		{
			name: "after the window a member that did not change sits the release out",
			c:    canary(v1alpha1.PhaseProgressing, inRelease(0, "")),
			o:    grouped(later, peer("api", v1alpha1.PhaseSucceeded, nil)),
			want: Step{},
		},
		{
			name: "a member whose group was deleted goes on alone with the step it held",
			c:    canary(v1alpha1.PhaseProgressing, inRelease(2, v1alpha1.HoldingStep)),
			o: func() Observation {
				o := grouped(later)
				o.Group = Group{}
				return o
			}(),
			want: GroupAdvance{},
		},
		{
			name: "a suspended member holds the release's promotion",
			c:    canary(v1alpha1.PhaseProgressing, inRelease(3, v1alpha1.HoldingPromotion)),
			o: func() Observation {
				p := peer("api", v1alpha1.PhaseProgressing, member(release, 3, v1alpha1.HoldingPromotion))
				p.Suspended = true
				return grouped(later, p)
			}(),
			want: WaitForGroup{Message: "analysis passed; waiting for api (suspended)"},
		},
		{
			name: "a promotion asked for by a person is held for the release",
			c:    canary(v1alpha1.PhaseProgressing, inRelease(1, v1alpha1.HoldingStep)),
			o: func() Observation {
				o := grouped(later, peer("api", v1alpha1.PhaseProgressing, member(release, 0, "")))
				o.Requests.Promote = "now"
				return o
			}(),
			want: HoldPromotion{Message: "promotion requested; held for the release: analysis passed; waiting for api (0 steps passed)"},
		},
		{
			name: "a promotion asked for by a person of a member not holding is held too",
			c:    canary(v1alpha1.PhaseProgressing, inRelease(1, "")),
			o: func() Observation {
				o := grouped(later, peer("api", v1alpha1.PhaseProgressing, member(release, 1, "")))
				o.Requests.Promote = "now"
				return o
			}(),
			want: HoldPromotion{Message: "promotion requested; held for the release: analysis passed; waiting for api (1 steps passed)"},
		},
		{
			name: "a promotion asked for by a person goes ahead once every member passed",
			c:    canary(v1alpha1.PhaseProgressing, inRelease(1, "")),
			o: func() Observation {
				o := grouped(later, peer("api", v1alpha1.PhasePromoting, member(release, 3, "")))
				o.Requests.Promote = "now"
				return o
			}(),
			want: Promote{Reason: "promotion requested"},
		},
		{
			name: "a held promotion asked for by a person promotes with the release",
			c:    canary(v1alpha1.PhaseProgressing, inRelease(1, v1alpha1.HoldingPromotion)),
			o:    grouped(later, peer("api", v1alpha1.PhaseProgressing, member(release, 3, v1alpha1.HoldingPromotion))),
			want: GroupAdvance{},
		},
		{
			name: "a promotion asked for by a person still fails with the release",
			c:    canary(v1alpha1.PhaseProgressing, inRelease(1, v1alpha1.HoldingPromotion)),
			o: func() Observation {
				o := grouped(later, peer("api", v1alpha1.PhaseFailed, member(release, 1, "")))
				o.Requests.Promote = "now"
				return o
			}(),
			want: Rollback{Reason: "release main@sha1:abc failed: api failed: api says why", FailedBy: "api"},
		},
		{
			name: "a dependent member never starts when the release failed",
			c: canary(v1alpha1.PhaseWaiting, inRelease(0, ""), func(c *v1alpha1.Canary) {
				c.Status.Group.WaitingFor = []string{"api"}
			}),
			o:    grouped(later, peer("api", v1alpha1.PhaseFailed, member(release, 1, ""))),
			want: Rollback{Reason: "release main@sha1:abc failed before this member started: api failed: api says why", FailedBy: "api"},
		},
		{
			name: "a dependent member waits while its dependency analyses",
			c: canary(v1alpha1.PhaseWaiting, inRelease(0, ""), func(c *v1alpha1.Canary) {
				c.Status.Group.WaitingFor = []string{"api"}
			}),
			o: func() Observation {
				o := grouped(later, peer("api", v1alpha1.PhaseProgressing, member(release, 1, "")))
				o.Group.DependsOn = []string{"api"}
				return o
			}(),
			want: WaitForGroup{Message: "waiting for api to be promoted (dependsOn)"},
		},
		{
			name: "a dependent member starts once its dependency is promoted",
			c: canary(v1alpha1.PhaseWaiting, inRelease(0, ""), func(c *v1alpha1.Canary) {
				c.Status.Group.WaitingFor = []string{"api"}
			}),
			o: func() Observation {
				o := grouped(later, peer("api", v1alpha1.PhaseSucceeded, member(release, 3, "")))
				o.Group.DependsOn = []string{"api"}
				return o
			}(),
			want: StartRollout{},
		},
		{
			name: "a dependent member waiting when Git reverts the release accepts the promoted spec",
			c: canary(v1alpha1.PhaseWaiting, inRelease(0, ""), func(c *v1alpha1.Canary) {
				c.Status.Group.WaitingFor = []string{"api"}
			}),
			o: func() Observation {
				o := grouped(later, peer("api", v1alpha1.PhaseHalted, member(release, 3, "")))
				o.Target.SpecHash = "v1"
				return o
			}(),
			want: AcceptRevision{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.c, tc.o); got != tc.want {
				t.Errorf("Decide = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestPendingDependencies(t *testing.T) {
	c := canary(v1alpha1.PhaseWaiting, inRelease(0, ""))
	within, after := t0.Add(3*time.Second), t0.Add(time.Minute)
	for _, tc := range []struct {
		name string
		now  time.Time
		api  GroupPeer
		want int
	}{
		{"analysing in the release", after, peer("api", v1alpha1.PhaseProgressing, member(release, 1, "")), 1},
		{"promoted in the release", after, peer("api", v1alpha1.PhaseSucceeded, member(release, 3, "")), 0},
		{"not changed, window open", within, peer("api", v1alpha1.PhaseSucceeded, member("main@sha1:old", 3, "")), 1},
		{"not changed, window over", after, peer("api", v1alpha1.PhaseSucceeded, member("main@sha1:old", 3, "")), 0},
		{"listed but no such Canary", within, GroupPeer{Name: "api"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := grouped(tc.now, tc.api)
			o.Group.DependsOn = []string{"api"}
			if got := PendingDependencies(c, o); len(got) != tc.want {
				t.Errorf("PendingDependencies = %v, want %d", got, tc.want)
			}
		})
	}
}

func TestReleaseKey(t *testing.T) {
	c := canary(v1alpha1.PhaseSucceeded)
	o := grouped(t0.Add(time.Second), peer("api", v1alpha1.PhaseProgressing, member(release, 0, "")))
	if key, start := ReleaseKey(c, o); key != release || !start.Equal(t0) {
		t.Errorf("with a Flux revision: %s %s, want %s from the first member's start %s", key, start, release, t0)
	}
	// A retry is a release of its own, which the members retried with the
	// same request share.
	o.Requests.Retry = "2026-11-26T12:00:00Z"
	if key, _ := ReleaseKey(c, o); key != release {
		t.Errorf("a retry request left on a Canary that did not fail: %s", key)
	}
	failed := canary(v1alpha1.PhaseFailed)
	if key, _ := ReleaseKey(failed, o); key != release+"#retry=2026-11-26T12:00:00Z" {
		t.Errorf("a retry: %s", key)
	}
	o.Requests.Retry = ""
	// Without a Flux revision, a change within the window joins the
	// release a member began; a later one begins its own.
	o.Target.Revision = ""
	began := windowKeyPrefix + t0.Format(time.RFC3339Nano)
	o.Group.Members = []GroupPeer{peer("api", v1alpha1.PhaseProgressing, member(began, 0, ""))}
	if key, _ := ReleaseKey(c, o); key != began {
		t.Errorf("within the window: %s, want %s", key, began)
	}
	o.Now = t0.Add(time.Minute)
	if key, _ := ReleaseKey(c, o); key == began || !strings.HasPrefix(key, windowKeyPrefix) {
		t.Errorf("after the window: %s, want a new release", key)
	}
}

// Members without a Flux revision that start at the same moment each
// begin a release before they see the others'; they merge into the
// earliest begun within the window before any takes a step.
func TestDecide_GroupMergesReleasesBegunAtOnce(t *testing.T) {
	early := windowKeyPrefix + t0.Format(time.RFC3339Nano)
	late := windowKeyPrefix + t0.Add(20*time.Millisecond).Format(time.RFC3339Nano)
	c := canary(v1alpha1.PhaseProgressing, func(c *v1alpha1.Canary) { c.Status.Group = member(late, 0, "") })
	o := grouped(t0.Add(time.Second), peer("api", v1alpha1.PhaseProgressing, member(early, 0, "")))
	o.Target.Revision = ""
	if got, want := Decide(c, o), (JoinRelease{Release: early, StartedAt: t0}); got != want {
		t.Errorf("Decide = %s, want %s", got, want)
	}
	// The one begun first keeps its own.
	c.Status.Group, o.Group.Members[0].Status = member(early, 0, ""), member(late, 0, "")
	if got, ok := earlierRelease(c, o); ok {
		t.Errorf("earlierRelease = %s, want none", got)
	}
	// One begun longer than a window before is another release.
	c.Status.Group = member(windowKeyPrefix+t0.Add(time.Minute).Format(time.RFC3339Nano), 0, "")
	o.Group.Members[0].Status = member(early, 0, "")
	if got, ok := earlierRelease(c, o); ok {
		t.Errorf("earlierRelease = %s, want none", got)
	}
}

// A member whose release key the cache shows before its new phase (its
// Failed phase from the last release) fails no one; nor does a change
// that is no new revision join a release that is over.
func TestDecide_GroupStalePeers(t *testing.T) {
	later := t0.Add(time.Minute)
	stale := peer("api", v1alpha1.PhaseFailed, member(release, 0, ""))
	stale.Since = t0.Add(-time.Hour)
	c := canary(v1alpha1.PhaseProgressing, inRelease(1, ""))
	if got := Decide(c, grouped(later, stale)); got != (Step{}) {
		t.Errorf("Decide = %s, want step", got)
	}
	self := peer("api", v1alpha1.PhaseFailed, &v1alpha1.GroupStatus{Name: "shop", Release: release, FailedBy: "podinfo"})
	if got := Decide(c, grouped(later, self)); got != (Step{}) {
		t.Errorf("a peer rolled back by this member: Decide = %s, want step", got)
	}

	idle := canary(v1alpha1.PhaseSucceeded)
	over := peer("api", v1alpha1.PhaseFailed, member(release, 2, ""))
	key, _ := ReleaseKey(idle, grouped(later, over))
	if base, _, ok := timedKey(key); !ok || base != release {
		t.Errorf("a change after its revision's release ended: key %s, want a release of its own on %s", key, release)
	}
}

// dependsOn waits as Flux's does: for a dependency outside the release to
// be ready, not merely absent from it.
func TestPendingDependencies_OutsideTheRelease(t *testing.T) {
	c := canary(v1alpha1.PhaseWaiting, inRelease(0, ""))
	for _, tc := range []struct {
		name string
		api  GroupPeer
		want int
	}{
		{"analysing a newer release", peer("api", v1alpha1.PhaseProgressing, member("main@sha1:new", 1, "")), 1},
		{"halted", peer("api", v1alpha1.PhaseHalted, member("main@sha1:old", 3, "")), 1},
		{"serving its promoted revision", peer("api", v1alpha1.PhaseSucceeded, member("main@sha1:old", 3, "")), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := grouped(t0.Add(time.Minute), tc.api)
			o.Group.DependsOn = []string{"api"}
			if got := PendingDependencies(c, o); len(got) != tc.want {
				t.Errorf("PendingDependencies = %v, want %d", got, tc.want)
			}
		})
	}
}

// A held step whose weights were written but not its status (a killed
// agent) is recorded, not advanced again.
func TestDecide_GroupHeldStepWrittenNotRecorded(t *testing.T) {
	c := canary(v1alpha1.PhaseProgressing, inRelease(2, v1alpha1.HoldingStep))
	c.Status.CanaryWeight = 10
	o := grouped(t0.Add(time.Second), peer("api", v1alpha1.PhaseProgressing, member(release, 2, "")))
	o.CanaryWeight = 20
	if got := Decide(c, o); got != (RecordWeights{}) {
		t.Errorf("Decide = %s, want record-weights", got)
	}
}

func TestReleasePeers(t *testing.T) {
	web := peer("web", v1alpha1.PhaseProgressing, member(release, 1, ""))
	db := peer("db", v1alpha1.PhaseSucceeded, member("main@sha1:old", 0, ""))
	gone := GroupPeer{Name: "cache", Status: member(release, 0, "")}
	other := peer("auth", v1alpha1.PhaseProgressing, &v1alpha1.GroupStatus{Name: "checkout", Release: release})
	tests := map[string]struct {
		c    *v1alpha1.Canary
		want []string
	}{
		"the members of the Canary's release":    {c: canary(v1alpha1.PhaseProgressing, inRelease(1, "")), want: []string{"web"}},
		"none before the Canary joins a release": {c: canary(v1alpha1.PhaseSucceeded)},
		"none when the Canary's release is another group's": {c: canary(v1alpha1.PhaseProgressing, func(c *v1alpha1.Canary) {
			c.Status.Group = &v1alpha1.GroupStatus{Name: "checkout", Release: release}
		})},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, p := range grouped(t0, web, db, gone, other).Group.ReleasePeers(tc.c) {
				got = append(got, p.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ReleasePeers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLockstepStep(t *testing.T) {
	type step struct{ Step, Promotion bool }
	tests := map[string]struct {
		action Action
		want   step
	}{
		"a weight step":       {action: AdvanceWeight{}, want: step{Step: true}},
		"an iteration":        {action: CountIteration{}, want: step{Step: true}},
		"the promotion":       {action: Promote{}, want: step{Step: true, Promotion: true}},
		"a rollback":          {action: Rollback{}},
		"a wait for a gate":   {action: WaitForGate{}},
		"the group's advance": {action: GroupAdvance{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got step
			got.Step, got.Promotion = LockstepStep(tc.action)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("LockstepStep (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPeerMoved(t *testing.T) {
	status := func(phase v1alpha1.CanaryPhase, st *v1alpha1.GroupStatus) *v1alpha1.CanaryStatus {
		return &v1alpha1.CanaryStatus{Phase: phase, Group: st}
	}
	waiting := func(deps ...string) *v1alpha1.GroupStatus {
		return &v1alpha1.GroupStatus{Name: "shop", Release: release, WaitingFor: deps}
	}
	tests := map[string]struct {
		old, cur *v1alpha1.CanaryStatus
		want     bool
	}{
		"nothing the group reads":   {old: status(v1alpha1.PhaseProgressing, member(release, 1, "")), cur: &v1alpha1.CanaryStatus{Phase: v1alpha1.PhaseProgressing, Group: member(release, 1, ""), CanaryWeight: 30}},
		"no group either time":      {old: status(v1alpha1.PhaseSucceeded, nil), cur: status(v1alpha1.PhaseSucceeded, nil)},
		"the phase":                 {old: status(v1alpha1.PhaseProgressing, nil), cur: status(v1alpha1.PhaseFailed, nil), want: true},
		"status.group came":         {old: status(v1alpha1.PhaseProgressing, nil), cur: status(v1alpha1.PhaseProgressing, member(release, 0, "")), want: true},
		"status.group went":         {old: status(v1alpha1.PhaseProgressing, member(release, 0, "")), cur: status(v1alpha1.PhaseProgressing, nil), want: true},
		"another release":           {old: status(v1alpha1.PhaseProgressing, member("main@sha1:old", 0, "")), cur: status(v1alpha1.PhaseProgressing, member(release, 0, "")), want: true},
		"a step passed":             {old: status(v1alpha1.PhaseProgressing, member(release, 1, "")), cur: status(v1alpha1.PhaseProgressing, member(release, 2, "")), want: true},
		"holds a step":              {old: status(v1alpha1.PhaseProgressing, member(release, 1, "")), cur: status(v1alpha1.PhaseProgressing, member(release, 1, v1alpha1.HoldingStep)), want: true},
		"waits for fewer members":   {old: status(v1alpha1.PhaseWaiting, waiting("api", "db")), cur: status(v1alpha1.PhaseWaiting, waiting("db")), want: true},
		"waits for as many members": {old: status(v1alpha1.PhaseWaiting, waiting("api")), cur: status(v1alpha1.PhaseWaiting, waiting("db"))},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := PeerMoved(tc.old, tc.cur); got != tc.want {
				t.Errorf("PeerMoved = %t, want %t", got, tc.want)
			}
		})
	}
}

// newer is a member of group shop in the release of the second commit,
// begun a minute after the first one's.
func newer(passed int, holding string) *v1alpha1.GroupStatus {
	at := metav1.NewTime(t0.Add(time.Minute))
	return &v1alpha1.GroupStatus{Name: "shop", Release: "main@sha1:def", StartedAt: &at, StepsPassed: passed, Holding: holding}
}

// A release is the commit: a member that has not promoted what Git asks of
// it belongs to the group's newest release, whichever commit changed it.
// A second commit that changes api while web and api analyse the first
// moves web into the second release (it restarts there) rather than let
// it promote alone; a member that promoted, or whose peers' newer release
// is over or merges into its own, stays where it is.
func TestDecide_SupersededRelease(t *testing.T) {
	later := t0.Add(2 * time.Minute)
	moved := func(phase v1alpha1.CanaryPhase, st *v1alpha1.GroupStatus) GroupPeer {
		p := peer("api", phase, st)
		p.Since = t0.Add(time.Minute + time.Second)
		return p
	}
	tests := []struct {
		name string
		c    *v1alpha1.Canary
		o    Observation
		want Action
	}{
		{
			name: "a member analysing the first commit restarts in the second",
			c:    canary(v1alpha1.PhaseProgressing, inRelease(2, "")),
			o:    grouped(later, moved(v1alpha1.PhaseProgressing, newer(0, ""))),
			want: SupersedeRelease{Release: "main@sha1:def", By: "api"},
		},
		{
			name: "a member holding its promotion does not promote into a release its peers left",
			c:    canary(v1alpha1.PhaseProgressing, inRelease(3, v1alpha1.HoldingPromotion)),
			o:    grouped(later, moved(v1alpha1.PhaseProgressing, newer(0, ""))),
			want: SupersedeRelease{Release: "main@sha1:def", By: "api"},
		},
		{
			name: "a member waiting for its dependencies moves too",
			c: canary(v1alpha1.PhaseWaiting, inRelease(0, ""), func(c *v1alpha1.Canary) {
				c.Status.Group.WaitingFor = []string{"api"}
			}),
			o:    grouped(later, moved(v1alpha1.PhaseWaiting, newer(0, ""))),
			want: SupersedeRelease{Release: "main@sha1:def", By: "api"},
		},
		{
			name: "a member that failed with the first commit is analysed again in the second",
			c:    canary(v1alpha1.PhaseFailed, inRelease(1, "")),
			o:    grouped(later, moved(v1alpha1.PhaseProgressing, newer(0, ""))),
			want: StartRollout{},
		},
		{
			name: "a member that promoted stays out of the second commit's release",
			c: canary(v1alpha1.PhaseSucceeded, inRelease(3, ""), func(c *v1alpha1.Canary) {
				c.Status.LastPromotedSpec = c.Status.LastAppliedSpec
			}),
			o:    grouped(later, moved(v1alpha1.PhaseProgressing, newer(0, ""))),
			want: ScaleDownCanary{},
		},
		{
			name: "a newer release that is over supersedes nothing",
			c:    canary(v1alpha1.PhaseFailed, inRelease(1, "")),
			o:    grouped(later, moved(v1alpha1.PhaseSucceeded, newer(3, ""))),
			want: ScaleDownCanary{},
		},
		{
			name: "an older release of a peer is not a newer one",
			c: canary(v1alpha1.PhaseProgressing, func(c *v1alpha1.Canary) {
				c.Status.Group = newer(2, "")
				c.Status.LastAttemptedRevision = "main@sha1:def"
			}),
			o: func() Observation {
				o := grouped(later, peer("api", v1alpha1.PhaseProgressing, member(release, 2, "")))
				o.Target.Revision = "main@sha1:def"
				return o
			}(),
			want: Step{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.c, tc.o); !cmp.Equal(tc.want, got) {
				t.Errorf("Decide = %s, want %s", got, tc.want)
			}
		})
	}

	// The second commit's key is the release a moved member joins.
	c := canary(v1alpha1.PhaseProgressing, inRelease(2, ""))
	o := grouped(later, moved(v1alpha1.PhaseProgressing, newer(0, "")))
	key, start := ReleaseKey(c, o)
	if key != "main@sha1:def" || !start.Equal(t0.Add(time.Minute)) {
		t.Errorf("ReleaseKey = %s at %s, want main@sha1:def at %s", key, start, t0.Add(time.Minute))
	}
}

// A member rolled back with its release waits for the revert of the
// member that failed: it opens none when that revert restores it (its
// repository), and its own when it does not (another repository) or when
// that revert failed: its change is never left in Git because it is in a
// group.
func TestDecide_GroupRevertPerRepository(t *testing.T) {
	later := t0.Add(time.Minute)
	rolledBack := func(c *v1alpha1.Canary) {
		c.Status.Group = member(release, 1, "")
		c.Status.Group.FailedBy = "api"
		c.Status.LastAttemptedRevision = release
	}
	decider := func(r *v1alpha1.RevertStatus) Observation {
		p := peer("api", v1alpha1.PhaseFailed, member(release, 1, ""))
		p.Revision, p.Revert = "main@sha1:def", r
		o := grouped(later, p)
		o.Target.SpecHash = "v2"
		return o
	}
	reverted := func(state string, covered ...string) *v1alpha1.RevertStatus {
		return &v1alpha1.RevertStatus{Revision: "main@sha1:def", State: state, Covered: covered}
	}
	tests := []struct {
		name string
		o    Observation
		want Action
	}{
		{"the failed member's revert has not run yet", decider(nil), ScaleDownCanary{}},
		{"it runs", decider(reverted("Pending")), ScaleDownCanary{}},
		{"it restores this member", decider(reverted("Opened", "api", "podinfo")), ScaleDownCanary{}},
		{"it restores the failed member's repository only", decider(reverted("Opened", "api")), OpenRevert{}},
		{"it failed", decider(reverted("Failed")), OpenRevert{}},
		{"it is of another revision", decider(&v1alpha1.RevertStatus{Revision: "main@sha1:old", State: "Opened"}), ScaleDownCanary{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := canary(v1alpha1.PhaseFailed, revertOn(v1alpha1.RevertTrigger(v1alpha1.PhaseFailed)), rolledBack)
			if got := Decide(c, tc.o); !cmp.Equal(tc.want, got) {
				t.Errorf("Decide = %s, want %s", got, tc.want)
			}
		})
	}
}

// A member of a group writes the promotions of its wave only for a
// release every member of which is promoted, and never for one another
// member failed: the next stage never gets part of a release.
func TestReleaseWaveGate(t *testing.T) {
	later := t0.Add(time.Minute)
	promoted := func(c *v1alpha1.Canary) {
		c.Status.LastPromotedSpec, c.Status.LastPromotedRevision = c.Status.LastAppliedSpec, release
		c.Spec.GitOps = &v1alpha1.GitOpsSpec{Promote: []v1alpha1.PromotionTarget{{Stage: "production"}}}
	}
	tests := []struct {
		name string
		peer GroupPeer
		want Action
	}{
		{"every member promoted", peer("api", v1alpha1.PhaseSucceeded, member(release, 3, "")), AdvanceWave{}},
		{"a member still analysing (dependsOn)", peer("web", v1alpha1.PhaseProgressing, member(release, 1, "")),
			AdvanceWave{Hold: "waiting for every member of release main@sha1:abc to be promoted before writing the promotion: web (Progressing)"}},
		{"a member failed the release", peer("web", v1alpha1.PhaseFailed, member(release, 1, "")),
			AdvanceWave{Stop: "release main@sha1:abc was not promoted whole: web is Failed; the next stages get none of it"}},
		{"a member in a newer release", peer("web", v1alpha1.PhaseProgressing, newer(1, "")), AdvanceWave{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := canary(v1alpha1.PhaseSucceeded, inRelease(3, ""), promoted)
			o := grouped(later, tc.peer)
			o.Target.SpecHash = c.Status.LastAppliedSpec
			o.Target.Replicas = 0
			o.Primary.SpecHash = c.Status.LastAppliedSpec
			if got := Decide(c, o); !cmp.Equal(tc.want, got) {
				t.Errorf("Decide = %#v, want %#v", got, tc.want)
			}
		})
	}
}
