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

package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// play is the state of one play: the repository, the sink, the release
// Git is at, and the revert pull request once opened.
type play struct {
	*settings
	sink  *sink
	fleet *fleet
	// tag is the image tag main is at, bug the error percentage of its code.
	tag string
	bug int
	// good is the commit of the last promoted release.
	good string
	// pr is the revert pull request serin opened (act 3).
	pr *pullRequest
	// promotion is the pull request that promotes a release to
	// production (act 6).
	promotion *pullRequest
	// actMessages is the sink's count when the current act started.
	actMessages int
	// users are the app's users, sending requests through the Gateway.
	users *testbed.Load
	// actUsers counts the users the current act's result reports, when
	// they are not the app's users since the act started; nil otherwise.
	actUsers func() testbed.Counts
}

// act is one Git commit and what serin must make of it.
type act struct {
	title  string
	expect v1alpha1.CanaryPhase
	run    func(p *play, ctx context.Context) error
}

var acts = []act{
	{"v2, healthy: analysed step by step, then promoted", v1alpha1.PhaseSucceeded, (*play).releaseHealthy},
	{"v3, erroring: its checks fail, it is rolled back", v1alpha1.PhaseFailed, (*play).releaseErroring},
	{"v4, healthy, but its primary cannot start: halted, revert PR", v1alpha1.PhaseHalted, (*play).releaseUnpromotable},
	{"the revert PR is merged: Flux applies it, primary restored", v1alpha1.PhaseSucceeded, (*play).mergeRevert},
	{"v5 and frontend v2, one group: frontend errs, both rolled back", v1alpha1.PhaseFailed, (*play).releaseGroup},
	{"v6 flows to production: PR, merge, production verifies it", v1alpha1.PhaseSucceeded, (*play).releaseToProduction},
}

// seed creates the namespace, the repository with podinfo v1, the Flux
// objects that apply it and notify the sink, and waits until serin has
// initialized the Canary.
func (p *play) seed(ctx context.Context) error {
	p.screen.Header("Prologue · an app in Git, applied by Flux, rolled out by serin")
	if err := p.ensureNamespace(ctx, p.namespace); err != nil {
		return err
	}
	var err error
	if p.fleet, err = newFleet(ctx, p.settings); err != nil {
		return err
	}
	files := appFiles(p.settings, "v1", 0)
	commit, err := p.fleet.commit(ctx, files, "Add podinfo v1 with its Canary")
	if err != nil {
		return err
	}
	p.tag, p.good = "v1", commit
	p.screen.Line("git", "created %s", p.fleet.url())
	p.screen.Line("git", "pushed %s \"Add podinfo v1 with its Canary\": %s/{%s}", short(commit), appPath, changedFiles(files, appPath))
	if err := p.fleet.applyFluxObjects(ctx, p.namespace, appPath); err != nil {
		return err
	}
	for _, o := range p.sink.notificationObjects(p.namespace) {
		if err := p.kube.Create(ctx, o); err != nil {
			return fmt.Errorf("create %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	p.screen.Line("flux", "GitRepository %s → Kustomization %s (path ./%s, prune)", gitRepositoryName, kustomizationName, appPath)
	p.screen.Line("flux", "Alert %s (Kustomization %s, severity info) → Provider %s (generic) → the sink at %s",
		alertName, kustomizationName, providerName, p.sink.URL)
	if err := p.syncAndShow(ctx, commit); err != nil {
		return err
	}
	if _, err := p.waitForPhase(ctx, v1alpha1.PhaseInitialized, ""); err != nil {
		return err
	}
	if p.users, _, err = p.startUsers(ctx, p.appHost(), ""); err != nil {
		return err
	}
	p.screen.Line("kube", "%s", p.workloads(ctx))
	p.screen.Done("podinfo v1 runs as podinfo-primary; the Canary is Initialized and waits for a release")
	return nil
}

// releaseHealthy: v2 passes every check, step by step, and is promoted.
func (p *play) releaseHealthy(ctx context.Context) error {
	p.screen.Note("serin runs v2 as the canary next to podinfo-primary (v1), then sends it 20, 40, 60%% of the")
	p.screen.Note("users' requests through Traefik, checking the error rate of what the canary served in")
	p.screen.Note("Prometheus before each step, then copies v2 to the primary, routes all traffic back to it")
	p.screen.Note("and scales the canary to zero. The users line shows what the users see, step by step")
	commit, err := p.release(ctx, "v2", 0)
	if err != nil {
		return err
	}
	c, err := p.waitForPhase(ctx, v1alpha1.PhaseSucceeded, commit)
	if err != nil {
		return err
	}
	if c.Status.LastPromotedRevision != revision(commit) {
		return fmt.Errorf("the last promoted revision is %q, expected %q", c.Status.LastPromotedRevision, revision(commit))
	}
	if err := p.expectPrimary(ctx, p.namespace, "v2"); err != nil {
		return err
	}
	if err := p.expectCanaryScaledDown(ctx); err != nil {
		return err
	}
	p.good = commit
	p.screen.Line("kube", "%s", p.workloads(ctx))
	return p.waitForMessage(ctx, string(v1alpha1.PhaseSucceeded))
}

// releaseErroring: v3 answers 10% of its requests with 500; its checks
// fail twice (the threshold) and it is rolled back.
func (p *play) releaseErroring(ctx context.Context) error {
	p.screen.Note("v3 has a bug: it answers 10%% of its requests with 500. The users who reach it (20%% of")
	p.screen.Note("them) see those errors; each failed check holds the weight, and the second one")
	p.screen.Note("(threshold: 2) rolls v3 back: every request goes to the primary, still v2")
	commit, err := p.release(ctx, "v3", 10)
	if err != nil {
		return err
	}
	c, err := p.waitForPhase(ctx, v1alpha1.PhaseFailed, commit)
	if err != nil {
		return err
	}
	p.screen.Line("serin", "%s", conditions.GetMessage(c, meta.ReadyCondition))
	if err := p.expectPrimary(ctx, p.namespace, "v2"); err != nil {
		return err
	}
	if err := p.expectCanaryScaledDown(ctx); err != nil {
		return err
	}
	p.screen.Line("kube", "%s", p.workloads(ctx))
	p.screen.Note("Git still says v3: Flux keeps applying it, serin keeps the primary on v2 until a new release")
	return p.waitForMessage(ctx, string(v1alpha1.PhaseFailed))
}

// releaseUnpromotable: a ResourceQuota lets the canary run v4 but refuses
// the primary's new pod during the promotion; serin halts with the canary
// serving, and opens a pull request that reverts v4 in Git.
func (p *play) releaseUnpromotable(ctx context.Context) error {
	if err := p.limitPods(ctx, 2); err != nil {
		return err
	}
	p.screen.Note("a ResourceQuota now allows 2 pods in namespace %s: the primary's and the canary's fit,", p.namespace)
	p.screen.Note("but not the new pod the primary needs to roll to v4. v4 itself is healthy and passes its")
	p.screen.Note("analysis; its promotion cannot complete. serin halts instead of routing to a primary that")
	p.screen.Note("is not ready: the canary keeps serving at 60%%, and serin proposes the way back in Git")
	commit, err := p.release(ctx, "v4", 0)
	if err != nil {
		return err
	}
	c, err := p.waitForPhase(ctx, v1alpha1.PhaseHalted, commit)
	if err != nil {
		return err
	}
	p.screen.Line("serin", "%s", conditions.GetMessage(c, meta.StalledCondition))
	if err := p.expectCanaryServing(ctx); err != nil {
		return err
	}
	p.screen.Line("kube", "%s", p.workloads(ctx))
	if err := p.waitForMessage(ctx, string(v1alpha1.PhaseHalted)); err != nil {
		return err
	}
	if err := p.waitForPullRequest(ctx); err != nil {
		return err
	}
	return p.waitForMessage(ctx, "RevertOpened")
}

// mergeRevert: a person merges the pull request, Flux applies main, and
// serin restores the primary to v2 while the canary serves, then routes
// back to it.
func (p *play) mergeRevert(ctx context.Context) error {
	if p.pr == nil {
		return fmt.Errorf("no revert pull request to merge")
	}
	p.screen.Note("a reviewer merges the pull request. Flux applies v2 again, the last promoted revision, so")
	p.screen.Note("serin rolls podinfo-primary back to its v2 ReplicaSet, whose pod never stopped (the quota")
	p.screen.Note("needs no change), then routes all traffic to it and scales the v4 canary down")
	if err := p.fleet.merge(ctx, p.pr.Number); err != nil {
		return err
	}
	head, err := p.fleet.pull(ctx)
	if err != nil {
		return err
	}
	p.tag = "v2"
	p.screen.Line("gitea", "merged pull request #%d: main is at %s", p.pr.Number, short(head))
	if err := p.syncAndShow(ctx, head); err != nil {
		return err
	}
	c, err := p.waitForPhase(ctx, v1alpha1.PhaseSucceeded, head)
	if err != nil {
		return err
	}
	if reason := conditions.GetReason(c, meta.ReadyCondition); reason != v1alpha1.RevertedReason {
		return fmt.Errorf("the canary succeeded with reason %s, expected %s", reason, v1alpha1.RevertedReason)
	}
	p.screen.Line("serin", "%s (reason %s)", conditions.GetMessage(c, meta.ReadyCondition), v1alpha1.RevertedReason)
	if err := p.expectPrimary(ctx, p.namespace, "v2"); err != nil {
		return err
	}
	if err := p.expectCanaryScaledDown(ctx); err != nil {
		return err
	}
	p.screen.Line("kube", "%s", p.workloads(ctx))
	return p.waitForMessage(ctx, string(v1alpha1.PhaseSucceeded))
}

// releaseGroup: podinfo gets a frontend, and the two are released as one
// CanaryGroup. One commit releases podinfo v5 (healthy) and frontend v2,
// which answers 10% of its requests with 500: the frontend fails its
// checks, and podinfo v5, which passed its own, is rolled back with it.
// No user is left on a mix the commit never described.
func (p *play) releaseGroup(ctx context.Context) error {
	if err := p.kube.Delete(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "pods", Namespace: p.namespace}}); client.IgnoreNotFound(err) != nil {
		return err
	}
	p.screen.Note("the ResourceQuota of act 3 is lifted. podinfo gets a frontend, and a CanaryGroup makes the two")
	p.screen.Note("one release: both step together, and either's failure rolls both back")
	commit, err := p.fleet.commit(ctx, groupFiles(p.settings, p.tag, "v1", 0), "Add the frontend v1 and the CanaryGroup shop")
	if err != nil {
		return err
	}
	p.screen.Line("git", "pushed %s \"Add the frontend v1 and the CanaryGroup shop\": %s/{frontend.yaml, group.yaml, kustomization.yaml}", short(commit), appPath)
	if err := p.syncAndShow(ctx, commit); err != nil {
		return err
	}
	if err := p.waitForCanaryPhase(ctx, frontend, v1alpha1.PhaseInitialized, ""); err != nil {
		return err
	}
	frontendUsers := testbed.StartLoad(ctx, testbed.LoadOptions{URL: p.env.GatewayURL + "/", Host: p.frontendHost(), Rate: usersRate, Duration: 10 * time.Minute})
	defer frontendUsers.Stop()
	p.screen.Line("users", "%d requests/s to http://%s/ through Traefik as well", usersRate, p.frontendHost())

	p.screen.Note("one commit: podinfo v5 (healthy) and frontend v2, which answers 10%% of its requests with 500")
	commit, err = p.fleet.commit(ctx, groupFiles(p.settings, "v5", "v2", 10), "Release podinfo v5 and frontend v2")
	if err != nil {
		return err
	}
	p.screen.Line("git", "pushed %s \"Release podinfo v5 and frontend v2\": newTag podinfo v5, frontend v2 in %s/kustomization.yaml, a bug in frontend.yaml", short(commit), appPath)
	p.tag = "v5"
	if err := p.syncAndShow(ctx, commit); err != nil {
		return err
	}
	if err := p.waitForCanaryPhase(ctx, frontend, v1alpha1.PhaseFailed, commit); err != nil {
		return err
	}
	c, err := p.waitForPhase(ctx, v1alpha1.PhaseFailed, commit)
	if err != nil {
		return err
	}
	p.screen.Line("serin", "podinfo: %s", conditions.GetMessage(c, meta.ReadyCondition))
	if c.Status.Group == nil || c.Status.Group.FailedBy != frontend {
		return fmt.Errorf("podinfo was not rolled back with its group: %+v", c.Status.Group)
	}
	group := &v1alpha1.CanaryGroup{}
	if err := poll(ctx, p.screen, 30*time.Second, func() (bool, error) {
		err := p.kube.Get(ctx, types.NamespacedName{Namespace: p.namespace, Name: groupName}, group)
		return err == nil && group.Status.Phase == v1alpha1.PhaseFailed, nil
	}, func() string { return "the CanaryGroup is " + string(group.Status.Phase) + ", not Failed" }); err != nil {
		return err
	}
	p.screen.Line("serin", "CanaryGroup %s: %s", groupName, group.Status.Release.Message)
	if err := p.expectPrimary(ctx, p.namespace, "v2"); err != nil {
		return err
	}
	verdict := c.Status.LastTransitionTime.Time.Add(p.interval)
	time.Sleep(time.Until(verdict.Add(time.Second)))
	late := 0
	for _, s := range frontendUsers.Samples(verdict, time.Time{}) {
		if s.Version == "v2" {
			late++
		}
	}
	fc := frontendUsers.Counts(time.Time{}, time.Time{})
	p.screen.Line("users", "frontend: %d requests, by version %v; answered by v2 one interval after the verdict: %d", fc.Total, fc.ByVersion, late)
	if late > 0 {
		return fmt.Errorf("%d requests answered by frontend v2 one interval after the release failed", late)
	}
	p.screen.Line("kube", "%s", p.workloads(ctx))
	return p.waitForMessage(ctx, "ReleaseFailed")
}

// release commits a new image tag (and the Deployment, whose code has a
// bug answering errorPercent % 5xx), as a developer would, and has Flux
// apply it.
func (p *play) release(ctx context.Context, tag string, errorPercent int) (string, error) {
	message := "Release podinfo " + tag
	commit, err := p.fleet.commit(ctx, releaseFiles(p.settings, tag, errorPercent), message)
	if err != nil {
		return "", err
	}
	bug := ""
	switch {
	case errorPercent > 0:
		bug = fmt.Sprintf(", and a bug (%d%% of requests answered 500) in deployment.yaml", errorPercent)
	case p.bug > 0:
		bug = ", and the bug fixed in deployment.yaml"
	}
	p.screen.Line("git", "pushed %s %q: newTag %s → %s in %s/kustomization.yaml%s", short(commit), message, p.tag, tag, appPath, bug)
	p.tag, p.bug = tag, errorPercent
	return commit, p.syncAndShow(ctx, commit)
}

// syncAndShow has the app's Flux apply commit and says how long it took.
func (p *play) syncAndShow(ctx context.Context, commit string) error {
	return p.syncStageAndShow(ctx, p.namespace, commit)
}

// syncStageAndShow has the Flux of namespace ns apply commit and says how
// long it took, naming the Kustomization with its namespace outside the
// app's.
func (p *play) syncStageAndShow(ctx context.Context, ns, commit string) error {
	start := time.Now()
	if err := p.fleet.sync(ctx, ns, commit); err != nil {
		return err
	}
	name := kustomizationName
	if ns != p.namespace {
		name = ns + "/" + name
	}
	p.screen.Line("flux", "Kustomization %s applied %s in %s", name, revision(commit)[:len("main@sha1:")+8], round(time.Since(start)))
	return nil
}

// ensureNamespace creates namespace ns unless it exists.
func (p *play) ensureNamespace(ctx context.Context, ns string) error {
	err := p.kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func revision(commit string) string { return "main@sha1:" + commit }

func short(commit string) string { return commit[:min(8, len(commit))] }
