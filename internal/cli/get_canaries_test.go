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

const (
	longRevision     = "main@sha1:0123abcd0123abcd0123abcd0123abcd0123abcd"
	promotedRevision = "main@sha1:89abcdef89abcdef89abcdef89abcdef89abcdef"
)

// listedCanaries are the Canaries of the get canaries tests: two in apps,
// podinfo a member of the group storefront, two in shop, and two with
// stages to promote to in web: frontend's promoted revision is in its
// wave, search has promoted none yet.
func listedCanaries() []client.Object {
	return []client.Object{
		makeCanary("web", "frontend").revisions("", promotedRevision).phase(v1alpha1.PhaseSucceeded, 0).
			ready(metav1.ConditionTrue, "Succeeded", "promotion completed").stages("staging", "production").
			promotion(v1alpha1.PromotionStatus{Stage: "staging", Revision: promotedRevision, Phase: v1alpha1.WaveSucceeded}, time.Hour).
			promotion(v1alpha1.PromotionStatus{Stage: "production", Revision: promotedRevision, Phase: v1alpha1.WaveSoaking}, time.Hour).obj(),
		makeCanary("web", "search").phase(v1alpha1.PhaseInitialized, 0).stages("production").
			ready(metav1.ConditionTrue, "Initialized", "initialized").obj(),
		makeCanary("apps", "podinfo").revisions(longRevision, promotedRevision).
			phase(v1alpha1.PhaseProgressing, 20).label("team", "web").inGroup("storefront", longRevision, 1).
			ready(metav1.ConditionFalse, "Progressing", "advancing canary weight to 20 for "+longRevision).obj(),
		makeCanary("apps", "backend").revisions("", "v1.4.0@sha256:"+strings.Repeat("9f86d081", 8)).
			phase(v1alpha1.PhaseSucceeded, 0).
			ready(metav1.ConditionTrue, "Succeeded", "promotion completed").obj(),
		makeCanary("shop", "cart").suspended().revisions("main@sha1:deadbeef", "").
			phase(v1alpha1.PhaseHalted, 50).label("team", "web").
			ready(metav1.ConditionUnknown, "Halted", "primary not ready: progress deadline exceeded").obj(),
		makeCanary("shop", "new").obj(),
	}
}

func TestGetCanaries(t *testing.T) {
	tests := map[string]struct {
		args    []string
		golden  string
		wantErr string
		// wantStderr is what the command prints on standard error.
		wantStderr string
	}{
		"namespace of the kubeconfig context": {
			args: []string{"get", "canaries"}, golden: "context_namespace.golden",
		},
		"namespace flag": {
			args: []string{"get", "canaries", "-n", "shop"}, golden: "namespace_flag.golden",
		},
		"all namespaces": {
			args: []string{"get", "canaries", "-A"}, golden: "all_namespaces.golden",
		},
		"no header": {
			args: []string{"get", "canaries", "-A", "--no-header"}, golden: "no_header.golden",
		},
		"by name": {
			args: []string{"get", "canaries", "podinfo"}, golden: "by_name.golden",
		},
		"Canaries with stages: the WAVE column": {
			args: []string{"get", "canaries", "-n", "web"}, golden: "wave.golden",
		},
		"a Canary with stages by name": {
			args: []string{"get", "canaries", "frontend", "-n", "web"}, golden: "wave_by_name.golden",
		},
		"status selector": {
			args: []string{"get", "canaries", "-A", "--status-selector", "ready=false"}, golden: "status_selector.golden",
		},
		"status selector matching nothing prints the header": {
			args:   []string{"get", "canaries", "-n", "apps", "--status-selector", "Stalled=True"},
			golden: "status_selector_none.golden",
		},
		"label selector": {
			args: []string{"get", "canaries", "-A", "-l", "team=web"}, golden: "label_selector.golden",
		},
		"empty namespace": {
			args: []string{"get", "canaries", "-n", "empty"}, wantStderr: "✗ " + `no Canary objects found in "empty" namespace` + "\n",
		},
		"unknown name": {
			args: []string{"get", "canaries", "nope"}, wantStderr: "✗ " + `Canary object 'nope' not found in "apps" namespace` + "\n",
		},
		"nothing in any namespace": {
			args: []string{"get", "canaries", "-A", "-l", "team=none"}, wantStderr: "✗ " + `no Canary objects found in any namespace` + "\n",
		},
		"wide: the columns shown only there, WAVE always, revisions uncut": {
			args: []string{"get", "canaries", "-A", "-o", "wide"}, golden: "wide.golden",
		},
		"as JSON: the cells of each row, then the Canary": {
			args: []string{"get", "canaries", "-A", "-o", "json"}, golden: "all_namespaces.json.golden",
		},
		"as YAML, status selector": {
			args: []string{"get", "canaries", "-A", "--status-selector", "ready=false", "-o", "yaml"}, golden: "status_selector.yaml.golden",
		},
		"empty namespace as JSON: no items, and it says so on standard error": {
			args: []string{"get", "canaries", "-n", "empty", "-o", "json"}, golden: "empty.json.golden",
			wantStderr: "✗ " + `no Canary objects found in "empty" namespace` + "\n",
		},
		"watch as JSON is refused": {
			args: []string{"get", "canaries", "-w", "-o", "json"}, wantErr: "--watch prints rows: use it without -o json",
		},
		"malformed status selector": {
			args:    []string{"get", "canaries", "--status-selector", "ready"},
			wantErr: "expected status selector in type=status format, but found: ready",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := newTestEnvironment(t, newFakeClient(listedCanaries()...))
			run := runCommand(context.Background(), env, tc.args...)
			assertRun(t, run, tc.wantErr, tc.wantStderr, "get_canaries", tc.golden)
		})
	}
}

func TestCanaryRowColours(t *testing.T) {
	canary := makeCanary("apps", "podinfo").phase(v1alpha1.PhaseFailed, 0).
		ready(metav1.ConditionFalse, "Failed", "rolled back").obj()
	got := canaryRow(canary, tableLayout{}, palette{enabled: true})
	want := []string{"podinfo", "-", "", "\033[31mFailed\033[0m", "0", "False", "\033[31mFalse\033[0m", "rolled back"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("row differs (-want +got):\n%s", diff)
	}
}

func TestWaveCell(t *testing.T) {
	stage := func(name, phase string) v1alpha1.PromotionStatus {
		return v1alpha1.PromotionStatus{Stage: name, Revision: promotedRevision, Phase: phase}
	}
	tests := map[string]struct {
		canary *v1alpha1.Canary
		colors palette
		want   string
	}{
		"no stage": {
			canary: makeCanary("apps", "podinfo").obj(), want: "-",
		},
		"stages, nothing promoted yet": {
			canary: makeCanary("apps", "podinfo").stages("production").obj(), want: "-",
		},
		"a stage each, in the status' order": {
			canary: makeCanary("apps", "podinfo").stages("staging", "production").
				promotion(stage("staging", v1alpha1.WaveSucceeded), time.Minute).
				promotion(stage("production", v1alpha1.WaveOpened), time.Minute).obj(),
			want: "staging: Succeeded, production: Opened",
		},
		"coloured": {
			canary: makeCanary("apps", "podinfo").stages("staging", "production", "dr").
				promotion(stage("staging", v1alpha1.WaveSucceeded), time.Minute).
				promotion(stage("production", v1alpha1.WaveStopped), time.Minute).
				promotion(stage("dr", v1alpha1.WaveSoaking), time.Minute).obj(),
			colors: palette{enabled: true},
			want:   "staging: \033[32mSucceeded\033[0m, production: \033[31mStopped\033[0m, dr: \033[33mSoaking\033[0m",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, waveCell(tc.canary, tc.colors)); diff != "" {
				t.Errorf("cell differs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGetCanariesWatch follows a Canary: the header and the listed rows come
// first, then one row for each change of a row, until --timeout.
func TestGetCanariesWatch(t *testing.T) {
	kube := newFakeClient(listedCanaries()...)
	env := newTestEnvironment(t, kube)
	var stdout, stderr syncBuffer
	done := make(chan commandRun)
	go func() {
		done <- runCommandInto(context.Background(), env, &stdout, &stderr,
			"get", "canaries", "podinfo", "--watch", "--timeout", "2s")
	}()

	waitForLines(t, &stdout, 2)
	key := client.ObjectKey{Namespace: "apps", Name: "podinfo"}
	updateCanary(t, kube, key, func(c *v1alpha1.Canary) { c.Labels["unrelated"] = "change" })
	updateCanaryStatus(t, kube, key, func(c *v1alpha1.Canary) {
		c.Status.CanaryWeight = 30
		c.Status.Conditions[0].Message = "advancing canary weight to 30"
	})
	waitForLines(t, &stdout, 3)

	run := <-done
	if diff := cmp.Diff("stopped watching after --timeout 2s", errorText(run.err)); diff != "" {
		t.Errorf("error differs (-want +got):\n%s", diff)
	}
	assertGolden(t, "get_canaries/watch.golden", run.stdout)
}

// TestGetCanariesWatchWave follows Canaries without stages: no WAVE
// column, until one of them gets stages, whose row comes under a new
// header with the column.
func TestGetCanariesWatchWave(t *testing.T) {
	kube := newFakeClient(listedCanaries()...)
	env := newTestEnvironment(t, kube)
	var stdout, stderr syncBuffer
	done := make(chan commandRun)
	go func() {
		done <- runCommandInto(context.Background(), env, &stdout, &stderr,
			"get", "canaries", "-n", "apps", "--watch", "--timeout", "2s")
	}()

	waitForLines(t, &stdout, 3)
	key := client.ObjectKey{Namespace: "apps", Name: "backend"}
	updateCanary(t, kube, key, func(c *v1alpha1.Canary) {
		c.Spec.GitOps = &v1alpha1.GitOpsSpec{Promote: []v1alpha1.PromotionTarget{{Stage: "production", Path: "clusters/production"}}}
	})
	waitForLines(t, &stdout, 5)
	updateCanaryStatus(t, kube, key, func(c *v1alpha1.Canary) {
		c.Status.Promotions = []v1alpha1.PromotionStatus{{Stage: "production", Revision: c.Status.LastPromotedRevision, Phase: v1alpha1.WavePromoting}}
	})
	waitForLines(t, &stdout, 6)

	run := <-done
	if diff := cmp.Diff("stopped watching after --timeout 2s", errorText(run.err)); diff != "" {
		t.Errorf("error differs (-want +got):\n%s", diff)
	}
	assertGolden(t, "get_canaries/watch_wave.golden", run.stdout)
}

func waitForLines(t *testing.T, out *syncBuffer, lines int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(out.String(), "\n") < lines {
		if time.Now().After(deadline) {
			t.Fatalf("waited for %d lines, got:\n%s", lines, out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func updateCanary(t *testing.T, kube client.Client, key client.ObjectKey, change func(*v1alpha1.Canary)) {
	t.Helper()
	canary := &v1alpha1.Canary{}
	if err := kube.Get(context.Background(), key, canary); err != nil {
		t.Fatal(err)
	}
	change(canary)
	if err := kube.Update(context.Background(), canary); err != nil {
		t.Fatal(err)
	}
}

func updateCanaryStatus(t *testing.T, kube client.Client, key client.ObjectKey, change func(*v1alpha1.Canary)) {
	t.Helper()
	canary := &v1alpha1.Canary{}
	if err := kube.Get(context.Background(), key, canary); err != nil {
		t.Fatal(err)
	}
	change(canary)
	if err := kube.Status().Update(context.Background(), canary); err != nil {
		t.Fatal(err)
	}
}
