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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// releaseMember is a member of group shop, in release rel begun at
// started (nil: no release), with a fluent way to set the rest.
type releaseMember struct{ m ReleaseMember }

func makeMember(name string, phase v1alpha1.CanaryPhase, rel string, started time.Time) *releaseMember {
	at := metav1.NewTime(started)
	return &releaseMember{m: ReleaseMember{
		GroupPeer: GroupPeer{Name: name, Found: true, Phase: phase, Message: name + " says why",
			Status: &v1alpha1.GroupStatus{Name: "shop", Release: rel, StartedAt: &at}},
		LastAttemptedRevision: rel,
	}}
}

func (b *releaseMember) steps(n int) *releaseMember  { b.m.Status.StepsPassed = n; return b }
func (b *releaseMember) weight(w int) *releaseMember { b.m.Weight = w; return b }
func (b *releaseMember) failedBy(m string) *releaseMember {
	b.m.Status.FailedBy = m
	return b
}
func (b *releaseMember) group(name string) *releaseMember { b.m.Status.Name = name; return b }
func (b *releaseMember) analysis(s string) *releaseMember { b.m.AnalysisSummary = s; return b }
func (b *releaseMember) reverted(rev, branch, pr string) *releaseMember {
	b.m.Revert = &v1alpha1.RevertStatus{Revision: rev, Branch: branch, PullRequestURL: pr}
	return b
}
func (b *releaseMember) obj() ReleaseMember { return b.m }

func at(t time.Time) *metav1.Time { m := metav1.NewTime(t); return &m }

func TestCurrentRelease(t *testing.T) {
	const old = "main@sha1:old"
	t1 := t0.Add(time.Second)
	tests := map[string]struct {
		members []ReleaseMember
		want    *v1alpha1.GroupRelease
	}{
		"no release yet": {
			members: []ReleaseMember{{GroupPeer: GroupPeer{Name: "web", Found: true, Phase: v1alpha1.PhaseInitialized}}, {GroupPeer: GroupPeer{Name: "api"}}},
		},
		"a member of another group is not counted": {
			members: []ReleaseMember{makeMember("web", v1alpha1.PhaseProgressing, release, t0).group("checkout").obj()},
		},
		"in progress: the newest release, its members in spec order": {
			members: []ReleaseMember{
				makeMember("web", v1alpha1.PhaseProgressing, release, t1).steps(1).weight(20).obj(),
				makeMember("db", v1alpha1.PhaseSucceeded, old, t0).obj(),
				makeMember("api", v1alpha1.PhaseSucceeded, release, t0.Add(2*time.Second)).steps(2).weight(0).obj(),
			},
			want: &v1alpha1.GroupRelease{Revision: release, Phase: v1alpha1.PhaseProgressing, StartedAt: at(t1),
				Message: "release main@sha1:abc in progress: web Progressing (1 steps passed, weight 20), api Succeeded (2 steps passed, weight 0)",
				Members: []v1alpha1.GroupReleaseMember{
					{Name: "web", Phase: v1alpha1.PhaseProgressing, Weight: 20, StepsPassed: 1, Message: "web says why"},
					{Name: "api", Phase: v1alpha1.PhaseSucceeded, StepsPassed: 2, Message: "api says why"},
				}},
		},
		"releases begun at the same moment: the greater key": {
			members: []ReleaseMember{
				makeMember("web", v1alpha1.PhaseSucceeded, "window@a", t0).obj(),
				makeMember("api", v1alpha1.PhaseSucceeded, "window@b", t0).obj(),
			},
			want: &v1alpha1.GroupRelease{Revision: "window@b", Phase: v1alpha1.PhaseSucceeded, StartedAt: at(t0),
				Message: "release window@b promoted: api",
				Members: []v1alpha1.GroupReleaseMember{{Name: "api", Phase: v1alpha1.PhaseSucceeded, Message: "api says why"}}},
		},
		"succeeded": {
			members: []ReleaseMember{
				makeMember("web", v1alpha1.PhaseSucceeded, release, t0).steps(3).obj(),
				makeMember("api", v1alpha1.PhaseSucceeded, release, t0).steps(3).obj(),
			},
			want: &v1alpha1.GroupRelease{Revision: release, Phase: v1alpha1.PhaseSucceeded, StartedAt: at(t0),
				Message: "release main@sha1:abc promoted: web, api",
				Members: []v1alpha1.GroupReleaseMember{
					{Name: "web", Phase: v1alpha1.PhaseSucceeded, StepsPassed: 3, Message: "web says why"},
					{Name: "api", Phase: v1alpha1.PhaseSucceeded, StepsPassed: 3, Message: "api says why"},
				}},
		},
		"failed: decided by the member whose own failure decided, with its analysis and revert": {
			members: []ReleaseMember{
				makeMember("web", v1alpha1.PhaseFailed, release, t0).failedBy("api").obj(),
				makeMember("api", v1alpha1.PhaseFailed, release, t0).analysis("2 of 3 checks failed").reverted(release, "serin/revert-shop", "https://git.example/pr/7").obj(),
			},
			want: &v1alpha1.GroupRelease{Revision: release, Phase: v1alpha1.PhaseFailed, StartedAt: at(t0), DecidedBy: "api",
				Message:   "api failed: api says why; analysis 2 of 3 checks failed",
				RevertURL: "https://git.example/pr/7",
				Members: []v1alpha1.GroupReleaseMember{
					{Name: "web", Phase: v1alpha1.PhaseFailed, Message: "web says why"},
					{Name: "api", Phase: v1alpha1.PhaseFailed, Message: "api says why"},
				}},
		},
		"failed: the revert's branch until its pull request is open": {
			members: []ReleaseMember{
				makeMember("api", v1alpha1.PhaseFailed, release, t0).reverted(release, "serin/revert-shop", "").obj(),
			},
			want: &v1alpha1.GroupRelease{Revision: release, Phase: v1alpha1.PhaseFailed, StartedAt: at(t0), DecidedBy: "api",
				Message: "api failed: api says why", RevertURL: "serin/revert-shop",
				Members: []v1alpha1.GroupReleaseMember{{Name: "api", Phase: v1alpha1.PhaseFailed, Message: "api says why"}}},
		},
		"failed: another member's revert pull request, not one of an older revision": {
			members: []ReleaseMember{
				makeMember("web", v1alpha1.PhaseFailed, release, t0).reverted(old, "serin/revert-old", "https://git.example/pr/1").obj(),
				makeMember("api", v1alpha1.PhaseFailed, release, t0).failedBy("web").reverted(release, "serin/revert-shop", "https://git.example/pr/7").obj(),
			},
			want: &v1alpha1.GroupRelease{Revision: release, Phase: v1alpha1.PhaseFailed, StartedAt: at(t0), DecidedBy: "web",
				Message: "web failed: web says why", RevertURL: "https://git.example/pr/7",
				Members: []v1alpha1.GroupReleaseMember{
					{Name: "web", Phase: v1alpha1.PhaseFailed, Message: "web says why"},
					{Name: "api", Phase: v1alpha1.PhaseFailed, Message: "api says why"},
				}},
		},
		"halted wins over failed": {
			members: []ReleaseMember{
				makeMember("web", v1alpha1.PhaseFailed, release, t0).analysis("1 of 3 checks failed").obj(),
				makeMember("api", v1alpha1.PhaseHalted, release, t0).analysis("not said when halted").obj(),
			},
			want: &v1alpha1.GroupRelease{Revision: release, Phase: v1alpha1.PhaseHalted, StartedAt: at(t0), DecidedBy: "api",
				Message: "api halted: api says why",
				Members: []v1alpha1.GroupReleaseMember{
					{Name: "web", Phase: v1alpha1.PhaseFailed, Message: "web says why"},
					{Name: "api", Phase: v1alpha1.PhaseHalted, Message: "api says why"},
				}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, CurrentRelease("shop", tc.members)); diff != "" {
				t.Errorf("CurrentRelease (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRecordRelease(t *testing.T) {
	const old = "main@sha1:old"
	now := t0.Add(time.Minute)
	promoted := func(rev string) v1alpha1.GroupRelease {
		return v1alpha1.GroupRelease{Revision: rev, Phase: v1alpha1.PhaseSucceeded, FinishedAt: at(t0)}
	}
	tests := map[string]struct {
		status  v1alpha1.CanaryGroupStatus
		members []ReleaseMember
		want    v1alpha1.CanaryGroupStatus // Release is compared by revision, phase and finish only
	}{
		"no release yet: Initialized": {
			members: []ReleaseMember{{GroupPeer: GroupPeer{Name: "web", Found: true}}},
			want:    v1alpha1.CanaryGroupStatus{Phase: v1alpha1.PhaseInitialized},
		},
		"no release yet keeps the phase it has": {
			status: v1alpha1.CanaryGroupStatus{Phase: v1alpha1.PhaseSucceeded},
			want:   v1alpha1.CanaryGroupStatus{Phase: v1alpha1.PhaseSucceeded},
		},
		"a new release pushes the finished one into the history": {
			status:  v1alpha1.CanaryGroupStatus{Phase: v1alpha1.PhaseSucceeded, Release: &[]v1alpha1.GroupRelease{promoted(old)}[0]},
			members: []ReleaseMember{makeMember("web", v1alpha1.PhaseProgressing, release, t0).obj()},
			want: v1alpha1.CanaryGroupStatus{Phase: v1alpha1.PhaseProgressing,
				Release: &v1alpha1.GroupRelease{Revision: release, Phase: v1alpha1.PhaseProgressing},
				History: []v1alpha1.GroupRelease{promoted(old)}},
		},
		"a release merged into another is not kept": {
			status:  v1alpha1.CanaryGroupStatus{Phase: v1alpha1.PhaseProgressing, Release: &v1alpha1.GroupRelease{Revision: "window@b", Phase: v1alpha1.PhaseProgressing}},
			members: []ReleaseMember{makeMember("web", v1alpha1.PhaseProgressing, "window@c", t0.Add(time.Second)).obj()},
			want: v1alpha1.CanaryGroupStatus{Phase: v1alpha1.PhaseProgressing,
				Release: &v1alpha1.GroupRelease{Revision: "window@c", Phase: v1alpha1.PhaseProgressing}},
		},
		"an unfinished release a member still names goes into the history": {
			status: v1alpha1.CanaryGroupStatus{Phase: v1alpha1.PhaseProgressing, Release: &v1alpha1.GroupRelease{Revision: old, Phase: v1alpha1.PhaseProgressing}},
			members: []ReleaseMember{
				makeMember("web", v1alpha1.PhaseProgressing, release, t0.Add(time.Second)).obj(),
				makeMember("api", v1alpha1.PhaseProgressing, old, t0).obj(),
			},
			want: v1alpha1.CanaryGroupStatus{Phase: v1alpha1.PhaseProgressing,
				Release: &v1alpha1.GroupRelease{Revision: release, Phase: v1alpha1.PhaseProgressing},
				History: []v1alpha1.GroupRelease{{Revision: old, Phase: v1alpha1.PhaseProgressing}}},
		},
		"the history keeps five": {
			status: v1alpha1.CanaryGroupStatus{Phase: v1alpha1.PhaseSucceeded, Release: &[]v1alpha1.GroupRelease{promoted("r6")}[0],
				History: []v1alpha1.GroupRelease{promoted("r5"), promoted("r4"), promoted("r3"), promoted("r2"), promoted("r1")}},
			members: []ReleaseMember{makeMember("web", v1alpha1.PhaseProgressing, "r7", t0).obj()},
			want: v1alpha1.CanaryGroupStatus{Phase: v1alpha1.PhaseProgressing,
				Release: &v1alpha1.GroupRelease{Revision: "r7", Phase: v1alpha1.PhaseProgressing},
				History: []v1alpha1.GroupRelease{promoted("r6"), promoted("r5"), promoted("r4"), promoted("r3"), promoted("r2")}},
		},
		"the verdict is timed when reached": {
			status:  v1alpha1.CanaryGroupStatus{Phase: v1alpha1.PhaseProgressing, Release: &v1alpha1.GroupRelease{Revision: release, Phase: v1alpha1.PhaseProgressing}},
			members: []ReleaseMember{makeMember("web", v1alpha1.PhaseSucceeded, release, t0).obj()},
			want: v1alpha1.CanaryGroupStatus{Phase: v1alpha1.PhaseSucceeded,
				Release: &v1alpha1.GroupRelease{Revision: release, Phase: v1alpha1.PhaseSucceeded, FinishedAt: at(now)}},
		},
		"the verdict keeps its time": {
			status:  v1alpha1.CanaryGroupStatus{Phase: v1alpha1.PhaseSucceeded, Release: &[]v1alpha1.GroupRelease{promoted(release)}[0]},
			members: []ReleaseMember{makeMember("web", v1alpha1.PhaseSucceeded, release, t0).obj()},
			want: v1alpha1.CanaryGroupStatus{Phase: v1alpha1.PhaseSucceeded,
				Release: &v1alpha1.GroupRelease{Revision: release, Phase: v1alpha1.PhaseSucceeded, FinishedAt: at(t0)}},
		},
		"a verdict that changed is timed again": {
			status:  v1alpha1.CanaryGroupStatus{Phase: v1alpha1.PhaseHalted, Release: &v1alpha1.GroupRelease{Revision: release, Phase: v1alpha1.PhaseHalted, FinishedAt: at(t0)}},
			members: []ReleaseMember{makeMember("web", v1alpha1.PhaseFailed, release, t0).obj()},
			want: v1alpha1.CanaryGroupStatus{Phase: v1alpha1.PhaseFailed,
				Release: &v1alpha1.GroupRelease{Revision: release, Phase: v1alpha1.PhaseFailed, FinishedAt: at(now)}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			st := tc.status
			RecordRelease(&st, "shop", tc.members, now)
			if st.Release != nil {
				st.Release = &v1alpha1.GroupRelease{Revision: st.Release.Revision, Phase: st.Release.Phase, FinishedAt: st.Release.FinishedAt}
			}
			if diff := cmp.Diff(tc.want, st); diff != "" {
				t.Errorf("RecordRelease (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStrandedMembers(t *testing.T) {
	const old = "main@sha1:old"
	tests := map[string]struct {
		current *v1alpha1.GroupRelease
		members []ReleaseMember
		want    []string
	}{
		"a member that failed itself is the verdict's, not stranded": {
			members: []ReleaseMember{makeMember("api", v1alpha1.PhaseFailed, old, t0).obj()},
		},
		"a member rolled back with the current release is the verdict's": {
			current: &v1alpha1.GroupRelease{Revision: release},
			members: []ReleaseMember{makeMember("web", v1alpha1.PhaseFailed, release, t0).failedBy("api").obj()},
		},
		"a member rolled back with an earlier release is stranded": {
			current: &v1alpha1.GroupRelease{Revision: release},
			members: []ReleaseMember{
				makeMember("web", v1alpha1.PhaseFailed, old, t0).failedBy("api").obj(),
				makeMember("api", v1alpha1.PhaseSucceeded, release, t0).obj(),
				{GroupPeer: GroupPeer{Name: "db"}},
			},
			want: []string{"member web was rolled back with release main@sha1:old (api failed) and serves its last promoted revision: commit a new revision or run serin retry --group shop"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, StrandedMembers("shop", tc.current, tc.members)); diff != "" {
				t.Errorf("StrandedMembers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVerdictVia(t *testing.T) {
	tests := map[string]struct {
		rel  v1alpha1.GroupRelease
		want string
	}{
		"the member that decided": {
			rel:  v1alpha1.GroupRelease{DecidedBy: "web", Members: []v1alpha1.GroupReleaseMember{{Name: "api"}, {Name: "web"}}},
			want: "web",
		},
		"else the first by name": {
			rel:  v1alpha1.GroupRelease{Members: []v1alpha1.GroupReleaseMember{{Name: "web"}, {Name: "api"}}},
			want: "api",
		},
		"no member": {},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, VerdictVia(&tc.rel)); diff != "" {
				t.Errorf("VerdictVia (-want +got):\n%s", diff)
			}
		})
	}
}
