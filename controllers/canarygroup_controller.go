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
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/patch"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	kuberecorder "k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/record"
	"github.com/serin-dev/serin/internal/redact"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/notifier"
)

// CanaryGroupReconciler reports a CanaryGroup's releases: which members
// changed with the current revision, how far each is, and the release's
// verdict, as kstatus conditions a Flux health check can wait on. It
// observes the members and writes what rollout.RecordRelease derives from
// them; it decides nothing for them: each member Canary follows the
// group's rules itself (internal/rollout/group.go, carried out by
// group_member.go), from the other members' status, so that a release
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
	// Shard is the agent's --watch-label-selector, nil when it reconciles
	// every CanaryGroup; the cache holds every group, this agent
	// reconciles its shard's (shard.go).
	Shard labels.Selector
	// APIReader reads, live, a member the cache does not hold (another
	// shard's); nil reads none.
	APIReader client.Reader

	// announced is the release and phase last announced, by group UID.
	announced sync.Map
}

// SetupWithManager registers the controller: a group is reconciled when
// it changes and when one of its members' status does.
func (r *CanaryGroupReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.CanaryGroup{}, builder.WithPredicates(predicate.GenerationChangedPredicate{},
			predicate.NewPredicateFuncs(func(o client.Object) bool { return inShard(r.Shard, o) }))).
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
	reqs := make([]reconcile.Request, 0, len(groups))
	for i := range groups {
		if inShard(r.Shard, &groups[i]) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&groups[i])})
		}
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

	members, canaries, err := r.observeMembers(ctx, g)
	if err != nil {
		return ctrl.Result{}, err
	}
	rollout.RecordRelease(&g.Status, g.Name, members, r.now())
	setGroupConditions(g, rollout.GroupProblems(g, members), rollout.StrandedMembers(g.Name, g.Status.Release, members))

	changed := before.Phase != g.Status.Phase || (before.Release == nil) != (g.Status.Release == nil) ||
		(before.Release != nil && g.Status.Release != nil && before.Release.Revision != g.Status.Release.Revision)
	err = patcher.Patch(ctx, g,
		patch.WithOwnedConditions{Conditions: []string{meta.ReadyCondition, meta.ReconcilingCondition, meta.StalledCondition}},
		patch.WithStatusObservedGeneration{}, patch.WithFieldOwner(r.ControllerName))
	if err == nil && changed {
		// Once written: a failed write announces nothing, its retry does.
		r.announce(ctx, g, canaries)
	}
	return ctrl.Result{}, client.IgnoreNotFound(err)
}

// observeMembers reads the group's members, in spec.members order, for
// the group rules (rollout.RecordRelease, GroupProblems), and returns the
// Canaries found by name, for the verdict's notification.
func (r *CanaryGroupReconciler) observeMembers(ctx context.Context, g *v1alpha1.CanaryGroup) ([]rollout.ReleaseMember, map[string]*v1alpha1.Canary, error) {
	members := make([]rollout.ReleaseMember, 0, len(g.Spec.Members))
	canaries := map[string]*v1alpha1.Canary{}
	for _, m := range g.Spec.Members {
		c := &v1alpha1.Canary{}
		err := r.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: m.Name}, c)
		switch {
		case apierrors.IsNotFound(err):
			how, err := memberInOtherShard(ctx, r.APIReader, r.Shard, g.Namespace, m.Name)
			if err != nil {
				return nil, nil, err
			}
			members = append(members, rollout.ReleaseMember{GroupPeer: rollout.GroupPeer{Name: m.Name}, OtherShard: how})
			continue
		case err != nil:
			return nil, nil, err
		}
		canaries[m.Name] = c
		others, err := groupsOf(ctx, r.Client, g.Namespace, m.Name)
		if err != nil {
			return nil, nil, err
		}
		listedBy := make([]string, len(others))
		for i := range others {
			listedBy[i] = others[i].Name
		}
		members = append(members, rollout.ReleaseMember{
			GroupPeer: rollout.GroupPeer{Name: m.Name, Found: true, Phase: c.Status.Phase, Status: c.Status.Group,
				Message: conditions.GetMessage(c, meta.ReadyCondition), Promotions: c.Status.Promotions},
			ListedBy: listedBy, Weight: c.Status.CanaryWeight, AnalysisSummary: record.Summary(record.Latest(&c.Status)),
			LastAttemptedRevision: c.Status.LastAttemptedRevision, Revert: c.Status.Revert,
		})
	}
	return members, canaries, nil
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
	msg = redact.Text(msg)
	if r.EventRecorder != nil {
		r.Event(g, eventType, reason, msg)
	}
	if r.Notifier == nil || !rollout.IsVerdict(rel.Phase) {
		return
	}
	via := members[rollout.VerdictVia(rel)]
	if via == nil {
		ctrl.LoggerFrom(ctx).Info("release verdict not sent: no member to send it through", "group", g.Name)
		return
	}
	r.Notifier.Notify(ctx, via, notifier.Event{Severity: severity, Reason: reason, Message: msg, Phase: rel.Phase,
		Revision: via.Status.LastAttemptedRevision, Weight: via.Status.CanaryWeight})
}
