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
	"slices"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/serin-dev/serin/analysis"
	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/notifier"
)

// This file is a member Canary's side of a CanaryGroup: what it reads of
// its group and the other members (observeGroup), and how it carries out
// what the group rules decide (internal/rollout/group*.go): its rollout
// joins a release, holds a passed step until the others caught up, and
// goes on. The group's own status is canarygroup_controller.go's.

// groupMembersIndexKey indexes CanaryGroups by the names of their members.
const groupMembersIndexKey = ".spec.members"

// groupMembers is the index function of groupMembersIndexKey.
func groupMembers(o client.Object) []string {
	g := o.(*v1alpha1.CanaryGroup)
	names := make([]string, 0, len(g.Spec.Members))
	for _, m := range g.Spec.Members {
		names = append(names, m.Name)
	}
	return names
}

// groupsOf lists the CanaryGroups that name the Canary as a member.
func groupsOf(ctx context.Context, c client.Reader, namespace, name string) ([]v1alpha1.CanaryGroup, error) {
	var list v1alpha1.CanaryGroupList
	if err := c.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{groupMembersIndexKey: name}); err != nil {
		return nil, fmt.Errorf("listing the CanaryGroups of %s: %w", name, err)
	}
	slices.SortFunc(list.Items, func(a, b v1alpha1.CanaryGroup) int { return strings.Compare(a.Name, b.Name) })
	return list.Items, nil
}

// observeGroup fills obs.Group from the CanaryGroup that lists the
// Canary, and the other members from the cache. A Canary two groups list,
// or a group whose dependsOn forms a cycle, is a conflict: the Canary
// acts on nothing until it is fixed.
func (r *CanaryReconciler) observeGroup(ctx context.Context, obj *v1alpha1.Canary, obs *rollout.Observation) error {
	groups, err := groupsOf(ctx, r.Client, obj.Namespace, obj.Name)
	if err != nil || len(groups) == 0 {
		return err
	}
	// A group that cannot be followed starts no rollout of its members;
	// one under way goes on alone (its safety does not wait for a fix).
	if why := rollout.InvalidGroup(obj.Name, groups); why != "" {
		obs.Group.Invalid = why
		return nil
	}
	g := &groups[0]
	if !inShard(r.Shard, g) {
		obs.Group.Invalid = otherShardGroup(g, r.Shard)
		return nil
	}
	self, _ := g.Member(obj.Name)
	obs.Group = rollout.Group{Name: g.Name, DependsOn: self.DependsOn, Window: g.GetWindow()}
	for _, m := range g.Spec.Members {
		if m.Name == obj.Name {
			continue
		}
		peer := rollout.GroupPeer{Name: m.Name}
		var c v1alpha1.Canary
		err := r.Get(ctx, client.ObjectKey{Namespace: obj.Namespace, Name: m.Name}, &c)
		switch {
		case client.IgnoreNotFound(err) != nil:
			return err
		case err != nil:
			// Not in the cache: in another shard, or no such Canary.
			how, err := memberInOtherShard(ctx, r.APIReader, r.Shard, obj.Namespace, m.Name)
			if err != nil {
				return err
			}
			if how != "" {
				obs.Group = rollout.Group{Invalid: otherShardMember(g.Name, obj.Namespace, m.Name, how)}
				return nil
			}
		case err == nil:
			peer.Found, peer.Phase, peer.Status, peer.Suspended = true, c.Status.Phase, c.Status.Group, c.Spec.Suspend
			peer.Revision, peer.Revert = c.Status.LastAttemptedRevision, c.Status.Revert
			peer.Promote, peer.Promotions = c.Spec.GitOps.GetPromote(), c.Status.Promotions
			peer.Message = conditions.GetMessage(&c, meta.ReadyCondition)
			if t := c.Status.LastTransitionTime; t != nil {
				peer.Since = t.Time
			}
		}
		obs.Group.Members = append(obs.Group.Members, peer)
	}
	return nil
}

// joinRelease records the release the rollout that starts belongs to, and
// returns the members it must wait for (dependsOn) before its analysis.
func joinRelease(obj *v1alpha1.Canary, obs rollout.Observation) []string {
	if !obs.Group.InGroup() {
		obj.Status.Group = nil
		return nil
	}
	key, start := rollout.ReleaseKey(obj, obs)
	st := obj.Status.Group
	if st == nil || st.Name != obs.Group.Name || st.Release != key {
		at := metav1.NewTime(start)
		st = &v1alpha1.GroupStatus{Name: obs.Group.Name, Release: key, StartedAt: &at}
	}
	st.StepsPassed, st.Holding, st.FailedBy = 0, "", ""
	obj.Status.Group = st
	st.WaitingFor = rollout.PendingDependencies(obj, obs)
	return st.WaitingFor
}

// joinEarlierRelease records the release the member merges its own into.
func joinEarlierRelease(obj *v1alpha1.Canary, a rollout.JoinRelease) (ctrl.Result, error) {
	at := metav1.NewTime(a.StartedAt)
	obj.Status.Group.Release, obj.Status.Group.StartedAt = a.Release, &at
	return ctrl.Result{RequeueAfter: time.Millisecond}, nil
}

// releaseOf is the member's release key, "" outside a group.
func releaseOf(obj *v1alpha1.Canary) string {
	if obj.Status.Group == nil {
		return ""
	}
	return obj.Status.Group.Release
}

// holdPromotion takes a promotion a person asked for (serin promote) of a
// member whose release is not ready: the member holds for the promotion as
// if its analysis had passed, and is promoted with the release, or rolled
// back with it.
func (r *CanaryReconciler) holdPromotion(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, a rollout.HoldPromotion) (ctrl.Result, error) {
	obj.Status.HandledRequests.Promote = obs.Requests.Promote
	obj.Status.Group.Holding = v1alpha1.HoldingPromotion
	if obj.IsBlueGreen() || obj.IsABTest() {
		obj.Status.Iterations = obj.GetIterations()
	}
	r.emit(ctx, obj, notifier.SeverityInfo, v1alpha1.WaitingForGroupReason, "%s", a.Message)
	transition(obj, obj.Status.Phase, obs.Now, v1alpha1.WaitingForGroupReason, "%s", a.Message)
	return ctrl.Result{RequeueAfter: obj.GetAnalysisInterval()}, nil
}

// waitForDependencies parks a rollout whose member depends on members not
// promoted yet: no canary pod, no traffic, no webhook until they are.
func (r *CanaryReconciler) waitForDependencies(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, pending []string, announce bool) (ctrl.Result, error) {
	r.announceRevision(ctx, obj, obs, announce)
	msg := rollout.WaitingForMessage(pending)
	transition(obj, v1alpha1.PhaseWaiting, obs.Now, v1alpha1.WaitingForGroupReason, "%s", msg)
	return ctrl.Result{RequeueAfter: obs.Group.Window}, nil
}

// holdForGroup records a step that passed: when the other members of the
// release have not passed as many, the member holds it (status.group.holding)
// and goes on once they have (GroupAdvance). It reports whether it held.
func holdForGroup(obj *v1alpha1.Canary, obs rollout.Observation, action rollout.Action, at time.Time) bool {
	st := obj.Status.Group
	if st == nil || !obs.Group.InGroup() || st.Name != obs.Group.Name {
		return false
	}
	step, promotion := rollout.LockstepStep(action)
	if !step {
		return false
	}
	st.StepsPassed++
	why := rollout.GroupGate(obj, obs, st.StepsPassed, promotion)
	if why == "" {
		return false
	}
	st.Holding = v1alpha1.HoldingStep
	if promotion {
		st.Holding = v1alpha1.HoldingPromotion
		if obj.IsBlueGreen() || obj.IsABTest() {
			// Every iteration passed, as the promotion records it.
			obj.Status.Iterations = obj.GetIterations()
		}
	}
	transition(obj, obj.Status.Phase, at, v1alpha1.WaitingForGroupReason, "%s", why)
	return true
}

// groupAdvance carries out the step the member held, now that the other
// members of its release caught up.
func (r *CanaryReconciler) groupAdvance(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	st := obj.Status.Group
	held := st.Holding
	st.Holding = ""
	out := analysis.Outcome{At: obs.Now}
	if held == v1alpha1.HoldingPromotion {
		// The analysis passed, or a person promoted the member: every
		// member of the release is ready to promote.
		if obj.IsBlueGreen() || obj.IsABTest() {
			obj.Status.Iterations = obj.GetIterations()
		}
		return r.promote(ctx, obj, obs, rollout.Promote{Reason: "analysis passed with every member of release " + st.Release})
	}
	switch a := rollout.DecideStep(obj, obs, rollout.StepVerdict{}).(type) {
	case rollout.AdvanceWeight:
		return r.advanceWeight(ctx, obj, obs, out, a)
	case rollout.CountIteration:
		return r.countIteration(ctx, obj, obs, out)
	case rollout.Promote:
		if obj.IsBlueGreen() || obj.IsABTest() {
			obj.Status.Iterations = obj.GetIterations()
		}
		a.Reason = "analysis passed with every member of release " + st.Release
		return r.promote(ctx, obj, obs, a)
	case rollout.WaitForGate:
		return r.waitForGate(ctx, obj, obs, out, a)
	default:
		return ctrl.Result{}, fmt.Errorf("no group advance for %s (held %s)", a, held)
	}
}

// waitForGroup keeps the member where it is, saying what it waits for;
// the other members' status changes reconcile it (canariesForPeers).
func (r *CanaryReconciler) waitForGroup(obj *v1alpha1.Canary, a rollout.WaitForGroup) (ctrl.Result, error) {
	ready := apimeta.FindStatusCondition(obj.Status.Conditions, meta.ReadyCondition)
	if ready == nil || ready.Message != a.Message {
		// The wait is said once; the clock of the step is the last
		// transition's, so the interval is not lost while waiting.
		conditions.MarkFalse(obj, meta.ReadyCondition, v1alpha1.WaitingForGroupReason, "%s", a.Message)
	}
	if a.RequeueAfter > 0 {
		return ctrl.Result{RequeueAfter: a.RequeueAfter + time.Millisecond}, nil
	}
	return ctrl.Result{RequeueAfter: obj.GetAnalysisInterval()}, nil
}

// groupFailed records which member's failure rolled this one back: the
// member that failed reverts the release, this one does not.
func groupFailed(obj *v1alpha1.Canary, a rollout.Rollback) {
	if a.FailedBy == "" || obj.Status.Group == nil {
		return
	}
	obj.Status.Group.FailedBy = a.FailedBy
	obj.Status.Group.Holding = ""
}

// canariesForGroup maps a CanaryGroup to its members.
func (r *CanaryReconciler) canariesForGroup(_ context.Context, o client.Object) []reconcile.Request {
	g := o.(*v1alpha1.CanaryGroup)
	reqs := make([]reconcile.Request, 0, len(g.Spec.Members))
	for _, m := range g.Spec.Members {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: g.Namespace, Name: m.Name}})
	}
	return reqs
}

// canariesForPeers maps a Canary whose rollout moved (phase, group
// status) to the other members of its group: a step one member passes
// may let the others go on, a failure fails them.
func (r *CanaryReconciler) canariesForPeers(ctx context.Context, o client.Object) []reconcile.Request {
	groups, err := groupsOf(ctx, r.Client, o.GetNamespace(), o.GetName())
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "failed to list the groups of a canary", "canary", o.GetName())
		return nil
	}
	var reqs []reconcile.Request
	for i := range groups {
		for _, req := range r.canariesForGroup(ctx, &groups[i]) {
			if req.Name != o.GetName() {
				reqs = append(reqs, req)
			}
		}
	}
	return reqs
}

// peerMoved is the predicate of canariesForPeers (rollout.PeerMoved, or
// a suspend or resume).
func peerMoved(e event.UpdateEvent) bool {
	old, ok1 := e.ObjectOld.(*v1alpha1.Canary)
	cur, ok2 := e.ObjectNew.(*v1alpha1.Canary)
	// A suspended member holds its release's promotion: its resume lets
	// the others go on.
	return ok1 && ok2 && (rollout.PeerMoved(&old.Status, &cur.Status) || old.Spec.Suspend != cur.Spec.Suspend)
}

// releaseMembers makes the revert of a member of a group's release the
// release's: one pull request per repository that restores every member
// of the release applied from it, whichever member asks first (the
// branch is the group's).
func (r *CanaryReconciler) releaseMembers(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, req *gitops.RevertRequest) error {
	st := obj.Status.Group
	if st == nil || !obs.Group.InGroup() || st.Name != obs.Group.Name || st.Release == "" {
		return nil
	}
	req.Group = st.Name
	for _, p := range obs.Group.ReleasePeers(obj) {
		c := &v1alpha1.Canary{}
		if err := r.Get(ctx, client.ObjectKey{Namespace: obj.Namespace, Name: p.Name}, c); err != nil {
			if apierrors.IsNotFound(err) {
				continue // deleted since: nothing of it to revert
			}
			return err
		}
		// Each is restored to its own last promoted revision, whichever
		// commit of the release changed it; one of another repository is
		// left to its own revert (gitops names it).
		req.Members = append(req.Members, c)
	}
	return nil
}
