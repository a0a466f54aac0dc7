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
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// canaryGroup is group name in namespace apps with members.
func canaryGroup(name string, members ...v1alpha1.GroupMember) v1alpha1.CanaryGroup {
	return v1alpha1.CanaryGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "apps"}, Spec: v1alpha1.CanaryGroupSpec{Members: members}}
}

func dependsOn(name string, deps ...string) v1alpha1.GroupMember {
	return v1alpha1.GroupMember{Name: name, DependsOn: deps}
}

func TestDependencyCycle(t *testing.T) {
	tests := map[string]struct {
		members []v1alpha1.GroupMember
		want    string
	}{
		"no dependsOn":    {members: []v1alpha1.GroupMember{dependsOn("web"), dependsOn("api")}},
		"a chain":         {members: []v1alpha1.GroupMember{dependsOn("web", "api"), dependsOn("api", "db"), dependsOn("db"), dependsOn("cache")}},
		"a diamond":       {members: []v1alpha1.GroupMember{dependsOn("web", "api", "auth"), dependsOn("api", "db"), dependsOn("auth", "db"), dependsOn("db")}},
		"a dangling name": {members: []v1alpha1.GroupMember{dependsOn("web", "apii")}},
		"a cycle through three members": {
			members: []v1alpha1.GroupMember{dependsOn("web", "api"), dependsOn("api", "db"), dependsOn("db", "web"), dependsOn("cache")},
			want:    "web → api → db → web",
		},
		"a cycle reached from a member outside it": {
			members: []v1alpha1.GroupMember{dependsOn("web", "api"), dependsOn("api", "db"), dependsOn("db", "api")},
			want:    "api → db → api",
		},
		"a member depending on itself": {members: []v1alpha1.GroupMember{dependsOn("api", "api")}, want: "api → api"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g := canaryGroup("shop", tc.members...)
			if diff := cmp.Diff(tc.want, DependencyCycle(&g)); diff != "" {
				t.Errorf("DependencyCycle (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInvalidGroup(t *testing.T) {
	tests := map[string]struct {
		groups []v1alpha1.CanaryGroup
		want   string
	}{
		"no group":  {},
		"one group": {groups: []v1alpha1.CanaryGroup{canaryGroup("shop", dependsOn("web", "api"), dependsOn("api"))}},
		"two groups": {
			groups: []v1alpha1.CanaryGroup{canaryGroup("checkout", dependsOn("web")), canaryGroup("shop", dependsOn("web"))},
			want:   "Canary web is a member of CanaryGroups checkout and shop: a Canary belongs to one group at most, remove it from all but one",
		},
		"a dependsOn cycle": {
			groups: []v1alpha1.CanaryGroup{canaryGroup("shop", dependsOn("web", "api"), dependsOn("api", "web"))},
			want:   "CanaryGroup shop: spec.members[].dependsOn forms a cycle (web → api → web): no member of it could ever start",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, InvalidGroup("web", tc.groups)); diff != "" {
				t.Errorf("InvalidGroup (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGroupProblems(t *testing.T) {
	found := func(name string, listedBy ...string) ReleaseMember {
		return ReleaseMember{GroupPeer: GroupPeer{Name: name, Found: true}, ListedBy: listedBy}
	}
	tests := map[string]struct {
		spec    []v1alpha1.GroupMember
		members []ReleaseMember
		want    []string
	}{
		"every member exists, in this group only": {
			spec:    []v1alpha1.GroupMember{dependsOn("web", "api"), dependsOn("api")},
			members: []ReleaseMember{found("web", "shop"), found("api", "shop")},
		},
		"a member that does not exist, one listed twice and a cycle, in that order": {
			spec:    []v1alpha1.GroupMember{dependsOn("web", "api"), dependsOn("api", "web"), dependsOn("db")},
			members: []ReleaseMember{{GroupPeer: GroupPeer{Name: "web"}}, found("api", "checkout", "shop"), found("db", "shop")},
			want: []string{
				"member web: no Canary apps/web: create it or remove it from spec.members",
				"member api is listed by CanaryGroups checkout and shop: a Canary belongs to one group at most",
				"spec.members[].dependsOn forms a cycle (web → api → web)",
			},
		},
		"a member in another shard is not taken for a typo": {
			spec: []v1alpha1.GroupMember{dependsOn("api"), dependsOn("web")},
			members: []ReleaseMember{found("api", "shop"), {GroupPeer: GroupPeer{Name: "web"},
				OtherShard: "sharding.fluxcd.io/key=b, where this agent's --watch-label-selector is sharding.fluxcd.io/key=a"}},
			want: []string{"member web is in another shard (Canary apps/web has sharding.fluxcd.io/key=b, where this agent's " +
				"--watch-label-selector is sharding.fluxcd.io/key=a): give the CanaryGroup and every member the same shard label"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g := canaryGroup("shop", tc.spec...)
			if diff := cmp.Diff(tc.want, GroupProblems(&g, tc.members)); diff != "" {
				t.Errorf("GroupProblems (-want +got):\n%s", diff)
			}
		})
	}
}
