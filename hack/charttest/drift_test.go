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

package charttest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// The chart's crds/ are the CRDs controller-gen generates into
// config/crd/bases, file for file and byte for byte (make manifests copies
// them).
func TestChartCRDsAreTheGeneratedOnes(t *testing.T) {
	generated := readDir(t, filepath.Join(repoRoot, "config", "crd", "bases"))
	chart := readDir(t, filepath.Join(chartDir, "crds"))
	if len(generated) == 0 {
		t.Fatal("no generated CRD in config/crd/bases")
	}
	for name, want := range generated {
		got, ok := chart[name]
		switch {
		case !ok:
			t.Errorf("charts/serin/crds lacks %s: run make manifests", name)
		case !bytes.Equal(want, got):
			t.Errorf("charts/serin/crds/%s differs from config/crd/bases/%s: run make manifests", name, name)
		}
	}
	for name := range chart {
		if _, ok := generated[name]; !ok {
			t.Errorf("charts/serin/crds/%s is not a generated CRD (config/crd/bases): remove it", name)
		}
	}
	// Helm installs what it loads from crds/: the same files.
	ch := loadChart(t)
	if len(ch.CRDObjects()) != len(generated) {
		t.Errorf("Helm loads %d CRDs from the chart, want %d", len(ch.CRDObjects()), len(generated))
	}
}

// The chart grants the agent exactly the rules controller-gen generates
// from the +kubebuilder:rbac markers (config/rbac/role.yaml), cluster-wide
// or in each namespace, and the leader election Role of config/rbac: a new
// marker fails this test until the chart has its rule too.
func TestChartRBACIsTheGeneratedOne(t *testing.T) {
	manager := readRules(t, filepath.Join(repoRoot, "config", "rbac", "role.yaml"))
	leaderElection := readRules(t, filepath.Join(repoRoot, "config", "rbac", "leader_election_role.yaml"))
	ch := loadChart(t)
	const fix = "copy config/rbac/role.yaml's rules into charts/serin/templates/_rbac_rules.tpl"

	r, err := render(context.Background(), ch, nil, testKubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	clusterRole := &rbacv1.ClusterRole{}
	r.get(t, "ClusterRole", "", "serin-manager", clusterRole)
	if d := cmp.Diff(manager, clusterRole.Rules); d != "" {
		t.Errorf("the chart's ClusterRole differs from config/rbac/role.yaml (%s) (-generated +chart):\n%s", fix, d)
	}
	lease := &rbacv1.Role{}
	r.get(t, "Role", testNamespace, "serin-leader-election", lease)
	if d := cmp.Diff(leaderElection, lease.Rules); d != "" {
		t.Errorf("the chart's leader election Role differs from config/rbac/leader_election_role.yaml (-generated +chart):\n%s", d)
	}

	r, err = render(context.Background(), ch, parseValues(t, "watchAllNamespaces: false\nrbac: {namespaces: [flux-system]}"), testKubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{testNamespace, "flux-system"} {
		role := &rbacv1.Role{}
		r.get(t, "Role", ns, "serin-manager", role)
		if d := cmp.Diff(manager, role.Rules); d != "" {
			t.Errorf("the chart's Role in %s differs from config/rbac/role.yaml (%s) (-generated +chart):\n%s", ns, fix, d)
		}
	}
}

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}

// readRules reads the rules of the Role or ClusterRole in file.
func readRules(t *testing.T, file string) []rbacv1.PolicyRule {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var role struct {
		Rules []rbacv1.PolicyRule `json:"rules"`
	}
	if err := yaml.Unmarshal(b, &role); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(role.Rules) == 0 {
		t.Fatalf("%s has no rules", file)
	}
	return role.Rules
}
