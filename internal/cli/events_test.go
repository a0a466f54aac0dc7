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

	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

func TestEvents(t *testing.T) {
	tests := map[string]struct {
		args       []string
		golden     string
		wantErr    string
		wantStderr string
	}{
		"a Canary's Events, oldest first, not those of an earlier Canary of the name": {
			args: []string{"events", "podinfo"}, golden: "podinfo.golden",
		},
		"none": {
			args: []string{"events", "bluegreen"}, wantStderr: `✗ no events found for Canary bluegreen in "apps" namespace` + "\n",
		},
		"not found": {
			args: []string{"events", "nope"}, wantErr: `Canary object 'nope' not found in "apps" namespace`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := newTestEnvironment(t, newFakeClient(describedCanaries()...))
			run := runCommand(context.Background(), env, tc.args...)
			assertRun(t, run, tc.wantErr, tc.wantStderr, "events", tc.golden)
		})
	}
}

func TestReconcileCanary(t *testing.T) {
	kube := newFakeClient(settled(v1alpha1.PhaseSucceeded, waitedRevision, waitedRevision).obj())
	env := newTestEnvironment(t, kube)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go fakeAgent(ctx, kube, client.ObjectKey{Namespace: "apps", Name: "podinfo"}, func(c *v1alpha1.Canary) bool {
		requested, ok := meta.ReconcileAnnotationValue(c.GetAnnotations())
		changed := ok && c.Status.LastHandledReconcileAt != requested
		c.Status.SetLastHandledReconcileRequest(requested)
		return changed
	})
	run := runCommand(ctx, env, "reconcile", "canary", "podinfo", "--timeout", "5s")
	want := "► annotating Canary podinfo in apps namespace\n✔ Canary annotated\n◎ waiting for Canary reconciliation\n" +
		"✔ Canary reconciled: phase Succeeded, canary weight 0\n"
	if run.err != nil || run.stderr != want {
		t.Errorf("got %v and:\n%s", run.err, run.stderr)
	}
}

func TestConnectionFlagCompletion(t *testing.T) {
	kube := newFakeClient(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "serin-system"}})
	tests := map[string]struct {
		args []string
		want string
	}{
		"contexts of the kubeconfig": {args: []string{"__complete", "get", "canaries", "--context", ""}, want: "test\n:4\n"},
		"namespaces of the cluster":  {args: []string{"__complete", "get", "canaries", "-n", "s"}, want: "serin-system\nshop\n:4\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			run := runCommand(context.Background(), newTestEnvironment(t, kube), tc.args...)
			if run.err != nil || run.stdout != tc.want {
				t.Errorf("got %v and %q, want %q", run.err, run.stdout, tc.want)
			}
		})
	}
}
