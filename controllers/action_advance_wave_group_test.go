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
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// groupRelease is the shop's release of main@sha1:v2 as a member reads
// its peers: each promoted in it, with the production stage.
func groupRelease(w *waveWorld, peers ...rollout.GroupPeer) rollout.Group {
	at := metav1.NewTime(actionNow.Add(-time.Hour))
	w.obj.Status.Group = &v1alpha1.GroupStatus{Name: "shop", Release: "main@sha1:v2", StartedAt: &at}
	for i := range peers {
		peers[i].Found, peers[i].Phase, peers[i].Revision = true, v1alpha1.PhaseSucceeded, "main@sha1:v2"
		peers[i].Status = &v1alpha1.GroupStatus{Name: "shop", Release: "main@sha1:v2", StartedAt: &at}
		peers[i].Since = actionNow.Add(-time.Minute)
		peers[i].Promote = []v1alpha1.PromotionTarget{production}
	}
	return rollout.Group{Name: "shop", Members: peers}
}

// advanceIn moves the wave of a member of group until its Git jobs are
// read.
func (w *waveWorld) advanceIn(group rollout.Group) {
	w.t.Helper()
	ctx := context.Background()
	for range 500 {
		obs := rollout.Observation{Now: w.now, Requests: pendingRequests(w.obj), Group: group}
		if a, ok := rollout.DecideWave(w.obj); ok {
			if _, err := w.r.act(ctx, w.obj, obs, a); err != nil {
				w.t.Fatalf("advance-wave: %v", err)
			}
		}
		if !w.r.promotions.running(client.ObjectKeyFromObject(w.obj)) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	w.t.Fatal("the wave's Git job never ended")
}

// The first member by name writes the release's promotion for the
// others: one request, with each member's stage and its primary's
// images; the verdict it reads back is every member's, on the images the
// promotion wrote, also once a member promoted a newer commit alone.
func TestWave_GroupWriterCarriesTheRelease(t *testing.T) {
	p := &fakePromoter{
		promote: []promoteAnswer{{res: gitops.PromotionResult{State: gitops.PromotionOpened, Branch: "serin/promote/production/apps/groups/shop/v2", PullRequestURL: "https://git.example/pulls/1", Covers: []string{"web"}}}},
		verdicts: []verdictAnswer{{v: gitops.Verdict{Merged: true, StageCommit: "m1", Members: []gitops.MemberVerdict{
			{StageCanary: "apps/podinfo", State: rollout.VerdictSuccess, StageCommit: "m1"},
			{StageCanary: "apps/web", State: "failure", Description: "rolled back", StageCommit: "m1"},
		}}}},
	}
	w := newWaveWorld(t, production, p)
	web := testobj.MakeCanary("web", "apps").Target("apps/v1", "Deployment", "web").Obj()
	web.Spec.GitOps = &v1alpha1.GitOpsSpec{Promote: []v1alpha1.PromotionTarget{production}}
	webTarget := testobj.MakeDeployment("web", "apps").Replicas(2).Obj()
	webTarget.Spec.Template.Spec.Containers[0].Image = "web:v2"
	for _, o := range []client.Object{web, primaryOf(web, webTarget, "v2")} {
		if err := w.store.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	group := groupRelease(w, rollout.GroupPeer{Name: "web", Promotions: []v1alpha1.PromotionStatus{{Stage: "production", Revision: "main@sha1:v2", Phase: v1alpha1.WavePromoting}}})

	w.advanceIn(group)
	if len(p.requests) != 1 {
		t.Fatalf("promotion requests = %d, want 1", len(p.requests))
	}
	req := p.requests[0]
	if req.Group != "shop" || len(req.Members) != 1 || req.Members[0].Canary.Name != "web" ||
		!slices.Equal(req.Members[0].Images, []string{"web:v2"}) || req.Members[0].Stage.Stage != "production" {
		t.Errorf("the release's promotion request = group %q, members %+v", req.Group, req.Members)
	}
	if st := w.stage(); st.Phase != v1alpha1.WaveOpened || !slices.Equal(st.Covers, []string{"web"}) ||
		len(st.CoveredImages) != 1 || st.CoveredImages[0].Canary != "web" || !slices.Equal(st.CoveredImages[0].Images, []string{"web:v2"}) {
		t.Errorf("the writer's stage = %s covering %v with %+v", st.Phase, st.Covers, st.CoveredImages)
	}

	// A newer commit changed web alone, and web promoted it while the
	// release's pull request is open: its primary runs web:v3.
	webPrimary := &appsv1.Deployment{}
	if err := w.store.Get(context.Background(), client.ObjectKey{Namespace: "apps", Name: "web-primary"}, webPrimary); err != nil {
		t.Fatal(err)
	}
	webPrimary.Spec.Template.Spec.Containers[0].Image = "web:v3"
	if err := w.store.Update(context.Background(), webPrimary); err != nil {
		t.Fatal(err)
	}
	w.now = w.now.Add(time.Minute)
	w.advanceIn(group)
	if len(p.verdictRequests) != 1 {
		t.Fatalf("verdict requests = %d, want 1", len(p.verdictRequests))
	}
	if m := p.verdictRequests[0].Members; len(m) != 1 || !slices.Equal(m[0].Images, []string{"web:v2"}) {
		t.Errorf("the verdict is read on members %+v, want web:v2 as the promotion wrote it", m)
	}
	if st := w.stage(); st.Phase != v1alpha1.WaveFailed || st.Message != "Canary apps/web: rolled back" {
		t.Errorf("the release's verdict = %s %q, want web's failure", st.Phase, st.Message)
	}
}

// A member the release's promotion covers writes nothing: its stage
// shows the writer's, pull request and verdict included.
func TestWave_GroupMemberCoveredByTheWriter(t *testing.T) {
	p := &fakePromoter{}
	w := newWaveWorld(t, production, p)
	writer := rollout.GroupPeer{Name: "api", Promotions: []v1alpha1.PromotionStatus{{Stage: "production", Revision: "main@sha1:v2",
		Phase: v1alpha1.WaveOpened, Message: "waiting for the pull request to be merged", PullRequestURL: "https://git.example/pulls/1", Covers: []string{"podinfo"}}}}
	group := groupRelease(w, writer)

	w.advanceIn(group)
	st := w.stage()
	if len(p.requests) != 0 || st.Phase != v1alpha1.WaveOpened || st.CoveredBy != "api" || st.PullRequestURL != "https://git.example/pulls/1" {
		t.Errorf("covered stage = %+v after %d promotion requests", st, len(p.requests))
	}

	group.Members[0].Promotions[0].Phase = v1alpha1.WaveSucceeded
	w.now = w.now.Add(time.Minute)
	w.advanceIn(group)
	if st := w.stage(); st.Phase != v1alpha1.WaveSucceeded || len(p.requests) != 0 {
		t.Errorf("covered stage = %s after the writer's verdict, %d promotion requests", st.Phase, len(p.requests))
	}
	if !slices.Contains(w.reasons(), "Normal "+v1alpha1.StageSucceededReason) {
		t.Errorf("events = %v, want %s", w.reasons(), v1alpha1.StageSucceededReason)
	}
}
