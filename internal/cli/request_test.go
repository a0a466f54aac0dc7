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

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/agentrequest"
)

// testRequestValue is the annotation value the commands set at testNow.
const testRequestValue = "2026-05-04T10:00:00Z"

// fakeAgent stands in for serin-agent: until ctx ends it reads the Canary
// and, when act changes its status, writes the status back.
func fakeAgent(ctx context.Context, kube client.Client, key client.ObjectKey, act func(*v1alpha1.Canary) bool) {
	for ctx.Err() == nil {
		canary := &v1alpha1.Canary{}
		if err := kube.Get(ctx, key, canary); err == nil && act(canary) {
			_ = kube.Status().Update(ctx, canary) // a conflict is retried at the next read
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// handleRequests records every request annotation in status.handledRequests.
func handleRequests(canary *v1alpha1.Canary) bool {
	handled := &canary.Status.HandledRequests
	before := *handled
	annotations := canary.GetAnnotations()
	handled.Promote = annotations[v1alpha1.PromoteRequestAnnotation]
	handled.Abort = annotations[v1alpha1.AbortRequestAnnotation]
	handled.Retry = annotations[v1alpha1.RetryRequestAnnotation]
	handled.Revert = annotations[v1alpha1.RevertRequestAnnotation]
	canary.Status.Phase = v1alpha1.PhasePromoting
	return *handled != before
}

func ignoreRequests(*v1alpha1.Canary) bool { return false }

func TestAgentRequests(t *testing.T) {
	tests := map[string]struct {
		args           []string
		canary         *v1alpha1.Canary
		agent          func(*v1alpha1.Canary) bool
		wantAnnotation string // the annotation expected at testRequestValue
		wantErr        string
		wantStderr     string
	}{
		"promote, handled by the agent": {
			args:           []string{"promote", "podinfo"},
			agent:          handleRequests,
			wantAnnotation: v1alpha1.PromoteRequestAnnotation,
			wantStderr: "► annotating Canary podinfo in apps namespace\n✔ Canary annotated\n" +
				"◎ waiting for serin to handle the promote request\n" +
				"✔ promote request handled: phase Promoting, canary weight 20\n",
		},
		"abort, handled by the agent": {
			args: []string{"abort", "podinfo", "-n", "apps"}, agent: handleRequests,
			wantAnnotation: v1alpha1.AbortRequestAnnotation,
			wantStderr: "► annotating Canary podinfo in apps namespace\n✔ Canary annotated\n" +
				"◎ waiting for serin to handle the abort request\n" +
				"✔ abort request handled: phase Promoting, canary weight 20\n",
		},
		"retry, no agent: times out": {
			args: []string{"retry", "podinfo", "--timeout", "200ms"}, agent: ignoreRequests,
			wantAnnotation: v1alpha1.RetryRequestAnnotation,
			wantErr:        "timed out after 200ms waiting for serin to handle the retry request: is the serin agent running?",
			wantStderr: "► annotating Canary podinfo in apps namespace\n✔ Canary annotated\n" +
				"◎ waiting for serin to handle the retry request\n",
		},
		"revert without waiting": {
			args: []string{"revert", "podinfo", "--no-wait"}, agent: ignoreRequests,
			wantAnnotation: v1alpha1.RevertRequestAnnotation,
			wantStderr:     "► annotating Canary podinfo in apps namespace\n✔ Canary annotated\n",
		},
		"suspended Canary: refuses to wait": {
			args: []string{"promote", "podinfo"}, agent: handleRequests,
			canary:  makeCanary("apps", "podinfo").suspended().obj(),
			wantErr: "Canary podinfo in apps namespace is suspended: run serin resume first, or pass --no-wait to leave the request for when it is resumed",
		},
		"unknown Canary": {
			args: []string{"abort", "nope"}, agent: ignoreRequests,
			wantErr: `Canary object 'nope' not found in "apps" namespace`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			canary := tc.canary
			if canary == nil {
				canary = makeCanary("apps", "podinfo").phase(v1alpha1.PhaseProgressing, 20).obj()
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
			if diff := cmp.Diff(wantAnnotations(tc.wantAnnotation), requestAnnotations(t, kube, canary)); diff != "" {
				t.Errorf("annotations differ (-want +got):\n%s", diff)
			}
		})
	}
}

func wantAnnotations(annotation string) map[string]string {
	if annotation == "" {
		return map[string]string{}
	}
	return map[string]string{annotation: testRequestValue}
}

// requestAnnotations returns the request annotations set on the Canary.
func requestAnnotations(t *testing.T, kube client.Client, canary *v1alpha1.Canary) map[string]string {
	t.Helper()
	got := &v1alpha1.Canary{}
	if err := kube.Get(context.Background(), client.ObjectKeyFromObject(canary), got); err != nil {
		t.Fatal(err)
	}
	requests := map[string]string{}
	for _, request := range agentrequest.All {
		if value, ok := got.Annotations[request.Annotation]; ok {
			requests[request.Annotation] = value
		}
	}
	return requests
}

func TestSuspension(t *testing.T) {
	handleReconcile := func(canary *v1alpha1.Canary) bool {
		requested, ok := meta.ReconcileAnnotationValue(canary.GetAnnotations())
		if !ok || canary.Status.LastHandledReconcileAt == requested {
			return false
		}
		canary.Status.SetLastHandledReconcileRequest(requested)
		canary.Status.Phase = v1alpha1.PhaseProgressing
		return true
	}
	tests := map[string]struct {
		args        []string
		canary      *v1alpha1.Canary
		agent       func(*v1alpha1.Canary) bool
		wantSuspend bool
		wantErr     string
		wantStderr  string
	}{
		"suspend, observed by the agent": {
			args: []string{"suspend", "podinfo"}, agent: handleReconcile, wantSuspend: true,
			canary: makeCanary("apps", "podinfo").generation(4, 3).obj(),
			wantStderr: "► suspending Canary podinfo in apps namespace\n✔ Canary suspended\n" +
				"◎ waiting for serin to handle the change\n" +
				"✔ serin handled the change: phase Progressing, canary weight 0\n",
		},
		"resume, observed by the agent": {
			args: []string{"resume", "podinfo"}, agent: handleReconcile, wantSuspend: false,
			canary: makeCanary("apps", "podinfo").suspended().generation(5, 4).obj(),
			wantStderr: "► resuming Canary podinfo in apps namespace\n✔ Canary resumed\n" +
				"◎ waiting for serin to handle the change\n" +
				"✔ serin handled the change: phase Progressing, canary weight 0\n",
		},
		"suspend, no agent: times out": {
			args: []string{"suspend", "podinfo", "--timeout", "200ms"}, agent: ignoreRequests, wantSuspend: true,
			canary:  makeCanary("apps", "podinfo").generation(4, 3).obj(),
			wantErr: "timed out after 200ms waiting for serin to handle the change: is the serin agent running?",
			wantStderr: "► suspending Canary podinfo in apps namespace\n✔ Canary suspended\n" +
				"◎ waiting for serin to handle the change\n",
		},
		"resume without waiting": {
			args: []string{"resume", "podinfo", "--no-wait"}, agent: ignoreRequests, wantSuspend: false,
			canary:     makeCanary("apps", "podinfo").suspended().generation(5, 4).obj(),
			wantStderr: "► resuming Canary podinfo in apps namespace\n✔ Canary resumed\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			kube := newFakeClient(tc.canary)
			env := newTestEnvironment(t, kube)
			ctx, stopAgent := context.WithCancel(context.Background())
			defer stopAgent()
			go fakeAgent(ctx, kube, client.ObjectKeyFromObject(tc.canary), tc.agent)

			run := runCommand(context.Background(), env, tc.args...)
			if diff := cmp.Diff(tc.wantErr, errorText(run.err)); diff != "" {
				t.Errorf("error differs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStderr, run.stderr); diff != "" {
				t.Errorf("stderr differs (-want +got):\n%s", diff)
			}
			got := &v1alpha1.Canary{}
			if err := kube.Get(context.Background(), client.ObjectKeyFromObject(tc.canary), got); err != nil {
				t.Fatal(err)
			}
			if got.Spec.Suspend != tc.wantSuspend {
				t.Errorf("spec.suspend is %t, want %t", got.Spec.Suspend, tc.wantSuspend)
			}
		})
	}
}
