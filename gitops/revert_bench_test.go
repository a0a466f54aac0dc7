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
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/largerepo"
)

// The large repository of BenchmarkRevertLargeRepo: files outside the
// Kustomization's path, commits in all, and commits after the bad one.
const (
	largeRepoFiles    = 5000
	largeRepoCommits  = 10000
	largeRepoAfterBad = 5
)

// BenchmarkRevertLargeRepo reverts, end to end (clone, plan, commit, push,
// pull request), a bad image bump near the head of a repository of 5,000
// files and 10,000 commits served over HTTP by an in-process Git server:
// once with the last promoted revision just before the bad one, once with
// it 3,000 commits before (the clone must reach it). Each reports the wall
// time, the heap in use at its highest (sampled) and the bytes allocated,
// as metrics and as one key=value line.
func BenchmarkRevertLargeRepo(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("needs the git CLI (git fast-import)")
	}
	f, commitBack := newLargeRepoFixture(b)
	for _, promotedBack := range []int{1, 3000} {
		b.Run(fmt.Sprintf("promoted=%d-before-bad", promotedBack), func(b *testing.B) {
			f.t = b
			f.good = commitBack(largeRepoAfterBad + promotedBack)
			benchmarkRevert(b, f, promotedBack)
		})
	}
}

// benchmarkRevert measures the revert of the fixture's bad commit.
func benchmarkRevert(b *testing.B, f *gitFixture, promotedBack int) {
	g := f.reverter()
	req := f.request(v1alpha1.PullRequestRevert)
	ctx := context.Background()
	var seconds, peak, alloc float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		f.resetRevert()
		runtime.GC()
		sampler := startHeapSampler(2 * time.Millisecond)
		start := time.Now()
		b.StartTimer()

		res, err := g.Revert(ctx, req)

		b.StopTimer()
		elapsed := time.Since(start)
		p, a := sampler.stop()
		if err != nil {
			b.Fatal(err)
		}
		if res.State != StateOpened {
			b.Fatalf("state %s: %s", res.State, res.Message)
		}
		seconds = max(seconds, elapsed.Seconds())
		peak, alloc = max(peak, mib(p)), max(alloc, mib(a))
		b.StartTimer()
	}
	b.ReportMetric(seconds, "s/revert")
	b.ReportMetric(peak, "peak-heap-MiB")
	b.ReportMetric(alloc, "alloc-MiB")
	fmt.Printf("revert_large_repo files=%d commits=%d promoted_back=%d seconds=%.2f peak_heap_mib=%.1f alloc_mib=%.1f\n",
		largeRepoFiles, largeRepoCommits, promotedBack, seconds, peak, alloc)
}

func mib(bytes uint64) float64 { return float64(bytes) / (1 << 20) }

// newLargeRepoFixture serves the large repository, generated with git
// fast-import into the benchmark's temporary directory, with its bad
// commit; commitBack returns the commit n commits before the head.
func newLargeRepoFixture(b *testing.B) (f *gitFixture, commitBack func(n int) *object.Commit) {
	b.Helper()
	server := startGitServer(b)
	dir := filepath.Join(server.Root(), repoPath)
	start := time.Now()
	good := readTree(b, filepath.Join("testdata", "image-bump-kustomization", "good"))
	bad := readTree(b, filepath.Join("testdata", "image-bump-kustomization", "original"))
	kustomization := "apps/podinfo/kustomization.yaml"
	hashes, err := largerepo.Generate(dir, largerepo.Spec{
		Commits: largeRepoCommits, Files: largeRepoFiles, Base: good, Epoch: testEpoch,
		Changes: map[int]largerepo.Change{largeRepoCommits - largeRepoAfterBad: {
			Message: "Try podinfo 6.8.0-rc.1", Files: map[string][]byte{kustomization: bad[kustomization]},
		}},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("generated %d files and %d commits in %s", largeRepoFiles, largeRepoCommits, time.Since(start).Round(time.Millisecond))

	repo, err := gogit.PlainOpen(dir)
	if err != nil {
		b.Fatal(err)
	}
	commitBack = func(n int) *object.Commit {
		c, err := repo.CommitObject(plumbing.NewHash(hashes[len(hashes)-1-n]))
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	f = &gitFixture{t: b, server: server, url: server.HTTPAddress() + "/" + repoPath, host: &fakeHost{}}
	f.bad = commitBack(largeRepoAfterBad)
	f.k8s = fleetClient(f.url, commitBack(0).Hash)
	return f, commitBack
}

// resetRevert deletes the revert branch and the pull requests of an
// earlier iteration, so that each one reverts from scratch.
func (f *gitFixture) resetRevert() {
	f.t.Helper()
	branch := RevertBranch(f.canary(v1alpha1.PullRequestRevert), f.bad.Hash.String())
	cmd := exec.Command("git", "update-ref", "-d", "refs/heads/"+branch)
	cmd.Dir = filepath.Join(f.server.Root(), repoPath)
	if out, err := cmd.CombinedOutput(); err != nil {
		f.t.Fatalf("git update-ref: %v: %s", err, out)
	}
	f.host.mu.Lock()
	f.host.prs = nil
	f.host.mu.Unlock()
}

// heapSampler records the highest heap in use while a revert runs, and
// the bytes it allocated.
type heapSampler struct {
	done      chan struct{}
	wg        sync.WaitGroup
	peak      uint64
	allocated uint64
}

const (
	heapObjectsMetric = "/memory/classes/heap/objects:bytes"
	heapAllocsMetric  = "/gc/heap/allocs:bytes"
)

// startHeapSampler samples the heap every interval until stop.
func startHeapSampler(interval time.Duration) *heapSampler {
	s := &heapSampler{done: make(chan struct{})}
	samples := []metrics.Sample{{Name: heapObjectsMetric}, {Name: heapAllocsMetric}}
	metrics.Read(samples)
	s.allocated = samples[1].Value.Uint64()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			metrics.Read(samples[:1])
			s.peak = max(s.peak, samples[0].Value.Uint64())
			select {
			case <-s.done:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// stop returns the peak heap in use and the bytes allocated since start.
func (s *heapSampler) stop() (peak, allocated uint64) {
	close(s.done)
	s.wg.Wait()
	samples := []metrics.Sample{{Name: heapAllocsMetric}}
	metrics.Read(samples)
	return s.peak, samples[0].Value.Uint64() - s.allocated
}
