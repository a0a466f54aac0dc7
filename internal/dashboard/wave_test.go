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

package dashboard

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// waveCanary is sampleCanary, analysing its next revision, with the wave
// of the revision it promoted before: staging judged it (its pull request
// merged, the stage's Canary succeeded), production soaks, and dr was
// added to the spec since.
func waveCanary() *v1alpha1.Canary {
	at := func(t time.Time) *metav1.Time { mt := metav1.NewTime(t); return &mt }
	c := sampleCanary()
	c.Spec.GitOps = &v1alpha1.GitOpsSpec{Promote: []v1alpha1.PromotionTarget{
		{Stage: "staging", Path: "clusters/staging/apps"},
		{Stage: "production", Path: "clusters/production/apps"},
		{Stage: "dr", Path: "clusters/dr/apps"},
	}}
	c.Status.Promotions = []v1alpha1.PromotionStatus{
		{
			Stage: "staging", Revision: goodRevision, Phase: v1alpha1.WaveSucceeded, Images: []string{"ghcr.io/example/podinfo:6.5.0"},
			Branch: "serin/promote/staging/podinfo-11111111", Commit: "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00",
			PullRequestURL: "https://git.example/apps/pulls/9", StageCommit: "feedface00feedface00feedface00feedface00",
			URL: "https://serin.staging.example/canaries/apps/podinfo", Message: "Canary apps/podinfo: revision promoted",
			LastTransitionTime: at(rolloutStart.Add(-30 * time.Minute)),
		},
		{
			Stage: "production", Revision: goodRevision, Phase: v1alpha1.WaveSoaking, SoakUntil: at(testNow.Add(time.Hour)),
			Message:            "soaking until 2026-05-04T11:15:00Z: the checks must keep passing on the primary",
			LastTransitionTime: at(rolloutStart.Add(-time.Hour)),
		},
	}
	return c
}

func TestWaveOf(t *testing.T) {
	at := func(t time.Time) *time.Time { return &t }
	retrying := v1alpha1.PromotionStatus{Stage: "staging", Revision: goodRevision, Phase: v1alpha1.WavePromoting, Attempts: 2,
		NextAttemptTime: &metav1.Time{Time: testNow.Add(40 * time.Second)}, Message: "attempt 2 failed, next in 40s: 503"}
	tests := map[string]struct {
		gitops     *v1alpha1.GitOpsSpec
		promotions []v1alpha1.PromotionStatus
		want       []stageView
	}{
		"no wave": {want: []stageView{}},
		"stages, nothing promoted yet": {
			gitops: &v1alpha1.GitOpsSpec{Promote: []v1alpha1.PromotionTarget{{Stage: "staging"}, {Stage: "production"}}},
			want:   []stageView{{Stage: "staging"}, {Stage: "production"}},
		},
		"in the spec's order, a retried write with its next attempt": {
			gitops: &v1alpha1.GitOpsSpec{Promote: []v1alpha1.PromotionTarget{{Stage: "production"}, {Stage: "staging"}}},
			promotions: []v1alpha1.PromotionStatus{retrying,
				{Stage: "production", Revision: goodRevision, Phase: v1alpha1.WaveStopped, Message: "error-rate 7.5 above max 1"}},
			want: []stageView{
				{Stage: "production", Phase: v1alpha1.WaveStopped, Revision: goodRevision, Message: "error-rate 7.5 above max 1"},
				{Stage: "staging", Phase: v1alpha1.WavePromoting, Revision: goodRevision, Message: "attempt 2 failed, next in 40s: 503",
					Attempts: 2, NextAttemptTime: at(testNow.Add(40 * time.Second))},
			},
		},
		"a stage the spec no longer lists comes last": {
			gitops:     &v1alpha1.GitOpsSpec{Promote: []v1alpha1.PromotionTarget{{Stage: "production"}}},
			promotions: []v1alpha1.PromotionStatus{retrying},
			want: []stageView{{Stage: "production"},
				{Stage: "staging", Phase: v1alpha1.WavePromoting, Revision: goodRevision, Message: "attempt 2 failed, next in 40s: 503",
					Attempts: 2, NextAttemptTime: at(testNow.Add(40 * time.Second))}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := sampleCanary()
			c.Spec.GitOps, c.Status.Promotions = tc.gitops, tc.promotions
			if diff := cmp.Diff(tc.want, waveOf(c)); diff != "" {
				t.Errorf("wave differs (-want +got):\n%s", diff)
			}
		})
	}
}

// The Canary's page has a Wave card, which its script fills from the
// detail's wave.
func TestWavePage(t *testing.T) {
	server := startServer(t, newFakeClient(nil), "apps")
	for path, want := range map[string]string{
		"/canaries/apps/podinfo": `<section aria-labelledby="wave-title" class="card" id="wave-card" hidden>`,
		"/assets/app.js":         `redraw("wave", d.wave, renderWave)`,
	} {
		resp, body := get(t, server, path)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("GET %s: %s, body without %q", path, resp.Status, want)
		}
	}
}
