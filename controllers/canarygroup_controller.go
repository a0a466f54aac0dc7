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

package controllers

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/patch"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kuberecorder "k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/record"
	"github.com/serin-dev/serin/notifier"
)

// CanaryGroupReconciler reports a CanaryGroup's releases: which members
// changed with the current revision, how far each is, and the release's
// verdict, as kstatus conditions a Flux health check can wait on. It
// decides nothing: each member Canary follows the group's rules itself
// (group_member.go), from the other members' status, so that a release
// resumes from the status alone after a restart.
type CanaryGroupReconciler struct {
	client.Client
	kuberecorder.EventRecorder

	// ControllerName is the field owner of serin's writes.
	ControllerName string
	// Notifier sends the release's verdict through the deciding member's
	// Flux bridge; nil sends Kubernetes Events only.
	Notifier notifier.Notifier
	// Clock returns the current time; nil means time.Now.
	Clock func() time.Time

	// announced is the release and phase last announced, by group UID.
	announced sync.Map
}

// SetupWithManager registers the controller: a group is reconciled when
// it changes and when one of its members' status does.
func (r *CanaryGroupReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.CanaryGroup{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&v1alpha1.Canary{}, handler.EnqueueRequestsFromMapFunc(r.groupsOfCanary)).
		Complete(r)
}

// groupsOfCanary maps a Canary to the groups that list it.
func (r *CanaryGroupReconciler) groupsOfCanary(ctx context.Context, o client.Object) []reconcile.Request {
	groups, err := groupsOf(ctx, r.Client, o.GetNamespace(), o.GetName())
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "failed to list the groups of a canary", "canary", o.GetName())
		return nil
	}
	reqs := make([]reconcile.Request, len(groups))
	for i := range groups {
		reqs[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&groups[i])}
	}
	return reqs
}

func (r *CanaryGroupReconciler) now() time.Time {
	if r.Clock != nil {
		return r.Clock()
	}
	return time.Now()
}

// Reconcile derives the group's status from its members'.
func (r *CanaryGroupReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	g := &v1alpha1.CanaryGroup{}
	if err := r.Get(ctx, req.NamespacedName, g); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	patcher := patch.NewSerialPatcher(g, r.Client)
	before := g.Status.DeepCopy()

	members := map[string]*v1alpha1.Canary{}
	var problems []string
	for _, m := range g.Spec.Members {
		c := &v1alpha1.Canary{}
		err := r.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: m.Name}, c)
		switch {
		case apierrors.IsNotFound(err):
			problems = append(problems, fmt.Sprintf("member %s: no Canary %s/%s: create it or remove it from spec.members", m.Name, g.Namespace, m.Name))
			continue
		case err != nil:
			return ctrl.Result{}, err
		}
		members[m.Name] = c
		others, err := groupsOf(ctx, r.Client, g.Namespace, m.Name)
		if err != nil {
			return ctrl.Result{}, err
		}
		if len(others) > 1 {
			names := make([]string, len(others))
			for i := range others {
				names[i] = others[i].Name
			}
			problems = append(problems, fmt.Sprintf("member %s is listed by CanaryGroups %s: a Canary belongs to one group at most", m.Name, strings.Join(names, " and ")))
		}
	}
	if cycle := dependencyCycle(g); cycle != "" {
		problems = append(problems, fmt.Sprintf("spec.members[].dependsOn forms a cycle (%s)", cycle))
	}

	release := currentRelease(g, members)
	if release != nil {
		if cur := g.Status.Release; cur != nil && cur.Revision != release.Revision && (terminal(cur.Phase) || heldByAMember(cur.Revision, members)) {
			// A release merged into another (members that began theirs at
			// the same moment) is no release of its own: not kept.
			g.Status.History = append([]v1alpha1.GroupRelease{*cur}, g.Status.History...)
			if len(g.Status.History) > maxGroupHistory {
				g.Status.History = g.Status.History[:maxGroupHistory]
			}
		}
		if cur := g.Status.Release; cur != nil && cur.Revision == release.Revision && cur.FinishedAt != nil && release.Phase == cur.Phase {
			release.FinishedAt = cur.FinishedAt
		}
		if release.FinishedAt == nil && terminal(release.Phase) {
			t := metav1.NewTime(r.now())
			release.FinishedAt = &t
		}
		g.Status.Release = release
		g.Status.Phase = release.Phase
	} else if g.Status.Phase == "" {
		g.Status.Phase = v1alpha1.PhaseInitialized
	}
	setGroupConditions(g, problems, strandedMembers(g, members))

	changed := before.Phase != g.Status.Phase || (before.Release == nil) != (g.Status.Release == nil) ||
		(before.Release != nil && g.Status.Release != nil && before.Release.Revision != g.Status.Release.Revision)
	err := patcher.Patch(ctx, g,
		patch.WithOwnedConditions{Conditions: []string{meta.ReadyCondition, meta.ReconcilingCondition, meta.StalledCondition}},
		patch.WithStatusObservedGeneration{}, patch.WithFieldOwner(r.ControllerName))
	if err == nil && changed {
		// Once written: a failed write announces nothing, its retry does.
		r.announce(ctx, g, members)
	}
	return ctrl.Result{}, client.IgnoreNotFound(err)
}

// heldByAMember reports whether a member's status names the release.
func heldByAMember(release string, members map[string]*v1alpha1.Canary) bool {
	for _, c := range members {
		if st := c.Status.Group; st != nil && st.Release == release {
			return true
		}
	}
	return false
}

// strandedMembers names the members rolled back with an earlier release
// whose target Git still has at the revision that was rolled back: they
// serve their last promoted revision until a new revision or a retry, and
// the group is not Ready meanwhile.
func strandedMembers(g *v1alpha1.CanaryGroup, members map[string]*v1alpha1.Canary) []string {
	var out []string
	for _, m := range g.Spec.Members {
		c, ok := members[m.Name]
		if !ok || c.Status.Phase != v1alpha1.PhaseFailed || c.Status.Group == nil || c.Status.Group.FailedBy == "" {
			continue
		}
		if rel := g.Status.Release; rel != nil && rel.Revision == c.Status.Group.Release {
			continue // the current release's verdict says it
		}
		out = append(out, fmt.Sprintf("member %s was rolled back with release %s (%s failed) and serves its last promoted revision: commit a new revision or run serin retry --group %s",
			c.Name, c.Status.Group.Release, c.Status.Group.FailedBy, g.Name))
	}
	return out
}

// maxGroupHistory bounds status.history.
const maxGroupHistory = 5

// terminal reports whether a phase is a release's verdict.
func terminal(p v1alpha1.CanaryPhase) bool {
	return p == v1alpha1.PhaseSucceeded || p == v1alpha1.PhaseFailed || p == v1alpha1.PhaseHalted
}

// currentRelease is the newest release the members joined, with each
// member's place in it and the verdict: Halted when a member's promotion
// halted, Failed when one failed, Succeeded when all were promoted.
func currentRelease(g *v1alpha1.CanaryGroup, members map[string]*v1alpha1.Canary) *v1alpha1.GroupRelease {
	var key string
	var start time.Time
	for _, c := range members {
		st := c.Status.Group
		if st == nil || st.Name != g.Name || st.Release == "" || st.StartedAt == nil {
			continue
		}
		if key == "" || st.StartedAt.After(start) || (st.StartedAt.Time.Equal(start) && st.Release > key) {
			key, start = st.Release, st.StartedAt.Time
		}
	}
	if key == "" {
		return nil
	}
	rel := &v1alpha1.GroupRelease{Revision: key, Phase: v1alpha1.PhaseSucceeded}
	var halted, failed, firstFailed string
	for _, m := range g.Spec.Members {
		c, ok := members[m.Name]
		if !ok || c.Status.Group == nil || c.Status.Group.Name != g.Name || c.Status.Group.Release != key {
			continue
		}
		st := c.Status.Group
		if st.StartedAt != nil && (rel.StartedAt == nil || st.StartedAt.Before(rel.StartedAt)) {
			rel.StartedAt = st.StartedAt.DeepCopy()
		}
		rel.Members = append(rel.Members, v1alpha1.GroupReleaseMember{
			Name: c.Name, Phase: c.Status.Phase, Weight: c.Status.CanaryWeight, StepsPassed: st.StepsPassed,
			Message: conditions.GetMessage(c, meta.ReadyCondition),
		})
		switch c.Status.Phase {
		case v1alpha1.PhaseHalted:
			if halted == "" {
				halted = c.Name
			}
		case v1alpha1.PhaseFailed:
			if failed == "" {
				failed = c.Name
			}
			if st.FailedBy == "" && firstFailed == "" {
				firstFailed = c.Name
			}
		case v1alpha1.PhaseSucceeded:
		default:
			rel.Phase = v1alpha1.PhaseProgressing
		}
	}
	decider := func(name string) {
		c := members[name]
		rel.DecidedBy = name
		rel.Message = fmt.Sprintf("%s %s: %s", name, strings.ToLower(string(c.Status.Phase)), conditions.GetMessage(c, meta.ReadyCondition))
		if s := record.Summary(record.Latest(&c.Status)); s != "" && c.Status.Phase == v1alpha1.PhaseFailed {
			rel.Message += "; analysis " + s
		}
		if rv := c.Status.Revert; rv != nil && rv.Revision == c.Status.LastAttemptedRevision {
			rel.RevertURL = cmp.Or(rv.PullRequestURL, rv.Branch)
		}
	}
	switch {
	case halted != "":
		rel.Phase = v1alpha1.PhaseHalted
		decider(halted)
	case firstFailed != "" || failed != "":
		rel.Phase = v1alpha1.PhaseFailed
		decider(cmp.Or(firstFailed, failed))
	case rel.Phase == v1alpha1.PhaseSucceeded:
		rel.Message = fmt.Sprintf("release %s promoted: %s", key, memberNames(rel.Members))
	default:
		rel.Message = fmt.Sprintf("release %s in progress: %s", key, memberSteps(rel.Members))
	}
	if rel.Phase == v1alpha1.PhaseFailed && rel.RevertURL == "" {
		// The member that decided may not revert; another may have.
		for _, m := range rel.Members {
			if rv := members[m.Name].Status.Revert; rv != nil && rv.Revision == members[m.Name].Status.LastAttemptedRevision && rv.PullRequestURL != "" {
				rel.RevertURL = rv.PullRequestURL
			}
		}
	}
	return rel
}

// memberNames lists the members of a release.
func memberNames(ms []v1alpha1.GroupReleaseMember) string {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Name
	}
	return strings.Join(names, ", ")
}

// memberSteps says where each member of a release is.
func memberSteps(ms []v1alpha1.GroupReleaseMember) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = fmt.Sprintf("%s %s (%d steps passed, weight %d)", m.Name, m.Phase, m.StepsPassed, m.Weight)
	}
	return strings.Join(parts, ", ")
}

// setGroupConditions sets Ready, Reconciling and Stalled as kstatus reads
// them: Stalled for a group that cannot be followed and for a Failed or
// Halted release (a person or a new revision must act), Reconciling while a
// release is in progress, Ready when the last release was promoted.
func setGroupConditions(g *v1alpha1.CanaryGroup, problems, stranded []string) {
	if len(problems) > 0 {
		msg := strings.Join(problems, "; ")
		conditions.MarkStalled(g, v1alpha1.InvalidGroupReason, "%s", msg)
		conditions.MarkFalse(g, meta.ReadyCondition, v1alpha1.InvalidGroupReason, "%s", msg)
		conditions.Delete(g, meta.ReconcilingCondition)
		return
	}
	if len(stranded) > 0 && g.Status.Phase != v1alpha1.PhaseProgressing {
		msg := strings.Join(stranded, "; ")
		conditions.MarkStalled(g, v1alpha1.MembersNotReleasedReason, "%s", msg)
		conditions.MarkFalse(g, meta.ReadyCondition, v1alpha1.MembersNotReleasedReason, "%s", msg)
		conditions.Delete(g, meta.ReconcilingCondition)
		return
	}
	msg := "no release yet"
	if rel := g.Status.Release; rel != nil {
		msg = rel.Message
	}
	switch g.Status.Phase {
	case v1alpha1.PhaseProgressing:
		conditions.MarkReconciling(g, v1alpha1.ProgressingReason, "%s", msg)
		conditions.MarkFalse(g, meta.ReadyCondition, v1alpha1.ProgressingReason, "%s", msg)
		conditions.Delete(g, meta.StalledCondition)
	case v1alpha1.PhaseFailed, v1alpha1.PhaseHalted:
		conditions.MarkStalled(g, string(g.Status.Phase), "%s", msg)
		conditions.MarkFalse(g, meta.ReadyCondition, string(g.Status.Phase), "%s", msg)
		conditions.Delete(g, meta.ReconcilingCondition)
	default:
		conditions.MarkTrue(g, meta.ReadyCondition, string(g.Status.Phase), "%s", msg)
		conditions.Delete(g, meta.ReconcilingCondition)
		conditions.Delete(g, meta.StalledCondition)
	}
}

// announce records the release's phase change as an event of the group
// and, for a verdict, sends it once through the Flux bridge of the member
// that decided (or the first member): its Providers and Flux owner.
func (r *CanaryGroupReconciler) announce(ctx context.Context, g *v1alpha1.CanaryGroup, members map[string]*v1alpha1.Canary) {
	rel := g.Status.Release
	if rel == nil {
		return
	}
	said := rel.Revision + "/" + string(rel.Phase)
	if last, ok := r.announced.Load(g.UID); ok && last == said {
		// The cache showed the status before this write: said already.
		return
	}
	r.announced.Store(g.UID, said)
	severity, eventType := notifier.SeverityInfo, corev1.EventTypeNormal
	if rel.Phase == v1alpha1.PhaseFailed || rel.Phase == v1alpha1.PhaseHalted {
		severity, eventType = notifier.SeverityError, corev1.EventTypeWarning
	}
	reason := "Release" + string(rel.Phase)
	msg := fmt.Sprintf("group %s, release %s: %s", g.Name, rel.Revision, rel.Message)
	if rel.RevertURL != "" {
		msg += "; revert: " + rel.RevertURL
	}
	if r.EventRecorder != nil {
		r.Event(g, eventType, reason, msg)
	}
	if r.Notifier == nil || !terminal(rel.Phase) {
		return
	}
	via := members[cmp.Or(rel.DecidedBy, firstMember(rel))]
	if via == nil {
		ctrl.LoggerFrom(ctx).Info("release verdict not sent: no member to send it through", "group", g.Name)
		return
	}
	r.Notifier.Notify(ctx, via, notifier.Event{Severity: severity, Reason: reason, Message: msg, Phase: rel.Phase,
		Revision: via.Status.LastAttemptedRevision, Weight: via.Status.CanaryWeight})
}

func firstMember(rel *v1alpha1.GroupRelease) string {
	if len(rel.Members) == 0 {
		return ""
	}
	return slices.MinFunc(rel.Members, func(a, b v1alpha1.GroupReleaseMember) int { return strings.Compare(a.Name, b.Name) }).Name
}
