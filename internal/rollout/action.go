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

	"github.com/serin-dev/serin/api/v1alpha1"
)

// Action is the one thing the controller does in a reconcile. Every action
// is idempotent: doing it twice has the effect of doing it once.
type Action interface {
	fmt.Stringer
	isAction()
}

// Stall stops reconciling until the Canary or its target changes: a person
// must fix something (Stalled=True with Reason and Message).
type Stall struct {
	Reason  string
	Message string
}

// Initialize creates the Services, the routing and the primary Deployment
// from the target.
type Initialize struct{}

// WaitForPrimary waits for the primary to become ready during initialization.
type WaitForPrimary struct{ Message string }

// CompleteInitialization scales the target to zero once the primary serves,
// and records the target's revision as promoted.
type CompleteInitialization struct{}

// SyncServices re-creates generated Services or routing objects that
// drifted or were deleted, without touching the weights.
type SyncServices struct{}

// ScaleDownCanary scales the target back to zero when it runs while no
// rollout is in progress (someone or something scaled it up).
type ScaleDownCanary struct{}

// AcceptRevision records a target spec equal to the primary's (a manual
// rollback) as applied without analysing it.
type AcceptRevision struct{}

// StartRollout begins the analysis of a new revision: the confirm-rollout
// gate, then the canary scaled up.
type StartRollout struct {
	// Retry is true when the user asked to re-run a failed revision.
	Retry bool
}

// RestartAnalysis routes everything back to the primary and starts the
// analysis over, because the target changed during the analysis.
type RestartAnalysis struct{}

// WaitForCanary waits for the scaled-up canary to become ready.
type WaitForCanary struct{ Message string }

// Wait does nothing until the next analysis step is due.
type Wait struct{ RequeueAfter time.Duration }

// WaitForRoutes waits for the data plane to accept the weights in the
// routing objects before the rollout moves on; Ready says why it waits.
type WaitForRoutes struct{ Message string }

// RoutesProgrammed ends a wait for the routes that Ready showed: the
// weights are in force from now, so the next step is due one interval
// later (the analysis judges only traffic the data plane applied).
type RoutesProgrammed struct{}

// Step runs one analysis step: hooks and metric checks, then a weight
// increase, an iteration, or the promotion.
type Step struct{}

// Promote copies the canary's spec to the primary.
type Promote struct{ Reason string }

// WaitForPromotion waits for the promoted primary to become ready, within
// the progress deadline.
type WaitForPromotion struct {
	Message      string
	RequeueAfter time.Duration
}

// Finalise routes traffic back to the promoted primary, stepWeightPromotion
// at a time, once it is ready.
type Finalise struct{}

// CompletePromotion scales the canary down and records the revision as promoted.
type CompletePromotion struct{}

// Rollback routes everything to the primary and records the rollout Failed;
// the canary is scaled down afterwards (ScaleDownCanary), once the data
// plane sends it nothing.
type Rollback struct {
	Reason string
	// FailedBy names the member of the Canary's group whose failure fails
	// this member too; "" when the Canary's own analysis decided.
	FailedBy string
}

// Halt freezes a promotion whose primary failed: routing stays as it is and
// the canary keeps serving.
type Halt struct{ Reason string }

// Shield takes all traffic off a side (primary or canary) that has no pod
// ready to serve, onto the other one, which has: during and after a
// promotion, no request goes to a side that cannot answer it (a Recreate
// strategy, a primary whose new pods fail, a canary that Git rolls while
// the primary is restored). Finalise or CompleteRestore route back to the
// primary once it is ready again.
type Shield struct {
	// Side is the side taken out: "primary" or "canary".
	Side   string
	Reason string
}

// The sides of a Shield.
const (
	PrimarySide = "primary"
	CanarySide  = "canary"
)

// RestorePrimary rolls the primary back to the template of its last
// promoted revision (from its ReplicaSet history), routing untouched.
type RestorePrimary struct{}

// CompleteRestore routes all traffic back to the restored, ready primary,
// scales the canary down and ends in Phase for Reason.
type CompleteRestore struct {
	Phase  v1alpha1.CanaryPhase
	Reason string
}

// OpenRevert reverts the bad revision in Git (spec.gitops.revert, or a
// revert request): a pull request, or a push with mode Push.
type OpenRevert struct{}

// ScalePrimary scales back up a primary Deployment someone scaled to zero
// outside serin, to the replicas of its last promoted revision (or its
// autoscaler's minimum).
type ScalePrimary struct{}

// RepairPrimary re-creates a deleted primary Deployment with the last
// promoted revision.
type RepairPrimary struct{}

// PrimaryUnavailable reports, outside a rollout, that the primary has no
// pod ready to serve: Ready is False until it has.
type PrimaryUnavailable struct{ Message string }

// RecordWeights records in the status the weights the routing objects
// carry, and restarts the step clock: a route write whose status write was
// lost (the agent stopped between the two) is judged for a whole interval.
type RecordWeights struct{}

// SyncBaseline creates the baseline Deployment and its Service for the
// analysis under way (analysis.judge.baseline), or puts them back as the
// analysis wants them (deleted, edited, or made for an earlier analysis).
type SyncBaseline struct{}

// RouteBaseline writes the routes again with the weights they carry, the
// baseline given the canary's weight or taken out as BaselineRouted says:
// routed once it has a ready pod during an analysis, never otherwise.
type RouteBaseline struct{ Reason string }

// WaitForBaseline waits for the baseline to become ready before the next
// analysis step: the judge compares the canary with it.
type WaitForBaseline struct{ Message string }

// RemoveBaseline scales the baseline to zero (it and its Service stay for
// the next analysis), once the routes no longer name it: its analysis
// ended.
type RemoveBaseline struct{}

// Idle has nothing to do: no new revision and nothing drifted.
type Idle struct{}

// The actions below follow an analysis step's verdict (DecideStep): the
// step's outcome is an input only the analysis runner has, once the step
// ran.

// FailCheck counts one failed check; Decide rolls back at the threshold.
type FailCheck struct{ Message string }

// AdvanceWeight gives the canary more traffic: Weight, or with an A/B test
// the matched requests' share.
type AdvanceWeight struct{ Weight int }

// CountIteration counts one more iteration of a blue/green analysis or an
// A/B test.
type CountIteration struct{}

// WaitForGate keeps the rollout where it is while a gate is closed:
// confirm-traffic-increase, or confirm-promotion (Promotion) once the
// analysis passed.
type WaitForGate struct {
	Promotion bool
	Message   string
}

// WaitForGroup keeps a member of a group where it is until the other
// members of its release catch up, the members it depends on are
// promoted, or the release's window is over (then RequeueAfter > 0).
// Their status changes reconcile it.
type WaitForGroup struct {
	Message      string
	RequeueAfter time.Duration
}

// GroupAdvance carries out the step a member of a group passed and held
// (status.group.holding) now that the other members caught up: the next
// weight, iteration or the promotion, without checking again.
type GroupAdvance struct{}

// SupersedeRelease moves a member whose release was superseded (another
// member began a newer release of the group while this one was not
// promoted) into the newer release: traffic back to the primary, the
// analysis restarted from the first step in Release, which By began.
type SupersedeRelease struct {
	Release string
	By      string
}

// HoldPromotion records a promotion requested by hand (serin promote) of
// a member whose release is not ready to promote: the member holds for
// the promotion as if its analysis had passed, and is promoted with the
// others, or rolled back with them.
type HoldPromotion struct {
	Message string
}

// JoinRelease merges the member's release into an earlier one of its
// group that began within the window (members without a Flux revision
// that started at once).
type JoinRelease struct {
	Release   string
	StartedAt time.Time
}

func (JoinRelease) isAction()            {}
func (SupersedeRelease) isAction()       {}
func (HoldPromotion) isAction()          {}
func (WaitForGroup) isAction()           {}
func (GroupAdvance) isAction()           {}
func (Stall) isAction()                  {}
func (Initialize) isAction()             {}
func (WaitForPrimary) isAction()         {}
func (CompleteInitialization) isAction() {}
func (SyncServices) isAction()           {}
func (ScaleDownCanary) isAction()        {}
func (AcceptRevision) isAction()         {}
func (StartRollout) isAction()           {}
func (RestartAnalysis) isAction()        {}
func (WaitForCanary) isAction()          {}
func (Wait) isAction()                   {}
func (WaitForRoutes) isAction()          {}
func (RoutesProgrammed) isAction()       {}
func (Step) isAction()                   {}
func (Promote) isAction()                {}
func (WaitForPromotion) isAction()       {}
func (Finalise) isAction()               {}
func (CompletePromotion) isAction()      {}
func (Rollback) isAction()               {}
func (Halt) isAction()                   {}
func (Shield) isAction()                 {}
func (RestorePrimary) isAction()         {}
func (CompleteRestore) isAction()        {}
func (OpenRevert) isAction()             {}
func (RepairPrimary) isAction()          {}
func (ScalePrimary) isAction()           {}
func (PrimaryUnavailable) isAction()     {}
func (RecordWeights) isAction()          {}
func (Idle) isAction()                   {}
func (SyncBaseline) isAction()           {}
func (RouteBaseline) isAction()          {}
func (WaitForBaseline) isAction()        {}
func (RemoveBaseline) isAction()         {}
func (FailCheck) isAction()              {}
func (AdvanceWeight) isAction()          {}
func (CountIteration) isAction()         {}
func (WaitForGate) isAction()            {}

func (a Stall) String() string                { return fmt.Sprintf("stall(%s: %s)", a.Reason, a.Message) }
func (Initialize) String() string             { return "initialize" }
func (a WaitForPrimary) String() string       { return "wait-for-primary(" + a.Message + ")" }
func (CompleteInitialization) String() string { return "complete-initialization" }
func (SyncServices) String() string           { return "sync-services" }
func (ScaleDownCanary) String() string        { return "scale-down-canary" }
func (AcceptRevision) String() string         { return "accept-revision" }
func (a StartRollout) String() string {
	if a.Retry {
		return "start-rollout(retry)"
	}
	return "start-rollout"
}
func (RestartAnalysis) String() string    { return "restart-analysis" }
func (a WaitForCanary) String() string    { return "wait-for-canary(" + a.Message + ")" }
func (a Wait) String() string             { return "wait(" + a.RequeueAfter.String() + ")" }
func (a WaitForRoutes) String() string    { return "wait-for-routes(" + a.Message + ")" }
func (RoutesProgrammed) String() string   { return "routes-programmed" }
func (Step) String() string               { return "step" }
func (a Promote) String() string          { return "promote(" + a.Reason + ")" }
func (a WaitForPromotion) String() string { return "wait-for-promotion(" + a.Message + ")" }
func (Finalise) String() string           { return "finalise" }
func (CompletePromotion) String() string  { return "complete-promotion" }
func (a Rollback) String() string         { return "rollback(" + a.Reason + ")" }
func (a Halt) String() string             { return "halt(" + a.Reason + ")" }
func (a Shield) String() string           { return "shield-" + a.Side + "(" + a.Reason + ")" }
func (RestorePrimary) String() string     { return "restore-primary" }
func (a CompleteRestore) String() string {
	return "complete-restore(" + string(a.Phase) + ", " + a.Reason + ")"
}
func (OpenRevert) String() string           { return "open-revert" }
func (RepairPrimary) String() string        { return "repair-primary" }
func (ScalePrimary) String() string         { return "scale-primary" }
func (a PrimaryUnavailable) String() string { return "primary-unavailable(" + a.Message + ")" }
func (RecordWeights) String() string        { return "record-weights" }
func (Idle) String() string                 { return "idle" }
func (SyncBaseline) String() string         { return "sync-baseline" }
func (a RouteBaseline) String() string      { return "route-baseline(" + a.Reason + ")" }
func (a WaitForBaseline) String() string    { return "wait-for-baseline(" + a.Message + ")" }
func (RemoveBaseline) String() string       { return "remove-baseline" }
func (a FailCheck) String() string          { return "fail-check(" + a.Message + ")" }
func (a AdvanceWeight) String() string      { return fmt.Sprintf("advance-weight(%d)", a.Weight) }
func (CountIteration) String() string       { return "count-iteration" }
func (a WaitForGroup) String() string       { return "wait-for-group(" + a.Message + ")" }
func (GroupAdvance) String() string         { return "group-advance" }
func (a JoinRelease) String() string        { return "join-release(" + a.Release + ")" }
func (a SupersedeRelease) String() string {
	return "supersede-release(" + a.Release + " by " + a.By + ")"
}
func (a HoldPromotion) String() string { return "hold-promotion(" + a.Message + ")" }
func (a WaitForGate) String() string {
	if a.Promotion {
		return "wait-for-promotion-gate(" + a.Message + ")"
	}
	return "wait-for-gate(" + a.Message + ")"
}
