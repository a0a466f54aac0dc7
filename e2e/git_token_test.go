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
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// credentialRecorder is a Git host a tenant controls: it passes every
// request on to Gitea and records the credentials it was given.
type credentialRecorder struct {
	*httptest.Server
	mu     sync.Mutex
	tokens map[string]int
	api    int
	// prefix, when set, is a path segment the host takes away before
	// passing a request on: a token in the repository's path, which comes
	// first in a Git request (/TOKEN/owner/name.git/info/refs) and before
	// the owner in an API request (/api/v1/repos/TOKEN/owner/name), where
	// serin takes what the URL's path holds for the repository's owner.
	prefix string
	// refuseGit, while true, answers 503 to every Git request.
	refuseGit atomic.Bool
	// refusedGit counts the Git requests refused.
	refusedGit atomic.Int32
}

func startCredentialRecorder(t *testing.T, target string) *credentialRecorder {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	r := &credentialRecorder{tokens: map[string]int{}}
	proxy := httputil.NewSingleHostReverseProxy(u)
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.record(req)
		if r.prefix != "" {
			req.URL.Path = strings.Replace(req.URL.Path, "/"+r.prefix+"/", "/", 1)
			req.URL.RawPath = ""
		}
		if !strings.HasPrefix(req.URL.Path, "/api/") && r.refuseGit.Load() {
			r.refusedGit.Add(1)
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *credentialRecorder) record(req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if strings.HasPrefix(req.URL.Path, "/api/") {
		r.api++
	}
	auth := req.Header.Get("Authorization")
	scheme, value, _ := strings.Cut(auth, " ")
	switch strings.ToLower(scheme) {
	case "basic":
		if raw, err := base64.StdEncoding.DecodeString(value); err == nil {
			_, password, _ := strings.Cut(string(raw), ":")
			r.tokens[password]++
		}
	case "token", "bearer":
		r.tokens[value]++
	}
	if v := req.Header.Get("Private-Token"); v != "" {
		r.tokens[v]++
	}
}

func (r *credentialRecorder) seen() (map[string]int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for k, v := range r.tokens {
		out[k] = v
	}
	return out, r.api
}

// shardedApp is podinfoApp (mode PullRequest, reverted when Halted) at
// tag, for the agent of shard, its pod template's metadata templateMeta.
func shardedApp(ns, shard, tag, templateMeta string) map[string]string {
	files := podinfoApp(ns, tag, v1alpha1.PullRequestRevert)
	files["apps/podinfo/canary.yaml"] = strings.Replace(files["apps/podinfo/canary.yaml"], "metadata:\n  name: podinfo\n",
		"metadata:\n  name: podinfo\n  labels:\n    "+shardLabel+": "+shard+"\n", 1)
	files["apps/podinfo/deployment.yaml"] = podinfoDeployment(templateMeta)
	return files
}

// neverReady is the pod template metadata of a revision whose primary
// never becomes ready: its promotion halts.
const neverReady = "\n      annotations:\n        " + testbed.NeverReadyAsPrimaryAnnotation + `: "true"`

// platformToken is the agent's --git-provider-token-file: the platform's
// write token, for the hosts it lists only.
const platformToken = "platform-write-token-must-stay-home"

// A tenant points its GitRepository at a host it controls (here one that
// passes everything on to the platform's Gitea, recording credentials)
// and fails its own canary: serin reverts through it with the
// GitRepository's own secret, and the platform's token, given to the
// agent for Gitea's host only (--git-provider-hosts=http://HOST: the
// testbed's Gitea speaks plain HTTP, which the platform must list
// explicitly), never reaches it.
func TestGitTrust_PlatformTokenStaysOnListedHosts(t *testing.T) {
	shared(t)
	giteaURL, err := url.Parse(gitea.URL)
	if err != nil {
		t.Fatal(err)
	}
	platformTokenNeverReachesTenant(t, "tokens", func(*credentialRecorder) string { return "http://" + giteaURL.Host })
}

// The platform lists a host without a scheme: its token goes there over
// TLS only. A tenant's GitRepository names that very host over plain HTTP
// (here the recording host, listed as host:port): serin reverts through
// it with the GitRepository's own secret, and the platform's token never
// travels in clear text.
func TestGitTrust_PlatformTokenNeverOverPlainHTTP(t *testing.T) {
	shared(t)
	platformTokenNeverReachesTenant(t, "plainhttp", func(r *credentialRecorder) string {
		u, err := url.Parse(r.URL)
		if err != nil {
			t.Fatal(err)
		}
		return u.Host
	})
}

// platformTokenNeverReachesTenant runs an agent of shard whose platform
// token is listed for the hosts listed(recorder) and a tenant whose
// GitRepository goes through the recording host, fails the tenant's
// canary and checks that its revert was opened through that host with the
// tenant's own secret, never the platform's token.
func platformTokenNeverReachesTenant(t *testing.T, shard string, listed func(*credentialRecorder) string) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	recorder := startCredentialRecorder(t, gitea.URL)
	tokenFile := filepath.Join(t.TempDir(), "token")
	g.Expect(os.WriteFile(tokenFile, []byte(platformToken+"\n"), 0o600)).To(Succeed())
	own, err := env.StartAgentWith(ctx, "..", testbed.AgentOptions{
		Name: "serin-agent-" + shard,
		Flags: append([]string{"--metrics-server=" + prom.URL, "--data-plane=traefik", "--log-level=info",
			"--watch-label-selector=" + shardLabel + "=" + shard,
			"--git-provider-token-file=" + tokenFile, "--git-provider-hosts=" + listed(recorder)}, gitopsFlags...),
	})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = own.Kill() })

	app := func(tag, templateMeta string) map[string]string { return shardedApp(ns, shard, tag, templateMeta) }
	tenantURL := strings.Replace(gitea.RepositoryURL(ns), gitea.URL, recorder.URL, 1)
	f := newFleetWith(t, g, ns, app("v1", ""), map[string]any{"url": tenantURL})
	first, err := f.repo.Reference("refs/heads/main", true)
	g.Expect(err).NotTo(HaveOccurred())
	f.sync(g, first.Hash().String())
	canary := &v1alpha1.Canary{}
	canary.Namespace, canary.Name = ns, "podinfo"
	waitForPhase(g, canary, v1alpha1.PhaseInitialized, 60*time.Second)
	good := f.push(app("v2", ""), "Release podinfo v2")
	f.sync(g, good)
	waitForPhase(g, canary, v1alpha1.PhaseSucceeded, 90*time.Second)
	bad := f.push(app("v3", neverReady), "Release podinfo v3")
	f.sync(g, bad)
	waitForPhase(g, canary, v1alpha1.PhaseHalted, 90*time.Second)

	// The revert is opened, through the tenant's host, with the tenant's
	// own credentials.
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)).To(Succeed())
		g.Expect(canary.Status.Revert).NotTo(BeNil())
		g.Expect(canary.Status.Revert.State).To(Equal(gitops.StateOpened), "revert: %+v", canary.Status.Revert)
	}, 90*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(canary.Status.Revert.PullRequestURL).NotTo(BeEmpty())
	tokens, api := recorder.seen()
	g.Expect(api).To(BeNumerically(">", 0), "the pull request API went through the tenant's host")
	g.Expect(tokens).To(HaveKey(gitea.Token), "the GitRepository's own secret authenticated there")
	g.Expect(tokens).NotTo(HaveKey(platformToken), "the platform's token never reached the tenant's host")
	t.Logf("tenant_host_api_requests=%d platform_token_seen=%d", api, tokens[platformToken])
}
