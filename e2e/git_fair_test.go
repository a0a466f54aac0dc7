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
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// tarpitHost passes requests on to Gitea until it is switched into a
// tarpit: from then on it accepts every request and answers nothing.
type tarpitHost struct {
	*httptest.Server
	on   atomic.Bool
	held atomic.Int64
	// stop lets every held request go when the test ends: a held
	// request whose body was never read does not see its client hang
	// up, and httptest.Server.Close waits for it.
	stop chan struct{}
}

func startTarpitHost(t *testing.T, target string) *tarpitHost {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	h := &tarpitHost{stop: make(chan struct{})}
	proxy := httputil.NewSingleHostReverseProxy(u)
	h.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if h.on.Load() {
			h.held.Add(1)
			select {
			case <-req.Context().Done():
			case <-h.stop:
			}
			return
		}
		proxy.ServeHTTP(w, req)
	}))
	h.Start()
	t.Cleanup(func() {
		close(h.stop)
		h.CloseClientConnections()
		h.Close()
	})
	return h
}

// A tenant whose Git host turned into a tarpit (it accepts and answers
// nothing) cannot starve another tenant's revert: with one Git slot for
// the whole agent (--gitops-max-concurrent-reverts=1), three of tenant
// A's reverts hang on the tarpit, and tenant B's revert still opens its
// pull request within a minute of B's halt, the slot shared fairly among
// namespaces and a silent host given up after --gitops-connect-timeout.
func TestGitTrust_TarpitTenantStarvesNoRevert(t *testing.T) {
	shared(t)
	const tenantA = 3
	g := NewWithT(t)
	ctx := context.Background()
	own, err := env.StartAgentWith(ctx, "..", testbed.AgentOptions{
		Name: "serin-agent-tarpit",
		Flags: append([]string{"--metrics-server=" + prom.URL, "--data-plane=traefik", "--log-level=info",
			"--watch-label-selector=" + shardLabel + "=tarpit", "--gitops-max-concurrent-reverts=1"}, gitopsFlags...),
	})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = own.Kill() })
	tarpit := startTarpitHost(t, gitea.URL)

	// Each tenant's app, promoted once (v2), with a bad revision (v3)
	// applied: A's through the host that turns into a tarpit.
	type app struct {
		ns     string
		f      *fleet
		canary *v1alpha1.Canary
	}
	setup := func(viaTarpit bool) app {
		ns := newNamespace(t)
		var source map[string]any
		if viaTarpit {
			source = map[string]any{"url": strings.Replace(gitea.RepositoryURL(ns), gitea.URL, tarpit.URL, 1)}
		}
		f := newFleetWith(t, g, ns, shardedApp(ns, "tarpit", "v1", ""), source)
		first, err := f.repo.Reference("refs/heads/main", true)
		g.Expect(err).NotTo(HaveOccurred())
		f.sync(g, first.Hash().String())
		c := &v1alpha1.Canary{}
		c.Namespace, c.Name = ns, "podinfo"
		waitForPhase(g, c, v1alpha1.PhaseInitialized, 60*time.Second)
		good := f.push(shardedApp(ns, "tarpit", "v2", ""), "Release podinfo v2")
		f.sync(g, good)
		waitForPhase(g, c, v1alpha1.PhaseSucceeded, 90*time.Second)
		return app{ns: ns, f: f, canary: c}
	}
	var as []app
	for range tenantA {
		as = append(as, setup(true))
	}
	b := setup(false)
	for _, a := range as {
		a.f.sync(g, a.f.push(shardedApp(a.ns, "tarpit", "v3", neverReady), "Release podinfo v3"))
	}
	tarpit.on.Store(true)
	for _, a := range as {
		waitForPhase(g, a.canary, v1alpha1.PhaseHalted, 90*time.Second)
	}
	g.Eventually(tarpit.held.Load, 60*time.Second, 100*time.Millisecond).Should(BeNumerically(">=", 1), "A's reverts reached the tarpit")

	b.f.sync(g, b.f.push(shardedApp(b.ns, "tarpit", "v3", neverReady), "Release podinfo v3"))
	waitForPhase(g, b.canary, v1alpha1.PhaseHalted, 90*time.Second)
	halted := time.Now()
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b.canary), b.canary)).To(Succeed())
		g.Expect(b.canary.Status.Revert).NotTo(BeNil())
		g.Expect(b.canary.Status.Revert.State).To(Equal(gitops.StateOpened), "revert: %+v", b.canary.Status.Revert)
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed(), "B's revert within a minute of its halt")
	opened := time.Since(halted)
	g.Expect(b.f.pullRequests(g)).To(HaveLen(1))
	g.Expect(own.Kill()).To(Succeed(), "the agent kept running")
	t.Logf("tarpit_tenant_reverts=%d tarpit_requests_held=%d git_slots=1 other_tenant_revert_seconds=%.1f",
		tenantA, tarpit.held.Load(), opened.Seconds())
}
