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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

const (
	failedRevision = "main@sha1:badc0ffeebadc0ffeebadc0ffeebadc0ffeebadc"
	revertURL      = "https://github.com/example/fleet/pull/43"
)

// listedGroups are the CanaryGroups of the tests: in apps, storefront's
// release under way (api promoted, web at its second step, worker sat it
// out) and billing before its first release; in shop, checkout's release
// failed on cart, which rolled payments back and opened the revert.
func listedGroups() []client.Object {
	return []client.Object{
		makeGroup("apps", "storefront", "api", "web", "worker").dependsOn("web", "api").label("team", "web").
			release(longRevision, v1alpha1.PhaseProgressing, 5*time.Minute,
				releaseMember("api", v1alpha1.PhaseSucceeded, 0, 5, "promotion completed"),
				releaseMember("web", v1alpha1.PhaseProgressing, 20, 2, "advancing canary weight to 20")).
			stage(v1alpha1.GroupReleaseStage{Stage: "production", Phase: v1alpha1.WavePromoting, WrittenBy: "api", Members: []string{"api"},
				Message: "waiting for every member of release " + longRevision + " to be promoted before writing the promotion: web (Progressing)"}).
			ready(metav1.ConditionFalse, "Progressing", "release "+longRevision+": 1 of 2 members promoted").obj(),
		makeGroup("apps", "billing", "invoices", "ledger").phase(v1alpha1.PhaseInitialized).
			ready(metav1.ConditionTrue, "Succeeded", "no release yet").obj(),
		makeGroup("shop", "checkout", "cart", "payments").
			release(failedRevision, v1alpha1.PhaseFailed, 20*time.Minute,
				releaseMember("cart", v1alpha1.PhaseFailed, 0, 1, "canary analysis failed: request-success-rate 97.1 < 99"),
				releaseMember("payments", v1alpha1.PhaseFailed, 0, 1, "rolled back with its release")).
			verdict(12*time.Minute, "cart", "cart failed: request-success-rate 97.1 < 99", revertURL).
			history(v1alpha1.GroupRelease{Revision: promotedRevision, Phase: v1alpha1.PhaseSucceeded,
				StartedAt: ptrTime(testNow.Add(-50 * time.Hour)), FinishedAt: ptrTime(testNow.Add(-49 * time.Hour)),
				Message: "all 2 members promoted", Members: []v1alpha1.GroupReleaseMember{
					releaseMember("cart", v1alpha1.PhaseSucceeded, 0, 5, ""), releaseMember("payments", v1alpha1.PhaseSucceeded, 0, 5, "")}}).
			ready(metav1.ConditionFalse, "Failed", "release "+failedRevision+" failed: cart failed").obj(),
	}
}

func TestGetGroups(t *testing.T) {
	tests := map[string]struct {
		args    []string
		golden  string
		wantErr string
		// wantStderr is what the command prints on standard error.
		wantStderr string
	}{
		"namespace of the kubeconfig context": {
			args: []string{"get", "groups"}, golden: "context_namespace.golden",
		},
		"all namespaces": {
			args: []string{"get", "groups", "-A"}, golden: "all_namespaces.golden",
		},
		"no header, by the short name": {
			args: []string{"get", "cg", "-A", "--no-header"}, golden: "no_header.golden",
		},
		"by name, by the kind's name": {
			args: []string{"get", "canarygroups", "storefront"}, golden: "by_name.golden",
		},
		"status selector": {
			args: []string{"get", "groups", "-A", "--status-selector", "ready=false"}, golden: "status_selector.golden",
		},
		"label selector": {
			args: []string{"get", "groups", "-A", "-l", "team=web"}, golden: "label_selector.golden",
		},
		"empty namespace": {
			args: []string{"get", "groups", "-n", "empty"}, wantStderr: "✗ " + `no CanaryGroup objects found in "empty" namespace` + "\n",
		},
		"unknown name": {
			args: []string{"get", "groups", "nope"}, wantStderr: "✗ " + `CanaryGroup object 'nope' not found in "apps" namespace` + "\n",
		},
		"wide: every revision uncut, and who decided each release": {
			args: []string{"get", "groups", "-A", "-o", "wide"}, golden: "wide.golden",
		},
		"as JSON": {
			args: []string{"get", "groups", "-A", "-o", "json"}, golden: "all_namespaces.json.golden",
		},
		"as YAML, by name": {
			args: []string{"get", "groups", "storefront", "-o", "yaml"}, golden: "by_name.yaml.golden",
		},
		"empty namespace as JSON: no items": {
			args: []string{"get", "groups", "-n", "empty", "-o", "json"}, golden: "empty.json.golden",
			wantStderr: "✗ " + `no CanaryGroup objects found in "empty" namespace` + "\n",
		},
		"unknown output format": {
			args: []string{"get", "groups", "-o", "table"}, wantErr: `unknown output format "table": use wide, json, yaml, or leave --output out`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := newTestEnvironment(t, newFakeClient(listedGroups()...))
			run := runCommand(context.Background(), env, tc.args...)
			assertRun(t, run, tc.wantErr, tc.wantStderr, "get_groups", tc.golden)
		})
	}
}

func TestMembersCell(t *testing.T) {
	member := releaseMember
	tests := map[string]struct {
		group *v1alpha1.CanaryGroup
		want  string
	}{
		"before the first release: the members' names": {
			group: makeGroup("apps", "g", "api", "web").obj(),
			want:  "api web",
		},
		"under way: the steps of the members not done": {
			group: makeGroup("apps", "g", "api", "web", "db").release("r", v1alpha1.PhaseProgressing, time.Minute,
				member("api", v1alpha1.PhaseSucceeded, 0, 5, ""), member("web", v1alpha1.PhaseProgressing, 20, 2, ""),
				member("db", v1alpha1.PhaseWaiting, 0, 0, "")).obj(),
			want: "api:Succeeded web:Progressing(2) db:Waiting(0)",
		},
		"decided: no steps": {
			group: makeGroup("apps", "g", "api", "web").release("r", v1alpha1.PhaseHalted, time.Minute,
				member("api", v1alpha1.PhaseHalted, 50, 3, ""), member("web", v1alpha1.PhaseFailed, 0, 3, "")).obj(),
			want: "api:Halted web:Failed",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, membersCell(tc.group, palette{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestGetGroupsWatch follows a group: the header and its row, then a row
// when a member moved on, until --timeout.
func TestGetGroupsWatch(t *testing.T) {
	kube := newFakeClient(listedGroups()...)
	env := newTestEnvironment(t, kube)
	var stdout, stderr syncBuffer
	done := make(chan commandRun)
	go func() {
		done <- runCommandInto(context.Background(), env, &stdout, &stderr,
			"get", "groups", "storefront", "--watch", "--timeout", "2s")
	}()

	waitForLines(t, &stdout, 2)
	group := &v1alpha1.CanaryGroup{}
	if err := kube.Get(context.Background(), client.ObjectKey{Namespace: "apps", Name: "storefront"}, group); err != nil {
		t.Fatal(err)
	}
	group.Status.Release.Members[1].StepsPassed = 3
	group.Status.Release.Members[1].Weight = 30
	if err := kube.Status().Update(context.Background(), group); err != nil {
		t.Fatal(err)
	}
	waitForLines(t, &stdout, 3)

	run := <-done
	if diff := cmp.Diff("stopped watching after --timeout 2s", errorText(run.err)); diff != "" {
		t.Errorf("error differs (-want +got):\n%s", diff)
	}
	assertGolden(t, "get_groups/watch.golden", run.stdout)
}

// describedGroups are the groups of listedGroups with their member
// Canaries, as the agent left them, and an Event of checkout's failure.
func describedGroups() []client.Object {
	objects := listedGroups()
	failed := makeCanary("shop", "payments").phase(v1alpha1.PhaseFailed, 0).inGroup("checkout", failedRevision, 1).obj()
	failed.Status.Group.FailedBy = "cart"
	web := makeCanary("apps", "web").phase(v1alpha1.PhaseProgressing, 20).inGroup("storefront", longRevision, 2).obj()
	web.Status.Group.Holding = v1alpha1.HoldingStep
	// api's group status is of an earlier release: not shown.
	api := makeCanary("apps", "api").phase(v1alpha1.PhaseSucceeded, 0).inGroup("storefront", promotedRevision, 5).obj()
	api.Status.Group.WaitingFor = []string{"nobody"}
	event := canaryEvent("checkout-failed", "checkout", "uid-group-shop-checkout", 12*time.Minute, corev1.EventTypeWarning,
		"ReleaseFailed", "release "+failedRevision+" failed: cart failed: request-success-rate 97.1 < 99")
	event.Namespace, event.InvolvedObject.Namespace, event.InvolvedObject.Kind = "shop", "shop", v1alpha1.CanaryGroupKind
	return append(objects, failed, web, api,
		makeCanary("shop", "cart").phase(v1alpha1.PhaseFailed, 0).inGroup("checkout", failedRevision, 1).obj(), event)
}

func TestGetGroup(t *testing.T) {
	tests := map[string]struct {
		args    []string
		golden  string
		wantErr string
	}{
		"release under way: a member holds its step": {
			args: []string{"get", "group", "storefront"}, golden: "progressing.golden",
		},
		"release failed: the verdict, the revert, the history": {
			args: []string{"get", "canarygroup", "checkout", "-n", "shop"}, golden: "failed.golden",
		},
		"no release yet": {
			args: []string{"get", "group", "billing"}, golden: "initialized.golden",
		},
		"release failed, as YAML": {
			args: []string{"get", "group", "checkout", "-n", "shop", "-o", "yaml"}, golden: "failed.yaml.golden",
		},
		"not found": {
			args: []string{"get", "group", "nope"}, wantErr: `CanaryGroup object 'nope' not found in "apps" namespace`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := newTestEnvironment(t, newFakeClient(describedGroups()...))
			run := runCommand(context.Background(), env, tc.args...)
			if diff := cmp.Diff(tc.wantErr, errorText(run.err)); diff != "" {
				t.Fatalf("error differs (-want +got):\n%s", diff)
			}
			if tc.golden != "" {
				assertGolden(t, "get_group/"+tc.golden, run.stdout)
			}
		})
	}
}
