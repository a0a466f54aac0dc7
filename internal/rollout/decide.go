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

package rollout

import (
	"fmt"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// startsOrRests tells the actions of a Canary at rest or about to start
// something new: the ones an invalid wave stalls.
func startsOrRests(a Action) bool {
	switch a.(type) {
	case Idle, Initialize, StartRollout, AcceptRevision:
		return true
	}
	return false
}

// Decide returns the next action for a Canary given what was observed.
//
// The phases and their way out:
//
//	Initializing → Initialized ─ new revision → (Waiting →) Progressing
//	Progressing ⇄ WaitingPromotion → Promoting → Finalising → Succeeded
//	Progressing, Waiting, WaitingPromotion → Failed (rollback)
//	Promoting, Finalising → Halted (the primary failed; never a rollback)
//
// Nothing moves forward (a step, a promotion, traffic back to the primary,
// the canary scaled down) until the data plane accepted the weights in
// force: see whenRoutesProgrammed. What makes a rollout safe (rollback,
// halt, restore, restart) never waits for it.
//
// A Canary with nothing else to do moves the wave of its promoted
// revision (DecideWave) instead of idling.
func Decide(c *v1alpha1.Canary, o Observation) Action {
	a := decideRollout(c, o)
	if o.InvalidPromotion != "" && startsOrRests(a) {
		// A revision this Canary promoted could go nowhere, or somewhere
		// it must not: no rollout starts to be promoted, and no wave
		// moves. A rollout under way (a Canary stored before the rule,
		// an agent upgraded mid-analysis) still ends, promoted, rolled
		// back or halted, and a revert still opens.
		return Stall{Reason: v1alpha1.InvalidPromotionReason, Message: o.InvalidPromotion}
	}
	if _, idle := a.(Idle); idle {
		if wave, ok := DecideWave(c); ok {
			if w, ok := wave.(AdvanceWave); ok {
				w.Hold, w.Stop = ReleaseWaveGate(c, o)
				return w
			}
			return wave
		}
	}
	return a
}

// decideRollout is the rollout's own decision, the wave aside.
func decideRollout(c *v1alpha1.Canary, o Observation) Action {
	ref := c.Spec.TargetRef
	if o.Conflict.Reason != "" {
		// Not this Canary's to touch: before any other decision, since
		// every action writes.
		return Stall{Reason: o.Conflict.Reason, Message: o.Conflict.Message}
	}
	if !o.Target.Found {
		if o.CanaryWeight > 0 && o.Primary.Health.Serving > 0 {
			// The canary's pods go with their Deployment: no request may
			// be routed to them.
			return Shield{Side: CanarySide, Reason: fmt.Sprintf("%s %s/%s named by spec.targetRef was deleted", ref.Kind, c.Namespace, ref.Name)}
		}
		return Stall{
			Reason:  v1alpha1.TargetNotFoundReason,
			Message: fmt.Sprintf("%s %s/%s named by spec.targetRef not found: create it or fix spec.targetRef.name", ref.Kind, c.Namespace, ref.Name),
		}
	}
	if o.Target.Invalid != "" {
		return Stall{Reason: v1alpha1.InvalidTargetReason, Message: o.Target.Invalid}
	}
	if o.RoutingUnsupported != "" {
		// Any route written now would carry what the data plane serves
		// wrongly: nothing moves, the route keeps what it has.
		return Stall{Reason: v1alpha1.UnsupportedByDataPlaneReason, Message: o.RoutingUnsupported}
	}
	switch c.Status.Phase {
	case "", v1alpha1.PhaseInitializing:
		return decideInitialization(o)
	}
	if !o.ServicesInSync {
		return SyncServices{}
	}
	if repair, ok := repairPrimary(c, o); ok {
		return repair
	}
	if a, ok := decideBaseline(c, o); ok {
		return a
	}
	switch c.Status.Phase {
	case v1alpha1.PhaseInitialized, v1alpha1.PhaseSucceeded, v1alpha1.PhaseFailed:
		return decideIdle(c, o)
	case v1alpha1.PhaseWaiting:
		if a, ok := decideGroupWaiting(c, o); ok {
			return a
		}
		return decideWaiting(c, o)
	case v1alpha1.PhaseProgressing, v1alpha1.PhaseWaitingPromotion:
		return decideAnalysis(c, o)
	case v1alpha1.PhasePromoting:
		return decidePromoting(c, o)
	case v1alpha1.PhaseFinalising:
		return decideFinalising(c, o)
	case v1alpha1.PhaseHalted:
		return decideHalted(c, o)
	}
	return Idle{}
}

// decideInitialization creates the generated objects, services first, and
// waits for the primary before taking the target's pods away.
func decideInitialization(o Observation) Action {
	switch {
	case o.RefusedRefs != "":
		return Stall{Reason: v1alpha1.AccessDeniedReason, Message: o.RefusedRefs}
	case !o.ServicesInSync || !o.Primary.Exists || o.Primary.SpecHash != o.Target.SpecHash:
		return Initialize{}
	case o.Primary.Health.Failed:
		return Stall{Reason: v1alpha1.WaitingForPrimaryReason, Message: o.Primary.Health.Message}
	case !o.Primary.Health.Ready:
		return WaitForPrimary{Message: o.Primary.Health.Message}
	}
	return CompleteInitialization{}
}

// repairPrimary re-creates a primary Deployment that was deleted after
// initialization, with the last promoted revision (never the revision under
// analysis). Until it serves again, all traffic goes to the canary when the
// canary serves.
func repairPrimary(c *v1alpha1.Canary, o Observation) (Action, bool) {
	if o.Primary.Exists && o.Primary.ScaledDown {
		// Scaled to zero outside serin: the apex serves nothing. Put back
		// the replicas the primary had (or its autoscaler's minimum).
		return ScalePrimary{}, true
	}
	if o.Primary.Exists || o.Primary.NotGenerated {
		return nil, false
	}
	if o.Target.Health.Serving > 0 && o.PrimaryRouted() && o.Target.Replicas > 0 {
		return Shield{Side: PrimarySide, Reason: "the primary was deleted"}, true
	}
	return RepairPrimary{}, true
}

// decideIdle starts a rollout for a new revision, and otherwise keeps the
// canary scaled down, once the primary serves.
func decideIdle(c *v1alpha1.Canary, o Observation) Action {
	st := c.Status
	switch {
	case o.CanaryWeight > 0 && o.Primary.Health.Serving > 0:
		// Outside a rollout every request goes to the primary; weights
		// changed by hand are put back.
		return Shield{Side: CanarySide, Reason: fmt.Sprintf("the routes sent %d%% to the canary outside a rollout", o.CanaryWeight)}
	case o.RefusedRefs != "":
		// A rollout under way is judged with the references it has (a
		// refused MetricTemplate fails its check); none starts.
		return Stall{Reason: v1alpha1.AccessDeniedReason, Message: o.RefusedRefs}
	case o.Group.Invalid != "":
		// Its group cannot be followed: no rollout starts until it is
		// fixed (one under way went on alone).
		return Stall{Reason: v1alpha1.InvalidGroupReason, Message: o.Group.Invalid}
	case o.Target.SpecHash != st.LastAppliedSpec && o.Target.SpecHash == st.LastPromotedSpec:
		return AcceptRevision{}
	case o.Target.SpecHash != st.LastAppliedSpec:
		return StartRollout{}
	case st.Phase == v1alpha1.PhaseFailed && o.Requests.Retry != "":
		return StartRollout{Retry: true}
	case st.Phase == v1alpha1.PhaseFailed && wantsRevert(c, o):
		return OpenRevert{}
	case st.Phase == v1alpha1.PhaseFailed && inNewerRelease(c, o):
		// Git still asks for the revision that failed, and another member
		// began a newer release: this member's revision is part of it.
		return StartRollout{}
	case o.Primary.Health.Serving == 0 && !o.Primary.Health.Ready:
		// Ready must not say True while the apex has nothing to serve it
		// (the primary's pods evicted or failing); nor does the canary
		// go, if it serves.
		return PrimaryUnavailable{Message: o.Primary.Health.Message}
	case o.Target.Replicas > 0:
		if wait, ok := waitForRoutedAway(c, o); ok {
			return wait
		}
		return ScaleDownCanary{}
	}
	return idleUntilRevertRetry(c, o)
}

// waitForRoutedAway holds the canary's scale-down (after a rollback, or
// outside a rollout) until the data plane sends it nothing: the routes that
// took its traffic away are programmed (waited on up to the progress
// deadline from the last transition, then the canary goes as it did before
// serin waited), and the data plane has had --data-plane-settle-time to
// apply them (Routes.SettleAt). A canary pod that terminates while requests
// still reach it fails them. Waits change nothing in the status: a Failed
// Canary stays Failed, its reason kept.
func waitForRoutedAway(c *v1alpha1.Canary, o Observation) (Action, bool) {
	switch {
	case !o.Routes.Programmed && !o.Routes.Rejected && o.Now.Sub(transitionTime(c)) <= c.GetProgressDeadline():
		return Wait{RequeueAfter: time.Second}, true
	case o.Routes.Programmed && o.Routes.SettleAt.After(o.Now):
		return Wait{RequeueAfter: o.Routes.SettleAt.Sub(o.Now)}, true
	}
	return nil, false
}

// decideWaiting re-asks the confirm-rollout gate at every interval.
func decideWaiting(c *v1alpha1.Canary, o Observation) Action {
	switch {
	case o.Requests.Abort != "":
		return Rollback{Reason: "rollout aborted on request"}
	case o.Target.SpecHash != c.Status.LastAppliedSpec:
		return StartRollout{}
	}
	if wait := untilDue(c, o); wait > 0 {
		return Wait{RequeueAfter: wait}
	}
	return StartRollout{}
}

// decideAnalysis runs the analysis steps of Progressing and WaitingPromotion.
func decideAnalysis(c *v1alpha1.Canary, o Observation) Action {
	st := c.Status
	if o.Primary.Exists && o.Primary.SpecHash == st.LastAppliedSpec && st.LastAppliedSpec != st.LastPromotedSpec {
		// The primary runs the analysed revision: the promotion was
		// written, its status was not (a failed write, a killed agent).
		// From here on it is a promotion: never a rollback.
		if shield, ok := shieldDarkSide(o); ok {
			return shield
		}
		return whenRoutesProgrammed(c, o, 0, Promote{Reason: "resuming the promotion: the primary runs the analysed revision"})
	}
	switch {
	case o.Target.SpecHash != st.LastAppliedSpec:
		return RestartAnalysis{}
	case o.Requests.Abort != "":
		return Rollback{Reason: "rollout aborted on request"}
	case o.Target.Health.Failed:
		return Rollback{Reason: "canary failed: " + o.Target.Health.Message}
	case o.Target.Health.Serving == 0 && o.CanaryWeight > 0 && o.Primary.Health.Serving > 0:
		// The canary lost every ready pod mid-analysis: its share of the
		// requests would fail. It gets traffic again from the first step.
		return Shield{Side: CanarySide, Reason: "the canary has no pod ready to serve: " + o.Target.Health.Message}
	case !o.Target.Health.Ready && o.Now.Sub(transitionTime(c)) > c.GetProgressDeadline() && !holding(c):
		return Rollback{Reason: fmt.Sprintf("canary not ready within the progress deadline (%s): %s", c.GetProgressDeadline(), o.Target.Health.Message)}
	case st.FailedChecks >= c.GetThreshold():
		return Rollback{Reason: fmt.Sprintf("%d failed checks reached the threshold of %d", st.FailedChecks, c.GetThreshold())}
	}
	// A member of a group fails with its release, and steps with it; a
	// promotion requested by hand waits for the release (HoldPromotion)
	// rather than for the member's next step.
	if a, ok := decideInGroup(c, o); ok {
		if _, wait := a.(WaitForGroup); !wait || o.Requests.Promote == "" || c.Status.Group.Holding == v1alpha1.HoldingPromotion {
			return a
		}
	}
	if a, ok := prepareBaseline(c, o); ok {
		return a
	}
	if !o.Target.Health.Ready {
		return WaitForCanary{Message: o.Target.Health.Message}
	}
	wait := untilDue(c, o)
	switch {
	case o.Requests.Promote != "":
		if why := releasePromotionGate(c, o); why != "" {
			return HoldPromotion{Message: "promotion requested; held for the release: " + why}
		}
		return whenRoutesProgrammed(c, o, wait, Promote{Reason: "promotion requested"})
	case c.Spec.SkipAnalysis:
		return whenRoutesProgrammed(c, o, wait, Promote{Reason: "analysis skipped (spec.skipAnalysis)"})
	case o.Routes.Programmed && o.CanaryWeight != st.CanaryWeight:
		// The routes carry weights the status does not record: the agent
		// stopped (or a write failed) between the two. The analysis judges
		// a whole interval of them, from now.
		return RecordWeights{}
	case wait > 0:
		return whenRoutesProgrammed(c, o, wait, Wait{RequeueAfter: wait})
	}
	if a, ok := waitForBaseline(c, o); ok {
		return a
	}
	return whenRoutesProgrammed(c, o, wait, Step{})
}

// decidePromoting verifies the promoted state: the primary must run the
// promoted spec with every replica available within the progress deadline.
// A failure halts; nothing here can roll back or move traffic.
func decidePromoting(c *v1alpha1.Canary, o Observation) Action {
	if shield, ok := shieldDarkSide(o); ok {
		return shield
	}
	st := c.Status
	switch {
	case o.Primary.SpecHash != st.LastAppliedSpec && o.Target.SpecHash != st.LastAppliedSpec:
		// The target moved on before the primary got the analysed spec:
		// the primary still runs the old, healthy spec.
		return RestartAnalysis{}
	case o.Primary.SpecHash != st.LastAppliedSpec:
		return Promote{Reason: "primary does not run the promoted spec yet"}
	case o.Primary.Health.Failed:
		return Halt{Reason: "primary failed during promotion: " + o.Primary.Health.Message}
	case !o.Primary.Health.Ready && o.Now.Sub(transitionTime(c)) > c.GetProgressDeadline():
		return Halt{Reason: fmt.Sprintf("primary not ready within the progress deadline (%s) after promotion: %s", c.GetProgressDeadline(), o.Primary.Health.Message)}
	case !o.Primary.Health.Ready:
		return WaitForPromotion{Message: o.Primary.Health.Message, RequeueAfter: transitionTime(c).Add(c.GetProgressDeadline()).Sub(o.Now)}
	}
	if wait, ok := waitForLeavingPods(c, o); ok {
		// No request goes back to the primary while a pod of its old
		// revision may still answer it.
		return wait
	}
	return whenRoutesProgrammed(c, o, untilDue(c, o), Finalise{})
}

// waitForLeavingPods holds a promotion while pods of the primary's previous
// revision may still answer: promoted means no old pod answers. An endpoint
// that still serves while its pod terminates (o.Primary.Leaving) holds it
// until it is gone (a pod on a lost node does not serve); a terminating
// replica the endpoints do not show (o.Primary.Terminating, the endpoints
// not updated yet) holds it no longer than the progress deadline, counted
// from the promotion's last transition; and once they are gone, the data
// plane is given the time to apply the endpoints' last change
// (o.Primary.EndpointsSettleAt).
func waitForLeavingPods(c *v1alpha1.Canary, o Observation) (Action, bool) {
	left := transitionTime(c).Add(c.GetProgressDeadline()).Sub(o.Now)
	n := o.Primary.Leaving
	if left > 0 {
		n = max(n, o.Primary.Terminating)
	}
	if n > 0 {
		return WaitForPromotion{
			Message:      fmt.Sprintf("pods of the primary's previous revision still terminating: %d; waiting until none may answer", n),
			RequeueAfter: time.Second,
		}, true
	}
	if settle := o.Primary.EndpointsSettleAt.Sub(o.Now); settle > 0 {
		// The endpoints changed a moment ago: the data plane may still
		// send requests to the pods that left them.
		return WaitForPromotion{Message: "the primary's endpoints changed a moment ago: waiting for the data plane to apply them", RequeueAfter: settle}, true
	}
	return nil, false
}

// decideFinalising moves traffic to the ready primary, then scales the
// canary down. A primary that stops being ready halts, the canary kept.
func decideFinalising(c *v1alpha1.Canary, o Observation) Action {
	if shield, ok := shieldDarkSide(o); ok {
		return shield
	}
	switch {
	case o.Primary.Health.Failed || (!o.Primary.Health.Ready && o.Now.Sub(transitionTime(c)) > c.GetProgressDeadline()):
		return Halt{Reason: "primary failed while traffic moved back to it: " + o.Primary.Health.Message}
	case !o.Primary.Health.Ready:
		return WaitForPromotion{Message: o.Primary.Health.Message, RequeueAfter: transitionTime(c).Add(c.GetProgressDeadline()).Sub(o.Now)}
	}
	wait := untilDue(c, o)
	if wait, ok := waitForLeavingPods(c, o); ok {
		return wait
	}
	switch {
	case o.CanaryWeight == 0 && o.Routes.Programmed && o.Routes.SettleAt.After(o.Now):
		// The canary scales down only once the data plane sends it
		// nothing: the routes that took its last share are applied.
		return WaitForPromotion{Message: "the routes took the canary's last requests a moment ago: waiting for the data plane to apply them", RequeueAfter: o.Routes.SettleAt.Sub(o.Now)}
	case o.CanaryWeight == 0:
		// The canary scales down only once the data plane sends it nothing.
		return whenRoutesProgrammed(c, o, wait, CompletePromotion{})
	case wait > 0 && c.Spec.Analysis != nil && c.Spec.Analysis.StepWeightPromotion > 0:
		return whenRoutesProgrammed(c, o, wait, Wait{RequeueAfter: wait})
	}
	return whenRoutesProgrammed(c, o, wait, Finalise{})
}

// decideHalted keeps a halted promotion safe until it can end safely:
//   - the primary recovers by itself: finish the promotion;
//   - Git returns the target to the last promoted spec (path a): restore the
//     primary to it while the canary serves, then route back (Succeeded, Reverted);
//   - Git brings a corrected new revision (path b): restore the primary
//     first, then analyse the new revision from a ready primary;
//   - failurePolicy RestorePrimary: restore the primary to its last good
//     template, then route back (Failed, PromotionFailed);
//   - otherwise open the GitOps revert once, and wait for a person.
func decideHalted(c *v1alpha1.Canary, o Observation) Action {
	if shield, ok := shieldDarkSide(o); ok {
		return shield
	}
	st := c.Status
	switch {
	case o.Primary.SpecHash == st.LastAppliedSpec && o.Primary.Health.Ready:
		if wait, ok := waitForLeavingPods(c, o); ok {
			return wait
		}
		return whenRoutesProgrammed(c, o, untilDue(c, o), Finalise{})
	case o.Target.SpecHash == st.LastPromotedSpec:
		return restorePrimaryThen(o, st.LastPromotedSpec, CompleteRestore{Phase: v1alpha1.PhaseSucceeded, Reason: v1alpha1.RevertedReason})
	case o.Target.SpecHash != st.LastAppliedSpec:
		return restorePrimaryThen(o, st.LastPromotedSpec, StartRollout{})
	case wantsRevert(c, o):
		return OpenRevert{}
	case c.GetFailurePolicy() == v1alpha1.RestorePrimaryPolicy:
		return restorePrimaryThen(o, st.LastPromotedSpec, CompleteRestore{Phase: v1alpha1.PhaseFailed, Reason: v1alpha1.PromotionFailedReason})
	}
	return idleUntilRevertRetry(c, o)
}

// idleUntilRevertRetry is Idle, or a Wait until the next attempt of a
// revert that is Retrying.
func idleUntilRevertRetry(c *v1alpha1.Canary, o Observation) Action {
	if due, ok := revertRetryDue(c); ok {
		return Wait{RequeueAfter: max(due.Sub(o.Now), time.Millisecond)}
	}
	return Idle{}
}

// revertRetryDue is when the revert of the revision last attempted is
// tried again, if it is Retrying.
func revertRetryDue(c *v1alpha1.Canary) (time.Time, bool) {
	st := c.Status
	r := st.Revert
	if r == nil || r.Revision != st.LastAttemptedRevision || r.State != revertRetrying || r.NextAttemptTime == nil {
		return time.Time{}, false
	}
	return r.NextAttemptTime.Time, true
}

// revertRetrying, revertPending and revertFailed are gitops.StateRetrying,
// StatePending and StateFailed (rollout does not import gitops).
const (
	revertRetrying = "Retrying"
	revertPending  = "Pending"
	revertFailed   = "Failed"
)

// shieldDarkSide takes all traffic off a side that has no pod ready to
// serve while the other side has, during and after a promotion: a request
// sent there would fail. The primary is dark when its strategy replaced
// every pod at once or its new pods fail (the canary runs the analysed
// revision); the canary is dark when Git rolls the target while the
// primary is restored. Nothing else moves meanwhile; the promotion,
// finalising or halt goes on from there.
func shieldDarkSide(o Observation) (Action, bool) {
	if !o.Primary.Exists {
		return nil, false
	}
	primary, canary := o.Primary.Health.Serving > 0, o.Target.Health.Serving > 0
	switch {
	case !primary && canary && o.PrimaryRouted():
		return Shield{Side: PrimarySide, Reason: "the primary has no pod ready to serve: " + o.Primary.Health.Message}, true
	case !canary && primary && o.CanaryWeight > 0:
		return Shield{Side: CanarySide, Reason: "the canary has no pod ready to serve: " + o.Target.Health.Message}, true
	}
	return nil, false
}

// restorePrimaryThen brings the primary back to the good spec and waits for
// it to be ready before next, which may route traffic to it.
func restorePrimaryThen(o Observation, good string, next Action) Action {
	switch {
	case o.Primary.SpecHash != good:
		return RestorePrimary{}
	case o.Primary.Health.Failed:
		return Idle{}
	case !o.Primary.Health.Ready:
		return WaitForPromotion{Message: "restoring the primary: " + o.Primary.Health.Message}
	}
	return next
}

// wantsRevert reports whether the bad revision should be reverted in Git
// now: on request, or once per revision when spec.gitops.revert.on names
// the phase.
func wantsRevert(c *v1alpha1.Canary, o Observation) bool {
	if o.Requests.Revert != "" {
		return true
	}
	st := c.Status
	if g := st.Group; g != nil && g.FailedBy != "" && (st.Revert == nil || st.Revert.Revision != st.LastAttemptedRevision) {
		// Rolled back with its group's release: the member that failed
		// reverts the release, in one commit per repository. This member
		// waits for that revert, and reverts its own when it does not
		// restore it (another repository, or the revert failed).
		decider, ok := o.Group.peer(g.FailedBy)
		if !ok {
			return false
		}
		if done, covers := revertCovers(decider, c.Name); !done || covers {
			return false
		}
		return c.GetRevertTriggers() != nil
	}
	if r := st.Revert; r != nil && r.Revision == st.LastAttemptedRevision && r.State == revertPending {
		// The revert runs off the reconcile: its result is to be recorded.
		return true
	}
	if due, ok := revertRetryDue(c); ok {
		// A Git host that failed in a way a retry may fix: again once due.
		return !o.Now.Before(due)
	}
	if st.LastAttemptedRevision == "" || (st.Revert != nil && st.Revert.Revision == st.LastAttemptedRevision) {
		return false
	}
	for _, on := range c.GetRevertTriggers() {
		if string(on) == string(st.Phase) {
			return true
		}
	}
	return false
}

// whenRoutesProgrammed returns next once the data plane accepted the
// weights in the routing objects. Until then the rollout waits:
//   - quietly while a gateway has not reported on them yet and nothing is
//     due (wait > 0): a gateway takes a moment to report on new weights;
//   - with Ready saying why (WaitForRoutes) once a gateway rejected them or
//     the next move is due;
//   - stalled past the progress deadline: a route the gateway does not
//     accept for that long needs a person (a Gateway's allowedRoutes or
//     listeners, the Canary's gatewayRefs or hosts).
//
// A wait Ready showed ends with RoutesProgrammed, which restarts the step
// clock, before next.
func whenRoutesProgrammed(c *v1alpha1.Canary, o Observation, wait time.Duration, next Action) Action {
	switch {
	case o.Routes.Programmed && waitedForRoutes(c):
		return RoutesProgrammed{}
	case o.Routes.Programmed:
		return next
	case !o.Routes.Rejected && wait > 0:
		return Wait{RequeueAfter: wait}
	case o.Now.Sub(transitionTime(c)) > c.GetProgressDeadline():
		return Stall{
			Reason:  v1alpha1.RouteNotProgrammedReason,
			Message: fmt.Sprintf("canary weight %d not applied by the gateway within the progress deadline (%s): %s", o.CanaryWeight, c.GetProgressDeadline(), o.Routes.Message),
		}
	}
	return WaitForRoutes{Message: o.Routes.Message}
}

// waitedForRoutes reports whether Ready says the rollout waits for the
// routes (WaitForRoutes, or the stall past the deadline).
func waitedForRoutes(c *v1alpha1.Canary) bool {
	ready := apimeta.FindStatusCondition(c.Status.Conditions, meta.ReadyCondition)
	return ready != nil && ready.Reason == v1alpha1.RouteNotProgrammedReason
}

// holding reports whether a member of a group holds a passed step for the
// others: its clock stopped at the pass, so the progress deadline of a
// canary that is not ready is not counted from it (a canary that fails
// rolls back all the same).
func holding(c *v1alpha1.Canary) bool {
	return c.Status.Group != nil && c.Status.Group.Holding != ""
}

// transitionTime is when the phase or weight last changed.
func transitionTime(c *v1alpha1.Canary) time.Time {
	if t := c.Status.LastTransitionTime; t != nil {
		return t.Time
	}
	return time.Time{}
}

// StepDue is when the next analysis step is due: one interval after the
// last transition, or after the weights it wrote came into force when the
// agent saw that happen later (the analysis judges only applied traffic).
func StepDue(c *v1alpha1.Canary, o Observation) time.Time {
	from := transitionTime(c)
	if o.Routes.ProgrammedAt.After(from) {
		from = o.Routes.ProgrammedAt
	}
	return from.Add(c.GetAnalysisInterval())
}

// untilDue returns how long until the next analysis step, or ≤ 0 when due.
func untilDue(c *v1alpha1.Canary, o Observation) time.Duration {
	return StepDue(c, o).Sub(o.Now)
}
