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

package main

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// config/default installs the leader election Lease's permissions as a Role
// in the agent's namespace, bound to its service account, and the
// agent's ClusterRole grants no Lease and deletes nothing but
// ControllerRevisions.
func TestInstallManifests_LeastPrivilege(t *testing.T) {
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), "config/default")
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.Role
	var binding rbacv1.RoleBinding
	var cluster rbacv1.ClusterRole
	for _, res := range resMap.Resources() {
		m, err := res.Map()
		if err != nil {
			t.Fatal(err)
		}
		var into any
		switch res.GetKind() {
		case "Role":
			into = &role
		case "RoleBinding":
			into = &binding
		case "ClusterRole":
			if res.GetName() != "serin-manager" {
				continue // the roles for people (serin-view, serin-edit, serin-tenant)
			}
			into = &cluster
		default:
			continue
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, into); err != nil {
			t.Fatal(err)
		}
	}

	if role.Namespace != "serin-system" || len(role.Rules) != 1 ||
		!slices.Equal(role.Rules[0].Resources, []string{"leases"}) || !slices.Equal(role.Rules[0].Verbs, []string{"get", "create", "update"}) {
		t.Errorf("the leader election Role is %s/%s with rules %+v, want leases get, create, update in serin-system", role.Namespace, role.Name, role.Rules)
	}
	if binding.Namespace != "serin-system" || binding.RoleRef.Kind != "Role" || binding.RoleRef.Name != role.Name ||
		len(binding.Subjects) != 1 || binding.Subjects[0].Name != "serin-agent" || binding.Subjects[0].Namespace != "serin-system" {
		t.Errorf("the RoleBinding %s/%s binds %+v to %+v, want the Role to serin-system/serin-agent", binding.Namespace, binding.Name, binding.RoleRef, binding.Subjects)
	}
	if cluster.Name != "serin-manager" {
		t.Fatal("config/default installs no ClusterRole serin-manager")
	}
	for _, rule := range cluster.Rules {
		if slices.Contains(rule.Resources, "leases") {
			t.Errorf("the ClusterRole grants %v on leases cluster-wide", rule.Verbs)
		}
		if slices.Contains(rule.Verbs, "delete") && !slices.Equal(rule.Resources, []string{"controllerrevisions"}) {
			t.Errorf("the ClusterRole deletes %v", rule.Resources)
		}
	}
}
