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
	"net/url"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// A verdict that cannot be posted is not lost: production's Git host is
// cut for 30 s as production promotes, and production's agent (the second
// cluster's) is SIGKILLed once its Canary said Succeeded; its verdict,
// kept in status.commitStatus, reaches Gitea when both are back, under its
// cluster's context, and staging shows production Succeeded.
func TestWaves_VerdictSurvivesAnOutageAndAKill(t *testing.T) {
	alone(t, "kills the second cluster's agent, which other wave tests use")
	g := NewWithT(t)
	ctx := context.Background()
	w := newWaveAcrossClusters(t, g, nil)
	stg, prod := w.staging.ns, w.production.ns
	direct, err := url.Parse(gitea.RepositoryURL("x"))
	g.Expect(err).NotTo(HaveOccurred())
	proxy := startGitHostProxy(t, direct.Host)
	own := w.production.cluster().agent
	running := true
	// The second cluster's agent serves the tests after this one.
	t.Cleanup(func() {
		if !running {
			_ = own.Start(ctx)
		}
	})

	// Production's verdicts go to Gitea through the proxy; nothing to
	// roll out.
	w.providerURL = proxy.via(gitea.RepositoryURL(stg))
	handover := w.release(g, waveRelease{staging: "v1", production: "v1"}, "Production posts its verdicts through the proxy")
	w.production.sync(g, handover)

	v2 := w.release(g, waveRelease{staging: "v2", production: "v1"}, "Release podinfo v2 to staging")
	w.waitForPhase(g, stg, v1alpha1.PhaseSucceeded, 90*time.Second)
	w.stage(g, v2, v1alpha1.WaveOpened, 60*time.Second)
	m2 := w.merge(g, w.promotionPR(g, v2))

	// The Git host goes away as production reaches its last step.
	g.Eventually(func() int { return w.canary(g, prod).Status.CanaryWeight }, 90*time.Second, 20*time.Millisecond).Should(BeNumerically(">=", 50))
	proxy.down()
	outage := time.Now()
	w.waitForPhase(g, prod, v1alpha1.PhaseSucceeded, 90*time.Second)
	owed := w.canary(g, prod).Status.CommitStatus
	g.Expect(owed).NotTo(BeNil())
	g.Expect(owed.Phase).To(Equal(v1alpha1.PhaseSucceeded))
	g.Expect(owed.Revision).To(Equal("main@sha1:" + m2))
	g.Expect(owed.Providers).To(ConsistOf(prod+"/commit-status"), "not delivered while the host is down: %+v", owed)
	g.Expect(own.Kill()).To(Succeed())
	running = false
	killed := time.Now()
	time.Sleep(time.Until(outage.Add(30 * time.Second)))
	proxy.up()
	g.Expect(own.Start(ctx)).To(Succeed())
	running = true
	back := time.Now()

	done := w.stage(g, v2, v1alpha1.WaveSucceeded, 2*time.Minute)
	shown := time.Now()
	g.Expect(done.StageCommit).To(Equal(m2))
	g.Eventually(func(g Gomega) {
		g.Expect(w.canary(g, prod).Status.CommitStatus.Providers).To(BeEmpty())
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	var statuses []struct {
		Context string `json:"context"`
		Status  string `json:"status"`
	}
	g.Expect(gitea.API(ctx, "GET", fmt.Sprintf("/repos/%s/%s/commits/%s/statuses", gitea.User, w.staging.name, m2), nil, &statuses)).To(Succeed())
	var contexts []string
	for _, s := range statuses {
		contexts = append(contexts, s.Context+"="+s.Status)
	}
	g.Expect(contexts).To(ContainElement("serin/"+productionClusterName+"/"+prod+"/podinfo=success"), "the verdict carries production's cluster")
	t.Logf("wave=verdict_outage outage=%s agent_down=%s verdict_in_staging_after_host_back=%s",
		back.Sub(outage).Round(time.Second), back.Sub(killed).Round(time.Second), shown.Sub(back).Round(100*time.Millisecond))
}
