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
	"maps"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// releaseToProduction: the app's namespace plays staging and gets a next
// stage, production: a namespace with its own Flux Kustomization of
// production/ in the same repository, its own Canary and its own users.
// v6, committed to staging only, is analysed and promoted there, soaks,
// and comes to production as one pull request; merged, production's
// Canary rolls it out on production's users and posts its verdict as a
// commit status on the merge commit, which staging reads back.
func (p *play) releaseToProduction(ctx context.Context) error {
	start := time.Now()
	production, err := p.addProduction(ctx)
	if err != nil {
		return err
	}
	const tag = "v6"
	commit, err := p.releaseToStaging(ctx, tag)
	if err != nil {
		return err
	}
	w := &wave{play: p, commit: commit}
	opened, err := w.waitFor(ctx, v1alpha1.WaveOpened, time.Minute)
	if err != nil {
		return err
	}
	if err := p.showPromotion(ctx, opened, commit, tag); err != nil {
		return err
	}
	head, err := p.mergePromotion(ctx, tag)
	if err != nil {
		return err
	}
	done, err := w.waitFor(ctx, v1alpha1.WaveSucceeded, actTimeout)
	if err != nil {
		return err
	}
	if done.StageCommit != head {
		return fmt.Errorf("staging read production's verdict on %s, not on the merge commit %s", short(done.StageCommit), short(head))
	}
	if err := p.showCommitStatus(ctx, head); err != nil {
		return err
	}
	if err := p.expectUsersServed(ctx, production, start, tag); err != nil {
		return err
	}
	return p.waitForMessage(ctx, v1alpha1.StageSucceededReason)
}

// addProduction creates production: its namespace, the token of its
// commit-status Provider, its Flux objects, and one commit that adds
// production/podinfo at the tag staging's primary runs and has staging's
// Canary promote to it. It waits until production's Canary is initialized
// and starts production's users, whom the act's result counts.
func (p *play) addProduction(ctx context.Context) (*testbed.Load, error) {
	ns := p.productionNamespace()
	tag, err := p.primaryTag(ctx, p.namespace)
	if err != nil {
		return nil, err
	}
	p.screen.Note("namespace %s now plays staging. It gets a next stage, namespace %s, applied by a Flux", p.namespace, ns)
	p.screen.Note("Kustomization of its own from %s/ in the same repository: podinfo %s (what staging's", productionPath, tag)
	p.screen.Note("primary runs) and a Canary that posts its verdicts as Gitea commit statuses through a")
	p.screen.Note("Flux Provider in its spec.alerts. staging's Canary promotes to it after a %s soak", p.soak())
	if err := p.ensureNamespace(ctx, ns); err != nil {
		return nil, err
	}
	token := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: commitStatusToken, Namespace: ns},
		StringData: map[string]string{"token": p.env.Gitea.Token},
	}
	if err := p.kube.Create(ctx, token); err != nil {
		return nil, err
	}
	p.screen.Line("kube", "namespace %s, Secret %s (key token: the Gitea token, kept out of Git)", ns, commitStatusToken)
	files := promotingFiles(p.settings, p.tag)
	maps.Copy(files, productionFiles(p.settings, tag, p.fleet.url()))
	const message = "Add production, staging's next stage"
	commit, err := p.fleet.commit(ctx, files, message)
	if err != nil {
		return nil, err
	}
	p.screen.Line("git", "pushed %s %q: %s/{%s} at %s; %s/canary.yaml promotes to it, frontend v1 again",
		short(commit), message, productionPath, changedFiles(files, productionPath), tag, appPath)
	if err := p.fleet.applyFluxObjects(ctx, ns, productionPath); err != nil {
		return nil, err
	}
	p.screen.Line("flux", "GitRepository %[1]s/%[2]s → Kustomization %[1]s/%[3]s (path ./%[4]s, prune)", ns, gitRepositoryName, kustomizationName, productionPath)
	if err := p.syncAndShow(ctx, commit); err != nil {
		return nil, err
	}
	if err := p.syncStageAndShow(ctx, ns, commit); err != nil {
		return nil, err
	}
	if err := p.waitForRevision(ctx, frontend, commit); err != nil {
		return nil, err
	}
	if _, err := p.waitForPhaseIn(ctx, ns, v1alpha1.PhaseInitialized, ""); err != nil {
		return nil, err
	}
	users, answered, err := p.startUsers(ctx, p.productionHost(), "production")
	if err != nil {
		return nil, err
	}
	p.actUsers = func() testbed.Counts { return users.Counts(answered, time.Time{}) }
	p.screen.Line("kube", "%s: %s", ns, p.workloadsIn(ctx, ns))
	return users, nil
}

// releaseToStaging commits tag for staging only, has staging's Flux apply
// it, and waits until staging's Canary promoted it. It returns the commit.
func (p *play) releaseToStaging(ctx context.Context, tag string) (string, error) {
	p.screen.Note("%s is committed to staging only. staging's Canary analyses and promotes it (its group first", tag)
	p.screen.Note("waits its %s window for the frontend, which does not change); %s then soaks %s on", (&v1alpha1.CanaryGroup{}).GetWindow(), tag, p.soak())
	p.screen.Note("staging's users, and serin opens one pull request that sets %s in %s/", tag, productionPath)
	message := "Release podinfo " + tag
	commit, err := p.fleet.commit(ctx, promotingFiles(p.settings, tag), message)
	if err != nil {
		return "", err
	}
	p.screen.Line("git", "pushed %s %q: newTag podinfo %s → %s in %s/kustomization.yaml (staging only)", short(commit), message, p.tag, tag, appPath)
	p.tag = tag
	if err := p.syncAndShow(ctx, commit); err != nil {
		return "", err
	}
	c, err := p.waitForPhase(ctx, v1alpha1.PhaseSucceeded, commit)
	if err != nil {
		return "", err
	}
	if c.Status.LastPromotedRevision != revision(commit) {
		return "", fmt.Errorf("staging's last promoted revision is %q, expected %q", c.Status.LastPromotedRevision, revision(commit))
	}
	if err := p.expectPrimary(ctx, p.namespace, tag); err != nil {
		return "", err
	}
	p.screen.Line("kube", "%s", p.workloads(ctx))
	return commit, nil
}

// showPromotion finds the pull request of staging's promotion of commit
// in Gitea, on its branch, shows it, and checks that it sets tag in
// production's kustomization.yaml and changes nothing else.
func (p *play) showPromotion(ctx context.Context, st v1alpha1.PromotionStatus, commit, tag string) error {
	prs, err := p.fleet.pullRequests(ctx)
	if err != nil {
		return err
	}
	for i := range prs {
		if prs[i].HTMLURL == st.PullRequestURL {
			p.promotion = &prs[i]
		}
	}
	if p.promotion == nil {
		return fmt.Errorf("gitea has no pull request %s", st.PullRequestURL)
	}
	branch := fmt.Sprintf("serin/promote/%s/%s/%s/%s", productionStage, p.namespace, appName, short(commit))
	if p.promotion.Head.Ref != branch {
		return fmt.Errorf("the promotion's branch is %s, expected %s", p.promotion.Head.Ref, branch)
	}
	diff, err := p.showPullRequest(ctx, p.promotion, "Serin-Promotes")
	if err != nil {
		return err
	}
	file, sets := productionPath+"/kustomization.yaml:", false
	for _, l := range diff {
		switch {
		case strings.HasPrefix(l, "  "):
			sets = sets || strings.HasPrefix(l, "  +    newTag: "+tag+" ")
		case l != file:
			return fmt.Errorf("the promotion changes %s, not only %s", strings.TrimSuffix(l, ":"), strings.TrimSuffix(file, ":"))
		}
	}
	if !sets {
		return fmt.Errorf("the promotion does not set newTag %s in %s", tag, strings.TrimSuffix(file, ":"))
	}
	return nil
}

// mergePromotion merges the promotion as a reviewer would, has
// production's Flux apply main, and waits until production's Canary
// promoted tag. It returns the merge commit.
func (p *play) mergePromotion(ctx context.Context, tag string) (string, error) {
	ns := p.productionNamespace()
	p.screen.Note("a reviewer merges it. production's Canary rolls %s out on production's users, step by step,", tag)
	p.screen.Note("and posts its verdict on the merge commit, which staging reads back. The summary counts")
	p.screen.Note("production's users")
	if err := p.fleet.merge(ctx, p.promotion.Number); err != nil {
		return "", err
	}
	head, err := p.fleet.pull(ctx)
	if err != nil {
		return "", err
	}
	p.screen.Line("gitea", "merged pull request #%d: main is at %s", p.promotion.Number, short(head))
	if err := p.syncStageAndShow(ctx, ns, head); err != nil {
		return "", err
	}
	c, err := p.waitForPhaseIn(ctx, ns, v1alpha1.PhaseSucceeded, head)
	if err != nil {
		return "", err
	}
	if c.Status.LastPromotedRevision != revision(head) {
		return "", fmt.Errorf("production's last promoted revision is %q, expected %q", c.Status.LastPromotedRevision, revision(head))
	}
	p.screen.Line("serin", "%s podinfo: %s", ns, conditions.GetMessage(c, meta.ReadyCondition))
	if err := p.expectPrimary(ctx, ns, tag); err != nil {
		return "", err
	}
	p.screen.Line("kube", "%s: %s", ns, p.workloadsIn(ctx, ns))
	return head, nil
}

// showCommitStatus shows the verdict production's Canary posted on commit,
// as Gitea has it.
func (p *play) showCommitStatus(ctx context.Context, commit string) error {
	name := "serin/" + p.productionNamespace() + "/" + appName
	statuses, err := p.fleet.commitStatuses(ctx, commit)
	if err != nil {
		return err
	}
	for _, s := range statuses {
		if s.Context == name && s.Status == "success" {
			p.screen.Line("gitea", "commit %s: status %s %s %q", short(commit), name, s.Status, s.Description)
			return nil
		}
	}
	return fmt.Errorf("gitea has no success status %s on %s", name, short(commit))
}

// expectUsersServed checks that production's users are now answered by
// tag, and that neither production's users nor staging's, since start,
// saw an error.
func (p *play) expectUsersServed(ctx context.Context, production *testbed.Load, start time.Time, tag string) error {
	if err := poll(ctx, p.screen, 10*time.Second, func() (bool, error) {
		return lastVersion(production) == tag, nil
	}, func() string { return "production's users are not answered by " + tag }); err != nil {
		return err
	}
	prod, stg := p.actUsers(), p.users.Counts(start, time.Time{})
	p.screen.Line("users", "production: %d requests, by version %v, %d errors; staging: %d requests, %d errors",
		prod.Total, prod.ByVersion, prod.Errors, stg.Total, stg.Errors)
	if prod.Errors > 0 || stg.Errors > 0 {
		return fmt.Errorf("users saw errors: %d in production, %d in staging", prod.Errors, stg.Errors)
	}
	return nil
}

// primaryTag is the tag the primary of namespace ns runs.
func (p *play) primaryTag(ctx context.Context, ns string) (string, error) {
	d, err := p.deployment(ctx, ns, appName+v1alpha1.PrimarySuffix)
	if err != nil {
		return "", err
	}
	return strings.TrimPrefix(d.Spec.Template.Spec.Containers[0].Image, "podinfo:"), nil
}

// wave follows staging's promotion of one revision to production
// (status.promotions[0]), showing each phase it passes once.
type wave struct {
	*play
	commit string
	shown  string
}

// waitFor waits until the promotion is in phase. It fails as soon as the
// promotion ends elsewhere: Stopped or Error in staging, Failed in
// production.
func (w *wave) waitFor(ctx context.Context, phase string, timeout time.Duration) (v1alpha1.PromotionStatus, error) {
	c := &v1alpha1.Canary{}
	var st v1alpha1.PromotionStatus
	err := poll(ctx, w.screen, timeout, func() (bool, error) {
		if err := w.kube.Get(ctx, types.NamespacedName{Namespace: w.namespace, Name: appName}, c); err != nil || len(c.Status.Promotions) == 0 {
			return false, nil
		}
		st = c.Status.Promotions[0]
		if st.Revision != revision(w.commit) {
			return false, nil
		}
		w.show(st)
		switch st.Phase {
		case phase:
			return true, nil
		case v1alpha1.WaveStopped, v1alpha1.WaveError, v1alpha1.WaveFailed:
			return false, fmt.Errorf("the promotion to %s is %s: %s", st.Stage, st.Phase, st.Message)
		}
		return false, nil
	}, func() string {
		return fmt.Sprintf("staging's promotion of %s to production is %q, not %s", short(w.commit), st.Phase, phase)
	})
	return st, err
}

// show prints the promotion when its phase changed, as
// "staging podinfo: production: Succeeded at 0123abcd (message)".
func (w *wave) show(st v1alpha1.PromotionStatus) {
	if st.Phase == w.shown {
		return
	}
	w.shown = st.Phase
	at := ""
	if st.StageCommit != "" {
		at = " at " + short(st.StageCommit)
	}
	w.screen.Line("serin", "staging %s: %s: %s%s (%s)", appName, st.Stage, st.Phase, at, longHash.ReplaceAllString(st.Message, "$1"))
}
