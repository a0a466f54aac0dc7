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
	"errors"
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
	snap, err := snapshotOf(head, 0)
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

// A file over the bound is never read: one next to the kustomization that
// the render does not use costs nothing, and a render that needs one fails
// saying which file and which flag.
func TestSnapshotFS_LargeFilesAreNeverRead(t *testing.T) {
	const bound = 64 << 10
	big := strings.Repeat("x", 4*bound)
	repo := newTestRepo(t)
	head := repo.commitFiles(map[string]string{
		"apps/podinfo/kustomization.yaml": "resources:\n  - deployment.yaml\n",
		"apps/podinfo/deployment.yaml":    testDeployment,
		"apps/podinfo/dump.bin":           big,
		"apps/web/kustomization.yaml":     "resources:\n  - deployment.yaml\n  - huge.yaml\n",
		"apps/web/deployment.yaml":        testDeployment,
		"apps/web/huge.yaml":              "# " + big + "\n",
	}, "Fleet")
	snap, err := snapshotOf(head, bound)
	if err != nil {
		t.Fatal(err)
	}
	fs := newSnapshotFS(snap)
	if _, err := build(fs, "apps/podinfo"); err != nil || fs.err != nil {
		t.Fatalf("a render that does not use the large file: %v, %v", err, fs.err)
	}
	if fs.bytes > 4<<10 {
		t.Errorf("%d bytes read: the large file was read", fs.bytes)
	}

	fs = newSnapshotFS(snap)
	_, err = build(fs, "apps/web")
	if err == nil && fs.err == nil {
		t.Fatal("a render that needs the large file succeeded")
	}
	if !errors.Is(fs.err, ErrFileTooLarge) || !strings.Contains(fs.err.Error(), "apps/web/huge.yaml takes 257 KiB, more than --gitops-max-file-size (64 KiB)") {
		t.Errorf("error %v, want ErrFileTooLarge naming apps/web/huge.yaml and the flag", fs.err)
	}
	if fs.bytes > 4<<10 {
		t.Errorf("%d bytes read: the large file was read", fs.bytes)
	}
	if _, err := snap.file("apps/web/huge.yaml"); !errors.Is(err, ErrFileTooLarge) {
		t.Errorf("snapshot.file of the large file: %v, want ErrFileTooLarge", err)
	}
}
