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
	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// groupMembers are the members of storefront (api promoted, web under
// analysis, worker at the confirm-rollout gate) and of checkout (cart and
// payments rolled back), and a group that lists a Canary that is not.
func groupMembers() []client.Object {
	return []client.Object{
		makeGroup("apps", "storefront", "api", "web", "worker").obj(),
		makeCanary("apps", "api").phase(v1alpha1.PhaseSucceeded, 0).obj(),
		makeCanary("apps", "web").phase(v1alpha1.PhaseProgressing, 20).obj(),
		makeCanary("apps", "worker").phase(v1alpha1.PhaseWaiting, 0).obj(),
		makeGroup("apps", "checkout", "cart", "ghost", "payments").obj(),
		makeCanary("apps", "cart").phase(v1alpha1.PhaseFailed, 0).obj(),
		makeCanary("apps", "payments").phase(v1alpha1.PhaseFailed, 0).obj(),
	}
}

// startFakeAgents runs a fakeAgent for each Canary of objects until the
// test ends.
func startFakeAgents(t *testing.T, kube client.Client, objects []client.Object, act func(*v1alpha1.Canary) bool) {
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	for _, o := range objects {
		if _, ok := o.(*v1alpha1.Canary); ok {
			go fakeAgent(ctx, kube, client.ObjectKeyFromObject(o), act)
		}
	}
}

func TestGroupRequests(t *testing.T) {
	tests := map[string]struct {
		args    []string
		agent   func(*v1alpha1.Canary) bool
		suspend string // a member suspended beforehand
		// wantAnnotated are the Canaries with the request's annotation,
		// wantAnnotation the annotation.
		wantAnnotated  []string
		wantAnnotation string
		wantErr        string
		wantStderr     string
	}{
		"promote: the members whose rollout is under way, a line each": {
			args: []string{"promote", "--group", "storefront"}, agent: handleRequests,
			wantAnnotated: []string{"web", "worker"}, wantAnnotation: v1alpha1.PromoteRequestAnnotation,
			wantStderr: "► annotating the members of CanaryGroup storefront in apps namespace whose rollout is under way\n" +
				"ℹ Canary api skipped: phase Succeeded\n" +
				"✔ Canary web annotated\n" +
				"✔ Canary worker annotated\n" +
				"◎ waiting for serin to handle the promote request of each member\n" +
				"✔ web: promote request handled: phase Promoting, canary weight 20\n" +
				"✔ worker: promote request handled: phase Promoting, canary weight 0\n",
		},
		"abort without waiting": {
			args: []string{"abort", "--group", "storefront", "--no-wait"}, agent: ignoreRequests,
			wantAnnotated: []string{"web", "worker"}, wantAnnotation: v1alpha1.AbortRequestAnnotation,
			wantStderr: "► annotating the members of CanaryGroup storefront in apps namespace whose rollout is under way\n" +
				"ℹ Canary api skipped: phase Succeeded\n" +
				"✔ Canary web annotated\n" +
				"✔ Canary worker annotated\n",
		},
		"retry: the members that failed; a member that is no Canary is reported": {
			args: []string{"retry", "--group", "checkout"}, agent: handleRequests,
			wantAnnotated: []string{"cart", "payments"}, wantAnnotation: v1alpha1.RetryRequestAnnotation,
			wantStderr: "⚠️ CanaryGroup checkout lists ghost, which is no Canary in apps namespace: skipped\n" +
				"► annotating the members of CanaryGroup checkout in apps namespace that failed\n" +
				"✔ Canary cart annotated\n" +
				"✔ Canary payments annotated\n" +
				"◎ waiting for serin to handle the retry request of each member\n" +
				"✔ cart: retry request handled: phase Promoting, canary weight 0\n" +
				"✔ payments: retry request handled: phase Promoting, canary weight 0\n",
		},
		"no agent: times out on the first member": {
			args: []string{"promote", "--group", "storefront", "--timeout", "200ms"}, agent: ignoreRequests,
			wantAnnotated: []string{"web", "worker"}, wantAnnotation: v1alpha1.PromoteRequestAnnotation,
			wantErr: "timed out after 200ms waiting for serin to handle the promote request of web: is the serin agent running?",
			wantStderr: "► annotating the members of CanaryGroup storefront in apps namespace whose rollout is under way\n" +
				"ℹ Canary api skipped: phase Succeeded\n" +
				"✔ Canary web annotated\n" +
				"✔ Canary worker annotated\n" +
				"◎ waiting for serin to handle the promote request of each member\n",
		},
		"a suspended member: refuses to wait, annotates none": {
			args: []string{"promote", "--group", "storefront"}, agent: handleRequests, suspend: "worker",
			wantErr: "CanaryGroup storefront in apps namespace has suspended members (worker): run serin resume --group storefront first, " +
				"or pass --no-wait to leave the requests for when they are resumed",
		},
		"no member to retry": {
			args: []string{"retry", "--group", "storefront"}, agent: ignoreRequests,
			wantErr: "no member of CanaryGroup storefront in apps namespace is one that failed: the agent acts on a retry request in phase Failed only",
		},
		"unknown group": {
			args: []string{"abort", "--group", "nope"}, agent: ignoreRequests,
			wantErr: `CanaryGroup object 'nope' not found in "apps" namespace`,
		},
		"a name and a group": {
			args: []string{"abort", "web", "--group", "storefront"}, agent: ignoreRequests,
			wantErr: "give a Canary's NAME or --group GROUP, not both",
		},
		"revert has no --group: a member's revert is the release's": {
			args: []string{"revert", "--group", "storefront"}, agent: ignoreRequests,
			wantErr: "unknown flag: --group",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			objects := groupMembers()
			kube := newFakeClient(objects...)
			if tc.suspend != "" {
				updateCanary(t, kube, client.ObjectKey{Namespace: "apps", Name: tc.suspend}, func(c *v1alpha1.Canary) { c.Spec.Suspend = true })
			}
			startFakeAgents(t, kube, objects, tc.agent)

			run := runCommand(context.Background(), newTestEnvironment(t, kube), tc.args...)
			if diff := cmp.Diff(tc.wantErr, errorText(run.err)); diff != "" {
				t.Errorf("error differs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStderr, run.stderr); diff != "" {
				t.Errorf("stderr differs (-want +got):\n%s", diff)
			}
			for _, o := range objects {
				canary, ok := o.(*v1alpha1.Canary)
				if !ok {
					continue
				}
				want := wantAnnotations("")
				for _, annotated := range tc.wantAnnotated {
					if annotated == canary.Name {
						want = wantAnnotations(tc.wantAnnotation)
					}
				}
				if diff := cmp.Diff(want, requestAnnotations(t, kube, canary)); diff != "" {
					t.Errorf("%s: annotations differ (-want +got):\n%s", canary.Name, diff)
				}
			}
		})
	}
}

func TestGroupSuspension(t *testing.T) {
	handleReconcile := func(canary *v1alpha1.Canary) bool {
		requested, ok := meta.ReconcileAnnotationValue(canary.GetAnnotations())
		if !ok || canary.Status.LastHandledReconcileAt == requested {
			return false
		}
		canary.Status.SetLastHandledReconcileRequest(requested)
		return true
	}
	tests := map[string]struct {
		args        []string
		wantSuspend bool
		wantStderr  string
	}{
		"suspend every member, observed by the agent": {
			args: []string{"suspend", "--group", "storefront"}, wantSuspend: true,
			wantStderr: "► suspending the members of CanaryGroup storefront in apps namespace\n" +
				"✔ Canary api suspended\n✔ Canary web suspended\n✔ Canary worker suspended\n" +
				"◎ waiting for serin to handle the change of each member\n" +
				"✔ api: serin handled the change: phase Succeeded, canary weight 0\n" +
				"✔ web: serin handled the change: phase Progressing, canary weight 20\n" +
				"✔ worker: serin handled the change: phase Waiting, canary weight 0\n",
		},
		"resume every member without waiting": {
			args: []string{"resume", "--group", "storefront", "--no-wait"}, wantSuspend: false,
			wantStderr: "► resuming the members of CanaryGroup storefront in apps namespace\n" +
				"✔ Canary api resumed\n✔ Canary web resumed\n✔ Canary worker resumed\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			objects := groupMembers()
			kube := newFakeClient(objects...)
			startFakeAgents(t, kube, objects, handleReconcile)

			run := runCommand(context.Background(), newTestEnvironment(t, kube), tc.args...)
			if run.err != nil {
				t.Fatal(run.err)
			}
			if diff := cmp.Diff(tc.wantStderr, run.stderr); diff != "" {
				t.Errorf("stderr differs (-want +got):\n%s", diff)
			}
			for _, name := range []string{"api", "web", "worker"} {
				got := &v1alpha1.Canary{}
				if err := kube.Get(context.Background(), client.ObjectKey{Namespace: "apps", Name: name}, got); err != nil {
					t.Fatal(err)
				}
				if got.Spec.Suspend != tc.wantSuspend {
					t.Errorf("%s: spec.suspend is %t, want %t", name, got.Spec.Suspend, tc.wantSuspend)
				}
			}
		})
	}
}
