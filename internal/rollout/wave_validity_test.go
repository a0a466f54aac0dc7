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
	"github.com/fluxcd/pkg/apis/meta"

	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// waveOf is canary podinfo of namespace apps (staging), promoting to
// stage, with analysis metrics.
func waveOf(stage v1alpha1.PromotionTarget, metrics ...v1alpha1.CanaryMetric) *v1alpha1.Canary {
	return canary(v1alpha1.PhaseSucceeded, func(c *v1alpha1.Canary) {
		c.Spec.GitOps = &v1alpha1.GitOpsSpec{Promote: []v1alpha1.PromotionTarget{stage}}
		c.Spec.Analysis.Metrics = metrics
	})
}

var (
	floor       = 99.0
	thresholded = v1alpha1.CanaryMetric{Name: "request-success-rate", ThresholdRange: &v1alpha1.ThresholdRange{Min: &floor}}
	judgedOnly  = v1alpha1.CanaryMetric{Name: "request-duration", Judge: &v1alpha1.MetricJudge{Direction: v1alpha1.JudgeIncrease}}
	anHour      = &metav1.Duration{Duration: time.Hour}
)

// prodStage is a stage whose Canary is podinfo of namespace production.
func prodStage(mutate ...func(*v1alpha1.PromotionTarget)) v1alpha1.PromotionTarget {
	p := v1alpha1.PromotionTarget{Stage: "production", Path: "./production",
		Canary: &v1alpha1.PromotionCanaryReference{Name: "podinfo", Namespace: "production"}}
	for _, m := range mutate {
		m(&p)
	}
	return p
}

func TestInvalidPromotion(t *testing.T) {
	tests := map[string]struct {
		canary  *v1alpha1.Canary
		cluster string
		// want is a part of the message; "" when the wave can work.
		want string
	}{
		"another namespace's Canary": {canary: waveOf(prodStage())},
		"its own Canary, by default": {
			canary: waveOf(prodStage(func(p *v1alpha1.PromotionTarget) { p.Canary = nil })),
			want:   "spec.gitops.promote[0].canary: the next stage's Canary is this Canary itself (apps/podinfo",
		},
		// The stage's commits are in another repository: this Canary
		// never posts on them, and its name is no confusion.
		"its own name, in another repository": {
			canary: waveOf(prodStage(func(p *v1alpha1.PromotionTarget) {
				p.Canary = nil
				p.SourceRef = &meta.LocalObjectReference{Name: "production-fleet"}
			})),
		},
		"its own Canary, named with its namespace": {
			canary: waveOf(prodStage(func(p *v1alpha1.PromotionTarget) {
				p.Canary = &v1alpha1.PromotionCanaryReference{Name: "podinfo", Namespace: "apps"}
			})),
			want: "spec.gitops.promote[0].canary: the next stage's Canary is this Canary itself",
		},
		"its own Canary, in this agent's named cluster": {
			canary: waveOf(prodStage(func(p *v1alpha1.PromotionTarget) {
				p.Canary = &v1alpha1.PromotionCanaryReference{Name: "podinfo", Cluster: "staging-eu"}
			})),
			cluster: "staging-eu",
			want:    "spec.gitops.promote[0].canary: the next stage's Canary is this Canary itself",
		},
		"a Canary of the same name in another cluster": {
			canary: waveOf(prodStage(func(p *v1alpha1.PromotionTarget) {
				p.Canary = &v1alpha1.PromotionCanaryReference{Name: "podinfo", Cluster: "prod-eu"}
			})),
			cluster: "staging-eu",
		},
		"a default Canary read from an agent without --cluster-name, from a named one": {
			canary:  waveOf(prodStage(func(p *v1alpha1.PromotionTarget) { p.Canary = nil })),
			cluster: "staging-eu",
		},
		"a path into .git": {
			canary: waveOf(prodStage(func(p *v1alpha1.PromotionTarget) { p.Path = "./.git/hooks" })),
			want:   `spec.gitops.promote[0].path "./.git/hooks": the path must not name a '.git' segment`,
		},
		"a path into .GIT": {
			canary: waveOf(prodStage(func(p *v1alpha1.PromotionTarget) { p.Path = "apps/.GIT/b" })),
			want:   `spec.gitops.promote[0].path "apps/.GIT/b": the path must not name a '.git' segment`,
		},
		"a .gitignore is no .git": {canary: waveOf(prodStage(func(p *v1alpha1.PromotionTarget) { p.Path = "apps/.gitignore.d" }))},
		"an absolute path": {
			canary: waveOf(prodStage(func(p *v1alpha1.PromotionTarget) { p.Path = "/etc" })),
			want:   `spec.gitops.promote[0].path "/etc": the path is relative to the repository's root`,
		},
		"a path out of the repository": {
			canary: waveOf(prodStage(func(p *v1alpha1.PromotionTarget) { p.Path = "apps/../../x" })),
			want:   "no '..' segment",
		},
		"a branch of the issue": {
			canary: waveOf(prodStage(func(p *v1alpha1.PromotionTarget) { p.Branch = "main..refs/heads/x; rm -rf /" })),
			want:   `spec.gitops.promote[0].branch "main..refs/heads/x; rm -rf /" is not a Git branch name: ' ': no space`,
		},
		"a valid branch": {canary: waveOf(prodStage(func(p *v1alpha1.PromotionTarget) { p.Branch = "release/v1.2" }))},
		"a soak with a thresholdRange": {
			canary: waveOf(prodStage(func(p *v1alpha1.PromotionTarget) { p.Soak = anHour }), judgedOnly, thresholded),
		},
		"a soak of judged metrics only": {
			canary: waveOf(prodStage(func(p *v1alpha1.PromotionTarget) { p.Soak = anHour }), judgedOnly),
			want:   "spec.gitops.promote[0].soak: the soak holds the promoted primary to the thresholdRange of spec.analysis.metrics, and no metric has one",
		},
		"a soak without metrics": {
			canary: waveOf(prodStage(func(p *v1alpha1.PromotionTarget) { p.Soak = anHour })),
			want:   "spec.gitops.promote[0].soak: ",
		},
		"judged metrics only, no soak": {canary: waveOf(prodStage(), judgedOnly)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := InvalidPromotion(tc.canary, tc.cluster)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("InvalidPromotion = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCheckBranchName(t *testing.T) {
	tests := map[string]bool{
		"main": true, "release/v1.2": true, "feature/a-b_c": true, "v1@2": true, "ünïcode": true,
		"": false, "@": false, "a..b": false, "a b": false, "a\tb": false, "a\x7fb": false, "a~1": false, "a^": false,
		"a:b": false, "a?": false, "a*": false, "a[b": false, `a\b`: false, "a@{1}": false, "a.lock": false,
		"a/b.lock/c": false, "a/": false, "a.": false, "a//b": false, "-a": false, "/a": false, "a/.b": false, ".a": false,
	}
	for name, valid := range tests {
		if err := CheckBranchName(name); (err == nil) != valid {
			t.Errorf("CheckBranchName(%q) = %v, want valid %v", name, err, valid)
		}
	}
}

// A wave that can never work stalls before any rollout, naming the field.
func TestDecide_InvalidPromotionStalls(t *testing.T) {
	invalid := "spec.gitops.promote[0].canary: the next stage's Canary is this Canary itself"
	stall := Stall{Reason: v1alpha1.InvalidPromotionReason, Message: invalid}
	for name, tc := range map[string]struct {
		c    *v1alpha1.Canary
		o    Observation
		want Action
	}{
		// A new revision would start a rollout whose promotion goes
		// nowhere: stalled before it starts.
		"a new revision does not start": {canary(v1alpha1.PhaseSucceeded), observed(t0, "v3", ready, "v1", ready), stall},
		// A rollout under way when the rule came (an upgrade, a Canary
		// stored before it) still takes its step: it is never left at a
		// canary weight.
		"a rollout under way still steps": {canary(v1alpha1.PhaseProgressing), observed(t0.Add(2*time.Minute), "v2", ready, "v1", ready), Step{}},
	} {
		t.Run(name, func(t *testing.T) {
			tc.o.InvalidPromotion = invalid
			if diff := cmp.Diff(tc.want, Decide(tc.c, tc.o)); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}
