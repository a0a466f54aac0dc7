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
	"net/http"
	"strings"
	"testing"
	"time"

	kstatus "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/go-git/go-billy/v5/memfs"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/storage/memory"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// The group tests release two apps of a shop, api (the backend) and web
// (the frontend), from one Gitea repository that Flux applies
// (./apps/shop), as a monorepo does: a release is one commit that changes
// both images. Each app has its own Canary on Gateway API weights with
// its own step plan, the built-in success-rate check of its real traffic
// (Traefik → Prometheus), and its own users (50 requests/s each).

// shopApps are the members of the shop.
var shopApps = []string{"api", "web"}

// shopRelease is what a commit releases: each app's version, and what is
// wrong with it.
type shopRelease struct {
	api, web shopApp
}

// shopApp is one app's version in a release.
type shopApp struct {
	tag string
	// errorPercent makes the version answer that share with 500s.
	errorPercent int
	// brokenPrimary makes the version's primary never ready (its promotion halts).
	brokenPrimary bool
}

// shopOptions shape the group.
type shopOptions struct {
	// webDependsOnAPI puts dependsOn: [api] on web.
	webDependsOnAPI bool
	// labels go on the Canaries and the group (an agent's shard).
	labels map[string]string
	// apiSmoke is the URL of a rollout webhook (a smoke test) of api's
	// Canary; none when empty.
	apiSmoke string
}

// shopFiles is the shop's directory in Git for a release.
func shopFiles(ns string, r shopRelease, o shopOptions) map[string]string {
	labels := ""
	for k, v := range o.labels {
		labels += fmt.Sprintf("\n  labels:\n    %s: %s", k, v)
	}
	depends := ""
	if o.webDependsOnAPI {
		depends = "\n      dependsOn: [api]"
	}
	files := map[string]string{
		"apps/shop/kustomization.yaml": fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: %s
resources:
  - api.yaml
  - web.yaml
  - group.yaml
images:
  - name: api
    newTag: %s
  - name: web
    newTag: %s
`, ns, r.api.tag, r.web.tag),
		"apps/shop/group.yaml": fmt.Sprintf(`apiVersion: serin.dev/v1alpha1
kind: CanaryGroup
metadata:
  name: shop%s
spec:
  members:
    - name: api
    - name: web%s
`, labels, depends),
	}
	// Each app keeps its own step plan: api 20/40/60, web 10/30/60.
	plans := map[string]string{"api": "stepWeight: 20\n    maxWeight: 60", "web": "stepWeights: [10, 30, 60]"}
	for _, app := range shopApps {
		v := r.api
		if app == "web" {
			v = r.web
		}
		plan := plans[app]
		if app == "api" && o.apiSmoke != "" {
			plan += fmt.Sprintf("\n    webhooks:\n      - name: smoke\n        type: rollout\n        url: %s", o.apiSmoke)
		}
		files["apps/shop/"+app+".yaml"] = shopDeployment(app, v) + "---\n" + shopCanary(ns, app, plan, labels)
	}
	return files
}

func shopDeployment(app string, v shopApp) string {
	var annotations []string
	if v.errorPercent > 0 {
		annotations = append(annotations, fmt.Sprintf("%s: %q", testbed.ErrorPercentAnnotation, fmt.Sprint(v.errorPercent)))
	}
	if v.brokenPrimary {
		annotations = append(annotations, testbed.NeverReadyAsPrimaryAnnotation+`: "true"`)
	}
	meta := ""
	if len(annotations) > 0 {
		meta = "\n      annotations:\n        " + strings.Join(annotations, "\n        ")
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  labels:
    app: %[1]s
spec:
  selector:
    matchLabels:
      app: %[1]s
  template:
    metadata:%[2]s
      labels:
        app: %[1]s
    spec:
      containers:
        - name: %[1]s
          image: %[1]s
          ports:
            - name: http
              containerPort: 9898
`, app, meta)
}

func shopCanary(ns, app, plan, labels string) string {
	return fmt.Sprintf(`apiVersion: serin.dev/v1alpha1
kind: Canary
metadata:
  name: %[1]s%[5]s
spec:
  targetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: %[1]s
  progressDeadlineSeconds: 10
  service:
    port: 9898
    targetPort: http
  routing:
    provider: gatewayapi
    gatewayRefs:
      - name: %[3]s
        namespace: %[4]s
    hosts: [%[1]s.%[2]s.serin.test]
  analysis:
    interval: %[6]s
    threshold: 2
    %[7]s
    metrics:
      - name: request-success-rate
        thresholdRange:
          min: 99
        interval: 2s
  gitops:
    revert:
      on: [Halted]
      mode: PullRequest
`, app, ns, testbed.GatewayName, testbed.GatewayNamespace, labels, groupInterval, plan)
}

// groupInterval is the shop's analysis interval.
const groupInterval = 3 * time.Second

// shopHost is an app's hostname on the Gateway.
func shopHost(ns, app string) string { return app + "." + ns + ".serin.test" }

// shop is a group test's world: its fleet, and each app's users.
type shop struct {
	*fleet
	users map[string]*testbed.Load
}

// newShop seeds the repository with v1 of both apps, has Flux apply it,
// waits until both Canaries are Initialized, and starts their users.
func newShop(t *testing.T, g Gomega, ns string, o shopOptions) *shop {
	t.Helper()
	ctx := context.Background()
	f := &fleet{t: t, ns: ns, name: ns}
	g.Expect(gitea.CreateRepository(ctx, f.name)).To(Succeed())
	repo, err := gogit.InitWithOptions(memory.NewStorage(), memfs.New(), gogit.InitOptions{DefaultBranch: "refs/heads/main"})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{gitea.RepositoryURL(f.name)}})
	g.Expect(err).NotTo(HaveOccurred())
	f.repo = repo
	first := f.push(shopFiles(ns, shopRelease{api: shopApp{tag: "v1"}, web: shopApp{tag: "v1"}}, o), "Add the shop")
	applyFleet(t, g, f, nil, map[string]any{"path": "./apps/shop"})
	f.sync(g, first)
	s := &shop{fleet: f, users: map[string]*testbed.Load{}}
	for _, app := range shopApps {
		waitForPhase(g, &v1alpha1.Canary{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: app}}, v1alpha1.PhaseInitialized, 60*time.Second)
		s.users[app] = startUsers(t, shopHost(ns, app))
	}
	for _, app := range shopApps {
		g.Eventually(func() string { return lastVersion(s.users[app]) }, 15*time.Second).Should(Equal("v1"), "%s answers through the Gateway", app)
	}
	return s
}

// release commits a release of both apps and waits until Flux applied it.
func (s *shop) release(g Gomega, r shopRelease, o shopOptions, message string) string {
	commit := s.push(shopFiles(s.ns, r, o), message)
	s.sync(g, commit)
	return commit
}

func (s *shop) canary(g Gomega, app string) *v1alpha1.Canary {
	c := &v1alpha1.Canary{}
	g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: s.ns, Name: app}, c)).To(Succeed())
	return c
}

func (s *shop) group(g Gomega) *v1alpha1.CanaryGroup {
	cg := &v1alpha1.CanaryGroup{}
	g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: s.ns, Name: "shop"}, cg)).To(Succeed())
	return cg
}

// waitForGroup waits until the group's current release of revision ends
// in phase.
func (s *shop) waitForGroup(g Gomega, revision string, phase v1alpha1.CanaryPhase, timeout time.Duration) *v1alpha1.CanaryGroup {
	var cg *v1alpha1.CanaryGroup
	g.Eventually(func(g Gomega) {
		cg = s.group(g)
		g.Expect(cg.Status.Release).NotTo(BeNil())
		g.Expect(cg.Status.Release.Revision).To(Equal("main@sha1:" + revision))
		g.Expect(cg.Status.Phase).To(Equal(phase), "release: %+v", cg.Status.Release)
	}, timeout, 200*time.Millisecond).Should(Succeed())
	return cg
}

// stepIndex is the place of a canary weight in each app's step plan.
var stepIndex = map[string]map[string]int{
	"api": {"100/0": 0, "80/20": 1, "60/40": 2, "40/60": 3},
	"web": {"100/0": 0, "90/10": 1, "70/30": 2, "40/60": 3},
}

// lockstep samples both apps' HTTPRoute weights (what the data plane is
// told) every 20 ms as "api=80/20 web=90/10".
func (s *shop) lockstep(t *testing.T) *sampler {
	api, web := routeWeights(s.ns, "api"), routeWeights(s.ns, "web")
	return sample(t, func() string { return "api=" + api() + " web=" + web() })
}

// maxSkew is the largest distance, in steps of their own plans, between
// the two apps in the samples while both analyse, and the sample where it
// was seen. An app back at 100/0 after its first step has ended its
// analysis (promoted, or rolled back): from there on it is not compared.
func maxSkew(t *testing.T, seen []string) (int, string) {
	skew, where := 0, ""
	started, ended := map[string]bool{}, map[string]bool{}
	for _, v := range seen {
		var weights [2]string
		if _, err := fmt.Sscanf(v, "api=%s web=%s", &weights[0], &weights[1]); err != nil {
			t.Fatalf("sample %q: %v", v, err)
		}
		idx := map[string]int{}
		known := true
		for i, app := range shopApps {
			n, ok := stepIndex[app][weights[i]]
			switch {
			case !ok:
				known = false // a route being created, or 100% canary in a promotion
			case n > 0:
				started[app] = true
			case started[app]:
				ended[app] = true
			}
			idx[app] = n
		}
		if !known || ended["api"] || ended["web"] {
			continue
		}
		if d := max(idx["api"]-idx["web"], idx["web"]-idx["api"]); d > skew {
			skew, where = d, v
		}
	}
	return skew, where
}

// answeredBy counts the requests of an app's users answered by version
// since from.
func answeredBy(l *testbed.Load, version string, from time.Time) int {
	n := 0
	for _, s := range l.Samples(from, time.Time{}) {
		if s.Version == version {
			n++
		}
	}
	return n
}

// One commit changes both apps, both healthy: they start together, step
// in lockstep (never more than one step of their own plans apart, on the
// weights the data plane applied), are promoted as one, and no user of
// either app sees an error.
func TestGroup_HealthyReleasePromotesInLockstep(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ns := newNamespace(t)
	s := newShop(t, g, ns, shopOptions{})
	steps := s.lockstep(t)

	commit := s.release(g, shopRelease{api: shopApp{tag: "v2"}, web: shopApp{tag: "v2"}}, shopOptions{}, "Release the shop v2")
	cg := s.waitForGroup(g, commit, v1alpha1.PhaseSucceeded, 3*time.Minute)

	seen := steps.seen()
	t.Logf("lockstep transcript (HTTPRoute weights, primary/canary):\n  %s", strings.Join(seen, "\n  "))
	skew, where := maxSkew(t, seen)
	t.Logf("group_lockstep max_skew_steps=%d at %q", skew, where)
	g.Expect(skew).To(BeNumerically("<=", 1), "a member was more than one step ahead: %s", where)
	g.Expect(seen).To(ContainElement("api=40/60 web=40/60"), "both reached their last step before either was promoted")
	for _, app := range shopApps {
		c := s.canary(g, app)
		g.Expect(c.Status.Phase).To(Equal(v1alpha1.PhaseSucceeded), app)
		g.Expect(c.Status.Group).NotTo(BeNil())
		g.Expect(c.Status.Group.Release).To(Equal("main@sha1:" + commit))
		g.Eventually(func() string { return lastVersion(s.users[app]) }, 10*time.Second).Should(Equal("v2"), app)
		counts := s.users[app].Counts(firstAnswer(s.users[app]), time.Now().Add(-time.Second))
		t.Logf("%s users: %d requests, by version %v, by code %v", app, counts.Total, counts.ByVersion, counts.ByCode)
		g.Expect(counts.Errors).To(BeZero(), "%s users saw errors", app)
	}
	g.Expect(cg.Status.Release.Members).To(HaveLen(2))
	g.Expect(conditions.IsReady(cg)).To(BeTrue())
	g.Expect(conditions.IsStalled(cg)).To(BeFalse())
}

// The same commit with the backend's new version erroring: api fails its
// checks, and web, which passed its own, is rolled back with it. No user of
// web is answered by the new frontend one analysis interval after the
// verdict; web is never promoted; the group says api decided, with the
// values.
func TestGroup_BackendFailureRollsBackTheRelease(t *testing.T) {
	alone(t, "no answer of the new version one interval after the verdict: Traefik must apply the weights at once")
	g := NewWithT(t)
	ns := newNamespace(t)
	s := newShop(t, g, ns, shopOptions{})
	steps := s.lockstep(t)

	commit := s.release(g, shopRelease{api: shopApp{tag: "v2", errorPercent: 20}, web: shopApp{tag: "v2"}}, shopOptions{}, "Release the shop v2")
	cg := s.waitForGroup(g, commit, v1alpha1.PhaseFailed, 3*time.Minute)

	api := s.canary(g, "api")
	g.Expect(api.Status.Phase).To(Equal(v1alpha1.PhaseFailed))
	g.Eventually(func() v1alpha1.CanaryPhase { return s.canary(g, "web").Status.Phase }, 30*time.Second).Should(Equal(v1alpha1.PhaseFailed))
	web := s.canary(g, "web")
	g.Expect(web.Status.Group.FailedBy).To(Equal("api"))
	g.Expect(conditions.GetMessage(web, meta.ReadyCondition)).To(ContainSubstring("api failed"))
	g.Expect(web.Status.LastPromotedSpec).NotTo(Equal(web.Status.LastAppliedSpec), "web was never promoted")
	g.Expect(cg.Status.Release.DecidedBy).To(Equal("api"))
	g.Expect(cg.Status.Release.Message).To(ContainSubstring("request-success-rate"), "the values that decided")
	g.Expect(conditions.IsStalled(cg)).To(BeTrue())
	g.Expect(kstatusOfGroup(g, cg)).To(Equal(kstatus.FailedStatus), "a Flux health check on the group fails")
	// One verdict for the release, naming the member and the values.
	var events corev1.EventList
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.List(context.Background(), &events, client.InNamespace(ns), client.MatchingFields{"involvedObject.kind": v1alpha1.CanaryGroupKind})).To(Succeed())
		var failed []string
		for _, e := range events.Items {
			if e.Reason == "ReleaseFailed" {
				failed = append(failed, e.Message)
			}
		}
		g.Expect(failed).To(HaveLen(1))
		g.Expect(failed[0]).To(ContainSubstring("api failed"))
		g.Expect(failed[0]).To(MatchRegexp(`request-success-rate \d+(\.\d+)? \(min 99\): Failed`))
		t.Logf("the release's verdict: %s", failed[0])
	}, 10*time.Second, 200*time.Millisecond).Should(Succeed())

	verdict := api.Status.LastTransitionTime.Time
	after := verdict.Add(groupInterval)
	time.Sleep(time.Until(after.Add(2 * time.Second)))
	late := answeredBy(s.users["web"], "v2", after)
	t.Logf("group_failure web_v2_answers_after_verdict_plus_interval=%d web_v2_answers_total=%d", late, answeredBy(s.users["web"], "v2", time.Time{}))
	g.Expect(late).To(BeZero(), "users of web were answered by the new frontend after the release failed")
	seen := steps.seen()
	t.Logf("transcript:\n  %s", strings.Join(seen, "\n  "))
	skew, where := maxSkew(t, seen)
	g.Expect(skew).To(BeNumerically("<=", 1), where)
	for _, app := range shopApps {
		primary := &appsv1.Deployment{}
		g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: app + "-primary"}, primary)).To(Succeed())
		g.Expect(primary.Spec.Template.Spec.Containers[0].Image).To(Equal(app+":v1"), "%s's primary keeps v1", app)
		g.Eventually(func() string { return routeWeights(ns, app)() }, 10*time.Second).Should(Equal("100/0"))
	}
}

// A second commit supersedes the release under way. C1 changes both apps
// (healthy); while both analyse it, C2 changes api again, to a version
// that errs, and leaves web at C1's. web has not promoted what Git asks of
// it, so it belongs to C2's release: it restarts there with api instead of
// promoting alone, and is rolled back with it. Users are never left on
// web v2 with api v1, a mix no commit described (seen on the code before:
// web promoted to v2 on C1, api rolled back to v1 on C2).
func TestGroup_SecondCommitSupersedesTheRelease(t *testing.T) {
	alone(t, "no answer of v2 one interval after the verdict: Traefik must apply the weights at once")
	g := NewWithT(t)
	ns := newNamespace(t)
	s := newShop(t, g, ns, shopOptions{})
	phases := sample(t, func() string {
		c := &v1alpha1.Canary{}
		if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "web"}, c); err != nil {
			return "error: " + err.Error()
		}
		release := ""
		if c.Status.Group != nil {
			release = c.Status.Group.Release
		}
		return fmt.Sprintf("web %s %s", c.Status.Phase, release)
	})

	first := s.release(g, shopRelease{api: shopApp{tag: "v2"}, web: shopApp{tag: "v2"}}, shopOptions{}, "Release the shop v2")
	g.Eventually(func(g Gomega) {
		for _, app := range shopApps {
			g.Expect(routeWeights(ns, app)()).NotTo(Equal("100/0"), "%s has taken a step", app)
		}
	}, 2*time.Minute, 100*time.Millisecond).Should(Succeed())
	second := s.release(g, shopRelease{api: shopApp{tag: "v3", errorPercent: 20}, web: shopApp{tag: "v2"}}, shopOptions{}, "api v3")
	cg := s.waitForGroup(g, second, v1alpha1.PhaseFailed, 3*time.Minute)
	g.Eventually(func() v1alpha1.CanaryPhase { return s.canary(g, "web").Status.Phase }, 30*time.Second).Should(Equal(v1alpha1.PhaseFailed))

	web := s.canary(g, "web")
	g.Expect(web.Status.Group.Release).To(Equal("main@sha1:"+second), "web moved into the second commit's release")
	g.Expect(web.Status.Group.FailedBy).To(Equal("api"))
	g.Expect(web.Status.LastPromotedSpec).NotTo(Equal(web.Status.LastAppliedSpec), "web was never promoted")
	g.Expect(cg.Status.Release.Members).To(HaveLen(2), "the second commit's release has both members")
	seen := phases.seen()
	t.Logf("web's phases:\n  %s", strings.Join(seen, "\n  "))
	g.Expect(seen).NotTo(ContainElement(HavePrefix("web Succeeded")), "web was promoted on its own")
	g.Expect(seen).To(ContainElement("web Progressing main@sha1:"+first), "web analysed the first commit")
	var events corev1.EventList
	g.Expect(k8s.List(context.Background(), &events, client.InNamespace(ns))).To(Succeed())
	superseded := 0
	for _, e := range events.Items {
		if e.InvolvedObject.Name == "web" && e.Reason == v1alpha1.AnalysisRestartedReason && strings.Contains(e.Message, "superseded") {
			superseded++
			t.Logf("web: %s", e.Message)
		}
	}
	g.Expect(superseded).To(Equal(1), "one restart of web into the second release")

	verdict := s.canary(g, "api").Status.LastTransitionTime.Time
	after := verdict.Add(groupInterval)
	time.Sleep(time.Until(after.Add(2 * time.Second)))
	late := answeredBy(s.users["web"], "v2", after)
	t.Logf("group_second_commit web_v2_answers_after_verdict_plus_interval=%d web_v2_answers_total=%d api_v3_answers_total=%d",
		late, answeredBy(s.users["web"], "v2", time.Time{}), answeredBy(s.users["api"], "v3", time.Time{}))
	g.Expect(late).To(BeZero(), "users of web were answered by v2 while api is back on v1")
	for _, app := range shopApps {
		primary := &appsv1.Deployment{}
		g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: app + "-primary"}, primary)).To(Succeed())
		g.Expect(primary.Spec.Template.Spec.Containers[0].Image).To(Equal(app+":v1"), "%s's primary keeps v1", app)
		g.Eventually(func() string { return routeWeights(ns, app)() }, 10*time.Second).Should(Equal("100/0"))
	}
}

// dependsOn: web depends on api. web's analysis starts only once api's new
// version is promoted; in the next release api fails, and web never
// starts: no canary weight, no request answered by its new version.
func TestGroup_DependsOnOrdersAndFailsTheDependent(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ns := newNamespace(t)
	o := shopOptions{webDependsOnAPI: true}
	s := newShop(t, g, ns, o)
	steps := s.lockstep(t)

	commit := s.release(g, shopRelease{api: shopApp{tag: "v2"}, web: shopApp{tag: "v2"}}, o, "Release the shop v2")
	g.Eventually(func(g Gomega) {
		web := s.canary(g, "web")
		g.Expect(web.Status.Phase).To(Equal(v1alpha1.PhaseWaiting))
		g.Expect(web.Status.Group.WaitingFor).To(ConsistOf("api"))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	s.waitForGroup(g, commit, v1alpha1.PhaseSucceeded, 3*time.Minute)
	api := s.canary(g, "api")
	promoted := api.Status.LastTransitionTime.Time
	webStarted := steps.firstAt("api=100/0 web=90/10")
	t.Logf("group_depends_on api_succeeded=%s web_first_weight=%s", promoted.Format(time.RFC3339Nano), webStarted.Format(time.RFC3339Nano))
	g.Expect(webStarted).NotTo(BeZero(), "web took its first step: %v", steps.seen())
	g.Expect(webStarted.After(promoted)).To(BeTrue(), "web's traffic started before api was promoted")
	for _, v := range steps.seen() {
		if !strings.HasSuffix(v, "web=100/0") {
			g.Expect(v).To(HavePrefix("api=100/0"), "web analysed while api was not promoted: %s", v)
		}
	}

	// The next release's backend errs: web never starts.
	before := time.Now()
	commit = s.release(g, shopRelease{api: shopApp{tag: "v3", errorPercent: 20}, web: shopApp{tag: "v3"}}, o, "Release the shop v3")
	s.waitForGroup(g, commit, v1alpha1.PhaseFailed, 3*time.Minute)
	g.Eventually(func() v1alpha1.CanaryPhase { return s.canary(g, "web").Status.Phase }, 30*time.Second).Should(Equal(v1alpha1.PhaseFailed))
	web := s.canary(g, "web")
	g.Expect(web.Status.Group.FailedBy).To(Equal("api"))
	g.Expect(conditions.GetMessage(web, meta.ReadyCondition)).To(ContainSubstring("before this member started"))
	g.Expect(answeredBy(s.users["web"], "v3", before)).To(BeZero(), "a user of web was answered by v3")
	webDeploy := &appsv1.Deployment{}
	g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "web-primary"}, webDeploy)).To(Succeed())
	g.Expect(webDeploy.Spec.Template.Spec.Containers[0].Image).To(Equal("web:v2"))
}

// A halted promotion of one member halts the group: one pull request
// reverts both apps' changes of the revision; once it is merged, both are
// restored. The agent is SIGKILLed twice in the middle of the release (in
// the analysis, and as the revert is opened): the release resumes with no
// member more than one step ahead, and there is still one pull request.
func TestGroup_HaltedReleaseOneRevertSurvivesKills(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	o := shopOptions{labels: map[string]string{shardLabel: "groups"}}
	own, err := env.StartAgentWith(ctx, "..", testbed.AgentOptions{
		Name: "serin-agent-groups",
		Flags: append([]string{"--metrics-server=" + prom.URL, "--data-plane=traefik", "--log-level=info",
			"--watch-label-selector=" + shardLabel + "=groups"}, gitopsFlags...),
	})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = own.Kill() })
	s := newShop(t, g, ns, o)
	steps := s.lockstep(t)

	good := s.release(g, shopRelease{api: shopApp{tag: "v2"}, web: shopApp{tag: "v2"}}, o, "Release the shop v2")
	s.waitForGroup(g, good, v1alpha1.PhaseSucceeded, 3*time.Minute)

	bad := s.release(g, shopRelease{api: shopApp{tag: "v3", brokenPrimary: true}, web: shopApp{tag: "v3"}}, o, "Release the shop v3")
	// First kill: in the middle of the analysis.
	g.Eventually(func() bool {
		return strings.HasPrefix(routeWeights(ns, "api")(), "60/40") || strings.HasPrefix(routeWeights(ns, "web")(), "70/30")
	},
		2*time.Minute, 20*time.Millisecond).Should(BeTrue())
	g.Expect(own.Kill()).To(Succeed())
	t.Logf("agent killed at %s", steps.seen()[len(steps.seen())-1])
	time.Sleep(time.Second)
	g.Expect(own.Start(ctx)).To(Succeed())
	// Second kill: once api halted, while the revert is being opened.
	g.Eventually(func() v1alpha1.CanaryPhase { return s.canary(g, "api").Status.Phase }, 3*time.Minute, 50*time.Millisecond).Should(Equal(v1alpha1.PhaseHalted))
	g.Expect(own.Kill()).To(Succeed())
	time.Sleep(time.Second)
	g.Expect(own.Start(ctx)).To(Succeed())

	cg := s.waitForGroup(g, bad, v1alpha1.PhaseHalted, 2*time.Minute)
	g.Expect(cg.Status.Release.DecidedBy).To(Equal("api"))
	g.Expect(kstatusOfGroup(g, cg)).To(Equal(kstatus.FailedStatus), "a Flux health check on the group fails")
	pr := s.revertPullRequest(g)
	g.Expect(pr.Head.Ref).To(Equal("serin/revert/" + ns + "/groups/shop/" + bad[:8]))
	diff, err := gitea.Raw(ctx, fmt.Sprintf("/repos/%s/%s/pulls/%d.diff", gitea.User, s.name, pr.Number))
	g.Expect(err).NotTo(HaveOccurred())
	t.Logf("the release's revert %s:\n%s\n%s", pr.HTMLURL, pr.Body, diff)
	g.Expect(diff).To(ContainSubstring("-    newTag: v3"))
	g.Expect(strings.Count(diff, "+    newTag: v2")).To(Equal(2), "both apps go back to v2")
	skew, where := maxSkew(t, steps.seen())
	t.Logf("group_kill max_skew_steps=%d", skew)
	g.Expect(skew).To(BeNumerically("<=", 1), where)

	// Merged: Flux applies v2 of both; api's primary is restored, web
	// rolls v2 out again.
	g.Expect(gitea.API(ctx, "POST", fmt.Sprintf("/repos/%s/%s/pulls/%d/merge", gitea.User, s.name, pr.Number), map[string]any{"Do": "merge"}, nil)).To(Succeed())
	var main struct {
		Commit struct {
			ID string `json:"id"`
		} `json:"commit"`
	}
	g.Expect(gitea.API(ctx, "GET", fmt.Sprintf("/repos/%s/%s/branches/main", gitea.User, s.name), nil, &main)).To(Succeed())
	s.sync(g, main.Commit.ID)
	s.expectRestored(g, "v2")
	g.Expect(s.pullRequests(g)).To(HaveLen(1), "no duplicate pull request")
}

// revertPullRequest waits until the repository has one pull request,
// the group's release names it as its revert, and returns it.
func (s *shop) revertPullRequest(g Gomega) pullRequest {
	var pr pullRequest
	g.Eventually(func(g Gomega) {
		prs := s.pullRequests(g)
		g.Expect(prs).To(HaveLen(1))
		pr = prs[0]
		g.Expect(s.group(g).Status.Release.RevertURL).To(Equal(pr.HTMLURL))
	}, 2*time.Minute, 500*time.Millisecond).Should(Succeed())
	return pr
}

// expectRestored waits until both apps are Succeeded with their primaries
// running version, and their users are answered by it.
func (s *shop) expectRestored(g Gomega, version string) {
	for _, app := range shopApps {
		g.Eventually(func(g Gomega) {
			c := s.canary(g, app)
			g.Expect(c.Status.Phase).To(Equal(v1alpha1.PhaseSucceeded))
			primary := &appsv1.Deployment{}
			g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: s.ns, Name: app + "-primary"}, primary)).To(Succeed())
			g.Expect(primary.Spec.Template.Spec.Containers[0].Image).To(Equal(app + ":" + version))
		}, 2*time.Minute, 200*time.Millisecond).Should(Succeed(), "%s restored", app)
		g.Eventually(func() string { return lastVersion(s.users[app]) }, 15*time.Second).Should(Equal(version), app)
	}
}

// kstatusOfGroup computes the group's status as Flux's health checks do.
func kstatusOfGroup(g Gomega, cg *v1alpha1.CanaryGroup) kstatus.Status {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cg)
	g.Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind(v1alpha1.CanaryGroupKind))
	res, err := kstatus.Compute(u)
	g.Expect(err).NotTo(HaveOccurred())
	return res.Status
}

// What a tired operator does to a group: a member name with a typo, a
// Canary listed by a second group, a dependsOn cycle. Each stalls with a
// message that says what to fix; a Canary two groups list acts on nothing.
func TestGroup_InvalidMembershipStalls(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	for _, app := range []string{"api", "web"} {
		g.Expect(k8s.Create(ctx, testobj.MakeDeployment(app, ns).Replicas(1).Image(app+":v1").Obj())).To(Succeed())
		c := testobj.MakeCanary(app, ns).Target("apps/v1", "Deployment", app).Analysis(v1alpha1.CanaryAnalysis{Iterations: 2}).Obj()
		g.Expect(k8s.Create(ctx, c)).To(Succeed())
		waitForPhase(g, c, v1alpha1.PhaseInitialized, 30*time.Second)
	}
	group := func(name string, members ...v1alpha1.GroupMember) *v1alpha1.CanaryGroup {
		cg := &v1alpha1.CanaryGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1alpha1.CanaryGroupSpec{Members: members}}
		g.Expect(k8s.Create(ctx, cg)).To(Succeed())
		return cg
	}
	stalled := func(name, message string) {
		g.Eventually(func(g Gomega) {
			cg := &v1alpha1.CanaryGroup{}
			g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, cg)).To(Succeed())
			g.Expect(conditions.IsStalled(cg)).To(BeTrue())
			g.Expect(conditions.IsReady(cg)).To(BeFalse())
			g.Expect(conditions.GetMessage(cg, meta.StalledCondition)).To(ContainSubstring(message))
		}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	}

	group("shop", v1alpha1.GroupMember{Name: "api"}, v1alpha1.GroupMember{Name: "wbe"})
	stalled("shop", "member wbe: no Canary "+ns+"/wbe: create it or remove it from spec.members")

	group("other", v1alpha1.GroupMember{Name: "api"})
	stalled("other", "member api is listed by CanaryGroups other and shop: a Canary belongs to one group at most")
	stalled("shop", "member api is listed by CanaryGroups other and shop")
	g.Eventually(func(g Gomega) {
		api := &v1alpha1.Canary{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "api"}, api)).To(Succeed())
		g.Expect(conditions.IsStalled(api)).To(BeTrue())
		g.Expect(conditions.GetReason(api, meta.StalledCondition)).To(Equal(v1alpha1.InvalidGroupReason))
		g.Expect(conditions.GetMessage(api, meta.StalledCondition)).To(ContainSubstring("remove it from all but one"))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())

	group("loop", v1alpha1.GroupMember{Name: "web", DependsOn: []string{"x"}}, v1alpha1.GroupMember{Name: "x", DependsOn: []string{"web"}})
	stalled("loop", "spec.members[].dependsOn forms a cycle")
	g.Eventually(func(g Gomega) {
		web := &v1alpha1.Canary{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, web)).To(Succeed())
		g.Expect(conditions.GetMessage(web, meta.StalledCondition)).To(ContainSubstring("forms a cycle (web → x → web)"))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())

	// Fixed: the Canaries act again.
	for _, name := range []string{"other", "loop"} {
		g.Expect(k8s.Delete(ctx, &v1alpha1.CanaryGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}})).To(Succeed())
	}
	for _, app := range []string{"api", "web"} {
		g.Eventually(func(g Gomega) {
			c := &v1alpha1.Canary{}
			g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: app}, c)).To(Succeed())
			g.Expect(conditions.IsStalled(c)).To(BeFalse())
			g.Expect(conditions.IsReady(c)).To(BeTrue())
		}, 20*time.Second, 100*time.Millisecond).Should(Succeed(), app)
	}
}

// The operator's commands on a group, through the CLI: a release that
// failed because api's smoke test found a dependency down is retried as a
// whole once it is back (serin retry --group), and both members are
// promoted; the next release is aborted as a whole mid-analysis (serin
// abort --group), and both are rolled back.
func TestGroup_RetryAndAbortTheReleaseWithTheCLI(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ns := newNamespace(t)
	smoke := newWebhook(t, http.StatusServiceUnavailable)
	o := shopOptions{apiSmoke: smoke.URL}
	s := newShop(t, g, ns, o)

	commit := s.release(g, shopRelease{api: shopApp{tag: "v2"}, web: shopApp{tag: "v2"}}, o, "Release the shop v2")
	s.waitForGroup(g, commit, v1alpha1.PhaseFailed, 3*time.Minute)
	g.Eventually(func() v1alpha1.CanaryPhase { return s.canary(g, "web").Status.Phase }, 30*time.Second).Should(Equal(v1alpha1.PhaseFailed))

	smoke.status.Store(http.StatusOK)
	out, stderr, err := runCLI("retry", "--group", "shop", "-n", ns, "--timeout", "60s")
	g.Expect(err).NotTo(HaveOccurred(), stderr)
	t.Logf("serin retry --group shop:\n%s%s", out, stderr)
	var cg *v1alpha1.CanaryGroup
	g.Eventually(func(g Gomega) {
		cg = s.group(g)
		g.Expect(cg.Status.Release).NotTo(BeNil())
		g.Expect(cg.Status.Release.Revision).To(HavePrefix("main@sha1:" + commit + "#retry="))
		g.Expect(cg.Status.Phase).To(Equal(v1alpha1.PhaseSucceeded), "release: %+v", cg.Status.Release)
	}, 3*time.Minute, 200*time.Millisecond).Should(Succeed())
	g.Expect(cg.Status.Release.Members).To(HaveLen(2), "the retry released both members")
	g.Expect(cg.Status.History).NotTo(BeEmpty())
	g.Expect(cg.Status.History[0].Phase).To(Equal(v1alpha1.PhaseFailed), "the failed release is in the history")
	for _, app := range shopApps {
		g.Eventually(func() string { return lastVersion(s.users[app]) }, 15*time.Second).Should(Equal("v2"), app)
	}

	commit = s.release(g, shopRelease{api: shopApp{tag: "v3"}, web: shopApp{tag: "v3"}}, o, "Release the shop v3")
	g.Eventually(func(g Gomega) {
		for _, app := range shopApps {
			g.Expect(s.canary(g, app).Status.CanaryWeight).To(BeNumerically(">", 0), app)
		}
	}, time.Minute, 50*time.Millisecond).Should(Succeed())
	out, stderr, err = runCLI("abort", "--group", "shop", "-n", ns, "--timeout", "60s")
	g.Expect(err).NotTo(HaveOccurred(), stderr)
	t.Logf("serin abort --group shop:\n%s%s", out, stderr)
	s.waitForGroup(g, commit, v1alpha1.PhaseFailed, time.Minute)
	for _, app := range shopApps {
		g.Eventually(func(g Gomega) {
			c := s.canary(g, app)
			g.Expect(c.Status.Phase).To(Equal(v1alpha1.PhaseFailed))
			g.Expect(c.Status.LastPromotedSpec).NotTo(Equal(c.Status.LastAppliedSpec))
		}, 30*time.Second, 200*time.Millisecond).Should(Succeed(), app)
		g.Eventually(func() string { return routeWeights(ns, app)() }, 10*time.Second).Should(Equal("100/0"))
		g.Eventually(func() string { return lastVersion(s.users[app]) }, 15*time.Second).Should(Equal("v2"), app)
	}
}
