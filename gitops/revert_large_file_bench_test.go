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
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/largerepo"
)

// BenchmarkRevertLargeFile reverts a bad image bump in a repository whose
// Kustomization directory also holds a file of zeros of
// SERIN_BENCH_LARGE_FILE_MIB MiB (1,024 by default): its pack is a few
// MiB, so the clone's bound on disk lets it through. The clone refuses
// the file as the pack arrives, from its header (it is over
// --gitops-max-file-size, 16 MiB), so the heap stays small; before the
// clone checked, go-git's indexer inflated the file whole. A second
// revert, of a repository with an 8 MiB file (under the bound), is opened:
// the cost of a file the bound lets through. One key=value line each.
func BenchmarkRevertLargeFile(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("needs the git CLI (git fast-import)")
	}
	size := 1024
	if v := os.Getenv("SERIN_BENCH_LARGE_FILE_MIB"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("SERIN_BENCH_LARGE_FILE_MIB=%q: a number of MiB", v)
		}
		size = n
	}
	for _, fileMiB := range []int{size, 8} {
		over := int64(fileMiB)<<20 > DefaultMaxFileSize
		b.Run(fmt.Sprintf("file=%dMiB", fileMiB), func(b *testing.B) {
			f := newLargeFileFixture(b, fileMiB)
			g := f.reverter()
			req := f.request(v1alpha1.PullRequestRevert)
			var seconds, peak float64
			var outcome string
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				f.resetRevert()
				runtime.GC()
				sampler := startHeapSampler(2 * time.Millisecond)
				start := time.Now()
				b.StartTimer()
				res, err := g.Revert(context.Background(), req)
				b.StopTimer()
				elapsed := time.Since(start)
				p, _ := sampler.stop()
				switch {
				case over && errors.Is(err, ErrFileTooLarge):
					outcome = "refused"
				case over:
					b.Fatalf("a revert of a repository with a %d MiB file: %v, %+v; want ErrFileTooLarge", fileMiB, err, res)
				case err != nil || res.State != StateOpened:
					b.Fatalf("revert: %v, %+v", err, res)
				default:
					outcome = res.State
				}
				seconds, peak = max(seconds, elapsed.Seconds()), max(peak, mib(p))
				b.StartTimer()
			}
			b.ReportMetric(peak, "peak-heap-MiB")
			fmt.Printf("revert_large_file file_mib=%d bound_mib=%d outcome=%s seconds=%.2f peak_heap_mib=%.1f\n", fileMiB, DefaultMaxFileSize>>20, outcome, seconds, peak)
		})
	}
}

// newLargeFileFixture serves a repository of two commits: the good image,
// with a file of zeros of sizeMiB next to the Kustomization (not in its
// resources), and the bad image bump.
func newLargeFileFixture(b testing.TB, sizeMiB int) *gitFixture {
	b.Helper()
	server := startGitServer(b)
	dir := filepath.Join(server.Root(), repoPath)
	good := readTree(b, filepath.Join("testdata", "image-bump-kustomization", "good"))
	bad := readTree(b, filepath.Join("testdata", "image-bump-kustomization", "original"))
	const kustomization = "apps/podinfo/kustomization.yaml"
	large := "apps/podinfo/dump.yaml"
	good[large] = make([]byte, sizeMiB<<20)
	start := time.Now()
	hashes, err := largerepo.Generate(dir, largerepo.Spec{
		Commits: 2, Base: good, Epoch: testEpoch,
		Changes: map[int]largerepo.Change{2: {Message: "Try podinfo 6.8.0-rc.1", Files: map[string][]byte{kustomization: bad[kustomization]}}},
	})
	if err != nil {
		b.Fatal(err)
	}
	delete(good, large) // the benchmark holds no copy of it while it measures
	b.Logf("generated a repository with a %d MiB file in %s", sizeMiB, time.Since(start).Round(time.Millisecond))
	repo, err := gogit.PlainOpen(dir)
	if err != nil {
		b.Fatal(err)
	}
	goodCommit, err := repo.CommitObject(plumbing.NewHash(hashes[0]))
	if err != nil {
		b.Fatal(err)
	}
	badCommit, err := repo.CommitObject(plumbing.NewHash(hashes[1]))
	if err != nil {
		b.Fatal(err)
	}
	f := &gitFixture{t: b, server: server, url: server.HTTPAddress() + "/" + repoPath, host: &fakeHost{}}
	f.good, f.bad = goodCommit, badCommit
	f.k8s = fleetClient(f.url, badCommit.Hash)
	return f
}
