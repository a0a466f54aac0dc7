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

package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/internal/testing/largerepo"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// The large fleet repository of BenchmarkHaltToPullRequestLargeRepo: files
// and commits at the moment the revert is made, how many commits of other
// teams came between the promoted revision and the bad one, and after the
// bad one.
const (
	largeRepoFiles        = 5000
	largeRepoCommits      = 10000
	largeRepoPromotedBack = 3000
	largeRepoAfterBad     = 5
	// largeRepoShard labels the benchmark's Canary for its own agent.
	largeRepoShard = "large-repo"
)

// BenchmarkHaltToPullRequestLargeRepo measures the GitOps revert on a
// large fleet repository (5,000 files, 10,000 commits), on the real path:
// Gitea, source-controller, kustomize-controller, and an agent of its own
// (a process, as users run it). Each run is a new repository and
// namespace: the Canary is initialized at the promoted revision, 3,000
// commits of other teams later the bad revision breaks the promotion, and
// 5 more commits land before serin halts. Latency is from the Halted
// transition (status.lastTransitionTime, written by the agent) to the
// moment the revert pull request exists on Gitea (polled every 50 ms).
// Runs one after another (SERIN_BENCH_LARGE_REPO_RUNS, 10 by default); the
// agent's peak RSS is its VmHWM at the end, the agent having done nothing
// else.
//
//	go test -run '^$' -bench BenchmarkHaltToPullRequestLargeRepo -benchtime 1x ./e2e/
func BenchmarkHaltToPullRequestLargeRepo(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("needs the git CLI (git fast-import)")
	}
	runs := 10
	if v := os.Getenv("SERIN_BENCH_LARGE_REPO_RUNS"); v != "" {
		var err error
		if runs, err = strconv.Atoi(v); err != nil || runs < 1 {
			b.Fatalf("SERIN_BENCH_LARGE_REPO_RUNS=%q", v)
		}
	}
	g := NewWithT(b)
	repo := generateLargeFleet(b)

	a, err := env.StartAgentWith(context.Background(), "..", testbed.AgentOptions{
		Name: "serin-agent-large-repo",
		Flags: append(append([]string{"--watch-label-selector=" + shardLabel + "=" + largeRepoShard, "--log-level=info",
			"--metrics-server=" + prom.URL, "--data-plane=traefik"}, gitopsFlags...),
			strings.Fields(os.Getenv("SERIN_BENCH_AGENT_FLAGS"))...),
	})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = a.Kill() }()
	idle := procMemMiB(a.PID(), "VmRSS")

	lat := make([]time.Duration, 0, runs)
	for i := range runs {
		d := largeRepoRun(b, g, repo)
		b.Logf("run %d: Halted → pull request %s", i+1, d.Round(time.Millisecond))
		lat = append(lat, d)
	}
	peak := procMemMiB(a.PID(), "VmHWM")
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p50, p99, maxS := quantileMs(lat, 0.5)/1000, quantileMs(lat, 0.99)/1000, quantileMs(lat, 1)/1000
	fmt.Printf("\nGITOPS REVERT, LARGE REPOSITORY (%d files, %d commits; promoted %d commits before the bad one)\n",
		largeRepoFiles, largeRepoCommits, largeRepoPromotedBack)
	fmt.Printf("%-40s %8s %8s %8s %6s %14s %14s\n", "", "p50", "p99", "max", "runs", "agent RSS idle", "agent RSS peak")
	fmt.Printf("%-40s %7.2fs %7.2fs %7.2fs %6d %10.0f MiB %10.0f MiB\n", "Halted → pull request opened", p50, p99, maxS, len(lat), idle, peak)
	fmt.Printf("halt_to_pr_large_repo_p50_s=%.2f halt_to_pr_large_repo_p99_s=%.2f halt_to_pr_large_repo_max_s=%.2f runs=%d idle_rss_mib=%.0f peak_rss_mib=%.0f files=%d commits=%d promoted_back=%d\n",
		p50, p99, maxS, len(lat), idle, peak, largeRepoFiles, largeRepoCommits, largeRepoPromotedBack)
	b.ReportMetric(p99, "p99-s")
	b.ReportMetric(peak, "peak-rss-MiB")
}

// largeFleet is the generated repository and the commits each run pushes.
type largeFleet struct {
	dir                   string
	promoted, bad, latest string
}

// generateLargeFleet writes the repository once for every run: commit 1
// adds podinfo (v2, its Canary labelled for the benchmark's agent, no
// namespace: the Kustomization's targetNamespace sets it) and the
// ConfigMaps of other teams, who change one of them in every other commit;
// the bad commit releases v3, whose primary never becomes ready.
func generateLargeFleet(b *testing.B) largeFleet {
	b.Helper()
	app := func(tag, templateMeta string) map[string][]byte {
		files := map[string][]byte{}
		for p, c := range podinfoApp("", tag, v1alpha1.PullRequestRevert) {
			c = strings.Replace(c, "namespace: \n", "", 1)
			c = strings.Replace(c, "metadata:\n  name: podinfo\n", "metadata:\n  name: podinfo\n  labels:\n    "+shardLabel+": "+largeRepoShard+"\n", 1)
			files[p] = []byte(c)
		}
		files["apps/podinfo/deployment.yaml"] = []byte(podinfoDeployment(templateMeta))
		return files
	}
	bad := app("v3", "\n      annotations:\n        "+testbed.NeverReadyAsPrimaryAnnotation+`: "true"`)
	delete(bad, "apps/podinfo/canary.yaml")
	badCommit := largeRepoCommits - largeRepoAfterBad
	start := time.Now()
	dir := filepath.Join(b.TempDir(), "fleet.git")
	hashes, err := largerepo.Generate(dir, largerepo.Spec{
		Commits: largeRepoCommits, Files: largeRepoFiles, Base: app("v2", ""), Epoch: time.Now().Add(-largeRepoCommits * time.Minute),
		Changes: map[int]largerepo.Change{badCommit: {Message: "Release podinfo v3", Files: bad}},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("generated %d files and %d commits in %s", largeRepoFiles, largeRepoCommits, time.Since(start).Round(time.Millisecond))
	return largeFleet{
		dir:      dir,
		promoted: hashes[badCommit-largeRepoPromotedBack-1],
		bad:      hashes[badCommit-1],
		latest:   hashes[len(hashes)-1],
	}
}

// largeRepoRun pushes the large fleet to a new Gitea repository up to the
// promoted commit, has Flux apply it and the Canary initialize, then
// pushes the bad commit and the commits after it, and returns the time
// from Halted to the revert pull request.
func largeRepoRun(b *testing.B, g Gomega, repo largeFleet) time.Duration {
	b.Helper()
	ctx := context.Background()
	ns := newNamespace(b)
	f := &fleet{t: b, ns: ns, name: ns}
	g.Expect(gitea.CreateRepository(ctx, f.name)).To(Succeed())
	push := func(commit string) {
		b.Helper()
		header := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(gitea.User+":"+gitea.Token))
		cmd := exec.Command("git", "-c", "http.extraHeader="+header, "push", "--quiet", gitea.RepositoryURL(f.name), commit+":refs/heads/main")
		cmd.Dir = repo.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git push %s: %v: %s", commit, err, out)
		}
	}
	start := time.Now()
	push(repo.promoted)
	b.Logf("%s: pushed %d commits in %s", ns, largeRepoCommits-largeRepoAfterBad-largeRepoPromotedBack, time.Since(start).Round(time.Millisecond))
	// source-controller fetches 5,000 files: on a busy machine that may
	// take longer than the tests' 30 s, and a failed fetch waits for the
	// interval.
	applyFleet(b, g, f, map[string]any{"timeout": "3m"}, map[string]any{"targetNamespace": ns})
	f.sync(g, repo.promoted)
	canary := &v1alpha1.Canary{ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: ns}}
	waitForPhase(g, canary, v1alpha1.PhaseInitialized, 90*time.Second)

	pollCtx, stop := context.WithCancel(ctx)
	defer stop()
	opened := watchPullRequests(pollCtx, f.name)
	push(repo.bad)
	f.sync(g, repo.bad)
	push(repo.latest) // other teams go on committing
	waitForPhase(g, canary, v1alpha1.PhaseHalted, 120*time.Second)
	halted := canary.Status.LastTransitionTime.Time
	var at time.Time
	select {
	case at = <-opened:
	case <-time.After(120 * time.Second):
		b.Fatalf("%s: no pull request 120 s after Halted", ns)
	}
	// One pull request, from serin's branch, on top of the latest commit.
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)).To(Succeed())
		g.Expect(canary.Status.Revert).NotTo(BeNil())
		g.Expect(canary.Status.Revert.State).To(Equal(gitops.StateOpened), "revert: %+v", canary.Status.Revert)
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	prs := f.pullRequests(g)
	g.Expect(prs).To(HaveLen(1))
	g.Expect(prs[0].Head.Ref).To(Equal(gitops.RevertBranch(canary, repo.bad)))
	var parent struct {
		Parents []struct {
			Sha string `json:"sha"`
		} `json:"parents"`
	}
	g.Expect(gitea.API(ctx, "GET", fmt.Sprintf("/repos/%s/%s/git/commits/%s", gitea.User, f.name, prs[0].Head.Sha), nil, &parent)).To(Succeed())
	g.Expect(parent.Parents).To(HaveLen(1))
	g.Expect(parent.Parents[0].Sha).To(Equal(repo.latest))
	return at.Sub(halted)
}

// procMemMiB reads a memory figure of a process's /proc/PID/status
// (VmRSS, VmHWM: the peak resident set since it started), in MiB.
func procMemMiB(pid int, field string) float64 {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0
			}
			kb, _ := strconv.ParseFloat(f[0], 64)
			return kb / 1024
		}
	}
	return 0
}
