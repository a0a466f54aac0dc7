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
	"regexp"
	"strings"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/e2e/demo/scenario"
)

// `make demo`'s scenario, played on this package's testbed (the agent of
// TestMain reverts to Gitea and sends its events to notification-controller)
// in a namespace and Gitea repository of its own: v2 promoted, v3 rolled
// back, v4 halted with a revert pull request, the revert merged and the
// primary restored. The screen must show each end in the rows of the live
// `serin get canaries --watch`, the notifications the sink received, and
// the pull request.
func TestDemo_Acts(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ns := newNamespace(t)
	// Act 6 creates production's namespace next to the app's.
	t.Cleanup(func() {
		_ = k8s.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns + "-production"}})
	})
	var out lockedBuffer
	report, err := scenario.Play(context.Background(), scenario.Env{
		Config: env.Config, Kubeconfig: env.Kubeconfig,
		Gitea: gitea, GatewayURL: gateway.URL,
		Namespace: ns, Repository: ns, Screen: scenario.NewScreen(&out),
	})
	if report != nil {
		report.Print(&out)
	}
	t.Logf("the demo's screen:\n%s", out.String())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(report.OK()).To(BeTrue(), "every act must end as expected")

	var ended []v1alpha1.CanaryPhase
	for _, a := range report.Acts {
		ended = append(ended, a.Got)
		g.Expect(a.Messages).To(BeNumerically(">", 0), "act %d: no notification reached the sink", a.Number)
	}
	g.Expect(ended).To(Equal([]v1alpha1.CanaryPhase{
		v1alpha1.PhaseSucceeded, v1alpha1.PhaseFailed, v1alpha1.PhaseHalted, v1alpha1.PhaseSucceeded, v1alpha1.PhaseFailed,
		v1alpha1.PhaseSucceeded,
	}))
	screen := out.String()
	g.Expect(report.PullRequestURL).To(Equal(gitea.URL + "/" + gitea.User + "/" + ns + "/pulls/1"))

	// What the users saw, through Traefik: no error but v3's, and of those
	// only what its 20% of the traffic allowed (10% of 20%, plus requests
	// in flight around the rollback).
	for _, a := range report.Acts {
		t.Logf("act %d: users sent %d requests: by version %v, by code %v", a.Number, a.Users.Total, a.Users.ByVersion, a.Users.ByCode)
		g.Expect(a.Users.Total).To(BeNumerically(">", 20), "act %d: the users kept sending", a.Number)
		if a.Number != 2 {
			g.Expect(a.Users.Errors).To(BeZero(), "act %d: a user saw an error", a.Number)
		}
	}
	act2 := report.Acts[1].Users
	g.Expect(act2.Errors).To(BeNumerically(">", 0), "v3 really errs")
	g.Expect(float64(act2.Errors)).To(BeNumerically("<=", 0.03*float64(act2.Total)), "v3's errors are bounded by its weight")
	g.Expect(screen).To(MatchRegexp(`users\s+\d+ req/s · 0 errors · served by v1 \d+% · v2 \d+%`), "the users line shows the canary's share")

	for _, phase := range []string{"Progressing  ", "Succeeded  ", "Failed  ", "Halted  "} {
		g.Expect(screen).To(MatchRegexp(`(?m)^\s+\d\d:\d\d\s+watch\s+podinfo\s+(-|shop)\s+main@sha1:[0-9a-f]{8}\s+`+regexp.QuoteMeta(phase)),
			"the watch shows a %s row", strings.TrimSpace(phase))
	}
	g.Expect(screen).To(MatchRegexp(`watch\s+podinfo\s+-\s+main@sha1:[0-9a-f]{8}\s+Progressing\s+40\s`), "the watch shows the weight steps")
	for _, reason := range []string{"WeightIncreased", "CheckFailed", "RolledBack", "Halted", "RevertOpened", "Succeeded", "ReleaseFailed"} {
		g.Expect(screen).To(MatchRegexp(`sink\s+✉ \w+\s+`+reason+`\s`), "the sink shows a %s notification", reason)
	}
	g.Expect(screen).To(ContainSubstring("serin opened pull request #1"))
	g.Expect(screen).To(ContainSubstring("+    newTag: v2"))
	// Act 6: the wave's pull request sets v6 in production, and its verdict
	// comes back to staging.
	g.Expect(screen).To(ContainSubstring("+    newTag: v6"))
	g.Expect(screen).To(MatchRegexp(`sink\s+✉ \w+\s+StageSucceeded\s`), "the sink shows production's verdict in staging")
}

// lockedBuffer is a bytes.Buffer for concurrent writers: the scenario's
// watch and sink print while its acts run.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
