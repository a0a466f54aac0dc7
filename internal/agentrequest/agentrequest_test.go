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

package agentrequest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

var at = time.Date(2026, 5, 4, 10, 0, 0, 500, time.FixedZone("CEST", 2*3600))

func TestSend(t *testing.T) {
	for _, r := range All {
		t.Run(r.Verb, func(t *testing.T) {
			scheme := runtime.NewScheme()
			if err := v1alpha1.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			canary := testobj.MakeCanary("podinfo", "apps").Annotation("keep", "me").Obj()
			kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(canary).Build()

			value, err := r.Send(context.Background(), kube, canary, at)
			if err != nil {
				t.Fatal(err)
			}
			if value != "2026-05-04T08:00:00.0000005Z" {
				t.Errorf("value %q, want the UTC time with nanoseconds", value)
			}
			got := &v1alpha1.Canary{}
			if err := kube.Get(context.Background(), client.ObjectKeyFromObject(canary), got); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"keep": "me", r.Annotation: value}
			if diff := cmp.Diff(want, got.Annotations); diff != "" {
				t.Errorf("annotations differ (-want +got):\n%s", diff)
			}
			if r.Pending(got) != value || r.Handled(got, value) {
				t.Errorf("a request the agent did not handle is pending")
			}
		})
	}
}

func TestPendingAndHandled(t *testing.T) {
	promote, _ := ByVerb("promote")
	tests := map[string]struct {
		annotation, handled string
		wantPending         string
		wantHandled         bool
	}{
		"no request":             {},
		"not handled yet":        {annotation: "t2", handled: "t1", wantPending: "t2"},
		"handled":                {annotation: "t2", handled: "t2", wantHandled: true},
		"handled, no annotation": {handled: "t1"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			canary := testobj.MakeCanary("podinfo", "apps").Obj()
			if tc.annotation != "" {
				canary.Annotations = map[string]string{v1alpha1.PromoteRequestAnnotation: tc.annotation}
			}
			canary.Status.HandledRequests.Promote = tc.handled
			if got := promote.Pending(canary); got != tc.wantPending {
				t.Errorf("Pending = %q, want %q", got, tc.wantPending)
			}
			if got := promote.Handled(canary, tc.annotation); got != tc.wantHandled {
				t.Errorf("Handled = %t, want %t", got, tc.wantHandled)
			}
		})
	}
}

func TestByVerb(t *testing.T) {
	for _, verb := range []string{"promote", "abort", "retry", "revert"} {
		if r, ok := ByVerb(verb); !ok || r.Verb != verb {
			t.Errorf("ByVerb(%q) = %v, %t", verb, r.Verb, ok)
		}
	}
	if _, ok := ByVerb("suspend"); ok {
		t.Error("suspend is no agent request")
	}
}
