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
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/serin-dev/serin/internal/testing/testutil"
)

// The planner's golden tests. Each directory of testdata holds a case:
//
//	good/      the tree at the last promoted commit
//	original/  the tree at the bad commit, committed on top of good
//	head/      optional: the branch head, committed on top of original
//	expected/  the tree after the planned change, applied to the head
//	plan.golden the plan (strategy, reverted commits, files, notes) or error
//
// Every case reverts Deployment podinfo in namespace apps, applied by a
// Kustomization of ./apps/podinfo.
func TestPlanRevert_Golden(t *testing.T) {
	cases, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if !c.IsDir() {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			dir := filepath.Join("testdata", c.Name())
			repo := newTestRepo(t)
			good := repo.commitDir(filepath.Join(dir, "good"), "Promote podinfo")
			bad := repo.commitDir(filepath.Join(dir, "original"), "Bump podinfo")
			head := bad
			if _, err := os.Stat(filepath.Join(dir, "head")); err == nil {
				head = repo.commitDir(filepath.Join(dir, "head"), "Later work")
			}

			plan, err := PlanRevert(t.Context(), PlanInput{
				Path:   "./apps/podinfo",
				Target: Target{Kind: "Deployment", Namespace: "apps", Name: "podinfo"},
				Good:   good, Bad: bad, Head: head,
			})
			testutil.Golden(t, filepath.Join(dir, "plan.golden"), describePlan(plan, err))
			if err != nil || plan.UpToDate {
				if _, statErr := os.Stat(filepath.Join(dir, "expected")); statErr == nil {
					t.Errorf("expected/ exists but the plan made no change")
				}
				return
			}

			got := commitFiles(t, head)
			for _, f := range plan.Files {
				if f.Content == nil {
					delete(got, f.Path)
				} else {
					got[f.Path] = f.Content
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "expected")); testutil.UpdateGolden() && os.IsNotExist(err) {
				writeTree(t, filepath.Join(dir, "expected"), got)
			}
			want := readTree(t, filepath.Join(dir, "expected"))
			for _, p := range sortedKeys(want) {
				if diff := cmp.Diff(string(want[p]), string(got[p])); diff != "" {
					t.Errorf("%s (-expected +planned):\n%s", p, diff)
				}
			}
			for _, p := range sortedKeys(got) {
				if _, ok := want[p]; !ok {
					t.Errorf("%s is in the planned tree but not in expected/", p)
				}
			}
		})
	}
}

// describePlan prints a plan or an error for the golden file.
func describePlan(plan *Plan, err error) string {
	if err != nil {
		return fmt.Sprintf("error: %v\nunverifiable: %v\n", err, errors.Is(err, ErrUnverifiable))
	}
	if plan.UpToDate {
		return "up to date: the head already renders the target as promoted\n"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "strategy: %s\n", plan.Strategy)
	fmt.Fprintf(&sb, "reverted commits: %d\n", len(plan.RevertedCommits))
	fmt.Fprintf(&sb, "files:\n%s", indent(plan.Paths()))
	fmt.Fprintf(&sb, "notes:\n%s", indent(plan.Notes))
	return sb.String()
}

func TestCommitOf(t *testing.T) {
	const h = "0123456789abcdef0123456789abcdef01234567"
	tests := map[string]struct {
		in      string
		want    string
		wantErr bool
	}{
		"branch and digest": {in: "main@sha1:" + h, want: h},
		"digest":            {in: "sha1:" + h, want: h},
		"legacy":            {in: "main/" + h, want: h},
		"bare":              {in: h, want: h},
		"branch with slash": {in: "release/v1@sha1:" + h, want: h},
		"sha256":            {in: "main@sha256:" + strings.Repeat("a", 64), wantErr: true},
		"empty":             {in: "", wantErr: true},
		"short":             {in: "main@sha1:0123abc", wantErr: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := CommitOf(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("CommitOf(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}
