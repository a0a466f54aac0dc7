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
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
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
	generateLargeRepo(b, dir)
	b.Logf("generated %d files and %d commits in %s", largeRepoFiles, largeRepoCommits, time.Since(start).Round(time.Millisecond))

	repo, err := gogit.PlainOpen(dir)
	if err != nil {
		b.Fatal(err)
	}
	commitBack = func(n int) *object.Commit {
		h, err := repo.ResolveRevision(plumbing.Revision(fmt.Sprintf("refs/heads/main~%d", n)))
		if err != nil {
			b.Fatal(err)
		}
		c, err := repo.CommitObject(*h)
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

// generateLargeRepo writes a bare repository at dir whose main branch has
// largeRepoCommits commits: the first adds apps/podinfo (testdata case
// image-bump-kustomization, good) and largeRepoFiles ConfigMaps under
// teams/; each following one changes one ConfigMap, except the bad one,
// largeRepoAfterBad commits before the head, which bumps the image.
func generateLargeRepo(b *testing.B, dir string) {
	b.Helper()
	run := func(stdin io.Reader, args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Stdin = dir, stdin
		// glibc otherwise trims and grows fast-import's heap at every
		// object: 15 s of brk instead of 1 s.
		cmd.Env = append(os.Environ(), "MALLOC_TOP_PAD_=268435456", "MALLOC_TRIM_THRESHOLD_=268435456")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %s: %v: %s", args[0], err, out)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	run(nil, "init", "--quiet", "--bare", "--initial-branch=main")

	pr, pw := io.Pipe()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w := bufio.NewWriterSize(pw, 1<<20)
		err := writeLargeRepoStream(b, w)
		if err == nil {
			err = w.Flush()
		}
		pw.CloseWithError(err)
	}()
	run(pr, "fast-import", "--quiet")
	wg.Wait()
}

// writeLargeRepoStream writes the git fast-import stream of generateLargeRepo.
func writeLargeRepoStream(b *testing.B, w *bufio.Writer) error {
	good := readTree(b, filepath.Join("testdata", "image-bump-kustomization", "good"))
	bad := readTree(b, filepath.Join("testdata", "image-bump-kustomization", "original"))
	configMap := func(n, revision int) []byte {
		return fmt.Appendf(nil, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings-%04d\n  namespace: team-%02d\n"+
			"data:\n  revision: \"%d\"\n  owner: team-%02d@example.com\n  description: |\n"+
			"    Settings of service %04d, generated for serin's large repository benchmark.\n"+
			"    They change once in a while, as settings of a real fleet do.\n",
			n, n%50, revision, n%50, n)
	}
	file := func(path string, content []byte) {
		fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n", path, len(content))
		w.Write(content)
		w.WriteString("\n")
	}
	badCommit := largeRepoCommits - largeRepoAfterBad
	for i := 1; i <= largeRepoCommits; i++ {
		message := fmt.Sprintf("Change settings %d", i)
		switch i {
		case 1:
			message = "Add the fleet"
		case badCommit:
			message = "Try podinfo 6.8.0-rc.1"
		}
		when := testEpoch.Add(time.Duration(i) * time.Minute).Unix()
		fmt.Fprintf(w, "commit refs/heads/main\nmark :%d\ncommitter Dev <dev@example.com> %d +0000\ndata %d\n%s\n", i, when, len(message), message)
		if i > 1 {
			fmt.Fprintf(w, "from :%d\n", i-1)
		}
		switch i {
		case 1:
			for _, p := range sortedKeys(good) {
				file(p, good[p])
			}
			for n := 0; n < largeRepoFiles; n++ {
				file(fmt.Sprintf("teams/team-%02d/settings-%04d.yaml", n%50, n), configMap(n, 0))
			}
		case badCommit:
			p := "apps/podinfo/kustomization.yaml"
			file(p, bad[p])
		default:
			n := (i * 7919) % largeRepoFiles
			file(fmt.Sprintf("teams/team-%02d/settings-%04d.yaml", n%50, n), configMap(n, i))
		}
		w.WriteString("\n")
	}
	return nil
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
