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
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// testPromoteToValue is the serin.dev/promote-to value of a request for
// production at testNow.
const testPromoteToValue = "production@" + testRequestValue

// soakingCanary promoted a revision that staging has and production
// soaks.
func soakingCanary() *canaryBuilder {
	return makeCanary("apps", "podinfo").revisions(promotedRevision, promotedRevision).
		phase(v1alpha1.PhaseSucceeded, 0).stages("staging", "production").
		promotion(v1alpha1.PromotionStatus{Stage: "staging", Revision: promotedRevision, Phase: v1alpha1.WaveSucceeded}, time.Hour).
		promotion(v1alpha1.PromotionStatus{Stage: "production", Revision: promotedRevision, Phase: v1alpha1.WaveSoaking,
			SoakUntil: ptrTime(testNow.Add(time.Hour))}, time.Hour)
}

// handlePromoteTo acts on serin.dev/promote-to as the agent does on a
// soaking stage: it writes the promotion now.
func handlePromoteTo(canary *v1alpha1.Canary) bool {
	value := canary.GetAnnotations()[v1alpha1.PromoteToRequestAnnotation]
	if value == "" || value == canary.Status.HandledRequests.PromoteTo {
		return false
	}
	canary.Status.HandledRequests.PromoteTo = value
	stage, _, _ := strings.Cut(value, "@")
	for i := range canary.Status.Promotions {
		if p := &canary.Status.Promotions[i]; p.Stage == stage {
			p.Phase, p.Message, p.SoakUntil = v1alpha1.WavePromoting, "promoted by hand: writing it to Git", nil
		}
	}
	return true
}

func TestPromoteTo(t *testing.T) {
	tests := map[string]struct {
		args       []string
		canary     *v1alpha1.Canary
		agent      func(*v1alpha1.Canary) bool
		wantValue  string // serin.dev/promote-to afterwards
		wantErr    string
		wantStderr string
	}{
		"handled by the agent": {
			args: []string{"promote", "podinfo", "--to", "production"}, agent: handlePromoteTo,
			wantValue: testPromoteToValue,
			wantStderr: "► annotating Canary podinfo in apps namespace\n✔ Canary annotated\n" +
				"◎ waiting for serin to handle the promote request to production\n" +
				"✔ promote request to production handled: Promoting, revision main@sha1:89abcdef: promoted by hand: writing it to Git\n",
		},
		"without waiting": {
			args: []string{"promote", "podinfo", "--to", "production", "--no-wait"}, agent: ignoreRequests,
			wantValue:  testPromoteToValue,
			wantStderr: "► annotating Canary podinfo in apps namespace\n✔ Canary annotated\n",
		},
		"no agent: times out": {
			args: []string{"promote", "podinfo", "--to", "production", "--timeout", "200ms"}, agent: ignoreRequests,
			wantValue: testPromoteToValue,
			wantErr:   "timed out after 200ms waiting for serin to handle the promote request to production: is the serin agent running?",
			wantStderr: "► annotating Canary podinfo in apps namespace\n✔ Canary annotated\n" +
				"◎ waiting for serin to handle the promote request to production\n",
		},
		"a stage the Canary does not list": {
			args: []string{"promote", "podinfo", "--to", "prod"}, agent: handlePromoteTo,
			wantErr: `Canary podinfo in apps namespace has no stage "prod": its stages (spec.gitops.promote) are staging, production`,
		},
		"an empty stage": {
			args: []string{"promote", "podinfo", "--to", ""}, agent: handlePromoteTo,
			wantErr: `Canary podinfo in apps namespace has no stage "": its stages (spec.gitops.promote) are staging, production`,
		},
		"a Canary without stages": {
			args: []string{"promote", "podinfo", "--to", "production"}, agent: handlePromoteTo,
			canary:  makeCanary("apps", "podinfo").revisions(promotedRevision, promotedRevision).phase(v1alpha1.PhaseSucceeded, 0).obj(),
			wantErr: "Canary podinfo in apps namespace has no stage to promote to: its spec.gitops.promote is empty",
		},
		"with --group": {
			args: []string{"promote", "--group", "storefront", "--to", "production"}, agent: handlePromoteTo,
			wantErr: "--to promotes one Canary's revision to a stage of its wave: give the Canary's NAME, not --group",
		},
		"suspended: refuses to wait": {
			args: []string{"promote", "podinfo", "--to", "production"}, agent: handlePromoteTo,
			canary:  soakingCanary().suspended().obj(),
			wantErr: "Canary podinfo in apps namespace is suspended: run serin resume first, or pass --no-wait to leave the request for when it is resumed",
		},
		"suspended, without waiting": {
			args: []string{"promote", "podinfo", "--to", "production", "--no-wait"}, agent: ignoreRequests,
			canary:     soakingCanary().suspended().obj(),
			wantValue:  testPromoteToValue,
			wantStderr: "► annotating Canary podinfo in apps namespace\n✔ Canary annotated\n",
		},
		"a rollout under way: refused, even without waiting": {
			args: []string{"promote", "podinfo", "--to", "production", "--no-wait"}, agent: handlePromoteTo,
			canary: soakingCanary().revisions(longRevision, promotedRevision).phase(v1alpha1.PhaseProgressing, 20).obj(),
			wantErr: "Canary podinfo in apps namespace is in phase Progressing: the agent writes a revision to the next stages " +
				"once the Canary is Succeeded, and a request left now would skip the soak of the next revision it promotes",
		},
		"nothing promoted yet": {
			args: []string{"promote", "podinfo", "--to", "production"}, agent: handlePromoteTo,
			canary:  makeCanary("apps", "podinfo").phase(v1alpha1.PhaseInitialized, 0).stages("production").obj(),
			wantErr: "Canary podinfo in apps namespace has promoted no revision yet: there is nothing to write to production",
		},
		"unknown Canary": {
			args: []string{"promote", "nope", "--to", "production"}, agent: ignoreRequests,
			wantErr: `Canary object 'nope' not found in "apps" namespace`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			canary := tc.canary
			if canary == nil {
				canary = soakingCanary().obj()
			}
			kube := newFakeClient(canary)
			env := newTestEnvironment(t, kube)
			ctx, stopAgent := context.WithCancel(context.Background())
			defer stopAgent()
			go fakeAgent(ctx, kube, client.ObjectKeyFromObject(canary), tc.agent)

			run := runCommand(context.Background(), env, tc.args...)
			if diff := cmp.Diff(tc.wantErr, errorText(run.err)); diff != "" {
				t.Errorf("error differs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStderr, run.stderr); diff != "" {
				t.Errorf("stderr differs (-want +got):\n%s", diff)
			}
			got := &v1alpha1.Canary{}
			if err := kube.Get(context.Background(), client.ObjectKeyFromObject(canary), got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantValue, got.Annotations[v1alpha1.PromoteToRequestAnnotation]); diff != "" {
				t.Errorf("serin.dev/promote-to differs (-want +got):\n%s", diff)
			}
			if requests := requestAnnotations(t, kube, canary); len(requests) > 0 {
				t.Errorf("--to set the other requests' annotations too: %v", requests)
			}
		})
	}
}

// --to completes with the stages of the Canary named, each with its phase.
func TestPromoteToCompletion(t *testing.T) {
	objects := []client.Object{
		soakingCanary().obj(),
		makeCanary("apps", "fresh").stages("qa", "production").obj(),
		makeCanary("apps", "plain").ready(metav1.ConditionTrue, "Succeeded", "").obj(),
	}
	tests := map[string]struct {
		args []string
		want string
	}{
		"the stages with their phases": {
			args: []string{"__complete", "promote", "podinfo", "--to", ""},
			want: "staging\tSucceeded\nproduction\tSoaking\n:4\n",
		},
		"by prefix": {
			args: []string{"__complete", "promote", "podinfo", "--to", "pr"},
			want: "production\tSoaking\n:4\n",
		},
		"not started yet: the names": {
			args: []string{"__complete", "promote", "fresh", "--to", ""},
			want: "qa\nproduction\n:4\n",
		},
		"a Canary without stages": {
			args: []string{"__complete", "promote", "plain", "--to", ""},
			want: ":4\n",
		},
		"no Canary named yet": {
			args: []string{"__complete", "promote", "--to", ""},
			want: ":4\n",
		},
		"an unknown Canary": {
			args: []string{"__complete", "promote", "nope", "--to", ""},
			want: ":1\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := newTestEnvironment(t, newFakeClient(objects...))
			run := runCommand(context.Background(), env, tc.args...)
			if run.err != nil {
				t.Fatal(run.err)
			}
			if diff := cmp.Diff(tc.want, run.stdout); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The other requests take no --to.
func TestToIsPromotesOnly(t *testing.T) {
	env := newTestEnvironment(t, newFakeClient(soakingCanary().obj()))
	run := runCommand(context.Background(), env, "abort", "podinfo", "--to", "production")
	if diff := cmp.Diff("unknown flag: --to", errorText(run.err)); diff != "" {
		t.Errorf("error differs (-want +got):\n%s", diff)
	}
}
