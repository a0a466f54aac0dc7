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
	"math"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// Testers pinned by a header (analysis.pin, from the 40 % step) are
// answered by the canary on every request at every step from 40 %, while
// the other users follow the weights; a rollback takes the pin away with
// the canary's share: the testers are answered by the primary again.
func TestTraffic_PinnedTestersReachTheCanaryWhileOthersFollowTheWeights(t *testing.T) {
	alone(t, "judges 2 s steps by the shares Traefik served 500 ms after each weight")
	g := NewWithT(t)
	ns := newNamespace(t)
	c := gatewayCanary(t, g, ns, withBuiltinChecks, func(c *v1alpha1.Canary) {
		c.Spec.Analysis.Pin = &v1alpha1.CanaryPin{
			Match:      []v1alpha1.AnalysisMatch{{Headers: []v1alpha1.HTTPHeaderMatch{{Name: "X-Tester", Value: "yes"}}}},
			FromWeight: ptr.To(int32(40)),
		}
	})
	testers := startUsersWith(t, appHost(ns), http.Header{"X-Tester": {"yes"}})
	g.Eventually(func() string { return lastVersion(testers) }, 10*time.Second).Should(Equal("v1"))
	tl := recordWeights(t, ns, "podinfo")
	phases := samplePhases(t, c)

	setImage(g, ns, "podinfo", "podinfo:v2")
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 90*time.Second)
	promoting := phases.firstAt(string(v1alpha1.PhasePromoting))
	g.Expect(promoting).NotTo(BeZero(), "the promotion was seen")
	measured := map[int]bool{}
	for _, w := range tl.windows(promoting, 500*time.Millisecond) {
		pinned, others := testers.Counts(w.from, w.to), usersIn(ns).Counts(w.from, w.to)
		if w.canary <= 0 || w.canary >= 100 || others.Total < 20 {
			continue
		}
		t.Logf("weight %3d%%: testers %v, others %v (v2 %.1f%%)", w.canary, pinned.ByVersion, others.ByVersion, others.Share("v2"))
		measured[w.canary] = true
		if w.canary >= 40 {
			g.Expect(pinned.ByVersion).To(Equal(map[string]int{"v2": pinned.Total}), "at %d%% every tester's request reached the canary", w.canary)
		} else {
			g.Expect(math.Abs(pinned.Share("v2")-float64(w.canary))).To(BeNumerically("<=", 10), "before fromWeight the testers follow the weights")
		}
		g.Expect(math.Abs(others.Share("v2")-float64(w.canary))).To(BeNumerically("<=", 10), "at %d%% the other users follow the weights", w.canary)
	}
	g.Expect(measured).To(HaveLen(3), "20, 40 and 60 were each measured")
	g.Expect(testers.Counts(time.Time{}, time.Time{}).Errors).To(BeZero())

	// v3 fails its checks: the rollback takes the testers off it too.
	releaseRevision(g, ns, "podinfo", "podinfo:v3", erroring(50))
	waitForPhase(g, c, v1alpha1.PhaseFailed, 90*time.Second)
	g.Eventually(func() string { return lastVersion(testers) }, 5*time.Second).Should(Equal("v2"), "rolled back: the testers are answered by the primary")
	routeRules := routeRuleCount(g, ns, "podinfo")
	g.Expect(routeRules).To(Equal(1), "the pinned rule is gone with the rollback")
}

// routeRuleCount is the number of rules of an HTTPRoute.
func routeRuleCount(g Gomega, ns, name string) int {
	r := &gatewayv1.HTTPRoute{}
	g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, r)).To(Succeed())
	return len(r.Spec.Rules)
}
