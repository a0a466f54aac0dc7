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
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// shardLabel keeps the chaos test's Canaries away from the shared agent
// (main_test.go runs it with --watch-label-selector=!shardLabel), as Flux
// shards its controllers.
const shardLabel = "sharding.fluxcd.io/key"

// chaosAgents are two replicas of the agent with leader election, handling
// the Canaries labelled shardLabel=chaos: the chaos test kills them.
func chaosAgents(t *testing.T, g Gomega) []*testbed.Agent {
	t.Helper()
	ctx := context.Background()
	const leaseNamespace = "serin-chaos"
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: leaseNamespace}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	var agents []*testbed.Agent
	for i := range 2 {
		a, err := env.StartAgentWith(ctx, "..", testbed.AgentOptions{
			Name: fmt.Sprintf("serin-agent-chaos-%d", i),
			Env:  []string{"RUNTIME_NAMESPACE=" + leaseNamespace},
			Flags: append([]string{"--metrics-server=" + prom.URL, "--data-plane=traefik", "--log-level=info",
				"--watch-label-selector=" + shardLabel + "=chaos", "--enable-leader-election",
				// The lease a SIGKILLed leader cannot release expires in 10 s.
				"--leader-election-lease-duration=10s", "--leader-election-renew-deadline=8s", "--leader-election-retry-period=1s"},
				gitopsFlags...),
		})
		g.Expect(err).NotTo(HaveOccurred())
		agents = append(agents, a)
	}
	t.Cleanup(func() {
		// The Canaries go first, while a replica can still remove their
		// finalizer: else their namespaces stay Terminating for the rest
		// of the suite, and the namespace controller lists every kind in
		// them every few seconds.
		deleteShardCanaries(t, "chaos")
		for _, a := range agents {
			_ = a.Kill()
		}
	})
	return agents
}

// deleteShardCanaries deletes the Canaries of one shard and waits, up to a
// minute, until their agent has finalized them all.
func deleteShardCanaries(t *testing.T, shard string) {
	t.Helper()
	ctx := context.Background()
	sel := client.MatchingLabels{shardLabel: shard}
	var all v1alpha1.CanaryList
	if err := k8s.List(ctx, &all, sel); err != nil {
		t.Logf("list the Canaries of shard %s: %v", shard, err)
		return
	}
	for i := range all.Items {
		_ = k8s.Delete(ctx, &all.Items[i]) // one already gone is fine
	}
	left := -1
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		var list v1alpha1.CanaryList
		if err := k8s.List(ctx, &list, sel); err == nil {
			if left = len(list.Items); left == 0 {
				return
			}
		}
	}
	t.Errorf("%d Canaries of shard %s still not finalized a minute after their deletion", left, shard)
}

// rolloutKind is what a chaos rollout releases.
type rolloutKind int

const (
	goodRevision    rolloutKind = iota // promoted: Succeeded
	failingChecks                      // answers 5xx: rolled back, Failed
	brokenPromotion                    // the primary never gets ready: Halted, then reverted in Git: Succeeded
	rolloutKinds
	gitRevision // through Git and Flux: a bad revision reverted by serin's pull request, or a good one
)

func (k rolloutKind) String() string {
	return [...]string{"good", "failing-checks", "broken-promotion+revert", "", "git"}[k]
}

// chaosGitRound releases round's revision of a Git lane: bad ones on even
// rounds, good ones on odd rounds.
func chaosGitRound(l *gitLane, round int) (ended string, stuck bool) {
	g := NewGomega(func(message string, _ ...int) { panic(message) })
	defer func() {
		if r := recover(); r != nil {
			ended, stuck = fmt.Sprint("test error: ", r), true
		}
	}()
	return l.round(g, fmt.Sprintf("v%d", round+2), round%2 == 0), false
}

// 50 rollouts of mixed outcomes in 10 namespaces while the agent (two
// replicas with leader election) is SIGKILLed at random moments and
// restarted. Every rollout must end as its kind says, with no sample of
// traffic to a side without ready endpoints. Then the leader is killed
// once more and the standby's takeover is timed.
func TestChaos_AgentKilledDuringRollouts(t *testing.T) {
	alone(t, "50 rollouts in 10 namespaces while SIGKILLing agents; times the leader failover")
	g := NewWithT(t)
	ctx := context.Background()
	agents := chaosAgents(t, g)

	// 8 lanes on Gateway API weights, 2 lanes whose revisions come from
	// Git through Flux (blue/green), each 5 rollouts in a row.
	const namespaces, gitLanes, rounds = 8, 2, 5
	type lane struct {
		ns  string
		c   *v1alpha1.Canary
		git *gitLane
		inv *invariants
	}
	lanes := make([]lane, namespaces+gitLanes)
	for i := range lanes {
		ns := newNamespace(t)
		if i >= namespaces {
			gl := newGitLane(g, func(files map[string]string) *fleet { return newFleet(t, g, ns, files) }, ns)
			lanes[i] = lane{ns: ns, c: gl.c, git: gl, inv: watchInvariants(t, ns)}
			continue
		}
		c := safetyCanary(t, g, ns, func(c *v1alpha1.Canary) {
			c.Labels = map[string]string{shardLabel: "chaos"}
			c.Spec.ProgressDeadlineSeconds = ptrInt32(10)
		})
		lanes[i] = lane{ns: ns, c: c, inv: watchInvariants(t, ns)}
	}

	// The killer: every 2–6 s, SIGKILL one replica (the leader half the
	// time) and start it again 1 s later.
	var kills atomic.Int32
	stopKiller := make(chan struct{})
	killerDone := make(chan struct{})
	go func() {
		defer close(killerDone)
		for {
			select {
			case <-stopKiller:
				return
			case <-time.After(time.Duration(2000+rand.IntN(4000)) * time.Millisecond):
			}
			a := agents[rand.IntN(len(agents))]
			if err := a.Kill(); err != nil {
				t.Errorf("kill %s: %v", a.Name, err)
				return
			}
			kills.Add(1)
			time.Sleep(time.Second)
			if err := a.Start(ctx); err != nil {
				t.Errorf("restart %s: %v", a.Name, err)
				return
			}
		}
	}()

	type outcome struct {
		lane  int
		round int
		kind  rolloutKind
		ended string // the phase, or why it is stuck
		why   string
		took  time.Duration
	}
	var mu sync.Mutex
	var outcomes []outcome
	var wg sync.WaitGroup
	started := time.Now()
	for i := range lanes {
		wg.Go(func() {
			l := lanes[i]
			if l.git != nil {
				for round := range rounds {
					begun := time.Now()
					ended, stuck := chaosGitRound(l.git, round)
					mu.Lock()
					outcomes = append(outcomes, outcome{lane: i, round: round, kind: gitRevision, ended: ended, took: time.Since(begun)})
					mu.Unlock()
					if stuck {
						return
					}
				}
				return
			}
			good := "podinfo:v1"
			for round := range rounds {
				kind := rolloutKind((i + round) % int(rolloutKinds))
				image := fmt.Sprintf("podinfo:r%d", round+2)
				begun := time.Now()
				ended := chaosRollout(l.c, kind, image, good)
				if kind != failingChecks {
					good = image
					if kind == brokenPromotion {
						good = ended.good
					}
				}
				mu.Lock()
				outcomes = append(outcomes, outcome{lane: i, round: round, kind: kind, ended: ended.phase, why: ended.why, took: time.Since(begun)})
				mu.Unlock()
				if ended.stuck {
					return // the lane cannot go on from an unknown state
				}
			}
		})
	}
	wg.Wait()
	close(stopKiller)
	<-killerDone

	stuck, byKind := 0, map[string]int{}
	var durations []time.Duration
	for _, o := range outcomes {
		byKind[o.kind.String()+"→"+o.ended]++
		durations = append(durations, o.took)
		if !strings.HasPrefix(o.ended, "Succeeded") && !strings.HasPrefix(o.ended, "Failed") {
			stuck++
			t.Errorf("lane %d round %d (%s): %s: %s", o.lane, o.round, o.kind, o.ended, o.why)
		}
	}
	violations, samples := 0, 0
	for _, l := range lanes {
		l.inv.Stop()
		l.inv.mu.Lock()
		violations += len(l.inv.violations)
		samples += l.inv.samples
		l.inv.mu.Unlock()
	}
	prs, branches, lost := 0, 0, 0
	for _, l := range lanes {
		if l.git != nil {
			p, b, c := l.git.audit(g)
			prs, branches, lost = prs+p, branches+b, lost+c
		}
	}
	sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
	slowest := slices.SortedFunc(slices.Values(outcomes), func(a, b outcome) int { return int(b.took - a.took) })
	for _, o := range slowest[:min(3, len(slowest))] {
		t.Logf("slow: lane %d round %d (%s) took %s: %s", o.lane, o.round, o.kind, o.took.Round(time.Second), o.ended)
	}
	t.Logf("chaos: %d rollouts in %s, by outcome %v", len(outcomes), time.Since(started).Round(time.Second), byKind)
	fmt.Printf("chaos rollouts=%d agent_kills=%d stuck=%d traffic_samples=%d traffic_violations=%d duplicate_pull_requests=%d duplicate_branches=%d lost_commits=%d rollout_p50_seconds=%.1f rollout_max_seconds=%.1f\n",
		len(outcomes), kills.Load(), stuck, samples, violations, prs, branches, lost, durations[len(durations)/2].Seconds(), durations[len(durations)-1].Seconds())
	g.Expect(outcomes).To(HaveLen(len(lanes)*rounds), "every lane ran every round")
	g.Expect(stuck).To(BeZero())
	g.Expect([]int{prs, branches, lost}).To(Equal([]int{0, 0, 0}), "duplicate pull requests, duplicate branches, lost commits")

	// Leader failover: kill the leader; the standby takes over.
	var leader, standby *testbed.Agent
	g.Eventually(func() bool {
		leader, standby = nil, nil
		for _, a := range agents {
			if isLeader(a) {
				leader = a
			} else {
				standby = a
			}
		}
		return leader != nil && standby != nil
	}, 30*time.Second, 100*time.Millisecond).Should(BeTrue(), "one replica leads, the other stands by")
	killed := time.Now()
	g.Expect(leader.Kill()).To(Succeed())
	g.Eventually(func() bool { return isLeader(standby) }, 60*time.Second, 100*time.Millisecond).Should(BeTrue(), "the standby %s never took over", standby.Name)
	failover := time.Since(killed)
	fmt.Printf("chaos leader_failover_seconds=%.1f lease_duration_seconds=10\n", failover.Seconds())
	g.Expect(failover).To(BeNumerically("<", 15*time.Second), "the standby takes over within 15 s")
	g.Expect(leader.Start(ctx)).To(Succeed())
}

// isLeader reports whether an agent leads, from controller-runtime's
// leader_election_master_status gauge on its metrics endpoint.
func isLeader(a *testbed.Agent) bool {
	resp, err := http.Get(a.MetricsURL)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "leader_election_master_status{") && strings.HasSuffix(line, " 1") {
			return true
		}
	}
	return false
}

// chaosEnd is how a chaos rollout ended.
type chaosEnd struct {
	phase string
	stuck bool
	good  string // the image the primary runs at the end
	why   string // for a stuck rollout: the newest analysis record
}

// whyStuck tells what the newest analysis record says: its message and the
// steps that did not pass, so that a stuck rollout can be read from the
// test's output alone.
func whyStuck(c *v1alpha1.Canary) string {
	if len(c.Status.Analyses) == 0 {
		return "no analysis record"
	}
	r := c.Status.Analyses[0]
	var b strings.Builder
	fmt.Fprintf(&b, "record of %s: %s %q", r.Spec, r.Result, r.Message)
	for _, s := range r.Steps {
		if s.Verdict == "Passed" {
			continue
		}
		fmt.Fprintf(&b, "; step at %s weight %d %s %q", s.At.Format("15:04:05.000"), s.Weight, s.Verdict, s.Message)
		for _, ch := range s.Checks {
			fmt.Fprintf(&b, " [%s=%q %s %q]", ch.Name, ch.Value, ch.Verdict, ch.Message)
		}
	}
	return b.String()
}

// chaosRollout releases one revision of kind and waits for its end: a
// minute and a half at most, whatever the agent's restarts.
func chaosRollout(c *v1alpha1.Canary, kind rolloutKind, image, good string) chaosEnd {
	g := NewGomega(func(message string, _ ...int) { panic(message) })
	const deadline = 240 * time.Second
	get := func() *v1alpha1.Canary {
		cur := &v1alpha1.Canary{}
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(c), cur); err != nil {
			return nil
		}
		return cur
	}
	// release rolls a revision and waits until the agent took it on.
	release := func(roll func()) {
		before := get()
		roll()
		end := time.Now().Add(deadline)
		for time.Now().Before(end) {
			if cur := get(); cur != nil && before != nil && cur.Status.LastAppliedSpec != before.Status.LastAppliedSpec {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	wait := func(phases ...v1alpha1.CanaryPhase) (v1alpha1.CanaryPhase, bool) {
		end := time.Now().Add(deadline)
		for time.Now().Before(end) {
			if cur := get(); cur != nil {
				for _, p := range phases {
					if cur.Status.Phase == p {
						return p, true
					}
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
		return "", false
	}
	run := func() (end chaosEnd) {
		defer func() {
			if r := recover(); r != nil {
				end = chaosEnd{phase: fmt.Sprint("test error: ", r), stuck: true}
			}
		}()
		switch kind {
		case goodRevision:
			release(func() { releaseRevision(g, c.Namespace, "podinfo", image, map[string]string{}) })
			if p, ok := wait(v1alpha1.PhaseSucceeded); ok {
				return chaosEnd{phase: string(p), good: image}
			}
		case failingChecks:
			release(func() { releaseRevision(g, c.Namespace, "podinfo", image, erroring(100)) })
			if p, ok := wait(v1alpha1.PhaseFailed); ok {
				// Git goes back to the good revision: accepted, no analysis.
				release(func() { releaseRevision(g, c.Namespace, "podinfo", good, map[string]string{}) })
				return chaosEnd{phase: string(p), good: good}
			}
		case brokenPromotion:
			release(func() { g.Expect(rollBrokenPrimary(context.Background(), c.Namespace, "podinfo", image)).To(Succeed()) })
			if _, ok := wait(v1alpha1.PhaseHalted); ok {
				// The revert merged: the target is back on the good spec.
				fixTemplate(g, c.Namespace, good)
				if p, ok := wait(v1alpha1.PhaseSucceeded); ok {
					return chaosEnd{phase: string(p) + " (reverted)", good: good}
				}
			}
		}
		cur := &v1alpha1.Canary{}
		_ = k8s.Get(context.Background(), client.ObjectKeyFromObject(c), cur)
		return chaosEnd{phase: fmt.Sprintf("stuck in %s (weight %d)", cur.Status.Phase, cur.Status.CanaryWeight), stuck: true, why: whyStuck(cur)}
	}
	return run()
}
