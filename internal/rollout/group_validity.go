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
	"fmt"
	"slices"
	"strings"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// The rules of a group that can be followed, beyond what the CanaryGroup
// CRD's CEL rules check at admission: a Canary belongs to one group at
// most, and the members' dependsOn forms no cycle. A group that breaks
// them starts no rollout of its members and stalls.

// InvalidGroup says why a Canary cannot follow the groups that list it
// (sorted by name): two groups list it, or its group's dependsOn forms a
// cycle; "" when it can.
func InvalidGroup(canary string, groups []v1alpha1.CanaryGroup) string {
	if len(groups) > 1 {
		names := make([]string, len(groups))
		for i := range groups {
			names[i] = groups[i].Name
		}
		return fmt.Sprintf("Canary %s is a member of CanaryGroups %s: a Canary belongs to one group at most, remove it from all but one", canary, strings.Join(names, " and "))
	}
	if len(groups) == 1 {
		if cycle := DependencyCycle(&groups[0]); cycle != "" {
			return fmt.Sprintf("CanaryGroup %s: spec.members[].dependsOn forms a cycle (%s): no member of it could ever start", groups[0].Name, cycle)
		}
	}
	return ""
}

// GroupProblems says why the group cannot be followed, one problem each:
// a member that does not exist, one in another shard, one that other
// groups list too, a dependsOn cycle. members are the group's, in spec.members order.
func GroupProblems(g *v1alpha1.CanaryGroup, members []ReleaseMember) []string {
	var problems []string
	for _, m := range members {
		switch {
		case !m.Found && m.OtherShard != "":
			problems = append(problems, OtherShardMember(g.Namespace, m.Name, m.OtherShard))
		case !m.Found:
			problems = append(problems, fmt.Sprintf("member %s: no Canary %s/%s: create it or remove it from spec.members", m.Name, g.Namespace, m.Name))
		case len(m.ListedBy) > 1:
			problems = append(problems, fmt.Sprintf("member %s is listed by CanaryGroups %s: a Canary belongs to one group at most", m.Name, strings.Join(m.ListedBy, " and ")))
		}
	}
	if cycle := DependencyCycle(g); cycle != "" {
		problems = append(problems, fmt.Sprintf("spec.members[].dependsOn forms a cycle (%s)", cycle))
	}
	return problems
}

// OtherShardMember is the problem of a group whose member is in another
// shard than the agent's: how says the labels it has and the selector.
func OtherShardMember(namespace, member, how string) string {
	return fmt.Sprintf("member %s is in another shard (Canary %s/%s has %s): give the CanaryGroup and every member the same shard label",
		member, namespace, member, how)
}

// DependencyCycle returns the members of a cycle in the group's
// dependsOn, as "a → b → a", or "".
func DependencyCycle(g *v1alpha1.CanaryGroup) string {
	deps := map[string][]string{}
	for _, m := range g.Spec.Members {
		deps[m.Name] = m.DependsOn
	}
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	var path []string
	var visit func(string) string
	visit = func(n string) string {
		switch state[n] {
		case visiting:
			i := slices.Index(path, n)
			return strings.Join(append(slices.Clone(path[i:]), n), " → ")
		case done:
			return ""
		}
		state[n] = visiting
		path = append(path, n)
		for _, d := range deps[n] {
			if c := visit(d); c != "" {
				return c
			}
		}
		path = path[:len(path)-1]
		state[n] = done
		return ""
	}
	for _, m := range g.Spec.Members {
		if c := visit(m.Name); c != "" {
			return c
		}
	}
	return ""
}
