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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/internal/workload"
)

// Sharding as Flux shards its controllers: two agents, each started with
// --watch-label-selector=sharding.fluxcd.io/key=<its shard>, and Canaries
// labelled with one shard each. Every Canary is driven by its shard's agent
// and by no other (the test's main agent watches the Canaries without the
// label): the agents' /metrics carry series of their own Canaries only,
// their logs name no other shard's Canary, and every rollout ends
// Succeeded with each step taken once (its analysis record).
func TestSharding_EachCanaryDrivenByOneShard(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	shards := []string{"shard-a", "shard-b"}
	agents := map[string]*testbed.Agent{}
	for _, shard := range shards {
		a, err := env.StartAgentWith(ctx, "..", testbed.AgentOptions{
			Name: "serin-agent-" + shard,
			Flags: []string{"--metrics-server=" + prom.URL, "--data-plane=traefik", "--log-level=debug",
				"--watch-label-selector=" + shardLabel + "=" + shard, "--gitops-revert=false"},
		})
		g.Expect(err).NotTo(HaveOccurred())
		t.Cleanup(func() { _ = a.Kill() })
		agents[shard] = a
	}

	// Two Canaries a shard, each in a namespace of its own.
	type placed struct {
		shard  string
		canary *v1alpha1.Canary
	}
	var canaries []placed
	for i := range 4 {
		shard := shards[i%2]
		ns := newNamespace(t)
		c := gatewayCanary(t, g, ns, func(c *v1alpha1.Canary) {
			c.Labels = map[string]string{shardLabel: shard}
		})
		canaries = append(canaries, placed{shard, c})
	}
	var wg sync.WaitGroup
	for _, p := range canaries {
		wg.Go(func() {
			g := NewWithT(t)
			setImage(g, p.canary.Namespace, "podinfo", "podinfo:v2")
			waitForPhase(g, p.canary, v1alpha1.PhaseSucceeded, 90*time.Second)
		})
	}
	wg.Wait()

	for _, p := range canaries {
		var weights []int
		for _, s := range p.canary.Status.Analyses[0].Steps {
			weights = append(weights, s.Weight)
		}
		g.Expect(weights).To(Equal([]int{0, 20, 40, 60}), "the steps of %s/%s, each once", p.canary.Namespace, p.canary.Name)
	}

	series := func(c *v1alpha1.Canary) string {
		return fmt.Sprintf(`serin_canary_status{name="%s",namespace="%s"}`, c.Name, c.Namespace)
	}
	main, err := scrape(agent.MetricsURL)
	g.Expect(err).NotTo(HaveOccurred())
	for shard, a := range agents {
		metrics, err := scrape(a.MetricsURL)
		g.Expect(err).NotTo(HaveOccurred())
		log, err := a.Log()
		g.Expect(err).NotTo(HaveOccurred())
		for _, p := range canaries {
			mine := p.shard == shard
			g.Expect(metrics).To(WithTransform(func(m metricsText) bool { _, ok := m[series(p.canary)]; return ok }, Equal(mine)),
				"%s has a series of %s/%s of %s", shard, p.canary.Namespace, p.canary.Name, p.shard)
			g.Expect(strings.Contains(log, p.canary.Namespace)).To(Equal(mine),
				"%s's log names %s (of %s)", shard, p.canary.Namespace, p.shard)
		}
		t.Logf("%s: %v reconciles", shard, metrics.sumLabel("controller_runtime_reconcile_total", `controller="canary"`))
	}
	for _, p := range canaries {
		_, ok := main[series(p.canary)]
		g.Expect(ok).To(BeFalse(), "the unsharded agent drove %s/%s", p.canary.Namespace, p.canary.Name)
	}

	// Each shard caches its own Canaries' objects, and nothing else of
	// the cluster: the Deployments and Services carrying its watch label,
	// all in its Canaries' namespaces, and the informers hold exactly them.
	for shard, a := range agents {
		label := workload.WatchLabel(shardLabel + "=" + shard)
		mine := map[string]bool{}
		for _, p := range canaries {
			if p.shard == shard {
				mine[p.canary.Namespace] = true
			}
		}
		metrics, err := scrape(a.MetricsURL)
		g.Expect(err).NotTo(HaveOccurred())
		for _, kind := range []struct {
			name     string
			labelled client.ObjectList
			all      client.ObjectList
			atLeast  int
		}{
			// A target and a primary a Canary.
			{"Deployment", &appsv1.DeploymentList{}, &appsv1.DeploymentList{}, 2 * len(mine)},
			// The apex, primary and canary Services a Canary.
			{"Service", &corev1.ServiceList{}, &corev1.ServiceList{}, 3 * len(mine)},
		} {
			g.Expect(k8s.List(ctx, kind.labelled, client.HasLabels{label})).To(Succeed())
			g.Expect(k8s.List(ctx, kind.all)).To(Succeed())
			items, err := apimeta.ExtractList(kind.labelled)
			g.Expect(err).NotTo(HaveOccurred())
			all, err := apimeta.ExtractList(kind.all)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(len(items)).To(BeNumerically(">=", kind.atLeast), "%ss labelled %s", kind.name, label)
			for _, item := range items {
				o := item.(client.Object)
				g.Expect(mine).To(HaveKey(o.GetNamespace()), "%s %s/%s carries %s", kind.name, o.GetNamespace(), o.GetName(), label)
			}
			cached := metrics[`serin_cache_objects{kind="`+kind.name+`"}`]
			g.Expect(cached).To(BeEquivalentTo(len(items)), "%s's cache of %ss", shard, kind.name)
			g.Expect(len(all)).To(BeNumerically(">", len(items)), "the cluster holds more %ss than %s's", kind.name, shard)
			t.Logf("%s caches %v of the cluster's %d %ss", shard, cached, len(all), kind.name)
		}
	}
}

// A shard boundary neither hides a member of a group nor lets two Canaries
// claim one target. A group of shard-a whose member web carries shard-b's
// label is Stalled, naming the label to fix, and api (shard-a) starts no
// rollout: before, shard-a took web for a typo and released api alone.
// Two Canaries of one Deployment, in two shards: the later one is Stalled
// with TargetClaimed before its first write, as within one shard; before,
// both drove the Deployment.
//
// Its shards are not TestSharding_EachCanaryDrivenByOneShard's: a label
// selector spans the cluster, so the two tests, which run at once, would
// drive each other's Canaries.
func TestSharding_GroupsAndClaimsAcrossShards(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	const shardA, shardB = "cross-a", "cross-b"
	for _, shard := range []string{shardA, shardB} {
		a, err := env.StartAgentWith(ctx, "..", testbed.AgentOptions{
			Name: "serin-agent-" + shard,
			Flags: []string{"--metrics-server=" + prom.URL, "--data-plane=traefik",
				"--watch-label-selector=" + shardLabel + "=" + shard, "--gitops-revert=false"},
		})
		g.Expect(err).NotTo(HaveOccurred())
		t.Cleanup(func() { _ = a.Kill() })
	}
	inShard := func(shard string) func(*v1alpha1.Canary) {
		return func(c *v1alpha1.Canary) { c.Labels = map[string]string{shardLabel: shard} }
	}

	// A group across shards.
	ns := newNamespace(t)
	for app, shard := range map[string]string{"api": shardA, "web": shardB} {
		g.Expect(k8s.Create(ctx, testobj.MakeDeployment(app, ns).Replicas(1).Image(app+":v1").Obj())).To(Succeed())
		c := testobj.MakeCanary(app, ns).Analysis(v1alpha1.CanaryAnalysis{Interval: &metav1.Duration{Duration: time.Second}, Iterations: 3}).Obj()
		inShard(shard)(c)
		g.Expect(k8s.Create(ctx, c)).To(Succeed())
	}
	group := &v1alpha1.CanaryGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop", Labels: map[string]string{shardLabel: shardA}},
		Spec: v1alpha1.CanaryGroupSpec{Members: []v1alpha1.GroupMember{{Name: "api"}, {Name: "web"}}}}
	g.Expect(k8s.Create(ctx, group)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(group), group)).To(Succeed())
		g.Expect(conditions.IsStalled(group)).To(BeTrue())
		g.Expect(conditions.GetMessage(group, meta.StalledCondition)).To(ContainSubstring(
			"member web is in another shard (Canary " + ns + "/web has " + shardLabel + "=" + shardB + ", where this agent's --watch-label-selector is " + shardLabel + "=" + shardA + ")"))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	t.Logf("the group: %s", conditions.GetMessage(group, meta.StalledCondition))
	api := &v1alpha1.Canary{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"}}
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(api), api)).To(Succeed())
		g.Expect(conditions.GetReason(api, meta.ReadyCondition)).To(Equal(v1alpha1.InvalidGroupReason))
		g.Expect(conditions.GetMessage(api, meta.ReadyCondition)).To(ContainSubstring("member web is in another shard"))
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	setImage(g, ns, "api", "api:v2")
	g.Consistently(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(api), api)).To(Succeed())
		g.Expect(api.Status.Phase).NotTo(Equal(v1alpha1.PhaseProgressing), "api released alone")
	}, 5*time.Second, 200*time.Millisecond).Should(Succeed())

	// One target, two shards.
	ns = newNamespace(t)
	first := gatewayCanary(t, g, ns, inShard(shardA))
	second := testobj.MakeCanary("podinfo-b", ns).Target("apps/v1", v1alpha1.DeploymentKind, "podinfo").Obj()
	inShard(shardB)(second)
	g.Expect(k8s.Create(ctx, second)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(second), second)).To(Succeed())
		g.Expect(conditions.GetReason(second, meta.ReadyCondition)).To(Equal(v1alpha1.TargetClaimedReason))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	t.Logf("the second Canary: %s", conditions.GetMessage(second, meta.ReadyCondition))
	g.Expect(second.Status.Phase).To(BeEmpty(), "the second Canary wrote nothing")
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(first), first)).To(Succeed())
	g.Expect(conditions.IsReady(first)).To(BeTrue(), "the first Canary keeps its target")
}
