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
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// largeFileMiB is the size of the file of zeros in the repository: four
// times --gitops-max-file-size, a pack of a few hundred KiB.
const largeFileMiB = 64

// A repository holding a large file (zeros: its pack is small, under the
// clone's bound on disk) next to the app, which Flux ignores
// (.sourceignore): the halt's revert is refused as the clone arrives,
// with a message naming the bound, recorded as Failed and never retried,
// and the agent's memory does not grow by the file. Before the clone
// checked object sizes, go-git inflated the file whole while indexing it
// and the revert went on.
func TestRevert_LargeFileIsRefusedBeforeItIsInflated(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	files := podinfoApp(ns, "v1", v1alpha1.PullRequestRevert)
	files[".sourceignore"] = "/assets/\n"
	files["assets/dump.bin"] = string(make([]byte, largeFileMiB<<20))
	f := newFleetWith(t, g, ns, files, nil)

	canary := &v1alpha1.Canary{ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: ns}}
	first, err := f.repo.Reference("refs/heads/main", true)
	g.Expect(err).NotTo(HaveOccurred())
	f.sync(g, first.Hash().String())
	waitForPhase(g, canary, v1alpha1.PhaseInitialized, 60*time.Second)
	good := f.push(podinfoApp(ns, "v2", v1alpha1.PullRequestRevert), "Release podinfo v2")
	f.sync(g, good)
	waitForPhase(g, canary, v1alpha1.PhaseSucceeded, 90*time.Second)

	before, err := residentMiB(agent.PID())
	g.Expect(err).NotTo(HaveOccurred())
	rss := sample(t, func() string {
		mib, err := residentMiB(agent.PID())
		if err != nil {
			return "error"
		}
		return strconv.Itoa(mib)
	})
	bad := f.push(map[string]string{
		"apps/podinfo/kustomization.yaml": podinfoApp(ns, "v3", v1alpha1.PullRequestRevert)["apps/podinfo/kustomization.yaml"],
		"apps/podinfo/deployment.yaml":    podinfoDeployment("\n      annotations:\n        " + testbed.NeverReadyAsPrimaryAnnotation + `: "true"`),
	}, "Release podinfo v3")
	f.sync(g, bad)
	waitForPhase(g, canary, v1alpha1.PhaseHalted, 90*time.Second)
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)).To(Succeed())
		g.Expect(canary.Status.Revert).NotTo(BeNil())
		g.Expect(canary.Status.Revert.State).To(Equal(gitops.StateFailed), "revert: %+v", canary.Status.Revert)
	}, time.Minute, 200*time.Millisecond).Should(Succeed())
	g.Expect(canary.Status.Revert.Message).To(ContainSubstring(
		fmt.Sprintf("holds a Git blob of %d.0 MiB, more than --gitops-max-file-size (16.0 MiB)", largeFileMiB)))
	g.Expect(f.pullRequests(g)).To(BeEmpty())

	// Failed is final: a permanent refusal is not retried.
	g.Consistently(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)).To(Succeed())
		g.Expect(canary.Status.Revert.State).To(Equal(gitops.StateFailed))
		g.Expect(canary.Status.Revert.Attempts).To(BeNumerically("<=", 1))
	}, 5*time.Second, 500*time.Millisecond).Should(Succeed())
	peak := before
	for _, v := range rss.seen() {
		if n, err := strconv.Atoi(v); err == nil {
			peak = max(peak, n)
		}
	}
	t.Logf("file_mib=%d agent_rss_before_mib=%d agent_rss_peak_during_revert_mib=%d message=%q",
		largeFileMiB, before, peak, canary.Status.Revert.Message)
}

// residentMiB is the resident memory of a process, in MiB.
func residentMiB(pid int) (int, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kib, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return kib >> 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}
