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
	"bytes"
	"github.com/serin-dev/serin/internal/testing/testutil"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serin-dev/serin/gitops/chartrender"
)

// storeObject stores o in s.
func storeObject(t *testing.T, s *memory.Storage, o interface {
	Encode(plumbing.EncodedObject) error
}) plumbing.Hash {
	t.Helper()
	obj := s.NewEncodedObject()
	if err := o.Encode(obj); err != nil {
		t.Fatal(err)
	}
	h, err := s.SetEncodedObject(obj)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// storeTree stores the tree of files (path to blob) and its subtrees.
func storeTree(t *testing.T, s *memory.Storage, files map[string]plumbing.Hash) plumbing.Hash {
	t.Helper()
	sub := map[string]map[string]plumbing.Hash{}
	tree := &object.Tree{}
	for p, h := range files {
		dir, rest, nested := strings.Cut(p, "/")
		if !nested {
			tree.Entries = append(tree.Entries, object.TreeEntry{Name: p, Mode: filemode.Regular, Hash: h})
			continue
		}
		if sub[dir] == nil {
			sub[dir] = map[string]plumbing.Hash{}
		}
		sub[dir][rest] = h
	}
	for dir, files := range sub {
		tree.Entries = append(tree.Entries, object.TreeEntry{Name: dir, Mode: filemode.Dir, Hash: storeTree(t, s, files)})
	}
	slices.SortFunc(tree.Entries, func(a, b object.TreeEntry) int { return strings.Compare(a.Name, b.Name) })
	return storeObject(t, s, tree)
}

// storeCommit commits files (each content stored once, whatever the
// number of paths that hold it) on parents.
func storeCommit(t *testing.T, s *memory.Storage, files map[string][]byte, parents ...plumbing.Hash) *object.Commit {
	t.Helper()
	blobs := map[string]plumbing.Hash{}
	byContent := map[*byte]plumbing.Hash{}
	for p, b := range files {
		if h, ok := byContent[contentID(b)]; ok && len(b) > 0 {
			blobs[p] = h
			continue
		}
		obj := s.NewEncodedObject()
		obj.SetType(plumbing.BlobObject)
		w, _ := obj.Writer()
		_, _ = w.Write(b)
		_ = w.Close()
		h, err := s.SetEncodedObject(obj)
		if err != nil {
			t.Fatal(err)
		}
		blobs[p] = h
		if len(b) > 0 {
			byContent[contentID(b)] = h
		}
	}
	sig := object.Signature{Name: "Dev", Email: "dev@example.com", When: testEpoch}
	c := &object.Commit{Author: sig, Committer: sig, Message: "commit", TreeHash: storeTree(t, s, blobs), ParentHashes: parents}
	h := storeObject(t, s, c)
	commit, err := object.GetCommit(s, h)
	if err != nil {
		t.Fatal(err)
	}
	return commit
}

// contentID identifies a content by its first byte's address: the test
// shares one slice between the paths that hold the same file.
func contentID(b []byte) *byte {
	if len(b) == 0 {
		return nil
	}
	return &b[0]
}

// vmHWM is this process's peak resident memory, in bytes.
func vmHWM(t *testing.T) int64 {
	t.Helper()
	rss, err := testutil.PeakRSS(os.Getpid())
	if err != nil {
		t.Skip("no peak RSS to read:", err)
	}
	return rss
}

// A chart kept in Git whose directory holds 100 copies of a 15 MiB file
// (kilobytes in the clone: Git stores the content once) is refused by the
// renderer's byte bound from the files' sizes, before the agent reads
// them: the revert falls back to the chart's inputs, its note names the
// bound, and the agent's peak memory stays where it was.
func TestPlanRevert_HelmChartPastByteBoundIsNotRead(t *testing.T) {
	big := bytes.Repeat([]byte("# padding\n"), 15<<20/10)
	chart := map[string][]byte{}
	for p, c := range greetingChart(false) {
		chart[p] = []byte(c)
	}
	for i := range 100 {
		chart[path.Join("charts/podinfo/templates", "pad"+strconv.Itoa(i)+".yaml")] = big
	}
	fleet := func(tag string) map[string][]byte {
		files := map[string][]byte{
			"apps/podinfo/kustomization.yaml": []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: apps\nresources:\n  - helmrelease.yaml\n"),
			"apps/podinfo/helmrelease.yaml":   []byte(greetingRelease(tag, "hi")),
		}
		for p, b := range chart {
			files[p] = b
		}
		return files
	}
	s := memory.NewStorage()
	good := storeCommit(t, s, fleet("v1"))
	bad := storeCommit(t, s, fleet("v2"), good.Hash)
	before := vmHWM(t)
	plan, err := PlanRevert(t.Context(), PlanInput{
		Path: "./apps/podinfo", Target: Target{Kind: "HelmRelease", Namespace: "apps", Name: "podinfo"},
		Rendered: &Target{Kind: "Deployment", Namespace: "apps", Name: "podinfo"},
		Good:     good, Bad: bad, Head: bad, GitRepository: types.NamespacedName{Namespace: "apps", Name: "fleet"},
	})
	after := vmHWM(t)
	t.Logf("parent_peak_rss_before=%d parent_peak_rss_after=%d", before, after)
	if err != nil {
		t.Fatal(err)
	}
	want := "Verified by the chart's inputs, not by rendering it: at " + ShortSHA(good.Hash.String()) +
		", the chart is not rendered: the chart in ./charts/podinfo of HelmRelease/apps/podinfo: the chart's rendering went past its size bound of 64 MiB (--chart-render-max-chart-size)."
	if n := plan.Notes[len(plan.Notes)-1]; n != want {
		t.Errorf("last note\n%s\nwant\n%s", n, want)
	}
	if grown := after - before; grown > 200<<20 {
		t.Errorf("the agent's peak RSS grew by %d MiB", grown>>20)
	}
}

// A chart whose template allocates 1.5 GB, or loops for ever, fails its
// child at the memory bound, or is killed at the wall-clock bound: the
// revert falls back to the chart's inputs and its note names the bound.
func TestPlanRevert_HelmChartPastRenderBounds(t *testing.T) {
	tests := map[string]struct {
		template string
		limits   chartrender.Limits
		want     string
	}{
		"a template that allocates 1.5 GB": {
			template: `{{ $_ := repeat 1500000000 "x" }}`,
			want:     "the chart's rendering went past its memory bound of 512 MiB (--chart-render-max-memory)",
		},
		"a template that loops for ever": {
			template: `{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}`,
			limits:   chartrender.Limits{Timeout: 2 * time.Second},
			want:     "the chart's rendering went past its wall-clock bound of 2s (--chart-render-timeout)",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			fleet := func(tag string) map[string][]byte {
				files := map[string][]byte{
					"apps/podinfo/kustomization.yaml":      []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: apps\nresources:\n  - helmrelease.yaml\n"),
					"apps/podinfo/helmrelease.yaml":        []byte(greetingRelease(tag, "hi")),
					"charts/podinfo/templates/tenant.yaml": []byte(tt.template),
				}
				for p, c := range greetingChart(false) {
					files[p] = []byte(c)
				}
				return files
			}
			s := memory.NewStorage()
			good := storeCommit(t, s, fleet("v1"))
			bad := storeCommit(t, s, fleet("v2"), good.Hash)
			before := vmHWM(t)
			start := time.Now()
			plan, err := PlanRevert(t.Context(), PlanInput{
				Path: "./apps/podinfo", Target: Target{Kind: "HelmRelease", Namespace: "apps", Name: "podinfo"},
				Rendered: &Target{Kind: "Deployment", Namespace: "apps", Name: "podinfo"},
				Charts:   NewHelmCharts(nil, HelmChartsOptions{Renderer: chartrender.New(tt.limits)}),
				Good:     good, Bad: bad, Head: bad, GitRepository: types.NamespacedName{Namespace: "apps", Name: "fleet"},
			})
			t.Logf("plan_seconds=%.1f parent_peak_rss_growth=%d", time.Since(start).Seconds(), vmHWM(t)-before)
			if err != nil {
				t.Fatal(err)
			}
			want := "Verified by the chart's inputs, not by rendering it: at " + ShortSHA(good.Hash.String()) +
				", the chart is not rendered: the chart in ./charts/podinfo of HelmRelease/apps/podinfo: " + tt.want + "."
			if n := plan.Notes[len(plan.Notes)-1]; n != want {
				t.Errorf("last note\n%s\nwant\n%s", n, want)
			}
			if files := plan.Paths(); !slices.Equal(files, []string{"apps/podinfo/helmrelease.yaml"}) {
				t.Errorf("planned %v", files)
			}
		})
	}
}
