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
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// gitHostProxy forwards TCP connections to the Git host, and can go down:
// while down, nothing listens on its address (a refused connection, as a
// Git host being redeployed gives) and the connections it carried are cut.
type gitHostProxy struct {
	t      testing.TB
	addr   string
	target string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
}

// startGitHostProxy starts a proxy in front of target (host:port).
func startGitHostProxy(t testing.TB, target string) *gitHostProxy {
	t.Helper()
	ln := listenForProxy(t)
	p := &gitHostProxy{t: t, addr: ln.Addr().String(), target: target, conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	t.Cleanup(p.down)
	return p
}

// proxyPorts are the ports the Git host proxies of the running tests
// hold, up or down: no other proxy takes one while its proxy is down.
var proxyPorts struct {
	mu    sync.Mutex
	taken map[int]bool
}

// listenForProxy listens on a loopback port below the kernel's ephemeral
// range, which the testbed's outgoing connections (and the ports tests ask
// the kernel for) never take: while the proxy is down for tens of seconds,
// under the load of the tests running beside it, its port stays free for
// up to listen on again. The port is the test's until it ends.
func listenForProxy(t testing.TB) net.Listener {
	t.Helper()
	hi := ephemeralLow()
	lo := max(1024, hi-10000)
	proxyPorts.mu.Lock()
	defer proxyPorts.mu.Unlock()
	if proxyPorts.taken == nil {
		proxyPorts.taken = map[int]bool{}
	}
	for range 100 {
		if hi-lo < 1000 {
			break // no room below the ephemeral range
		}
		port := lo + rand.IntN(hi-lo)
		if proxyPorts.taken[port] {
			continue
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue // something else listens there
		}
		proxyPorts.taken[port] = true
		t.Cleanup(func() {
			proxyPorts.mu.Lock()
			delete(proxyPorts.taken, port)
			proxyPorts.mu.Unlock()
		})
		return ln
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// ephemeralLow is the lowest port of the kernel's ephemeral range
// (32768, Linux's default, when it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return 32768
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil {
		return 32768
	}
	return low
}

func (p *gitHostProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
}

func (p *gitHostProxy) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[up] = struct{}{}, struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	_ = c.Close()
	_ = up.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// down stops listening and cuts every connection.
func (p *gitHostProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
}

// up listens again on the same address.
func (p *gitHostProxy) up() {
	p.t.Helper()
	var ln net.Listener
	var err error
	for range 50 { // the port is free again once the old listener closed
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		p.t.Fatalf("the Git host proxy cannot listen on %s again: %v", p.addr, err)
	}
	p.serve(ln)
}

// via is url with its host replaced by the proxy's.
func (p *gitHostProxy) via(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		p.t.Fatal(err)
	}
	u.Host = p.addr
	return u.String()
}

// The Git host is unreachable from the agent (and from Flux) for 30 s
// across a halted promotion: the revert fails on a refused connection, is
// recorded Retrying with its attempts and the error, and lands once the
// host is back: exactly one pull request, no Failed state on the way.
// Before #34 the first failure was recorded Failed and never retried.
func TestRevert_GitHostOutageAcrossTheHalt(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	direct, err := url.Parse(gitea.RepositoryURL(ns))
	g.Expect(err).NotTo(HaveOccurred())
	proxy := startGitHostProxy(t, direct.Host)

	// Flux and the agent reach the repository through the proxy; the
	// developer pushes directly.
	f := newFleetWith(t, g, ns, podinfoApp(ns, "v1", v1alpha1.PullRequestRevert),
		map[string]any{"url": proxy.via(gitea.RepositoryURL(ns))})

	canary := &v1alpha1.Canary{ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: ns}}
	first, err := f.repo.Reference("refs/heads/main", true)
	g.Expect(err).NotTo(HaveOccurred())
	f.sync(g, first.Hash().String())
	waitForPhase(g, canary, v1alpha1.PhaseInitialized, 60*time.Second)
	good := f.push(podinfoApp(ns, "v2", v1alpha1.PullRequestRevert), "Release podinfo v2")
	f.sync(g, good)
	waitForPhase(g, canary, v1alpha1.PhaseSucceeded, 90*time.Second)
	bad := f.push(map[string]string{
		"apps/podinfo/kustomization.yaml": podinfoApp(ns, "v3", v1alpha1.PullRequestRevert)["apps/podinfo/kustomization.yaml"],
		"apps/podinfo/deployment.yaml":    podinfoDeployment("\n      annotations:\n        " + testbed.NeverReadyAsPrimaryAnnotation + `: "true"`),
	}, "Release podinfo v3")
	f.sync(g, bad)

	// The Git host goes away before the halt and stays away 30 s.
	proxy.down()
	outage := time.Now()
	waitForPhase(g, canary, v1alpha1.PhaseHalted, 90*time.Second)
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)).To(Succeed())
		g.Expect(canary.Status.Revert).NotTo(BeNil())
		g.Expect(canary.Status.Revert.State).To(Equal(gitops.StateRetrying), "revert: %+v", canary.Status.Revert)
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(canary.Status.Revert.Revision).To(Equal("main@sha1:" + bad))
	g.Expect(canary.Status.Revert.Message).To(ContainSubstring("connection refused"))
	g.Expect(canary.Status.Revert.NextAttemptTime).NotTo(BeNil())
	states := sample(t, func() string {
		c := &v1alpha1.Canary{}
		switch err := k8s.Get(ctx, client.ObjectKeyFromObject(canary), c); {
		case err != nil:
			return "get error"
		case c.Status.Revert == nil:
			return "no revert"
		}
		return c.Status.Revert.State
	})
	time.Sleep(time.Until(outage.Add(30 * time.Second)))
	proxy.up()
	back := time.Now()

	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)).To(Succeed())
		g.Expect(canary.Status.Revert.State).To(Equal(gitops.StateOpened), "revert: %+v", canary.Status.Revert)
	}, 2*time.Minute, 200*time.Millisecond).Should(Succeed())
	opened := time.Now()
	g.Expect(f.pullRequests(g)).To(HaveLen(1), "exactly one pull request")
	g.Expect(f.pullRequests(g)[0].Head.Ref).To(Equal("serin/revert/" + ns + "/podinfo/" + bad[:8]))
	g.Expect(states.seen()).NotTo(ContainElement(gitops.StateFailed), "never Failed on the way")
	t.Logf("outage=%s revert_opened_after_host_back=%s revert_opened_after_outage_start=%s states=%s",
		back.Sub(outage).Round(time.Second), opened.Sub(back).Round(100*time.Millisecond), opened.Sub(outage).Round(100*time.Millisecond),
		strings.Join(states.seen(), ","))
}
