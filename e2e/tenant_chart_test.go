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
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"github.com/serin-dev/serin/internal/testing/testutil"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// hostileChart is what a careless or hostile tenant adds to its chart in
// the commit that also fails its canary: content serin loads and renders
// when it verifies the revert, hidden from Flux (.sourceignore) or from
// helm-controller's upgrade (.Release.IsInstall is true only when serin
// renders), so that only the shared agent meets it.
type hostileChart struct {
	name string
	// files are added under charts/podinfo/ of the bad commit; shared
	// are added there too, each path holding the same content (stored
	// once by Git).
	files  map[string]string
	shared map[string][]byte
	// bounds are the flags of the bounds one of which the pull request
	// must name as what stopped the rendering.
	bounds []string
}

// hostileCharts are the four ways a tenant's chart could take the agent
// down: a template allocating 1.5 GB, 100 identical files of 15 MiB, an
// archive bomb of subcharts, and a template that loops for ever.
func hostileCharts(t *testing.T) []hostileChart {
	big := bytes.Repeat([]byte("serin-hostile-tenant-file\n"), 15<<20/26)
	files := map[string][]byte{}
	for i := range 100 {
		files[fmt.Sprintf("big/copy-%03d.txt", i)] = big
	}
	bomb := subchartBomb(t, 90<<20)
	subcharts := map[string][]byte{}
	for i := range 20 {
		subcharts[fmt.Sprintf("charts/bomb-%02d-0.1.0.tgz", i)] = bomb
	}
	return []hostileChart{
		{name: "memory", bounds: []string{"--chart-render-max-memory"}, files: map[string]string{
			"templates/bomb.yaml": `{{- if .Release.IsInstall }}{{- $_ := repeat 1500000000 "x" }}{{- end }}` + "\n"}},
		{name: "files", bounds: []string{"--chart-render-max-chart-size"}, shared: files},
		{name: "subcharts", bounds: []string{"--chart-render-max-chart-size"}, shared: subcharts},
		{name: "loop", bounds: []string{"--chart-render-timeout", "--chart-render-max-cpu-time"}, files: map[string]string{
			"templates/loop.yaml": `{{- if .Release.IsInstall }}{{- range until 100000 }}{{- range until 100000 }}{{- end }}{{- end }}{{- end }}` + "\n"}},
	}
}

// subchartBomb is a packaged chart whose one template inflates to size
// bytes of spaces: a few hundred kilobytes in Git.
func subchartBomb(t *testing.T, size int) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	add := func(name string, content []byte) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(content); err != nil {
			t.Fatal(err)
		}
	}
	add("bomb/Chart.yaml", []byte("apiVersion: v2\nname: bomb\nversion: 0.1.0\n"))
	add("bomb/templates/NOTES.txt", bytes.Repeat([]byte(" "), size))
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A tenant's chart cannot take the shared agent down. Four tenants each
// fail a canary with a commit whose chart a revert has to render — a
// template allocating 1.5 GB, 100 identical files of 15 MiB, 20 subchart
// archives of 90 MiB each, a template that loops for ever — and a fifth
// fails an ordinary one, while the agent has two Git slots. Each revert is
// opened within 2 minutes of its failure, the hostile ones compared on
// their inputs with a pull request naming the bound that stopped the
// rendering, the ordinary one verified by rendering; the agent is the same
// process throughout and its peak RSS stays under its chart's memory
// limit.
func TestTenantChart_HostileChartsLeaveTheAgentRunning(t *testing.T) {
	alone(t, "hostile charts load CPU and memory; bounds peak RSS and revert time")
	needHelmController(t)
	g := NewWithT(t)
	ctx := context.Background()
	agent, err := env.StartAgentWith(ctx, "..", testbed.AgentOptions{
		Name: "serin-agent-charts",
		Flags: append([]string{"--metrics-server=" + prom.URL, "--data-plane=traefik", "--log-level=info",
			"--watch-label-selector=" + shardLabel + "=charts", "--gitops-max-concurrent-reverts=2",
			// A render that loops is killed after 10 s (30 s by default).
			"--chart-render-timeout=10s"}, gitopsFlags...),
	})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = agent.Kill() })
	pid := agent.PID()
	limit := agentMemoryLimit(t)

	type tenant struct {
		chart hostileChart
		app   helmApp
		f     *fleet
		c     *v1alpha1.Canary
		bad   string
	}
	charts := append(hostileCharts(t), hostileChart{name: "ordinary"})
	tenants := make([]*tenant, len(charts))
	for i, hc := range charts {
		ns := newNamespace(t)
		app := helmApp{ns: ns, chart: gitChart, tag: "v1", ignoreReplicas: true, revertOn: "Failed",
			podAnnotations: map[string]string{testbed.ErrorPercentOfAnnotation: "v2=100"}}
		files := shardedHelmApp(app, "charts")
		for p, content := range chartFiles(testbed.PodinfoChart("0.1.0")) {
			files[p] = content
		}
		files[".sourceignore"] = "charts/podinfo/big/\ncharts/podinfo/charts/\n"
		f := startHelmAppFiles(t, g, app, files)
		c := &v1alpha1.Canary{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "podinfo"}}
		tenants[i] = &tenant{chart: hc, app: app, f: f, c: c}
	}

	// Every tenant releases its bad commit: image v2, which errs, and what
	// its chart gained.
	for _, tn := range tenants {
		tn.app.tag = "v2"
		files := map[string][]byte{}
		for p, content := range shardedHelmApp(tn.app, "charts") {
			files[p] = []byte(content)
		}
		for p, content := range tn.chart.files {
			files["charts/podinfo/"+p] = []byte(content)
		}
		for p, content := range tn.chart.shared {
			files["charts/podinfo/"+p] = content
		}
		tn.bad = pushTree(t, g, tn.f, files, "podinfo v2 ("+tn.chart.name+")")
		tn.f.sync(g, tn.bad)
	}
	var wg sync.WaitGroup
	took := make([]time.Duration, len(tenants))
	for i, tn := range tenants {
		wg.Go(func() {
			g := NewWithT(t)
			waitForPhase(g, tn.c, v1alpha1.PhaseFailed, 3*time.Minute)
			failed := time.Now()
			revert := waitForRevertWithin(g, tn.c, 2*time.Minute)
			took[i] = time.Since(failed)
			g.Expect(revert.Revision).To(Equal("main@sha1:" + tn.bad))
			g.Expect(revert.State).To(Equal(gitops.StateOpened), "%s: revert %+v", tn.chart.name, revert)
			pr := onlyPullRequest(g, tn.f)
			t.Logf("%s: revert opened %s after the failure: %s", tn.chart.name, took[i].Round(time.Millisecond), firstLines(pr.Body, 40))
			if len(tn.chart.bounds) == 0 {
				g.Expect(pr.Body).To(ContainSubstring("Verified by rendering the chart of HelmRelease/%s/podinfo with Helm", tn.app.ns))
				return
			}
			g.Expect(pr.Body).NotTo(ContainSubstring("Verified by rendering"), tn.chart.name)
			named := slices.ContainsFunc(tn.chart.bounds, func(flag string) bool {
				return strings.Contains(pr.Body, "bound of") && strings.Contains(pr.Body, flag)
			})
			g.Expect(named).To(BeTrue(), "%s: the pull request names the bound (%v)", tn.chart.name, tn.chart.bounds)
		})
	}
	wg.Wait()

	g.Expect(agent.PID()).To(Equal(pid), "the agent was never restarted")
	g.Expect(processAlive(pid)).To(BeTrue(), "the agent is running")
	peak := peakRSS(t, pid)
	fmt.Printf("tenant_charts agent_peak_rss_mib=%d agent_memory_limit_mib=%d peak_to_limit=%.2f revert_seconds=%s\n",
		peak>>20, limit>>20, float64(peak)/float64(limit), joinSeconds(took))
	g.Expect(peak).To(BeNumerically("<", limit), "the agent's peak RSS stays under its memory limit")
}

// shardedHelmApp is the app's files, its Canary for the agent of shard.
func shardedHelmApp(app helmApp, shard string) map[string]string {
	files := app.files()
	files["apps/podinfo/canary.yaml"] = strings.Replace(files["apps/podinfo/canary.yaml"], "metadata:\n  name: podinfo\n",
		"metadata:\n  name: podinfo\n  labels:\n    "+shardLabel+": "+shard+"\n", 1)
	return files
}

// waitForRevertWithin waits until the Canary records a revert that is
// opened or failed, at most within.
func waitForRevertWithin(g Gomega, c *v1alpha1.Canary, within time.Duration) v1alpha1.RevertStatus {
	var revert v1alpha1.RevertStatus
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(c.Status.Revert).NotTo(BeNil())
		g.Expect(c.Status.Revert.State).To(BeElementOf(gitops.StateOpened, gitops.StateFailed), "revert: %+v", c.Status.Revert)
		revert = *c.Status.Revert
	}, within, 200*time.Millisecond).Should(Succeed())
	return revert
}

// onlyPullRequest is the fleet's one pull request.
func onlyPullRequest(g Gomega, f *fleet) pullRequest {
	prs := f.pullRequests(g)
	g.Expect(prs).To(HaveLen(1), "one pull request")
	return prs[0]
}

// pushTree commits files (path: content) on main's head of the fleet's
// repository without its worktree, each content stored once whatever the
// paths holding it, and pushes main. The fleet's worktree is not updated.
func pushTree(t *testing.T, g Gomega, f *fleet, files map[string][]byte, message string) string {
	t.Helper()
	repo := f.repo
	head, err := repo.Reference("refs/heads/main", true)
	g.Expect(err).NotTo(HaveOccurred())
	parent, err := repo.CommitObject(head.Hash())
	g.Expect(err).NotTo(HaveOccurred())
	blobs := map[string]plumbing.Hash{}
	written := map[string]plumbing.Hash{}
	for p, content := range files {
		// The same slice is one blob: written once, not compared.
		key := fmt.Sprintf("%p/%d", content, len(content))
		if h, ok := written[key]; ok {
			blobs[p] = h
			continue
		}
		obj := repo.Storer.NewEncodedObject()
		obj.SetType(plumbing.BlobObject)
		w, err := obj.Writer()
		g.Expect(err).NotTo(HaveOccurred())
		_, err = w.Write(content)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(w.Close()).To(Succeed())
		h, err := repo.Storer.SetEncodedObject(obj)
		g.Expect(err).NotTo(HaveOccurred())
		written[key], blobs[p] = h, h
	}
	base, err := parent.Tree()
	g.Expect(err).NotTo(HaveOccurred())
	tree := writeTreeWith(g, repo, base, "", blobs)
	sig := object.Signature{Name: "Dev", Email: "dev@testbed.serin.dev", When: time.Now()}
	commit := &object.Commit{Author: sig, Committer: sig, Message: message, TreeHash: tree, ParentHashes: []plumbing.Hash{parent.Hash}}
	obj := repo.Storer.NewEncodedObject()
	g.Expect(commit.Encode(obj)).To(Succeed())
	hash, err := repo.Storer.SetEncodedObject(obj)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(repo.Storer.SetReference(plumbing.NewHashReference("refs/heads/main", hash))).To(Succeed())
	g.Expect(repo.Push(&gogit.PushOptions{Auth: giteaAuth(), RefSpecs: []config.RefSpec{"refs/heads/main:refs/heads/main"}})).To(Succeed())
	return hash.String()
}

// writeTreeWith writes base (at dir) with the blobs under dir set, and
// returns its hash.
func writeTreeWith(g Gomega, repo *gogit.Repository, base *object.Tree, dir string, blobs map[string]plumbing.Hash) plumbing.Hash {
	entries := map[string]object.TreeEntry{}
	if base != nil {
		for _, e := range base.Entries {
			entries[e.Name] = e
		}
	}
	subdirs := map[string]bool{}
	for p, h := range blobs {
		rel, ok := strings.CutPrefix(p, dir)
		if !ok {
			continue
		}
		name, _, nested := strings.Cut(rel, "/")
		if nested {
			subdirs[name] = true
			continue
		}
		entries[name] = object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h}
	}
	for name := range subdirs {
		var sub *object.Tree
		if e, ok := entries[name]; ok && e.Mode == filemode.Dir {
			var err error
			sub, err = repo.TreeObject(e.Hash)
			g.Expect(err).NotTo(HaveOccurred())
		}
		entries[name] = object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: writeTreeWith(g, repo, sub, dir+name+"/", blobs)}
	}
	tree := &object.Tree{}
	for _, name := range slices.SortedFunc(mapKeys(entries), func(a, b string) int {
		// Git orders a directory as if its name ended with a slash.
		ka, kb := a, b
		if entries[a].Mode == filemode.Dir {
			ka += "/"
		}
		if entries[b].Mode == filemode.Dir {
			kb += "/"
		}
		return strings.Compare(ka, kb)
	}) {
		tree.Entries = append(tree.Entries, entries[name])
	}
	obj := repo.Storer.NewEncodedObject()
	g.Expect(tree.Encode(obj)).To(Succeed())
	h, err := repo.Storer.SetEncodedObject(obj)
	g.Expect(err).NotTo(HaveOccurred())
	return h
}

// mapKeys is the keys of m.
func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// agentMemoryLimit is the agent's memory limit in the Helm chart's
// values: what a cluster OOM-kills it at.
func agentMemoryLimit(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("../charts/serin/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "\n  limits:")
	if !ok {
		t.Fatal("no resources.limits in charts/serin/values.yaml")
	}
	_, after, ok = strings.Cut(after, "memory:")
	if !ok {
		t.Fatal("no memory limit in charts/serin/values.yaml")
	}
	value := strings.Trim(strings.TrimSpace(strings.SplitN(after, "\n", 2)[0]), `"`)
	units := map[string]int64{"Gi": 1 << 30, "Mi": 1 << 20}
	for suffix, unit := range units {
		if n, ok := strings.CutSuffix(value, suffix); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return v * unit
		}
	}
	t.Fatalf("memory limit %q: not in Mi or Gi", value)
	return 0
}

// peakRSS is a process's peak resident set size (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	rss, err := testutil.PeakRSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	return rss
}

// processAlive reports whether pid is a running process (not a zombie).
func processAlive(pid int) bool {
	b, err := os.ReadFile(path.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// joinSeconds is durations as seconds, comma-separated.
func joinSeconds(ds []time.Duration) string {
	var out []string
	for _, d := range ds {
		out = append(out, fmt.Sprintf("%.1f", d.Seconds()))
	}
	return strings.Join(out, ",")
}

// firstLines is at most n lines of s.
func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
