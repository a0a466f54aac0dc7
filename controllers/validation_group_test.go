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

package controllers

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// The CanaryGroup CRD's CEL rules reject a group that cannot be followed
// at admission, with messages that say what to fix. A cycle of dependsOn
// through several members is beyond CEL: the group and its members stall
// (internal/rollout's TestDependencyCycle, TestInvalidGroup and
// TestGroupProblems, and the testbed's TestGroup_InvalidMembershipStalls).
func TestValidation_CanaryGroupCEL(t *testing.T) {
	ns := newNamespace(t)
	group := func(name string, members ...v1alpha1.GroupMember) *v1alpha1.CanaryGroup {
		return &v1alpha1.CanaryGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1alpha1.CanaryGroupSpec{Members: members}}
	}
	tests := map[string]struct {
		group   *v1alpha1.CanaryGroup
		wantErr string
	}{
		"valid": {
			group: group("ok", v1alpha1.GroupMember{Name: "api"}, v1alpha1.GroupMember{Name: "web", DependsOn: []string{"api"}}),
		},
		"no member": {
			group:   group("empty"),
			wantErr: "spec.members: Required value",
		},
		"a member listed twice": {
			group:   group("twice", v1alpha1.GroupMember{Name: "api"}, v1alpha1.GroupMember{Name: "api"}),
			wantErr: "spec.members: a Canary is listed once",
		},
		"a member depending on itself": {
			group:   group("self", v1alpha1.GroupMember{Name: "api", DependsOn: []string{"api"}}),
			wantErr: "a member cannot depend on itself",
		},
		"dependsOn a Canary that is not a member": {
			group:   group("typo", v1alpha1.GroupMember{Name: "api"}, v1alpha1.GroupMember{Name: "web", DependsOn: []string{"apii"}}),
			wantErr: "dependsOn names a Canary that is not a member of this group: list it in spec.members or remove it from dependsOn",
		},
		"a window over 10m": {
			group: func() *v1alpha1.CanaryGroup {
				g := group("window", v1alpha1.GroupMember{Name: "api"})
				g.Spec.Window = &metav1.Duration{Duration: time.Hour}
				return g
			}(),
			wantErr: "spec.window is at most 10m",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			err := k8s.Create(context.Background(), tc.group)
			if tc.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring(tc.wantErr))
		})
	}
}
