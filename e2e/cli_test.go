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
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/cli"
)

// runCLI runs the serin CLI in-process against the testbed.
func runCLI(args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	cmd := cli.NewRootCommand()
	cmd.SetArgs(append(args, "--kubeconfig", env.Kubeconfig))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err = cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// slowCanary is a gateway canary whose steps are far apart, so that the
// tests' commands act in the middle of its analysis.
func slowCanary(t *testing.T, g Gomega, ns string) *v1alpha1.Canary {
	return gatewayCanary(t, g, ns, func(c *v1alpha1.Canary) {
		c.Spec.Analysis.Interval = &metav1.Duration{Duration: time.Hour}
	})
}

// `serin get canaries --watch` prints a row per change during a real
// rollout, and `serin get canaries` the end state.
func TestCLI_GetCanariesWatchDuringRollout(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ns := newNamespace(t)
	c := gatewayCanary(t, g, ns)

	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	// The watch ends at its --timeout, which must outlast the rollout
	// (the 60 s waitForPhase allows), beside the other shared tests too.
	go func() {
		out, _, err := runCLI("get", "canaries", "-n", ns, "--watch", "--timeout", "60s")
		done <- result{out, err}
	}()
	time.Sleep(time.Second)
	setImage(g, ns, "podinfo", "podinfo:v2")
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 60*time.Second)

	res := <-done
	g.Expect(res.err).To(HaveOccurred(), "--watch ends at --timeout with an error")
	lines := strings.Split(strings.TrimSpace(res.out), "\n")
	g.Expect(lines[0]).To(MatchRegexp(`^NAME\s+GROUP\s+REVISION\s+PHASE\s+WEIGHT\s+SUSPENDED\s+READY\s+MESSAGE`))
	g.Expect(res.out).To(MatchRegexp(`podinfo\s+.*Progressing\s+20\s+False\s+False`))
	g.Expect(res.out).To(MatchRegexp(`podinfo\s+.*Progressing\s+60\s+False\s+False`))
	g.Expect(res.out).To(MatchRegexp(`podinfo\s+.*Succeeded\s+0\s+False\s+True`))

	out, _, err := runCLI("get", "canaries", "-n", ns)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(MatchRegexp(`podinfo\s+.*Succeeded\s+0\s+False\s+True\s+revision \w+ promoted`))
	out, _, err = runCLI("get", "canary", "podinfo", "-n", ns)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(ContainSubstring("Succeeded"))
	g.Expect(out).To(ContainSubstring("Promoted"))
}

// `serin promote` skips the rest of the analysis.
func TestCLI_PromoteSkipsAnalysis(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ns := newNamespace(t)
	c := slowCanary(t, g, ns)
	setImage(g, ns, "podinfo", "podinfo:v2")
	waitForPhase(g, c, v1alpha1.PhaseProgressing, 30*time.Second)

	_, stderr, err := runCLI("promote", "podinfo", "-n", ns, "--timeout", "30s")
	g.Expect(err).NotTo(HaveOccurred(), stderr)
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 30*time.Second)
	g.Expect(c.Status.LastPromotedSpec).To(Equal(c.Status.LastAppliedSpec))
}

// `serin abort` rolls the revision back now.
func TestCLI_AbortRollsBack(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ns := newNamespace(t)
	c := slowCanary(t, g, ns)
	setImage(g, ns, "podinfo", "podinfo:v2")
	waitForPhase(g, c, v1alpha1.PhaseProgressing, 30*time.Second)

	_, stderr, err := runCLI("abort", "podinfo", "-n", ns, "--timeout", "30s")
	g.Expect(err).NotTo(HaveOccurred(), stderr)
	waitForPhase(g, c, v1alpha1.PhaseFailed, 30*time.Second)
	g.Expect(c.Status.LastPromotedSpec).NotTo(Equal(c.Status.LastAppliedSpec))
	g.Expect(routeWeights(ns, "podinfo")()).To(Equal("100/0"))
}

// `serin retry` re-runs the analysis of a failed revision without a new
// commit: the revision failed because a dependency its smoke test checks
// was down (a rollout webhook answering 503); once that is fixed, the same
// revision is promoted.
func TestCLI_RetryRerunsAFailedRevision(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ns := newNamespace(t)
	smoke := newWebhook(t, http.StatusServiceUnavailable)
	c := gatewayCanary(t, g, ns, func(c *v1alpha1.Canary) {
		c.Spec.Analysis.Webhooks = []v1alpha1.CanaryWebhook{{Name: "smoke", Type: v1alpha1.RolloutHook, URL: smoke.URL}}
	})
	setImage(g, ns, "podinfo", "podinfo:v2")
	waitForPhase(g, c, v1alpha1.PhaseFailed, 60*time.Second)
	failed := c.Status.LastAppliedSpec

	smoke.status.Store(http.StatusOK)
	_, stderr, err := runCLI("retry", "podinfo", "-n", ns, "--timeout", "30s")
	g.Expect(err).NotTo(HaveOccurred(), stderr)
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 60*time.Second)
	g.Expect(c.Status.LastPromotedSpec).To(Equal(failed))
}

// `serin suspend` freezes the canary: a new revision starts no analysis
// until `serin resume`.
func TestCLI_SuspendAndResume(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := gatewayCanary(t, g, ns)

	_, stderr, err := runCLI("suspend", "podinfo", "-n", ns, "--timeout", "30s")
	g.Expect(err).NotTo(HaveOccurred(), stderr)
	setImage(g, ns, "podinfo", "podinfo:v2")
	g.Consistently(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(c.Status.Phase).To(Equal(v1alpha1.PhaseInitialized))
	}, 3*time.Second, 200*time.Millisecond).Should(Succeed())
	out, _, err := runCLI("get", "canaries", "-n", ns)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(MatchRegexp(`podinfo\s+.*Initialized\s+0\s+True`))

	_, stderr, err = runCLI("resume", "podinfo", "-n", ns, "--timeout", "30s")
	g.Expect(err).NotTo(HaveOccurred(), stderr)
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 60*time.Second)
}

// `serin convert` turns real Flagger Canaries into serin Canaries that the
// API server accepts (schema and CEL rules).
func TestCLI_ConvertFlaggerExamples(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ns := newNamespace(t)
	examples, err := filepath.Glob(filepath.Join("..", "internal", "cli", "testdata", "convert", "*[a-z].yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	var inputs []string
	for _, e := range examples {
		if !strings.HasSuffix(e, ".out.yaml") {
			inputs = append(inputs, e)
		}
	}
	g.Expect(len(inputs)).To(BeNumerically(">=", 3))
	for _, in := range inputs {
		out, stderr, err := runCLI("convert", "-f", in, "--allow-lossy")
		g.Expect(err).NotTo(HaveOccurred(), "%s: %s", in, stderr)
		dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(out), 4096)
		created := 0
		for {
			c := &v1alpha1.Canary{}
			if err := dec.Decode(c); err != nil {
				break
			}
			if c.Kind != v1alpha1.CanaryKind {
				continue
			}
			c.Namespace = ns
			g.Expect(k8s.Create(context.Background(), c, client.DryRunAll)).To(Succeed(), "%s: %s", in, c.Name)
			created++
		}
		g.Expect(created).To(BeNumerically(">=", 1), in)
	}
}
