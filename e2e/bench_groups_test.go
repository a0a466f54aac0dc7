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
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// BenchmarkGroupSkew releases 10 groups of 5 Canaries each (blue/green, 5
// iterations of 2 s, every member changed at once, as one commit would)
// and measures, from a watch on their status, how far apart the members
// of a group are: the spread of their positions (iterations passed; all
// of them plus one once promoted) at every status change, and how long
// the release took from the change to the last member promoted. The same
// 50 Canaries without groups, released the same way in the same run, are
// the baseline: what each Canary deciding alone gives.
func BenchmarkGroupSkew(b *testing.B) {
	const groups, members, iterations = 10, 5, 5
	ctx := context.Background()
	grouped, err := groupSkewRun(ctx, groups, members, iterations, true)
	if err != nil {
		b.Fatal(err)
	}
	alone, err := groupSkewRun(ctx, groups, members, iterations, false)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("\nGROUP SKEW (%d groups × %d members, %d iterations of 2s, all changed at once)\n", groups, members, iterations)
	fmt.Printf("%-12s %12s %12s %12s %12s\n", "", "SKEW max", "SKEW p99", "RELEASE p50", "RELEASE max")
	for _, r := range []groupSkewResult{grouped, alone} {
		fmt.Printf("%-12s %9d st %9d st %10.1fs %10.1fs\n", r.name, r.maxSkew, r.p99Skew, r.releaseP50.Seconds(), r.releaseMax.Seconds())
	}
	for _, r := range []groupSkewResult{grouped, alone} {
		fmt.Printf("bench=group_skew mode=%s groups=%d members=%d max_skew_steps=%d p99_skew_steps=%d release_p50_s=%.1f release_max_s=%.1f samples=%d\n",
			r.name, groups, members, r.maxSkew, r.p99Skew, r.releaseP50.Seconds(), r.releaseMax.Seconds(), r.samples)
	}
}

type groupSkewResult struct {
	name                   string
	maxSkew, p99Skew       int
	releaseP50, releaseMax time.Duration
	samples                int
}

// groupSkewRun creates the Canaries (in CanaryGroups when grouped), waits
// until they are Initialized, changes every target at once and watches the
// release to its end.
func groupSkewRun(ctx context.Context, groups, members, iterations int, grouped bool) (groupSkewResult, error) {
	res := groupSkewResult{name: "ungrouped"}
	if grouped {
		res.name = "grouped"
	}
	ns := "bench-groups-" + res.name
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return res, err
	}
	defer func() {
		if err := deleteNamespace(ctx, ns, 5*time.Minute); err != nil {
			fmt.Println("  warning:", err)
		}
	}()
	groupOf := map[string]int{}
	n := groups * members
	if err := forEach(n, func(i int) error {
		name := fmt.Sprintf("app-%02d-%d", i/members, i%members)
		if err := k8s.Create(ctx, testobj.MakeDeployment(name, ns).Replicas(1).Obj()); err != nil {
			return err
		}
		c := testobj.MakeCanary(name, ns).Target("apps/v1", "Deployment", name).
			Analysis(v1alpha1.CanaryAnalysis{Interval: &metav1.Duration{Duration: 2 * time.Second}, Iterations: iterations}).Obj()
		return k8s.Create(ctx, c)
	}); err != nil {
		return res, err
	}
	for i := range n {
		groupOf[fmt.Sprintf("app-%02d-%d", i/members, i%members)] = i / members
	}
	if grouped {
		for gi := range groups {
			cg := &v1alpha1.CanaryGroup{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("group-%02d", gi), Namespace: ns},
				Spec: v1alpha1.CanaryGroupSpec{Window: &metav1.Duration{Duration: 2 * time.Second}}}
			for m := range members {
				cg.Spec.Members = append(cg.Spec.Members, v1alpha1.GroupMember{Name: fmt.Sprintf("app-%02d-%d", gi, m)})
			}
			if err := k8s.Create(ctx, cg); err != nil {
				return res, err
			}
		}
	}
	if err := waitCount(ctx, v1alpha1.GroupVersion.WithKind("Canary"), ns, n, 5*time.Minute, "Initialized", func(s canaryState) bool { return s.phase == "Initialized" }); err != nil {
		return res, err
	}

	var list v1alpha1.CanaryList
	if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return res, err
	}
	w, err := k8s.(client.WithWatch).Watch(ctx, &v1alpha1.CanaryList{}, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		return res, err
	}
	defer w.Stop()
	position := map[string]int{}
	done := map[string]time.Time{}
	var skews []int
	start := time.Now()
	if err := forEach(n, func(i int) error {
		return setImageErr(ctx, ns, fmt.Sprintf("app-%02d-%d", i/members, i%members), "podinfo:v2")
	}); err != nil {
		return res, err
	}
	deadline := time.After(10 * time.Minute)
	for len(done) < n {
		var e watch.Event
		select {
		case e = <-w.ResultChan():
		case <-deadline:
			return res, fmt.Errorf("%d of %d canaries promoted after 10 minutes", len(done), n)
		}
		c, ok := e.Object.(*v1alpha1.Canary)
		if !ok {
			continue
		}
		switch c.Status.Phase {
		case v1alpha1.PhaseProgressing, v1alpha1.PhaseWaitingPromotion, v1alpha1.PhaseWaiting:
			position[c.Name] = c.Status.Iterations
		case v1alpha1.PhasePromoting, v1alpha1.PhaseFinalising, v1alpha1.PhaseSucceeded:
			position[c.Name] = iterations + 1
		}
		if c.Status.Phase == v1alpha1.PhaseSucceeded && c.Status.LastPromotedSpec == c.Status.LastAppliedSpec && time.Since(start) > time.Second {
			if _, seen := done[c.Name]; !seen {
				done[c.Name] = time.Now()
			}
		}
		lo, hi := iterations+1, 0
		for name, gi := range groupOf {
			if gi != groupOf[c.Name] {
				continue
			}
			p := position[name]
			lo, hi = min(lo, p), max(hi, p)
		}
		skews = append(skews, hi-lo)
	}
	slices.Sort(skews)
	res.samples = len(skews)
	res.maxSkew = skews[len(skews)-1]
	res.p99Skew = skews[len(skews)*99/100]
	var took []time.Duration
	for gi := range groups {
		var last time.Time
		for name, g := range groupOf {
			if g == gi && done[name].After(last) {
				last = done[name]
			}
		}
		took = append(took, last.Sub(start))
	}
	slices.Sort(took)
	res.releaseP50, res.releaseMax = took[len(took)/2], took[len(took)-1]
	return res, nil
}
