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

// The chart's files/crds are the CRDs controller-gen generates into
// config/crd/bases, file for file and byte for byte (make manifests copies
// them), and the chart renders each of them as it is, with the release's
// labels and the keep policy. The chart has no crds/ directory, which Helm
// would install once and never upgrade.
func TestChartCRDsAreTheGeneratedOnes(t *testing.T) {
	generated := readDir(t, filepath.Join(repoRoot, "config", "crd", "bases"))
	sameFiles(t, generated, readDir(t, filepath.Join(chartDir, "files", "crds")), "config/crd/bases", "charts/serin/files/crds")
	ch := loadChart(t)
	if n := len(ch.CRDObjects()); n != 0 {
		t.Errorf("Helm loads %d CRDs from the chart's crds/, which helm upgrade never updates: the CRDs are templates", n)
	}

	r, err := render(context.Background(), ch, nil, testKubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	for file, b := range generated {
		want, err := parseManifest(string(b))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for key, crd := range want {
			got, ok := r.objects[key]
			if !ok {
				t.Errorf("the chart renders no %s (%s)", key, file)
				continue
			}
			got = got.DeepCopy()
			if v := got.GetAnnotations()["helm.sh/resource-policy"]; v != "keep" {
				t.Errorf("%s: helm.sh/resource-policy %q, want keep", key, v)
			}
			if v := got.GetLabels()["app.kubernetes.io/managed-by"]; v != "Helm" {
				t.Errorf("%s: not labelled as the release's: %v", key, got.GetLabels())
			}
			got.SetAnnotations(without(got.GetAnnotations(), "helm.sh/resource-policy"))
			got.SetLabels(nil)
			crd.SetLabels(nil)
			if d := cmp.Diff(crd.Object, got.Object); d != "" {
				t.Errorf("the chart renders %s unlike %s (-generated +chart):\n%s", key, file, d)
			}
		}
	}
}

// The chart's alerting rules and Grafana dashboard are those of
// config/prometheus and config/grafana (make manifests copies them).
func TestChartFilesAreTheConfigOnes(t *testing.T) {
	for _, f := range []struct{ config, chart string }{
		{filepath.Join("config", "prometheus", "serin-alerts.yaml"), "serin-alerts.yaml"},
		{filepath.Join("config", "grafana", "serin-dashboard.json"), "serin-dashboard.json"},
	} {
		want, err := os.ReadFile(filepath.Join(repoRoot, f.config))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(chartDir, "files", f.chart))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want, got) {
			t.Errorf("charts/serin/files/%s differs from %s: run make manifests", f.chart, f.config)
		}
	}
}

// sameFiles fails the test when two directories' files differ.
func sameFiles(t *testing.T, want, got map[string][]byte, wantDir, gotDir string) {
	t.Helper()
	if len(want) == 0 {
		t.Fatalf("no file in %s", wantDir)
	}
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s lacks %s: run make manifests", gotDir, name)
		case !bytes.Equal(w, g):
			t.Errorf("%s/%s differs from %s/%s: run make manifests", gotDir, name, wantDir, name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s/%s is not in %s: remove it", gotDir, name, wantDir)
		}
	}
}

func without(m map[string]string, key string) map[string]string {
	delete(m, key)
	if len(m) == 0 {
		return nil
	}
	return m
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

	// The ClusterRoles for people and tenants: config/aggregate's and
	// config/tenancy's rules and aggregation labels.
	for _, role := range []struct{ file, name string }{
		{filepath.Join("config", "aggregate", "view_role.yaml"), "serin-view"},
		{filepath.Join("config", "aggregate", "edit_role.yaml"), "serin-edit"},
		{filepath.Join("config", "tenancy", "tenant_role.yaml"), "serin-tenant"},
	} {
		want := readRole(t, filepath.Join(repoRoot, role.file))
		got := &rbacv1.ClusterRole{}
		r.get(t, "ClusterRole", "", role.name, got)
		if d := cmp.Diff(want.Rules, got.Rules); d != "" {
			t.Errorf("the chart's ClusterRole %s differs from %s (-config +chart):\n%s", role.name, role.file, d)
		}
		for k, v := range want.Labels {
			if got.Labels[k] != v {
				t.Errorf("the chart's ClusterRole %s lacks the label %s=%s of %s", role.name, k, v, role.file)
			}
		}
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
	return readRole(t, file).Rules
}

// readRole reads the Role or ClusterRole in file (as a ClusterRole).
func readRole(t *testing.T, file string) *rbacv1.ClusterRole {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.Unmarshal(b, role); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(role.Rules) == 0 {
		t.Fatalf("%s has no rules", file)
	}
	return role
}
