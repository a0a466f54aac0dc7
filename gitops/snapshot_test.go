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

package gitops

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A render reads the directories kustomize looks at (the path, its bases,
// their parents), with the snapshot's changes on top, and no other
// directory of the repository.
func TestSnapshotFS_ReadsWhatARenderUses(t *testing.T) {
	repo := newTestRepo(t)
	head := repo.commitFiles(map[string]string{
		"apps/podinfo/kustomization.yaml": "resources:\n  - ../base\n  - extra\nnamespace: apps\n",
		"apps/base/kustomization.yaml":    "resources:\n  - deployment.yaml\n",
		"apps/base/deployment.yaml":       testDeployment,
		"apps/base/old.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: old\n",
		"teams/a/settings.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
		"teams/b/settings.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
	}, "Fleet")
	snap, err := snapshotOf(head)
	if err != nil {
		t.Fatal(err)
	}
	// The directory extra is new; old.yaml is deleted.
	snap = snap.with(map[string][]byte{
		"apps/base/old.yaml":                    nil,
		"apps/podinfo/extra/kustomization.yaml": []byte("resources:\n  - new.yaml\n"),
		"apps/podinfo/extra/new.yaml":           []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: new\n"),
	})
	fs := newSnapshotFS(snap)
	m, err := build(fs, "apps/podinfo")
	if err != nil || fs.err != nil {
		t.Fatal(err, fs.err)
	}
	var got []string
	for _, r := range m.Resources() {
		got = append(got, r.GetKind()+"/"+r.GetName())
	}
	slices.Sort(got)
	if diff := cmp.Diff([]string{"ConfigMap/new", "Deployment/podinfo"}, got); diff != "" {
		t.Errorf("rendered (-want +got):\n%s", diff)
	}
	for dir := range fs.loaded {
		if strings.HasPrefix(dir, "/teams/") {
			t.Errorf("%s was read for a render of apps/podinfo", dir)
		}
	}
	if fs.bytes > 1<<10 {
		t.Errorf("%d bytes read", fs.bytes)
	}

	if b, err := snap.file("apps/podinfo/extra/new.yaml"); err != nil || !strings.Contains(string(b), "name: new") {
		t.Errorf("a changed file: %q, %v", b, err)
	}
	if fs.Exists("/apps/base/old.yaml") {
		t.Error("a deleted file is there")
	}
	if b, err := snap.file("apps/base/old.yaml"); err != nil || b != nil {
		t.Errorf("a deleted file: %q, %v", b, err)
	}
	if b, err := snap.file("apps/base"); err != nil || b != nil {
		t.Errorf("a directory: %q, %v", b, err)
	}
	if b, err := snap.file("teams/a/settings.yaml"); err != nil || !strings.Contains(string(b), "name: a") {
		t.Errorf("a file of the tree: %q, %v", b, err)
	}
}
