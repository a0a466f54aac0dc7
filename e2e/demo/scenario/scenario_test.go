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

package scenario

import (
	"bytes"
	"errors"
	"maps"
	"regexp"
	"strings"
	"testing"
	"time"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
	"github.com/serin-dev/serin/internal/workload"
)

// The app the demo commits to Git builds with kustomize, as
// kustomize-controller builds it, into a Deployment serin can roll out and
// a Canary the API accepts field by field: a release is the tag, and a bug
// is the testbed's error annotation on the pod template.
func TestAppFiles(t *testing.T) {
	s := &settings{namespace: "demo", interval: 3 * time.Second}
	tests := map[string]struct {
		tag          string
		errorPercent int
		wantBug      string // the pod template's error annotation
	}{
		"a healthy release":  {tag: "6.1.0"},
		"a release with bug": {tag: "6.2.0", errorPercent: 10, wantBug: "10"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			fs := filesys.MakeFsInMemory()
			for path, content := range appFiles(s, tt.tag, tt.errorPercent) {
				if err := fs.WriteFile(path, []byte(content)); err != nil {
					t.Fatal(err)
				}
			}
			built, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, appPath)
			if err != nil {
				t.Fatalf("kustomize build %s: %v", appPath, err)
			}
			var deployment *appsv1.Deployment
			var canary *v1alpha1.Canary
			for _, res := range built.Resources() {
				data, err := res.AsYAML()
				if err != nil {
					t.Fatal(err)
				}
				if res.GetNamespace() != "demo" {
					t.Errorf("%s %s in namespace %q, want demo", res.GetKind(), res.GetName(), res.GetNamespace())
				}
				switch res.GetKind() {
				case "Deployment":
					deployment = &appsv1.Deployment{}
					err = yaml.UnmarshalStrict(data, deployment)
				case "Canary":
					canary = &v1alpha1.Canary{}
					err = yaml.UnmarshalStrict(data, canary)
				default:
					t.Errorf("unexpected %s %s", res.GetKind(), res.GetName())
				}
				if err != nil {
					t.Errorf("%s: %v", res.GetKind(), err)
				}
			}
			if deployment == nil || canary == nil {
				t.Fatalf("built %d resources, want the Deployment and the Canary", built.Size())
			}
			if err := workload.ValidateTarget(deployment); err != nil {
				t.Errorf("the Deployment cannot be rolled out: %v", err)
			}
			if deployment.Spec.Replicas != nil {
				t.Errorf("the Deployment sets replicas %d: serin scales it", *deployment.Spec.Replicas)
			}
			if got := deployment.Spec.Template.Spec.Containers[0].Image; got != "podinfo:"+tt.tag {
				t.Errorf("image %s, want podinfo:%s", got, tt.tag)
			}
			if got := deployment.Spec.Template.Annotations[testbed.ErrorPercentAnnotation]; got != tt.wantBug {
				t.Errorf("error annotation %q, want %q", got, tt.wantBug)
			}
			if canary.Spec.TargetRef.Name != deployment.Name || canary.GetAnalysisInterval() != s.interval ||
				canary.GetRoutingProvider() != v1alpha1.GatewayAPIRouting || !cmp.Equal(canary.Spec.Routing.Hosts, []string{s.appHost()}) {
				t.Errorf("canary targets %s every %s through %s for %v; want %s every %s through gatewayapi for %s",
					canary.Spec.TargetRef.Name, canary.GetAnalysisInterval(), canary.GetRoutingProvider(), canary.Spec.Routing.Hosts,
					deployment.Name, s.interval, s.appHost())
			}
			if metric := canary.Spec.Analysis.Metrics[0]; metric.Interval == nil || metric.Interval.Duration >= s.interval {
				t.Errorf("the success rate's window %v is not shorter than the interval %s", metric.Interval, s.interval)
			}
		})
	}
}

// A release commits the tag and the Deployment, never the Canary.
func TestReleaseFiles(t *testing.T) {
	s := &settings{namespace: "demo", interval: 3 * time.Second}
	got := releaseFiles(s, "6.1.0", 0)
	if diff := cmp.Diff("deployment.yaml, kustomization.yaml", changedFiles(got, appPath)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	all := appFiles(s, "6.1.0", 0)
	for path, content := range got {
		if all[path] != content {
			t.Errorf("%s differs from the app's", path)
		}
	}
}

// Act 6's repository builds with kustomize into two stages: staging's
// Canary promotes to production/podinfo, whose Canary is production's, at
// the tag staging's primary runs, reverts on Failed too, and posts its
// verdicts through the commit-status Provider of type gitea, whose token
// is no part of Git.
func TestStageFiles(t *testing.T) {
	s := &settings{namespace: "demo", interval: 3 * time.Second}
	fs := filesys.MakeFsInMemory()
	files := promotingFiles(s, "v5")
	maps.Copy(files, productionFiles(s, "v2", "http://gitea/demo/fleet.git"))
	for path, content := range files {
		if err := fs.WriteFile(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	staging := buildCanary(t, fs, appPath, "demo")
	wantPromote := []v1alpha1.PromotionTarget{{
		Stage: "production", Path: "./production/podinfo",
		Canary: &v1alpha1.PromotionCanaryReference{Name: "podinfo", Namespace: "demo-production"},
		Soak:   &metav1.Duration{Duration: 6 * time.Second},
	}}
	if diff := cmp.Diff(wantPromote, staging.Spec.GitOps.Promote); diff != "" {
		t.Errorf("staging's promote (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]v1alpha1.RevertTrigger{"Halted"}, staging.Spec.GitOps.Revert.On); diff != "" {
		t.Errorf("staging's revert (-want +got):\n%s", diff)
	}

	production := buildCanary(t, fs, productionPath, "demo-production")
	if production.Spec.GitOps.Promote != nil || !cmp.Equal(production.Spec.Routing.Hosts, []string{"podinfo.demo-production.serin.test"}) {
		t.Errorf("production's Canary promotes to %v, for hosts %v; want no promotion, for its own host", production.Spec.GitOps.Promote, production.Spec.Routing.Hosts)
	}
	if diff := cmp.Diff([]v1alpha1.RevertTrigger{"Failed", "Halted"}, production.Spec.GitOps.Revert.On); diff != "" {
		t.Errorf("production's revert (-want +got):\n%s", diff)
	}
	if len(production.Spec.Alerts) != 1 || production.Spec.Alerts[0].ProviderRef.Name != commitStatusProvider {
		t.Errorf("production's alerts %+v, want the Provider %s", production.Spec.Alerts, commitStatusProvider)
	}
	built, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, productionPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range built.Resources() {
		switch res.GetKind() {
		case "Deployment":
			d := &appsv1.Deployment{}
			data, err := res.AsYAML()
			if err != nil {
				t.Fatal(err)
			}
			if err := yaml.UnmarshalStrict(data, d); err != nil {
				t.Fatal(err)
			}
			if got := d.Spec.Template.Spec.Containers[0].Image; got != "podinfo:v2" {
				t.Errorf("production's image %s, want podinfo:v2", got)
			}
		case "Provider":
			m, err := res.Map()
			if err != nil {
				t.Fatal(err)
			}
			spec, _ := m["spec"].(map[string]any)
			want := map[string]any{"type": "gitea", "address": "http://gitea/demo/fleet.git", "secretRef": map[string]any{"name": commitStatusToken}}
			if diff := cmp.Diff(want, spec); diff != "" || res.GetNamespace() != "demo-production" {
				t.Errorf("Provider in %s (-want +got):\n%s", res.GetNamespace(), diff)
			}
		}
	}
	if built.Size() != 3 {
		t.Errorf("production builds %d resources, want the Deployment, the Canary and the Provider", built.Size())
	}
}

// buildCanary builds dir with kustomize and returns its Canary podinfo,
// which must be in namespace ns and valid field by field.
func buildCanary(t *testing.T, fs filesys.FileSystem, dir, ns string) *v1alpha1.Canary {
	t.Helper()
	built, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	for _, res := range built.Resources() {
		if res.GetKind() != "Canary" || res.GetName() != appName {
			continue
		}
		if res.GetNamespace() != ns {
			t.Errorf("%s: Canary in namespace %q, want %s", dir, res.GetNamespace(), ns)
		}
		data, err := res.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		c := &v1alpha1.Canary{}
		if err := yaml.UnmarshalStrict(data, c); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		return c
	}
	t.Fatalf("%s builds no Canary %s", dir, appName)
	return nil
}

// The screen prints what a writer streams line by line, with its source,
// whatever the chunks; blank lines and trailing blanks are dropped.
func TestScreenWriter(t *testing.T) {
	var out bytes.Buffer
	screen := NewScreen(&out)
	w := screen.Writer("git")
	for _, chunk := range []string{"To fleet\n  main -> ma", "in  \n\n", "done\t\nnot yet"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	screen.Step("seeding %s", "fleet")
	want := "  mm:ss  git     To fleet\n" +
		"  mm:ss  git       main -> main\n" +
		"  mm:ss  git     done\n" +
		"► seeding fleet\n"
	got := regexp.MustCompile(`(?m)^  \d\d:\d\d  `).ReplaceAllString(out.String(), "  mm:ss  ")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("screen (-want +got):\n%s", diff)
	}
}

// The watch's rows are laid out at fixed widths, line by line, whatever
// the chunks, the message cut at maxMessage runes; other lines pass.
func TestWatchColumns(t *testing.T) {
	var out bytes.Buffer
	c := &columns{out: &out}
	long := strings.Repeat("é", maxMessage+10)
	rows := "NAME\tGROUP\tREVISION\tPHASE\tWEIGHT\tSUSPENDED\tREADY\tMESSAGE\n" +
		"podinfo\t-\tmain@sha1:0123abcd\tProgressing\t20\tFalse\tFalse\tanalysing revision 5f3c\n" +
		"podinfo\tshop\tmain@sha1:0123abcd\tFailed\t0\tFalse\tFalse\t" + long + "\n" +
		"watching…\n"
	for _, chunk := range []string{rows[:10], rows[10:70], rows[70:]} {
		if _, err := c.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	want := "NAME      GROUP  REVISION            PHASE             WEIGHT  SUSPENDED  READY    MESSAGE\n" +
		"podinfo   -      main@sha1:0123abcd  Progressing       20      False      False    analysing revision 5f3c\n" +
		"podinfo   shop   main@sha1:0123abcd  Failed            0       False      False    " + strings.Repeat("é", maxMessage-1) + "…\n" +
		"watching…\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("watch (-want +got):\n%s", diff)
	}

	// Once the Canary promotes to a next stage, a WAVE column comes
	// before MESSAGE.
	wave := realign("podinfo\tshop\tmain@sha1:0123abcd\tSucceeded\t0\tFalse\tTrue\tproduction: Opened\tpromotion completed")
	wantWave := "podinfo   shop   main@sha1:0123abcd  Succeeded         0       False      True     production: Opened       promotion completed"
	if diff := cmp.Diff(wantWave, wave); diff != "" {
		t.Errorf("row with a wave (-want +got):\n%s", diff)
	}
}

func TestRound(t *testing.T) {
	for d, want := range map[time.Duration]string{
		1234 * time.Millisecond:               "1.2s",
		59*time.Second + 940*time.Millisecond: "59.9s",
		64 * time.Second:                      "1m04s",
		10*time.Minute + 501*time.Millisecond: "10m01s",
	} {
		if got := round(d); got != want {
			t.Errorf("round(%s) = %s, want %s", d, got, want)
		}
	}
}

// A notification is one line: severity, reason, the first line of the
// message with commit hashes shortened, and whether it updates a commit
// status.
func TestSummarize(t *testing.T) {
	hash := "0123abcd" + strings.Repeat("e", 32)
	tests := map[string]struct {
		event eventv1.Event
		want  string
	}{
		"an event": {
			eventv1.Event{Severity: "info", Reason: "Promoted", Message: "promotion of revision main@sha1:" + hash + " completed\nmore"},
			"✉ info  Promoted         promotion of revision main@sha1:0123abcd completed",
		},
		"a commit status": {
			eventv1.Event{Severity: "error", Reason: "Halted", Message: "halted", Metadata: map[string]string{"commit_status": "update"}},
			"✉ error Halted           halted  (commit status)",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := summarize(tt.event); got != tt.want {
				t.Errorf("summarize() =\n%q, want\n%q", got, tt.want)
			}
		})
	}
}

// What the users saw in a window: the rate, the errors by code, the share
// of each version.
func TestDescribeUsers(t *testing.T) {
	c := testbed.Counts{Total: 40, Errors: 3, ByVersion: map[string]int{"6.1.0": 30, "6.0.0": 10}, ByCode: map[int]int{200: 37, 500: 2, 0: 1}}
	want := " 20 req/s · 3 errors (1×0, 2×500) · served by 6.0.0 25% · 6.1.0 75%"
	if got := describeUsers(c, 2*time.Second); got != want {
		t.Errorf("describeUsers() =\n%q, want\n%q", got, want)
	}
}

// A play is OK only when every act was played without an error; the
// summary says which were not.
func TestReport(t *testing.T) {
	played := func(n int, err error) ActResult {
		return ActResult{Number: n, Title: acts[n-1].title, Played: true, Expected: acts[n-1].expect, Got: acts[n-1].expect, Duration: 12 * time.Second, Err: err}
	}
	all := make([]ActResult, len(acts))
	for i := range acts {
		all[i] = played(i+1, nil)
	}
	tests := map[string]struct {
		acts     []ActResult
		wantOK   bool
		wantMark string // in the summary
	}{
		"every act played":   {all, true, "✔"},
		"an act failed":      {append(append([]ActResult{}, all[:len(all)-1]...), played(len(all), errors.New("timed out"))), false, "✗"},
		"the play cut short": {all[:1], false, ""},
		"an act not played":  {append(append([]ActResult{}, all[:len(all)-1]...), ActResult{Number: len(all), Title: "last"}), false, "not played"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r := &Report{Acts: tt.acts, PullRequestURL: "http://gitea/fleet/pulls/1", Messages: 7}
			if got := r.OK(); got != tt.wantOK {
				t.Errorf("OK() = %v, want %v", got, tt.wantOK)
			}
			var out bytes.Buffer
			r.Print(&out)
			if !strings.Contains(out.String(), tt.wantMark) || !strings.Contains(out.String(), "to the sink: 7") {
				t.Errorf("summary lacks %q or the messages:\n%s", tt.wantMark, out.String())
			}
			if merged := strings.Contains(out.String(), "merged in act 4"); merged != tt.wantOK {
				t.Errorf("summary says the revert was merged: %v, want %v", merged, tt.wantOK)
			}
		})
	}
}

// The scenario needs a testbed; its defaults fill in the rest.
func TestNewSettings(t *testing.T) {
	if _, err := newSettings(Env{}); err == nil {
		t.Error("newSettings() without a testbed: no error")
	}
	s, err := newSettings(Env{Config: &rest.Config{Host: "https://127.0.0.1:1"}, Kubeconfig: "kubeconfig", Gitea: &testbed.Gitea{}, GatewayURL: "http://127.0.0.1:2"})
	if err != nil {
		t.Fatal(err)
	}
	if s.namespace != "demo" || s.repository != "fleet" || s.interval != 3*time.Second || s.screen == nil || s.kube == nil {
		t.Errorf("settings %+v, want namespace demo, repository fleet, interval 3s, a screen and a client", s)
	}
}
