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

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// production is the stage of the group wave tests.
var production = v1alpha1.PromotionTarget{Stage: "production", Path: "./production"}

// wavePeer is a member promoted in the release, with stages and a wave.
func wavePeer(name string, stages []v1alpha1.PromotionTarget, promotions ...v1alpha1.PromotionStatus) GroupPeer {
	p := peer(name, v1alpha1.PhaseSucceeded, member(release, 3, ""))
	p.Revision, p.Promote, p.Promotions = release, stages, promotions
	return p
}

// stageIn is a stage of the wave of release in phase.
func stageIn(phase string, mutate ...func(*v1alpha1.PromotionStatus)) v1alpha1.PromotionStatus {
	at := metav1.NewTime(t0)
	p := v1alpha1.PromotionStatus{Stage: "production", Revision: release, Phase: phase, Message: phase + " says why", LastTransitionTime: &at}
	for _, m := range mutate {
		m(&p)
	}
	return p
}

// waveMember is the Canary podinfo of the shop's release, promoted, with
// the production stage.
func waveMember() *v1alpha1.Canary {
	return canary(v1alpha1.PhaseSucceeded, inRelease(3, ""), func(c *v1alpha1.Canary) {
		c.Status.LastPromotedRevision = release
		c.Spec.GitOps = &v1alpha1.GitOpsSpec{Promote: []v1alpha1.PromotionTarget{production}}
	})
}

func TestReleaseStageOf(t *testing.T) {
	stages := []v1alpha1.PromotionTarget{production}
	later := t0.Add(time.Minute)
	for name, tc := range map[string]struct {
		peers   []GroupPeer
		noGroup bool
		want    ReleaseStage
	}{
		"outside a group: the Canary writes its own": {
			noGroup: true,
			want:    ReleaseStage{Writer: "podinfo"},
		},
		"no other member promotes to the stage": {
			peers: []GroupPeer{wavePeer("web", nil)},
			want:  ReleaseStage{Writer: "podinfo"},
		},
		"a member promotes to the stage of another repository": {
			peers: []GroupPeer{wavePeer("web", []v1alpha1.PromotionTarget{{Stage: "production", Path: "./production", SourceRef: &meta.LocalObjectReference{Name: "other"}}})},
			want:  ReleaseStage{Writer: "podinfo"},
		},
		"a member in a newer release is not carried": {
			peers: []GroupPeer{func() GroupPeer { p := wavePeer("web", stages); p.Status = newer(1, ""); return p }()},
			want:  ReleaseStage{Writer: "podinfo"},
		},
		"the first member by name writes for the others": {
			peers: []GroupPeer{wavePeer("web", stages, stageIn(v1alpha1.WavePromoting)), wavePeer("zoo", stages, stageIn(v1alpha1.WaveSucceeded))},
			want:  ReleaseStage{Writer: "podinfo", Covers: []string{"web", "zoo"}},
		},
		"another member writes: this one is covered": {
			peers: []GroupPeer{wavePeer("api", stages), wavePeer("web", stages)},
			want:  ReleaseStage{Writer: "api", Covers: []string{"podinfo", "web"}},
		},
		"the writer waits for a member that soaks": {
			peers: []GroupPeer{wavePeer("web", stages, stageIn(v1alpha1.WaveSoaking))},
			want: ReleaseStage{Writer: "podinfo", Covers: []string{"web"},
				Hold: "waiting for every member of release main@sha1:abc to leave its soak before writing the release's promotion: web (soaking)"},
		},
		"the writer waits for a member whose wave has not started": {
			peers: []GroupPeer{wavePeer("web", stages, stageIn(v1alpha1.WaveSucceeded, func(p *v1alpha1.PromotionStatus) { p.Revision = "main@sha1:old" }))},
			want: ReleaseStage{Writer: "podinfo", Covers: []string{"web"},
				Hold: "waiting for every member of release main@sha1:abc to leave its soak before writing the release's promotion: web (its wave has not started)"},
		},
		"a member's soak stopped the stage: nothing is written": {
			peers: []GroupPeer{wavePeer("web", stages, stageIn(v1alpha1.WaveStopped))},
			want: ReleaseStage{Writer: "podinfo", Covers: []string{"web"},
				Stop: "release main@sha1:abc is not promoted to production: web's stage stopped: Stopped says why"},
		},
		"the writer's promotion carries this member": {
			peers: []GroupPeer{wavePeer("api", stages, stageIn(v1alpha1.WaveOpened, func(p *v1alpha1.PromotionStatus) { p.Covers = []string{"podinfo", "zoo"} })),
				wavePeer("zoo", stages)},
			want: ReleaseStage{Writer: "api", Covers: []string{"podinfo", "zoo"}},
		},
		"the writer's promotion left this member out (another repository): the first left out writes for the others left out": {
			peers: []GroupPeer{wavePeer("api", stages, stageIn(v1alpha1.WaveOpened, func(p *v1alpha1.PromotionStatus) { p.Covers = []string{"web"} })),
				wavePeer("web", stages, stageIn(v1alpha1.WaveOpened, func(p *v1alpha1.PromotionStatus) { p.CoveredBy = "api" })),
				wavePeer("zoo", stages, stageIn(v1alpha1.WavePromoting))},
			want: ReleaseStage{Writer: "podinfo", Covers: []string{"zoo"}},
		},
		"a member left out by the writer is covered by the next writer": {
			peers: []GroupPeer{wavePeer("api", stages, stageIn(v1alpha1.WaveOpened)),
				wavePeer("mail", stages, stageIn(v1alpha1.WaveOpened, func(p *v1alpha1.PromotionStatus) { p.Covers = []string{"podinfo"} }))},
			want: ReleaseStage{Writer: "mail", Covers: []string{"podinfo"}},
		},
		"the writer's stage stopped before it was written: this member stops with it": {
			peers: []GroupPeer{wavePeer("api", stages, stageIn(v1alpha1.WaveStopped))},
			want:  ReleaseStage{Writer: "api", Covers: []string{"podinfo"}},
		},
		"a member stopped because the writer's stage stopped does not stop it again": {
			peers: []GroupPeer{wavePeer("web", stages, stageIn(v1alpha1.WaveStopped, func(p *v1alpha1.PromotionStatus) { p.CoveredBy = "podinfo" }))},
			want:  ReleaseStage{Writer: "podinfo", Covers: []string{"web"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			o := grouped(later, tc.peers...)
			if tc.noGroup {
				o.Group = Group{}
			}
			got := ReleaseStageOf(waveMember(), o, production)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ReleaseStageOf (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCoveredStage(t *testing.T) {
	now := t0.Add(time.Hour)
	rs := ReleaseStage{Writer: "api", Covers: []string{"podinfo"}}
	written := func(p *v1alpha1.PromotionStatus) {
		p.Branch, p.Commit, p.PullRequestURL = "serin/promote/production/apps/groups/shop/abc", "c0ffee", "https://git.example/pulls/1"
		p.Covers = []string{"podinfo"}
	}
	for name, tc := range map[string]struct {
		writer    v1alpha1.PromotionStatus
		was       string
		wantPhase string
		wantMsg   string
		wantEvent string
	}{
		"the writer has not written it yet": {
			writer: stageIn(v1alpha1.WavePromoting), was: v1alpha1.WavePromoting, wantPhase: v1alpha1.WavePromoting,
			wantMsg: "covered by the release's promotion, which api writes once every member is promoted and soaked: Promoting says why",
		},
		"the writer opened the pull request": {
			writer: stageIn(v1alpha1.WaveOpened, written), was: v1alpha1.WavePromoting, wantPhase: v1alpha1.WaveOpened,
			wantMsg: "the release's promotion, written by api: Opened says why",
		},
		"the release succeeded in the stage": {
			writer: stageIn(v1alpha1.WaveSucceeded, written), was: v1alpha1.WaveOpened, wantPhase: v1alpha1.WaveSucceeded,
			wantMsg: "the release's promotion, written by api: Succeeded says why", wantEvent: v1alpha1.StageSucceededReason,
		},
		"the release failed in the stage": {
			writer: stageIn(v1alpha1.WaveFailed, written), was: v1alpha1.WaveProgressing, wantPhase: v1alpha1.WaveFailed,
			wantMsg: "the release's promotion, written by api: Failed says why", wantEvent: v1alpha1.StageFailedReason,
		},
		"the writer's wave is of another revision": {
			writer: stageIn(v1alpha1.WaveSucceeded, func(p *v1alpha1.PromotionStatus) { p.Revision = "main@sha1:old" }), was: v1alpha1.WavePromoting,
			wantPhase: v1alpha1.WavePromoting, wantMsg: "covered by the release's promotion, which api writes once every member is promoted and soaked",
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := stageIn(tc.was)
			ev := CoveredStage(&p, rs, wavePeer("api", nil, tc.writer), now)
			if p.Phase != tc.wantPhase || p.Message != tc.wantMsg || p.CoveredBy != "api" || ev.Reason != tc.wantEvent {
				t.Errorf("CoveredStage = %s %q covered by %q, event %q; want %s %q, event %q", p.Phase, p.Message, p.CoveredBy, ev.Reason, tc.wantPhase, tc.wantMsg, tc.wantEvent)
			}
			if tc.wantPhase != v1alpha1.WavePromoting && (p.PullRequestURL != tc.writer.PullRequestURL || p.Branch != tc.writer.Branch) {
				t.Errorf("the covered stage shows %s on %s, want the writer's %s on %s", p.PullRequestURL, p.Branch, tc.writer.PullRequestURL, tc.writer.Branch)
			}
		})
	}
}

func TestReleaseVerdict(t *testing.T) {
	merged := StageVerdict{Merged: true, StageCommit: "m1", StageCanary: "prod/api"}
	api := func(state string) MemberVerdict {
		return MemberVerdict{StageCanary: "prod/api", State: state, StageCommit: "m1", Description: "api " + state}
	}
	web := func(state string) MemberVerdict {
		return MemberVerdict{StageCanary: "prod/web", State: state, StageCommit: "m1", Description: "web " + state}
	}
	for name, tc := range map[string]struct {
		v       StageVerdict
		members []MemberVerdict
		want    StageVerdict
	}{
		"not merged: as the pull request says": {
			v: StageVerdict{Closed: true}, members: []MemberVerdict{api(""), web("")}, want: StageVerdict{Closed: true},
		},
		"every member succeeded": {
			v: merged, members: []MemberVerdict{api(VerdictSuccess), web(VerdictSuccess)},
			want: StageVerdict{Merged: true, State: VerdictSuccess, StageCommit: "m1", Description: "every member succeeded", StageCanary: "prod/api, prod/web"},
		},
		"one member rolls out": {
			v: merged, members: []MemberVerdict{api(VerdictSuccess), web(VerdictPending)},
			want: StageVerdict{Merged: true, State: VerdictPending, StageCommit: "m1", Description: "rolling out: prod/web", StageCanary: "prod/api, prod/web"},
		},
		"one member has not reported": {
			v: merged, members: []MemberVerdict{api(VerdictSuccess), web("")},
			want: StageVerdict{Merged: true, StageCommit: "m1", StageCanary: "prod/web"},
		},
		"one member failed: the release failed, whatever the others say": {
			v: merged, members: []MemberVerdict{api(VerdictPending), web("failure")},
			want: StageVerdict{Merged: true, State: "failure", StageCommit: "m1", Description: "web failure", StageCanary: "prod/web"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ReleaseVerdict(tc.v, tc.members)); diff != "" {
				t.Errorf("ReleaseVerdict (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReleaseStages(t *testing.T) {
	written := func(p *v1alpha1.PromotionStatus) {
		p.PullRequestURL, p.StageCommit, p.Covers = "https://git.example/pulls/1", "m1", []string{"web"}
	}
	covered := func(p *v1alpha1.PromotionStatus) { p.CoveredBy = "api" }
	releaseMember := func(name string, ps ...v1alpha1.PromotionStatus) ReleaseMember {
		m := ReleaseMember{GroupPeer: wavePeer(name, nil, ps...), LastAttemptedRevision: release}
		return m
	}
	members := []ReleaseMember{
		releaseMember("web", stageIn(v1alpha1.WaveSucceeded, covered)),
		releaseMember("api", stageIn(v1alpha1.WaveSucceeded, written), stageIn(v1alpha1.WaveOpened, func(p *v1alpha1.PromotionStatus) { p.Stage = "canary-region" })),
		releaseMember("old", stageIn(v1alpha1.WaveFailed, func(p *v1alpha1.PromotionStatus) { p.Revision = "main@sha1:old" })),
	}
	want := []v1alpha1.GroupReleaseStage{
		{Stage: "canary-region", Phase: v1alpha1.WaveOpened, WrittenBy: "api", Members: []string{"api"}, Message: "Opened says why"},
		{Stage: "production", Phase: v1alpha1.WaveSucceeded, WrittenBy: "api", Members: []string{"api", "web"},
			PullRequestURL: "https://git.example/pulls/1", StageCommit: "m1", Message: "Succeeded says why"},
	}
	if diff := cmp.Diff(want, ReleaseStages(release, members)); diff != "" {
		t.Errorf("ReleaseStages (-want +got):\n%s", diff)
	}
}
