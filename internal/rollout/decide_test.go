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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/internal/workload"
)

var (
	t0      = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	ready   = workload.Health{Ready: true, Serving: 2}
	rolling = workload.Health{Message: "1 of 2 replicas updated", Serving: 2}
	failed  = workload.Health{Failed: true, Message: "exceeded its progress deadline", Serving: 1}
	// dark: no pod ready to serve (a Recreate rollout, or every pod failing).
	dark       = workload.Health{Message: "0 of 2 updated replicas available"}
	darkFailed = workload.Health{Failed: true, Message: "exceeded its progress deadline"}
	notFound   = "Deployment apps/podinfo named by spec.targetRef not found: create it or fix spec.targetRef.name"
)

// canary returns a Canary in a phase, analysing v2 over a primary on v1,
// whose last transition was at t0; interval 1m, threshold 2, deadline 10m.
func canary(phase v1alpha1.CanaryPhase, mutate ...func(*v1alpha1.Canary)) *v1alpha1.Canary {
	c := testobj.MakeCanary("podinfo", "apps").Phase(phase).
		Analysis(v1alpha1.CanaryAnalysis{Interval: &metav1.Duration{Duration: time.Minute}, Threshold: 2, Iterations: 3}).Obj()
	c.Status.LastAppliedSpec = "v2"
	c.Status.LastPromotedSpec = "v1"
	c.Status.LastTransitionTime = &metav1.MicroTime{Time: t0}
	for _, m := range mutate {
		m(c)
	}
	return c
}

// observed returns an observation at now of the target on spec, a primary on
// primarySpec with health, services and routes in sync, the routes
// programmed (in force since before the agent started).
func observed(now time.Time, spec string, targetHealth workload.Health, primarySpec string, primary workload.Health) Observation {
	return Observation{
		Now:            now,
		Target:         Target{Found: true, SpecHash: spec, Replicas: 2, Health: targetHealth},
		Primary:        Primary{Exists: true, SpecHash: primarySpec, Health: primary},
		ServicesInSync: true,
		Routes:         Routes{Programmed: true},
	}
}

func revertOn(phases ...v1alpha1.RevertTrigger) func(*v1alpha1.Canary) {
	return func(c *v1alpha1.Canary) {
		c.Spec.GitOps = &v1alpha1.GitOpsSpec{Revert: &v1alpha1.RevertSpec{On: phases}}
	}
}

func attempted(rev string) func(*v1alpha1.Canary) {
	return func(c *v1alpha1.Canary) { c.Status.LastAttemptedRevision = rev }
}

func reverted(rev string) func(*v1alpha1.Canary) {
	return func(c *v1alpha1.Canary) { c.Status.Revert = &v1alpha1.RevertStatus{Revision: rev, State: "Opened"} }
}

func restorePolicy(c *v1alpha1.Canary) {
	c.Spec.Promotion = &v1alpha1.PromotionPolicy{FailurePolicy: v1alpha1.RestorePrimaryPolicy}
}

var (
	rejection  = "gateway gateways/public: Accepted=False (NotAllowedByListeners): no listener allows routes from namespace apps"
	unreported = "gateway gateways/public: waiting for the gateway to report status for generation 3"
	// rejected: the gateway refused the current weights.
	rejected = Routes{Rejected: true, Message: rejection}
	// pending: the gateway has not reported on the current weights yet.
	pending = Routes{Message: unreported}
)

// routesAt observes the routes in a state, the canary at weight.
func routesAt(weight int, routes Routes) func(*Observation) {
	return func(o *Observation) { o.CanaryWeight, o.Routes = weight, routes }
}

// waitingForRoutes is a Canary whose Ready condition shows a wait for the
// routes.
func waitingForRoutes(c *v1alpha1.Canary) {
	c.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: v1alpha1.RouteNotProgrammedReason, Message: rejection}}
}

// atWeight is a Canary whose status records the canary at weight.
func atWeight(weight int) func(*v1alpha1.Canary) {
	return func(c *v1alpha1.Canary) { c.Status.CanaryWeight = weight }
}

func with(o Observation, mutate func(*Observation)) Observation {
	mutate(&o)
	return o
}

func TestDecide(t *testing.T) {
	due := t0.Add(time.Minute)
	early := t0.Add(20 * time.Second)
	late := t0.Add(11 * time.Minute)
	idle := func(phase v1alpha1.CanaryPhase) *v1alpha1.Canary {
		return canary(phase, func(c *v1alpha1.Canary) { c.Status.LastPromotedSpec = "v2" })
	}
	tests := map[string]struct {
		canary *v1alpha1.Canary
		obs    Observation
		want   Action
	}{
		// Any phase.
		"target missing stalls":                 {canary(""), Observation{}, Stall{Reason: v1alpha1.TargetNotFoundReason, Message: notFound}},
		"target missing stalls while analysing": {canary(v1alpha1.PhaseProgressing), Observation{}, Stall{Reason: v1alpha1.TargetNotFoundReason, Message: notFound}},
		"invalid target stalls": {canary(""), Observation{Target: Target{Found: true, Invalid: "no selector"}},
			Stall{Reason: v1alpha1.InvalidTargetReason, Message: "no selector"}},

		// Initialization.
		"new canary initializes":            {canary(""), Observation{Target: Target{Found: true, SpecHash: "v1"}}, Initialize{}},
		"services missing initializes":      {canary(v1alpha1.PhaseInitializing), with(observed(t0, "v1", ready, "v1", ready), func(o *Observation) { o.ServicesInSync = false }), Initialize{}},
		"primary missing initializes":       {canary(v1alpha1.PhaseInitializing), with(observed(t0, "v1", ready, "", ready), func(o *Observation) { o.Primary.Exists = false }), Initialize{}},
		"target changed while initializing": {canary(v1alpha1.PhaseInitializing), observed(t0, "v2", ready, "v1", ready), Initialize{}},
		"primary rolling out waits":         {canary(v1alpha1.PhaseInitializing), observed(t0, "v1", ready, "v1", rolling), WaitForPrimary{Message: rolling.Message}},
		"primary failed stalls, target kept": {canary(v1alpha1.PhaseInitializing), observed(t0, "v1", ready, "v1", failed),
			Stall{Reason: v1alpha1.WaitingForPrimaryReason, Message: failed.Message}},
		"primary ready completes initialization": {canary(v1alpha1.PhaseInitializing), observed(t0, "v1", ready, "v1", ready), CompleteInitialization{}},

		// Idle phases.
		"drifted services are synced":     {idle(v1alpha1.PhaseSucceeded), with(observed(t0, "v2", ready, "v2", ready), func(o *Observation) { o.ServicesInSync = false }), SyncServices{}},
		"no new revision is idle":         {idle(v1alpha1.PhaseSucceeded), with(observed(t0, "v2", ready, "v2", ready), func(o *Observation) { o.Target.Replicas = 0 }), Idle{}},
		"scaled-up target is scaled down": {idle(v1alpha1.PhaseInitialized), observed(t0, "v2", ready, "v2", ready), ScaleDownCanary{}},
		"a rolled-back canary waits for the routes that took its traffic": {canary(v1alpha1.PhaseFailed), with(observed(early, "v2", ready, "v1", ready), routesAt(0, pending)),
			Wait{RequeueAfter: time.Second}},
		"a rolled-back canary waits for the data plane to apply them": {canary(v1alpha1.PhaseFailed),
			with(observed(early, "v2", ready, "v1", ready), func(o *Observation) { o.Routes.SettleAt = early.Add(1500 * time.Millisecond) }),
			Wait{RequeueAfter: 1500 * time.Millisecond}},
		"a rolled-back canary scales down once they settled": {canary(v1alpha1.PhaseFailed),
			with(observed(early, "v2", ready, "v1", ready), func(o *Observation) { o.Routes.SettleAt = early }), ScaleDownCanary{}},
		"a rolled-back canary scales down past the deadline, routes never programmed": {canary(v1alpha1.PhaseFailed), with(observed(late, "v2", ready, "v1", ready), routesAt(0, pending)),
			ScaleDownCanary{}},
		"a rolled-back canary scales down when the gateway rejects the routes": {canary(v1alpha1.PhaseFailed), with(observed(early, "v2", ready, "v1", ready), routesAt(0, rejected)),
			ScaleDownCanary{}},
		"new revision starts a rollout": {idle(v1alpha1.PhaseInitialized), observed(t0, "v3", ready, "v2", ready), StartRollout{}},
		"new revision after a failure":  {canary(v1alpha1.PhaseFailed), observed(t0, "v3", ready, "v1", ready), StartRollout{}},
		"refused reference stalls a new revision": {idle(v1alpha1.PhaseSucceeded), with(observed(t0, "v3", ready, "v2", ready), func(o *Observation) { o.RefusedRefs = "refused" }),
			Stall{Reason: v1alpha1.AccessDeniedReason, Message: "refused"}},
		"refused reference stalls initialization": {canary(""), with(Observation{Target: Target{Found: true, SpecHash: "v1"}}, func(o *Observation) { o.RefusedRefs = "refused" }),
			Stall{Reason: v1alpha1.AccessDeniedReason, Message: "refused"}},
		"refused reference shields the canary outside a rollout first": {idle(v1alpha1.PhaseSucceeded), with(observed(t0, "v2", ready, "v2", ready), func(o *Observation) { o.RefusedRefs = "refused"; o.CanaryWeight = 10 }),
			Shield{Side: CanarySide, Reason: "the routes sent 10% to the canary outside a rollout"}},
		"refused reference does not stop a rollout under way": {canary(v1alpha1.PhaseProgressing),
			with(observed(due, "v2", ready, "v1", ready), func(o *Observation) { o.RefusedRefs = "refused" }), Step{}},
		"manual rollback to the primary's":   {canary(v1alpha1.PhaseFailed), observed(t0, "v1", ready, "v1", ready), AcceptRevision{}},
		"failed revision is not retried":     {canary(v1alpha1.PhaseFailed), with(observed(t0, "v2", ready, "v1", ready), func(o *Observation) { o.Target.Replicas = 0 }), Idle{}},
		"retry request re-runs the analysis": {canary(v1alpha1.PhaseFailed), with(observed(t0, "v2", ready, "v1", ready), func(o *Observation) { o.Requests.Retry = "r1" }), StartRollout{Retry: true}},

		// Waiting at the confirm-rollout gate.
		"waiting asks the gate again when due": {canary(v1alpha1.PhaseWaiting), observed(due, "v2", ready, "v1", ready), StartRollout{}},
		"waiting waits for the interval":       {canary(v1alpha1.PhaseWaiting), observed(early, "v2", ready, "v1", ready), Wait{RequeueAfter: 40 * time.Second}},
		"waiting with a newer revision":        {canary(v1alpha1.PhaseWaiting), observed(early, "v3", ready, "v1", ready), StartRollout{}},
		"waiting aborted":                      {canary(v1alpha1.PhaseWaiting), with(observed(early, "v2", ready, "v1", ready), func(o *Observation) { o.Requests.Abort = "a" }), Rollback{Reason: "rollout aborted on request"}},

		// Analysis.
		"step when due":                    {canary(v1alpha1.PhaseProgressing), observed(due, "v2", ready, "v1", ready), Step{}},
		"wait until the step is due":       {canary(v1alpha1.PhaseProgressing), observed(early, "v2", ready, "v1", ready), Wait{RequeueAfter: 40 * time.Second}},
		"new revision restarts analysis":   {canary(v1alpha1.PhaseProgressing), observed(early, "v3", ready, "v1", ready), RestartAnalysis{}},
		"new revision in WaitingPromotion": {canary(v1alpha1.PhaseWaitingPromotion), observed(early, "v3", ready, "v1", ready), RestartAnalysis{}},
		"canary not ready waits":           {canary(v1alpha1.PhaseProgressing), observed(due, "v2", rolling, "v1", ready), WaitForCanary{Message: rolling.Message}},
		"canary not ready past deadline rolls back": {canary(v1alpha1.PhaseProgressing), observed(late, "v2", rolling, "v1", ready),
			Rollback{Reason: "canary not ready within the progress deadline (10m0s): 1 of 2 replicas updated"}},
		"canary failed rolls back": {canary(v1alpha1.PhaseProgressing), observed(early, "v2", failed, "v1", ready),
			Rollback{Reason: "canary failed: exceeded its progress deadline"}},
		"threshold reached rolls back": {canary(v1alpha1.PhaseProgressing, func(c *v1alpha1.Canary) { c.Status.FailedChecks = 2 }), observed(early, "v2", ready, "v1", ready),
			Rollback{Reason: "2 failed checks reached the threshold of 2"}},
		"below threshold steps on": {canary(v1alpha1.PhaseProgressing, func(c *v1alpha1.Canary) { c.Status.FailedChecks = 1 }), observed(due, "v2", ready, "v1", ready), Step{}},
		"abort rolls back":         {canary(v1alpha1.PhaseProgressing), with(observed(early, "v2", ready, "v1", ready), func(o *Observation) { o.Requests.Abort = "a" }), Rollback{Reason: "rollout aborted on request"}},
		"promote request promotes": {canary(v1alpha1.PhaseProgressing), with(observed(early, "v2", ready, "v1", ready), func(o *Observation) { o.Requests.Promote = "p" }), Promote{Reason: "promotion requested"}},
		"skip analysis promotes": {canary(v1alpha1.PhaseProgressing, func(c *v1alpha1.Canary) { c.Spec.SkipAnalysis = true }), observed(early, "v2", ready, "v1", ready),
			Promote{Reason: "analysis skipped (spec.skipAnalysis)"}},
		"skip analysis waits for a ready canary": {canary(v1alpha1.PhaseProgressing, func(c *v1alpha1.Canary) { c.Spec.SkipAnalysis = true }), observed(early, "v2", rolling, "v1", ready),
			WaitForCanary{Message: rolling.Message}},
		"waiting promotion asks the gate when due": {canary(v1alpha1.PhaseWaitingPromotion), observed(due, "v2", ready, "v1", ready), Step{}},

		// Promoting: the primary × its health. Never a rollback.
		"promoting applies the spec to the primary": {canary(v1alpha1.PhasePromoting), observed(early, "v2", ready, "v1", ready), Promote{Reason: "primary does not run the promoted spec yet"}},
		"promoting waits for the primary": {canary(v1alpha1.PhasePromoting), observed(early, "v2", ready, "v2", rolling),
			WaitForPromotion{Message: rolling.Message, RequeueAfter: 9*time.Minute + 40*time.Second}},
		"promoting halts on a failed primary": {canary(v1alpha1.PhasePromoting), observed(early, "v2", ready, "v2", failed),
			Halt{Reason: "primary failed during promotion: exceeded its progress deadline"}},
		"promoting halts past the deadline (expected state not reached)": {canary(v1alpha1.PhasePromoting), observed(late, "v2", ready, "v2", rolling),
			Halt{Reason: "primary not ready within the progress deadline (10m0s) after promotion: 1 of 2 replicas updated"}},
		"promoting finalises a ready primary": {canary(v1alpha1.PhasePromoting), observed(early, "v2", ready, "v2", ready), Finalise{}},
		"promoting with a canary that failed does not roll back": {canary(v1alpha1.PhasePromoting), observed(early, "v2", failed, "v2", rolling),
			WaitForPromotion{Message: rolling.Message, RequeueAfter: 9*time.Minute + 40*time.Second}},
		"promoting ignores an abort": {canary(v1alpha1.PhasePromoting), with(observed(early, "v2", ready, "v2", failed), func(o *Observation) { o.Requests.Abort = "a" }),
			Halt{Reason: "primary failed during promotion: exceeded its progress deadline"}},
		"target moved on before the primary got the spec": {canary(v1alpha1.PhasePromoting), observed(early, "v3", ready, "v1", ready), RestartAnalysis{}},
		"promoting waits while an old pod of the primary still serves": {canary(v1alpha1.PhasePromoting),
			with(observed(early, "v2", ready, "v2", ready), func(o *Observation) { o.Primary.Leaving = 1 }),
			WaitForPromotion{Message: "pods of the primary's previous revision still terminating: 1; waiting until none may answer", RequeueAfter: time.Second}},
		"promoting waits for terminating replicas the endpoints do not show yet": {canary(v1alpha1.PhasePromoting),
			with(observed(early, "v2", ready, "v2", ready), func(o *Observation) { o.Primary.Terminating = 2 }),
			WaitForPromotion{Message: "pods of the primary's previous revision still terminating: 2; waiting until none may answer", RequeueAfter: time.Second}},
		"promoting waits for the data plane to apply the endpoints' last change": {canary(v1alpha1.PhasePromoting),
			with(observed(early, "v2", ready, "v2", ready), func(o *Observation) { o.Primary.EndpointsSettleAt = early.Add(1500 * time.Millisecond) }),
			WaitForPromotion{Message: "the primary's endpoints changed a moment ago: waiting for the data plane to apply them", RequeueAfter: 1500 * time.Millisecond}},
		"promoting goes on once the endpoints settled": {canary(v1alpha1.PhasePromoting),
			with(observed(early, "v2", ready, "v2", ready), func(o *Observation) { o.Primary.EndpointsSettleAt = early }), Finalise{}},
		"promoting stops waiting for terminating replicas at the deadline (a lost node)": {canary(v1alpha1.PhasePromoting),
			with(observed(late, "v2", ready, "v2", ready), func(o *Observation) { o.Primary.Terminating = 2 }), Finalise{}},
		"promoting waits for a serving old pod even past the deadline": {canary(v1alpha1.PhasePromoting),
			with(observed(late, "v2", ready, "v2", ready), func(o *Observation) { o.Primary.Leaving = 1; o.Primary.Terminating = 2 }),
			WaitForPromotion{Message: "pods of the primary's previous revision still terminating: 1; waiting until none may answer", RequeueAfter: time.Second}},

		// Finalising.
		"finalising moves traffic to the primary": {canary(v1alpha1.PhaseFinalising), with(observed(early, "v2", ready, "v2", ready), func(o *Observation) { o.CanaryWeight = 50 }), Finalise{}},
		"finalising with promotion steps waits": {canary(v1alpha1.PhaseFinalising, func(c *v1alpha1.Canary) { c.Spec.Analysis.StepWeightPromotion = 20 }),
			with(observed(early, "v2", ready, "v2", ready), func(o *Observation) { o.CanaryWeight = 30 }), Wait{RequeueAfter: 40 * time.Second}},
		"finalising completes at weight 0": {canary(v1alpha1.PhaseFinalising), observed(early, "v2", ready, "v2", ready), CompletePromotion{}},
		"finalising completes once the data plane applied weight 0": {canary(v1alpha1.PhaseFinalising),
			with(observed(early, "v2", ready, "v2", ready), func(o *Observation) { o.Routes.SettleAt = early.Add(time.Second) }),
			WaitForPromotion{Message: "the routes took the canary's last requests a moment ago: waiting for the data plane to apply them", RequeueAfter: time.Second}},
		"finalising completes only once no old pod serves": {canary(v1alpha1.PhaseFinalising),
			with(observed(early, "v2", ready, "v2", ready), func(o *Observation) { o.Primary.Leaving = 1 }),
			WaitForPromotion{Message: "pods of the primary's previous revision still terminating: 1; waiting until none may answer", RequeueAfter: time.Second}},
		"finalising halts on a failed primary": {canary(v1alpha1.PhaseFinalising), with(observed(early, "v2", ready, "v2", failed), func(o *Observation) { o.CanaryWeight = 50 }),
			Halt{Reason: "primary failed while traffic moved back to it: exceeded its progress deadline"}},
		"finalising waits for a primary not ready": {canary(v1alpha1.PhaseFinalising), with(observed(early, "v2", ready, "v2", rolling), func(o *Observation) { o.CanaryWeight = 50 }),
			WaitForPromotion{Message: rolling.Message, RequeueAfter: 9*time.Minute + 40*time.Second}},

		// Routes not programmed: the data plane has not applied the weights.
		// Nothing moves forward; the safety paths do not wait.
		"rejected weights: the due step waits, Ready says why": {canary(v1alpha1.PhaseProgressing), with(observed(due, "v2", ready, "v1", ready), routesAt(20, rejected)),
			WaitForRoutes{Message: rejection}},
		"rejected weights are shown before the step is due": {canary(v1alpha1.PhaseProgressing), with(observed(early, "v2", ready, "v1", ready), routesAt(20, rejected)),
			WaitForRoutes{Message: rejection}},
		"unreported weights wait quietly until the step is due": {canary(v1alpha1.PhaseProgressing), with(observed(early, "v2", ready, "v1", ready), routesAt(20, pending)),
			Wait{RequeueAfter: 40 * time.Second}},
		"unreported weights at the due step: Ready says why": {canary(v1alpha1.PhaseProgressing), with(observed(due, "v2", ready, "v1", ready), routesAt(20, pending)),
			WaitForRoutes{Message: unreported}},
		"unreported first weights (0) hold the first step": {canary(v1alpha1.PhaseProgressing), with(observed(due, "v2", ready, "v1", ready), routesAt(0, pending)),
			WaitForRoutes{Message: unreported}},
		"rejected weights past the progress deadline stall": {canary(v1alpha1.PhaseProgressing), with(observed(late, "v2", ready, "v1", ready), routesAt(20, rejected)),
			Stall{Reason: v1alpha1.RouteNotProgrammedReason, Message: "canary weight 20 not applied by the gateway within the progress deadline (10m0s): " + rejection}},
		"a shown wait that persists stalls past the deadline": {canary(v1alpha1.PhaseProgressing, waitingForRoutes), with(observed(late, "v2", ready, "v1", ready), routesAt(20, pending)),
			Stall{Reason: v1alpha1.RouteNotProgrammedReason, Message: "canary weight 20 not applied by the gateway within the progress deadline (10m0s): " + unreported}},
		"a promote request waits for the routes": {canary(v1alpha1.PhaseProgressing), with(observed(early, "v2", ready, "v1", ready), func(o *Observation) {
			routesAt(20, rejected)(o)
			o.Requests.Promote = "p"
		}), WaitForRoutes{Message: rejection}},
		"skip analysis waits for the routes": {canary(v1alpha1.PhaseProgressing, func(c *v1alpha1.Canary) { c.Spec.SkipAnalysis = true }),
			with(observed(due, "v2", ready, "v1", ready), routesAt(20, pending)), WaitForRoutes{Message: unreported}},
		"waiting promotion does not re-ask the gate on rejected weights": {canary(v1alpha1.PhaseWaitingPromotion), with(observed(due, "v2", ready, "v1", ready), routesAt(60, rejected)),
			WaitForRoutes{Message: rejection}},
		"abort rolls back rejected weights": {canary(v1alpha1.PhaseProgressing), with(observed(early, "v2", ready, "v1", ready), func(o *Observation) {
			routesAt(20, rejected)(o)
			o.Requests.Abort = "a"
		}), Rollback{Reason: "rollout aborted on request"}},
		"threshold rolls back rejected weights": {canary(v1alpha1.PhaseProgressing, func(c *v1alpha1.Canary) { c.Status.FailedChecks = 2 }),
			with(observed(early, "v2", ready, "v1", ready), routesAt(20, rejected)), Rollback{Reason: "2 failed checks reached the threshold of 2"}},
		"a failed canary rolls back rejected weights": {canary(v1alpha1.PhaseProgressing), with(observed(early, "v2", failed, "v1", ready), routesAt(20, rejected)),
			Rollback{Reason: "canary failed: exceeded its progress deadline"}},
		"a stalled route still rolls back on abort": {canary(v1alpha1.PhaseProgressing, waitingForRoutes), with(observed(late, "v2", ready, "v1", ready), func(o *Observation) {
			routesAt(20, rejected)(o)
			o.Requests.Abort = "a"
		}), Rollback{Reason: "rollout aborted on request"}},
		"a new revision restarts the analysis on rejected weights": {canary(v1alpha1.PhaseProgressing), with(observed(early, "v3", ready, "v1", ready), routesAt(20, rejected)),
			RestartAnalysis{}},
		"accepted after a shown wait: the step clock restarts": {canary(v1alpha1.PhaseProgressing, waitingForRoutes, atWeight(20)), with(observed(due, "v2", ready, "v1", ready), routesAt(20, Routes{Programmed: true})),
			RoutesProgrammed{}},
		"still unreported after a shown wait keeps waiting": {canary(v1alpha1.PhaseProgressing, waitingForRoutes), with(observed(due, "v2", ready, "v1", ready), routesAt(20, pending)),
			WaitForRoutes{Message: unreported}},
		"weights applied after the transition: the step is due an interval after": {canary(v1alpha1.PhaseProgressing, atWeight(20)),
			with(observed(due, "v2", ready, "v1", ready), routesAt(20, Routes{Programmed: true, ProgrammedAt: t0.Add(30 * time.Second)})), Wait{RequeueAfter: 30 * time.Second}},
		"weights applied before the transition: the step is due as usual": {canary(v1alpha1.PhaseProgressing, atWeight(20)),
			with(observed(due, "v2", ready, "v1", ready), routesAt(20, Routes{Programmed: true, ProgrammedAt: t0.Add(-time.Minute)})), Step{}},
		"promoting waits for the routes before routing to the primary": {canary(v1alpha1.PhasePromoting), with(observed(early, "v2", ready, "v2", ready), routesAt(60, rejected)),
			WaitForRoutes{Message: rejection}},
		"promoting halts on a failed primary whatever the routes": {canary(v1alpha1.PhasePromoting), with(observed(early, "v2", ready, "v2", failed), routesAt(60, rejected)),
			Halt{Reason: "primary failed during promotion: exceeded its progress deadline"}},
		"finalising does not move traffic on rejected weights": {canary(v1alpha1.PhaseFinalising), with(observed(early, "v2", ready, "v2", ready), routesAt(50, rejected)),
			WaitForRoutes{Message: rejection}},
		"finalising keeps the canary until the gateway applied weight 0": {canary(v1alpha1.PhaseFinalising), with(observed(early, "v2", ready, "v2", ready), routesAt(0, pending)),
			Wait{RequeueAfter: 40 * time.Second}},
		"finalising keeps the canary on rejected weight 0": {canary(v1alpha1.PhaseFinalising), with(observed(early, "v2", ready, "v2", ready), routesAt(0, rejected)),
			WaitForRoutes{Message: rejection}},
		"finalising halts on a failed primary whatever the routes": {canary(v1alpha1.PhaseFinalising), with(observed(early, "v2", ready, "v2", failed), routesAt(50, rejected)),
			Halt{Reason: "primary failed while traffic moved back to it: exceeded its progress deadline"}},
		"halted with a recovered primary waits for the routes": {canary(v1alpha1.PhaseHalted), with(observed(early, "v2", ready, "v2", ready), routesAt(60, rejected)),
			WaitForRoutes{Message: rejection}},
		"halted restores the primary whatever the routes": {canary(v1alpha1.PhaseHalted, restorePolicy), with(observed(late, "v2", ready, "v2", failed), routesAt(60, rejected)),
			RestorePrimary{}},

		// A primary with no pod ready to serve gets no traffic while the
		// analysed canary can take it; analysis phases never do this.
		"promoting shields a primary with no ready pod": {canary(v1alpha1.PhasePromoting), with(observed(early, "v2", ready, "v2", dark), routesAt(60, Routes{Programmed: true})),
			Shield{Side: PrimarySide, Reason: "the primary has no pod ready to serve: 0 of 2 updated replicas available"}},
		"promoting shields whatever the routes": {canary(v1alpha1.PhasePromoting), with(observed(early, "v2", ready, "v2", dark), routesAt(60, rejected)),
			Shield{Side: PrimarySide, Reason: "the primary has no pod ready to serve: 0 of 2 updated replicas available"}},
		"promoting, shielded, waits for the primary": {canary(v1alpha1.PhasePromoting), with(observed(early, "v2", ready, "v2", dark), routesAt(100, Routes{Programmed: true})),
			WaitForPromotion{Message: "0 of 2 updated replicas available", RequeueAfter: 9*time.Minute + 40*time.Second}},
		"finalising shields a primary that went dark": {canary(v1alpha1.PhaseFinalising), with(observed(early, "v2", ready, "v2", dark), routesAt(30, Routes{Programmed: true})),
			Shield{Side: PrimarySide, Reason: "the primary has no pod ready to serve: 0 of 2 updated replicas available"}},
		"halted shields a dark primary": {canary(v1alpha1.PhaseHalted), with(observed(late, "v2", ready, "v2", darkFailed), routesAt(60, Routes{Programmed: true})),
			Shield{Side: PrimarySide, Reason: "the primary has no pod ready to serve: exceeded its progress deadline"}},
		"an A/B test's promotion shields a dark primary that still serves the unmatched users": {canary(v1alpha1.PhasePromoting), with(with(observed(early, "v2", ready, "v2", dark), routesAt(100, Routes{Programmed: true})), func(o *Observation) { o.ABTest = true }),
			Shield{Side: PrimarySide, Reason: "the primary has no pod ready to serve: 0 of 2 updated replicas available"}},
		"a deleted primary during an A/B test: all traffic to the serving canary first": {canary(v1alpha1.PhaseProgressing, atWeight(100)), with(observed(early, "v2", ready, "", ready), func(o *Observation) { o.Primary = Primary{}; o.CanaryWeight, o.ABTest = 100, true }),
			Shield{Side: PrimarySide, Reason: "the primary was deleted"}},
		"halted and shielded stays halted": {canary(v1alpha1.PhaseHalted), with(observed(late, "v2", ready, "v2", darkFailed), routesAt(100, Routes{Programmed: true})),
			Idle{}},
		"no shield when both sides are dark": {canary(v1alpha1.PhaseHalted), with(observed(late, "v2", dark, "v2", darkFailed), routesAt(60, Routes{Programmed: true})),
			Idle{}},
		"halted shields a canary that Git rolls while the primary is restored": {canary(v1alpha1.PhaseHalted), with(observed(late, "v1", dark, "v1", rolling), routesAt(100, Routes{Programmed: true})),
			Shield{Side: CanarySide, Reason: "the canary has no pod ready to serve: 0 of 2 updated replicas available"}},
		"promoting shields a dark canary onto a serving primary": {canary(v1alpha1.PhasePromoting), with(observed(early, "v2", dark, "v2", rolling), routesAt(60, Routes{Programmed: true})),
			Shield{Side: CanarySide, Reason: "the canary has no pod ready to serve: 0 of 2 updated replicas available"}},
		"the analysis never shields the primary": {canary(v1alpha1.PhaseProgressing, atWeight(20)), with(observed(due, "v2", ready, "v1", dark), routesAt(20, Routes{Programmed: true})),
			Step{}},

		// Faults: a write whose status was lost, a canary or a primary that
		// went away.
		"weights the status does not record restart the step clock": {canary(v1alpha1.PhaseProgressing, atWeight(20)), with(observed(due, "v2", ready, "v1", ready), routesAt(40, Routes{Programmed: true})),
			RecordWeights{}},
		"a canary that lost every ready pod is shielded at once": {canary(v1alpha1.PhaseProgressing, atWeight(20)), with(observed(early, "v2", dark, "v1", ready), routesAt(20, Routes{Programmed: true})),
			Shield{Side: CanarySide, Reason: "the canary has no pod ready to serve: 0 of 2 updated replicas available"}},
		"a shielded dark canary waits for its pods": {canary(v1alpha1.PhaseProgressing), with(observed(early, "v2", dark, "v1", ready), routesAt(0, Routes{Programmed: true})),
			WaitForCanary{Message: dark.Message}},
		"a target deleted mid-rollout: traffic back to the primary": {canary(v1alpha1.PhaseProgressing, atWeight(20)), with(observed(early, "", ready, "v1", ready), func(o *Observation) { o.Target = Target{}; o.CanaryWeight = 20 }),
			Shield{Side: CanarySide, Reason: "Deployment apps/podinfo named by spec.targetRef was deleted"}},
		"a route the data plane would serve wrongly stalls before anything moves": {canary(v1alpha1.PhaseProgressing, atWeight(20)), with(observed(due, "v2", ready, "v1", ready), func(o *Observation) { o.RoutingUnsupported = "cors" }),
			Stall{Reason: v1alpha1.UnsupportedByDataPlaneReason, Message: "cors"}},
		"a target deleted, traffic on the primary, stalls": {canary(v1alpha1.PhaseProgressing), with(observed(early, "", ready, "v1", ready), func(o *Observation) { o.Target = Target{} }),
			Stall{Reason: v1alpha1.TargetNotFoundReason, Message: notFound}},
		"a deleted primary is re-created": {idle(v1alpha1.PhaseSucceeded), with(observed(t0, "v2", ready, "", ready), func(o *Observation) { o.Primary = Primary{}; o.Target.Replicas = 0 }),
			RepairPrimary{}},
		"a deleted primary mid-rollout: all traffic to the serving canary first": {canary(v1alpha1.PhaseProgressing, atWeight(20)), with(observed(early, "v2", ready, "", ready), func(o *Observation) { o.Primary = Primary{}; o.CanaryWeight = 20 }),
			Shield{Side: PrimarySide, Reason: "the primary was deleted"}},
		"a deleted primary mid-rollout, shielded, is re-created": {canary(v1alpha1.PhaseProgressing, atWeight(100)), with(observed(early, "v2", ready, "", ready), func(o *Observation) { o.Primary = Primary{}; o.CanaryWeight = 100 }),
			RepairPrimary{}},
		"a promotion whose status was lost resumes, never rolls back": {canary(v1alpha1.PhaseProgressing, func(c *v1alpha1.Canary) { c.Status.FailedChecks = 2 }), observed(due, "v2", ready, "v2", rolling),
			Promote{Reason: "resuming the promotion: the primary runs the analysed revision"}},
		"a promotion whose status was lost shields a dark primary first": {canary(v1alpha1.PhaseProgressing, atWeight(50)), with(observed(due, "v2", ready, "v2", dark), routesAt(50, Routes{Programmed: true})),
			Shield{Side: PrimarySide, Reason: "the primary has no pod ready to serve: 0 of 2 updated replicas available"}},
		"weights changed by hand outside a rollout are put back": {idle(v1alpha1.PhaseSucceeded), with(observed(t0, "v2", ready, "v2", ready), routesAt(30, Routes{Programmed: true})),
			Shield{Side: CanarySide, Reason: "the routes sent 30% to the canary outside a rollout"}},
		"a primary with no ready pod: Ready is not True": {idle(v1alpha1.PhaseSucceeded), with(observed(t0, "v2", ready, "v2", dark), func(o *Observation) { o.Target.Replicas = 0 }),
			PrimaryUnavailable{Message: dark.Message}},

		// Halted.
		"halted stays halted":                       {canary(v1alpha1.PhaseHalted), observed(late, "v2", ready, "v2", failed), Idle{}},
		"halted finishes when the primary recovers": {canary(v1alpha1.PhaseHalted), observed(late, "v2", ready, "v2", ready), Finalise{}},
		"a recovered primary finishes once its old pods stop serving": {canary(v1alpha1.PhaseHalted),
			with(observed(late, "v2", ready, "v2", ready), func(o *Observation) { o.Primary.Leaving = 2 }),
			WaitForPromotion{Message: "pods of the primary's previous revision still terminating: 2; waiting until none may answer", RequeueAfter: time.Second}},
		"halted ignores an abort": {canary(v1alpha1.PhaseHalted), with(observed(late, "v2", ready, "v2", failed), func(o *Observation) { o.Requests.Abort = "a" }), Idle{}},

		// GitOps revert: once per bad revision, on the phases asked for.
		"halted opens the revert":                         {canary(v1alpha1.PhaseHalted, revertOn(v1alpha1.RevertTrigger(v1alpha1.PhaseHalted)), attempted("main@sha1:bad")), observed(late, "v2", ready, "v2", failed), OpenRevert{}},
		"halted with the revert open stays halted":        {canary(v1alpha1.PhaseHalted, revertOn(v1alpha1.RevertTrigger(v1alpha1.PhaseHalted)), attempted("main@sha1:bad"), reverted("main@sha1:bad")), observed(late, "v2", ready, "v2", failed), Idle{}},
		"halted reverts a newer bad revision":             {canary(v1alpha1.PhaseHalted, revertOn(v1alpha1.RevertTrigger(v1alpha1.PhaseHalted)), attempted("main@sha1:bad2"), reverted("main@sha1:bad")), observed(late, "v2", ready, "v2", failed), OpenRevert{}},
		"halted without a known revision":                 {canary(v1alpha1.PhaseHalted, revertOn(v1alpha1.RevertTrigger(v1alpha1.PhaseHalted))), observed(late, "v2", ready, "v2", failed), Idle{}},
		"halted, revert on failed only":                   {canary(v1alpha1.PhaseHalted, revertOn(v1alpha1.RevertTrigger(v1alpha1.PhaseFailed)), attempted("main@sha1:bad")), observed(late, "v2", ready, "v2", failed), Idle{}},
		"failed opens the revert":                         {canary(v1alpha1.PhaseFailed, revertOn(v1alpha1.RevertTrigger(v1alpha1.PhaseFailed)), attempted("main@sha1:bad")), observed(t0, "v2", ready, "v1", ready), OpenRevert{}},
		"failed, revert on halted only":                   {canary(v1alpha1.PhaseFailed, revertOn(v1alpha1.RevertTrigger(v1alpha1.PhaseHalted)), attempted("main@sha1:bad")), with(observed(t0, "v2", ready, "v1", ready), func(o *Observation) { o.Target.Replicas = 0 }), Idle{}},
		"a revert request opens it whatever the triggers": {canary(v1alpha1.PhaseFailed), with(observed(t0, "v2", ready, "v1", ready), func(o *Observation) { o.Requests.Revert = "r1" }), OpenRevert{}},
		"halted: a revert request even after one was opened": {canary(v1alpha1.PhaseHalted, revertOn(v1alpha1.RevertTrigger(v1alpha1.PhaseHalted)), attempted("main@sha1:bad"), reverted("main@sha1:bad")),
			with(observed(late, "v2", ready, "v2", failed), func(o *Observation) { o.Requests.Revert = "r2" }), OpenRevert{}},
		"a new revision wins over the revert": {canary(v1alpha1.PhaseHalted, revertOn(v1alpha1.RevertTrigger(v1alpha1.PhaseHalted)), attempted("main@sha1:bad")), observed(late, "v3", ready, "v2", ready), Finalise{}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := Decide(tt.canary, tt.obs)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decide() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// Nothing moves forward while the data plane has not applied the weights,
// whatever the canary, the primary, the requests or the clock say: no
// step, no promotion, no traffic back to the primary, no canary scaled
// down (re-applying a promotion to the primary moves no traffic).
func TestDecide_NoAdvanceOnRoutesNotProgrammed(t *testing.T) {
	healths := []workload.Health{ready, rolling, failed}
	phases := []v1alpha1.CanaryPhase{v1alpha1.PhaseProgressing, v1alpha1.PhaseWaitingPromotion, v1alpha1.PhasePromoting, v1alpha1.PhaseFinalising, v1alpha1.PhaseHalted}
	for _, phase := range phases {
		for _, routes := range []Routes{rejected, pending} {
			for _, th := range healths {
				for _, ph := range healths {
					for _, now := range []time.Time{t0.Add(time.Second), t0.Add(time.Minute), t0.Add(time.Hour)} {
						for _, req := range []Requests{{}, {Promote: "p"}} {
							for _, weight := range []int{0, 50} {
								for _, mutate := range []func(*v1alpha1.Canary){func(*v1alpha1.Canary) {}, waitingForRoutes, restorePolicy} {
									c := canary(phase, mutate)
									o := with(observed(now, "v2", th, "v2", ph), routesAt(weight, routes))
									o.Requests = req
									switch a := Decide(c, o).(type) {
									case Step, Finalise, CompletePromotion, RoutesProgrammed:
										t.Errorf("%s, routes %+v, weight %d, target %+v, primary %+v, requests %+v: decided %s", phase, routes, weight, th, ph, req, a)
									case Promote:
										if phase != v1alpha1.PhasePromoting {
											t.Errorf("%s, routes %+v, requests %+v: decided %s", phase, routes, req, a)
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// No phase of a promotion can ever decide a rollback, whatever the canary,
// the primary, the requests or the clock say.
func TestDecide_NoRollbackDuringPromotion(t *testing.T) {
	healths := []workload.Health{ready, rolling, failed}
	for _, phase := range []v1alpha1.CanaryPhase{v1alpha1.PhasePromoting, v1alpha1.PhaseFinalising, v1alpha1.PhaseHalted} {
		for _, th := range healths {
			for _, ph := range healths {
				for _, now := range []time.Time{t0, t0.Add(time.Hour)} {
					for _, req := range []Requests{{}, {Abort: "a"}, {Promote: "p"}, {Retry: "r"}} {
						c := canary(phase, func(c *v1alpha1.Canary) { c.Status.FailedChecks = 10 })
						for _, routes := range []Routes{{Programmed: true}, rejected, pending} {
							o := with(observed(now, "v2", th, "v2", ph), routesAt(50, routes))
							o.Requests = req
							if a, ok := Decide(c, o).(Rollback); ok {
								t.Errorf("%s, target %+v, primary %+v, requests %+v, routes %+v: decided %s", phase, th, ph, req, routes, a)
							}
						}
					}
				}
			}
		}
	}
}

func TestPlanStep(t *testing.T) {
	gateway := func(a v1alpha1.CanaryAnalysis) *v1alpha1.Canary {
		return testobj.MakeCanary("p", "apps").
			Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: []v1alpha1.GatewayReference{{Name: "gw"}}}).
			Analysis(a).Obj()
	}
	blueGreen := testobj.MakeCanary("p", "apps").Analysis(v1alpha1.CanaryAnalysis{Iterations: 3}).Obj()
	abTest := gateway(v1alpha1.CanaryAnalysis{Iterations: 3, Match: []v1alpha1.AnalysisMatch{{Headers: []v1alpha1.HTTPHeaderMatch{{Name: "x-canary", Value: "insider"}}}}})
	tests := map[string]struct {
		canary             *v1alpha1.Canary
		weight, iterations int
		want               StepPlan
	}{
		"first weight step":                           {gateway(v1alpha1.CanaryAnalysis{StepWeight: 10, MaxWeight: 30}), 0, 0, StepPlan{Kind: IncreaseWeight, Weight: 10}},
		"next weight step":                            {gateway(v1alpha1.CanaryAnalysis{StepWeight: 10, MaxWeight: 30}), 10, 0, StepPlan{Kind: IncreaseWeight, Weight: 20}},
		"max weight promotes":                         {gateway(v1alpha1.CanaryAnalysis{StepWeight: 10, MaxWeight: 30}), 30, 0, StepPlan{Kind: ReadyToPromote}},
		"explicit step weights":                       {gateway(v1alpha1.CanaryAnalysis{StepWeights: []int{1, 5, 50}}), 5, 0, StepPlan{Kind: IncreaseWeight, Weight: 50}},
		"after the last weight":                       {gateway(v1alpha1.CanaryAnalysis{StepWeights: []int{1, 5, 50}}), 50, 0, StepPlan{Kind: ReadyToPromote}},
		"blue/green iterates":                         {blueGreen, 0, 0, StepPlan{Kind: Iterate}},
		"blue/green last":                             {blueGreen, 0, 2, StepPlan{Kind: ReadyToPromote}},
		"blue/green 0 iterations":                     {testobj.MakeCanary("p", "apps").Obj(), 0, 0, StepPlan{Kind: ReadyToPromote}},
		"blue/green on the HTTPRoute iterates":        {gateway(v1alpha1.CanaryAnalysis{Iterations: 3}), 0, 0, StepPlan{Kind: Iterate}},
		"blue/green on the HTTPRoute, last":           {gateway(v1alpha1.CanaryAnalysis{Iterations: 3}), 0, 2, StepPlan{Kind: ReadyToPromote}},
		"A/B: the matched users go to the canary":     {abTest, 0, 0, StepPlan{Kind: IncreaseWeight, Weight: 100}},
		"A/B: iterates on them":                       {abTest, 100, 0, StepPlan{Kind: Iterate}},
		"A/B: promotes after the iterations":          {abTest, 100, 2, StepPlan{Kind: ReadyToPromote}},
		"A/B: weights put back by hand: routed again": {abTest, 40, 1, StepPlan{Kind: IncreaseWeight, Weight: 100}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, PlanStep(tt.canary, tt.weight, tt.iterations)); diff != "" {
				t.Errorf("PlanStep() (-want +got):\n%s", diff)
			}
		})
	}
}

// What follows a step is decided from its verdict: a rollback webhook
// rolls back (or halts, once the promotion began), a failure counts a
// failed check, a pass moves on behind the step's gate.
func TestDecideStep(t *testing.T) {
	gateway := func(phase v1alpha1.CanaryPhase, a v1alpha1.CanaryAnalysis) *v1alpha1.Canary {
		c := testobj.MakeCanary("p", "apps").Phase(phase).
			Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: []v1alpha1.GatewayReference{{Name: "gw"}}}).
			Analysis(a).Obj()
		return c
	}
	weighted := v1alpha1.CanaryAnalysis{StepWeight: 25, MaxWeight: 50}
	progressing := gateway(v1alpha1.PhaseProgressing, weighted)
	blueGreen := testobj.MakeCanary("p", "apps").Phase(v1alpha1.PhaseProgressing).Analysis(v1alpha1.CanaryAnalysis{Iterations: 3}).Obj()
	at := func(weight int) Observation { return Observation{CanaryWeight: weight} }
	tests := map[string]struct {
		canary  *v1alpha1.Canary
		obs     Observation
		verdict StepVerdict
		want    Action
	}{
		"a rollback webhook: rolled back": {progressing, at(25), StepVerdict{RollbackBy: "gate", Failed: "also failed"},
			Rollback{Reason: "rollback requested by webhook gate"}},
		"a rollback webhook while waiting for promotion: rolled back": {gateway(v1alpha1.PhaseWaitingPromotion, weighted), at(50), StepVerdict{RollbackBy: "gate"},
			Rollback{Reason: "rollback requested by webhook gate"}},
		"a rollback webhook while promoting: halted": {gateway(v1alpha1.PhasePromoting, weighted), at(50), StepVerdict{RollbackBy: "rollback-gate"},
			Halt{Reason: "rollback requested by webhook rollback-gate (no rollback during promotion)"}},
		"a rollback webhook while finalising: halted": {gateway(v1alpha1.PhaseFinalising, weighted), at(50), StepVerdict{RollbackBy: "g"},
			Halt{Reason: "rollback requested by webhook g (no rollback during promotion)"}},
		"a failure: one failed check": {progressing, at(25), StepVerdict{Failed: "rollout check failed: x", GateClosed: "closed"},
			FailCheck{Message: "rollout check failed: x"}},
		"passed: the next weight":                 {progressing, at(0), StepVerdict{}, AdvanceWeight{Weight: 25}},
		"passed, the traffic gate closed: waits":  {progressing, at(25), StepVerdict{GateClosed: "no"}, WaitForGate{Message: "no"}},
		"passed at the maximum weight: promotes":  {progressing, at(50), StepVerdict{}, Promote{Reason: "analysis passed"}},
		"passed, the promotion gate closed":       {progressing, at(50), StepVerdict{GateClosed: "no"}, WaitForGate{Promotion: true, Message: "no"}},
		"blue/green: one more iteration":          {blueGreen, at(0), StepVerdict{}, CountIteration{}},
		"blue/green: iterates whatever the gate":  {blueGreen, at(0), StepVerdict{GateClosed: "no"}, CountIteration{}},
		"blue/green, the last iteration: promote": {testobj.MakeCanary("p", "apps").Phase(v1alpha1.PhaseProgressing).Analysis(v1alpha1.CanaryAnalysis{Iterations: 1}).Obj(), at(0), StepVerdict{}, Promote{Reason: "analysis passed"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, DecideStep(tt.canary, tt.obs, tt.verdict)); diff != "" {
				t.Errorf("DecideStep() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPromotionWeight(t *testing.T) {
	c := testobj.MakeCanary("p", "apps").Analysis(v1alpha1.CanaryAnalysis{StepWeightPromotion: 20}).Obj()
	for weight, want := range map[int]int{50: 30, 30: 10, 10: 0, 0: 0} {
		if got := PromotionWeight(c, weight); got != want {
			t.Errorf("PromotionWeight(%d) = %d, want %d", weight, got, want)
		}
	}
	if got := PromotionWeight(testobj.MakeCanary("p", "apps").Obj(), 50); got != 0 {
		t.Errorf("without stepWeightPromotion: %d, want 0", got)
	}
}
