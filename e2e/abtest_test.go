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
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// abTest makes a test Canary an A/B test of three iterations: the users
// with the x-canary: insider header, or the canary=always cookie.
func abTest(c *v1alpha1.Canary) {
	a := c.Spec.Analysis
	a.StepWeight, a.MaxWeight, a.Iterations = 0, 0, 3
	a.Match = []v1alpha1.AnalysisMatch{
		{Headers: []v1alpha1.HTTPHeaderMatch{{Name: "x-canary", Value: "insider"}}},
		{Headers: []v1alpha1.HTTPHeaderMatch{{Name: "Cookie", Type: "RegularExpression", Value: `^(.*?;\s*)?(canary=always)(;.*)?$`}}},
	}
}

// abUsers are an A/B test's users: the matched ones (by header, by
// cookie) and everyone else (the Canary's usual users).
type abUsers struct {
	header, cookie, others *testbed.Load
}

func startABUsers(t *testing.T, ns string) abUsers {
	return abUsers{
		header: startUsersWith(t, appHost(ns), http.Header{"X-Canary": {"insider"}}),
		cookie: startUsersWith(t, appHost(ns), http.Header{"Cookie": {"session=42; canary=always; theme=dark"}}),
		others: usersIn(ns),
	}
}

// phaseClock records when a Canary first reached each phase.
type phaseClock struct {
	mu   sync.Mutex
	seen map[v1alpha1.CanaryPhase]time.Time
}

func watchPhases(t *testing.T, c *v1alpha1.Canary) *phaseClock {
	pc := &phaseClock{seen: map[v1alpha1.CanaryPhase]time.Time{}}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			cur := &v1alpha1.Canary{}
			if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(c), cur); err == nil {
				pc.mu.Lock()
				if _, ok := pc.seen[cur.Status.Phase]; !ok {
					pc.seen[cur.Status.Phase] = time.Now()
				}
				pc.mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
	return pc
}

func (pc *phaseClock) at(p v1alpha1.CanaryPhase) time.Time {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.seen[p]
}

// versions counts the versions that answered in [from, to).
func versions(l *testbed.Load, from, to time.Time) map[string]int {
	return l.Counts(from, to).ByVersion
}

// An A/B test on Traefik: during the analysis every matched user (by
// header or by cookie) is served by the canary, v2, and no other user
// ever is until the promotion starts; then everyone gets v2, and no user
// saw an error.
func TestABTest_MatchedUsersOnlyUntilPromotion(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ns := newNamespace(t)
	c := gatewayCanary(t, g, ns, abTest)
	u := startABUsers(t, ns)
	g.Eventually(func() string { return lastVersion(u.cookie) }, 10*time.Second).Should(Equal("v1"))
	phases := watchPhases(t, c)
	start := time.Now()

	setImage(g, ns, "podinfo", "podinfo:v2")
	// The matched users reach the canary once Traefik applies the A/B rule.
	g.Eventually(func() string { return lastVersion(u.header) }, 60*time.Second, 100*time.Millisecond).Should(Equal("v2"))
	g.Eventually(func() string { return lastVersion(u.cookie) }, 10*time.Second, 100*time.Millisecond).Should(Equal("v2"))
	switched := time.Now()
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 120*time.Second)
	promoting := phases.at(v1alpha1.PhasePromoting)
	g.Expect(promoting).NotTo(BeZero(), "the rollout went through Promoting")
	g.Expect(c.Status.Iterations).To(Equal(3))

	others := versions(u.others, start, promoting)
	t.Logf("until the promotion: others %v, header users %v, cookie users %v (A/B rule in force since %s)",
		others, versions(u.header, switched, promoting), versions(u.cookie, switched, promoting), switched.Sub(start).Round(time.Millisecond))
	g.Expect(others).To(HaveKey("v1"))
	g.Expect(others).NotTo(HaveKey("v2"), "a user outside the A/B test was served by the canary before the promotion")
	g.Expect(versions(u.header, switched, promoting)).To(Equal(map[string]int{"v2": u.header.Counts(switched, promoting).Total}),
		"a matched user went back to the primary during the test")
	g.Expect(versions(u.cookie, switched, promoting)).To(Equal(map[string]int{"v2": u.cookie.Counts(switched, promoting).Total}),
		"a matched user went back to the primary during the test")

	// Promoted: everyone on v2, the route back to one rule's weights.
	g.Eventually(func() string { return lastVersion(u.others) }, 10*time.Second).Should(Equal("v2"))
	g.Expect(routeWeights(ns, "podinfo")()).To(Equal("100/0"))
	for _, l := range []*testbed.Load{u.header, u.cookie, u.others} {
		all := l.Counts(firstAnswer(l), time.Now().Add(-time.Second))
		g.Expect(all.Errors).To(BeZero(), "a user saw an error: %v", all.ByCode)
	}
}

// An A/B test of a revision that errs: only the matched users ever meet
// it; the checks roll it back and every other user saw v1 and no error.
func TestABTest_ErringRevisionReachesOnlyTheMatchedUsers(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ns := newNamespace(t)
	c := gatewayCanary(t, g, ns, abTest)
	u := startABUsers(t, ns)
	g.Eventually(func() string { return lastVersion(u.header) }, 10*time.Second).Should(Equal("v1"))
	start := time.Now()

	releaseRevision(g, ns, "podinfo", "podinfo:v3", erroring(100))
	waitForPhase(g, c, v1alpha1.PhaseFailed, 120*time.Second)
	time.Sleep(time.Second)
	end := time.Now()

	matched := u.header.Counts(start, end)
	others := u.others.Counts(start, end)
	t.Logf("header users: %v %v; others: %v %v", matched.ByVersion, matched.ByCode, others.ByVersion, others.ByCode)
	g.Expect(matched.Errors).To(BeNumerically(">", 0), "the matched users met v3, which errs")
	g.Expect(others.Errors).To(BeZero(), "a user outside the A/B test met the erring canary")
	g.Expect(others.ByVersion).To(Equal(map[string]int{"v1": others.Total}))
	g.Expect(routeWeights(ns, "podinfo")()).To(Equal("100/0"))
	g.Eventually(func() string { return lastVersion(u.header) }, 10*time.Second).Should(Equal("v1"), "rolled back: the matched users are on the primary again")
}
