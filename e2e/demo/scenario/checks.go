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
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
)

// poll calls done every 200 ms until it returns true or an error, ctx ends
// or timeout passes; describe says what is awaited, in the error and in a
// line printed every 15 seconds of waiting, so that no wait is silent.
func poll(ctx context.Context, screen *Screen, timeout time.Duration, done func() (bool, error), describe func() string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	next := start.Add(heartbeat)
	for {
		ok, err := done()
		if err != nil || ok {
			return err
		}
		if time.Now().After(next) {
			screen.Note("… still waiting (%s): %s", round(time.Since(start)), describe())
			next = next.Add(heartbeat)
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return fmt.Errorf("interrupted: %s", describe())
			}
			return fmt.Errorf("%s after %s", describe(), round(timeout))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// heartbeat is how often a wait says it is still waiting.
const heartbeat = 15 * time.Second

// terminal phases end a rollout.
var terminal = map[v1alpha1.CanaryPhase]bool{
	v1alpha1.PhaseSucceeded: true, v1alpha1.PhaseFailed: true, v1alpha1.PhaseHalted: true,
}

// waitForPhase waits until the Canary is in phase for the revision of
// commit (any revision when commit is empty). It fails as soon as the
// Canary ends that revision in another phase, or stalls before it.
func (p *play) waitForPhase(ctx context.Context, phase v1alpha1.CanaryPhase, commit string) (*v1alpha1.Canary, error) {
	return p.waitForPhaseIn(ctx, p.namespace, phase, commit)
}

// waitForPhaseIn is waitForPhase for the app's Canary in namespace ns.
func (p *play) waitForPhaseIn(ctx context.Context, ns string, phase v1alpha1.CanaryPhase, commit string) (*v1alpha1.Canary, error) {
	c := &v1alpha1.Canary{}
	name := "the canary"
	if ns != p.namespace {
		name = "the canary of " + ns
	}
	err := poll(ctx, p.screen, actTimeout, func() (bool, error) {
		if err := p.kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: appName}, c); err != nil {
			return false, nil
		}
		if commit != "" && c.Status.LastAttemptedRevision != revision(commit) {
			return false, nil
		}
		switch {
		case c.Status.Phase == phase:
			return true, nil
		case terminal[c.Status.Phase], c.Status.Phase == v1alpha1.PhaseInitializing && conditions.IsStalled(c):
			return false, fmt.Errorf("%s ended %s, expected %s: %s", name, c.Status.Phase, phase, conditions.GetMessage(c, meta.ReadyCondition))
		}
		return false, nil
	}, func() string { return fmt.Sprintf("%s is %s, not %s", name, c.Status.Phase, phase) })
	return c, err
}

// waitForCanaryPhase waits until the Canary name is in phase for the
// revision of commit (any revision when commit is empty).
func (p *play) waitForCanaryPhase(ctx context.Context, name string, phase v1alpha1.CanaryPhase, commit string) error {
	c := &v1alpha1.Canary{}
	return poll(ctx, p.screen, actTimeout, func() (bool, error) {
		if err := p.kube.Get(ctx, types.NamespacedName{Namespace: p.namespace, Name: name}, c); err != nil {
			return false, nil
		}
		return (commit == "" || c.Status.LastAttemptedRevision == revision(commit)) && c.Status.Phase == phase, nil
	}, func() string { return fmt.Sprintf("%s is %s, not %s", name, c.Status.Phase, phase) })
}

// phase is the Canary's phase now, also after an interruption.
func (p *play) phase(ctx context.Context) v1alpha1.CanaryPhase {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	c := &v1alpha1.Canary{}
	if err := p.kube.Get(ctx, types.NamespacedName{Namespace: p.namespace, Name: appName}, c); err != nil {
		return ""
	}
	return c.Status.Phase
}

// waitForMessage waits until the sink received a notification with
// reason during this act.
func (p *play) waitForMessage(ctx context.Context, reason string) error {
	return poll(ctx, p.screen, 30*time.Second, func() (bool, error) {
		return p.sink.received(p.actMessages, reason), nil
	}, func() string { return "the sink received no " + reason + " notification" })
}

// deployment reads a Deployment of the app in namespace ns.
func (p *play) deployment(ctx context.Context, ns, name string) (*appsv1.Deployment, error) {
	d := &appsv1.Deployment{}
	err := p.kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, d)
	return d, err
}

// expectPrimary checks that the primary of namespace ns runs tag on all
// its replicas.
func (p *play) expectPrimary(ctx context.Context, ns, tag string) error {
	want := "podinfo:" + tag
	return poll(ctx, p.screen, 30*time.Second, func() (bool, error) {
		d, err := p.deployment(ctx, ns, appName+v1alpha1.PrimarySuffix)
		if err != nil {
			return false, nil
		}
		return d.Spec.Template.Spec.Containers[0].Image == want && d.Status.AvailableReplicas == *d.Spec.Replicas &&
			d.Status.UpdatedReplicas == *d.Spec.Replicas, nil
	}, func() string { return "podinfo-primary of " + ns + " does not run " + want + " on all its replicas" })
}

// expectCanaryServing checks that the canary still runs ready pods and
// receives traffic.
func (p *play) expectCanaryServing(ctx context.Context) error {
	d, err := p.deployment(ctx, p.namespace, appName)
	if err != nil {
		return err
	}
	if d.Status.ReadyReplicas == 0 {
		return fmt.Errorf("the canary has no ready pod while the promotion is halted")
	}
	if w := p.routeWeights(ctx, p.namespace); !strings.Contains(w, "canary") || strings.HasSuffix(w, "canary 0") {
		return fmt.Errorf("the canary gets no traffic while the promotion is halted: %s", w)
	}
	return nil
}

// workloads describes the primary, the canary and the route in one line.
func (p *play) workloads(ctx context.Context) string { return p.workloadsIn(ctx, p.namespace) }

// workloadsIn is workloads in namespace ns.
func (p *play) workloadsIn(ctx context.Context, ns string) string {
	var parts []string
	for _, name := range []string{appName + v1alpha1.PrimarySuffix, appName} {
		d, err := p.deployment(ctx, ns, name)
		if err != nil {
			parts = append(parts, name+": "+err.Error())
			continue
		}
		parts = append(parts, describeDeployment(d))
	}
	return strings.Join(append(parts, "HTTPRoute "+p.routeWeights(ctx, ns)), " · ")
}

// describeDeployment says which tag a Deployment runs and how ready it is.
func describeDeployment(d *appsv1.Deployment) string {
	label := d.Name
	if d.Name == appName {
		label += " (canary)"
	}
	tag := strings.TrimPrefix(d.Spec.Template.Spec.Containers[0].Image, "podinfo:")
	desired, st := *d.Spec.Replicas, d.Status
	switch {
	case desired == 0 && st.Replicas == 0:
		return fmt.Sprintf("%s %s, scaled to 0", label, tag)
	case desired == 0:
		return fmt.Sprintf("%s %s, scaling to 0", label, tag)
	case st.UpdatedReplicas < desired:
		return fmt.Sprintf("%s wants %s: %d/%d updated, %d old pod ready", label, tag, st.UpdatedReplicas, desired, st.ReadyReplicas)
	}
	return fmt.Sprintf("%s %s, %d/%d ready", label, tag, st.ReadyReplicas, desired)
}

// expectCanaryScaledDown waits until the canary runs no pod.
func (p *play) expectCanaryScaledDown(ctx context.Context) error {
	return poll(ctx, p.screen, 30*time.Second, func() (bool, error) {
		d, err := p.deployment(ctx, p.namespace, appName)
		return err == nil && *d.Spec.Replicas == 0 && d.Status.Replicas == 0, nil
	}, func() string { return "the canary was not scaled to zero" })
}

// routeWeights reads the weights of the HTTPRoute serin generated in
// namespace ns.
func (p *play) routeWeights(ctx context.Context, ns string) string {
	route := &unstructured.Unstructured{}
	route.SetAPIVersion("gateway.networking.k8s.io/v1")
	route.SetKind("HTTPRoute")
	if err := p.kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: appName}, route); err != nil {
		return "unreadable: " + err.Error()
	}
	rules, _, _ := unstructured.NestedSlice(route.Object, "spec", "rules")
	if len(rules) == 0 {
		return "without rules"
	}
	refs, _, _ := unstructured.NestedSlice(rules[0].(map[string]any), "backendRefs")
	var weights []string
	for _, r := range refs {
		ref := r.(map[string]any)
		name := strings.TrimPrefix(fmt.Sprint(ref["name"]), appName+"-")
		weights = append(weights, fmt.Sprintf("%s %v", name, ref["weight"]))
	}
	return strings.Join(weights, " / ")
}

// limitPods creates a ResourceQuota of n pods and waits until the quota
// controller has counted the namespace's pods (the API server refuses
// every pod before) and found room for one more, the canary's: a pod of
// the last rollout still terminating would take its place.
func (p *play) limitPods(ctx context.Context, n int) error {
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "pods", Namespace: p.namespace},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(int64(n), resource.DecimalSI)}},
	}
	if err := p.kube.Create(ctx, quota); err != nil {
		return err
	}
	return poll(ctx, p.screen, 30*time.Second, func() (bool, error) {
		if err := p.kube.Get(ctx, types.NamespacedName{Namespace: p.namespace, Name: "pods"}, quota); err != nil {
			return false, nil
		}
		used, counted := quota.Status.Used[corev1.ResourcePods]
		return counted && used.Value() < int64(n), nil
	}, func() string { return "the ResourceQuota leaves no room for the canary's pod" })
}

// waitForPullRequest waits until serin records the revert pull request,
// then shows it as Gitea has it.
func (p *play) waitForPullRequest(ctx context.Context) error {
	c := &v1alpha1.Canary{}
	err := poll(ctx, p.screen, time.Minute, func() (bool, error) {
		if err := p.kube.Get(ctx, types.NamespacedName{Namespace: p.namespace, Name: appName}, c); err != nil {
			return false, nil
		}
		r := c.Status.Revert
		if r != nil && r.State == gitops.StateFailed {
			return false, fmt.Errorf("the revert failed: %s", r.Message)
		}
		return r != nil && r.State == gitops.StateOpened, nil
	}, func() string { return "serin opened no revert pull request" })
	if err != nil {
		return err
	}
	prs, err := p.fleet.pullRequests(ctx)
	if err != nil {
		return err
	}
	for i := range prs {
		if prs[i].HTMLURL == c.Status.Revert.PullRequestURL {
			p.pr = &prs[i]
		}
	}
	if p.pr == nil {
		return fmt.Errorf("gitea has no pull request %s", c.Status.Revert.PullRequestURL)
	}
	_, err = p.showPullRequest(ctx, p.pr, "This reverts")
	return err
}

// showPullRequest prints a pull request serin opened: title, URL, branch,
// diff, and the lines of its body that start with one of bodyLines. It
// returns the diff's lines.
func (p *play) showPullRequest(ctx context.Context, pr *pullRequest, bodyLines ...string) ([]string, error) {
	p.screen.Line("gitea", "serin opened pull request #%d %q", pr.Number, pr.Title)
	p.screen.Line("gitea", "  %s  (branch %s → main)", pr.HTMLURL, pr.Head.Ref)
	diff, err := p.fleet.pullRequestDiff(ctx, pr.Number)
	if err != nil {
		return nil, err
	}
	for _, l := range diff {
		p.screen.Line("gitea", "  %s", l)
	}
	for _, l := range strings.Split(strings.TrimSpace(pr.Body), "\n") {
		for _, prefix := range bodyLines {
			if strings.HasPrefix(l, prefix) {
				p.screen.Line("gitea", "  %s", l)
				break
			}
		}
	}
	return diff, nil
}

// waitForRevision waits until the Canary name has taken the revision of
// commit, in whatever phase: a target that Git returns to what its
// primary runs is accepted without analysis, and its phase stays.
func (p *play) waitForRevision(ctx context.Context, name, commit string) error {
	c := &v1alpha1.Canary{}
	return poll(ctx, p.screen, 30*time.Second, func() (bool, error) {
		err := p.kube.Get(ctx, types.NamespacedName{Namespace: p.namespace, Name: name}, c)
		return err == nil && c.Status.LastAttemptedRevision == revision(commit), nil
	}, func() string { return fmt.Sprintf("%s has not taken revision %s", name, short(commit)) })
}
