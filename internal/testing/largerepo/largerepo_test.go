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

package largerepo

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Generate writes main's commits in order, commit 1 with the base files
// and the ConfigMaps, a Change where it is asked for, one ConfigMap
// changed in every other commit; it returns their hashes, oldest first.
func TestGenerate(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs the git CLI")
	}
	dir := filepath.Join(t.TempDir(), "repo.git")
	hashes, err := Generate(dir, Spec{
		Commits: 6, Files: 10, Epoch: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC),
		Base:    map[string][]byte{"apps/podinfo/kustomization.yaml": []byte("resources: []\n")},
		Changes: map[int]Change{4: {Message: "Release podinfo v3", Files: map[string][]byte{"apps/podinfo/kustomization.yaml": []byte("resources: [a.yaml]\n")}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := git("rev-list", "--reverse", "main"); got != strings.Join(hashes, "\n") {
		t.Errorf("main:\n%s\nGenerate returned:\n%s", got, strings.Join(hashes, "\n"))
	}
	if got := git("log", "--format=%s", "main"); got != "Change settings 6\nChange settings 5\nRelease podinfo v3\nChange settings 3\nChange settings 2\nAdd the fleet" {
		t.Errorf("messages:\n%s", got)
	}
	if got := git("ls-tree", "-r", "--name-only", hashes[0]); strings.Count(got, "\n")+1 != 11 {
		t.Errorf("commit 1 holds %s", got)
	}
	for i, want := range map[int]string{4: "apps/podinfo/kustomization.yaml", 5: "teams/team-05/settings-0005.yaml"} {
		if got := git("diff-tree", "--no-commit-id", "--name-only", "-r", hashes[i-1]); got != want {
			t.Errorf("commit %d changed %s, want %s", i, got, want)
		}
	}
}
