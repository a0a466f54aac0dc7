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
	"time"

	"github.com/serin-dev/serin/internal/workload"
)

// Observation is what the controller read from the cluster (from the
// informer cache) for one reconcile.
type Observation struct {
	// Now is the time of the observation.
	Now time.Time

	// Target is the Canary's target; when scaled up, it is the canary.
	Target Target

	// Primary is the primary Deployment (Deployment targets).
	Primary Primary

	// Baseline is the baseline Deployment the judge compares the canary
	// with (analysis.judge.baseline); the zero value without one.
	Baseline Baseline

	// ServicesInSync is true when the generated Services exist with the
	// selectors and ports serin wants, and the routing objects exist.
	ServicesInSync bool

	// CanaryWeight is the canary's traffic percentage in the routing
	// objects; it is in force only when Routes.Programmed. In an A/B test
	// (ABTest) it is the share of the matched requests only.
	CanaryWeight int

	// ABTest is true when the routing objects send the requests an A/B
	// test matches to the canary and every other request to the primary.
	ABTest bool

	// Routes tells whether the data plane applies the routing objects.
	Routes Routes

	// Requests are the user's pending requests (annotations not yet handled).
	Requests Requests

	// RoutingUnsupported, when not empty, says which routing fields the
	// Canary's data plane would serve wrongly (dataplane.Unsupported).
	RoutingUnsupported string

	// InvalidPromotion, when not empty, says which stage of
	// spec.gitops.promote can never work (InvalidPromotion): no rollout
	// starts until it is fixed.
	InvalidPromotion string

	// Conflict, when its Reason is set, says why the Canary must not act
	// at all: its target is an object serin generates for another Canary
	// (InvalidTarget), or another Canary created earlier claims the
	// target or a generated name (TargetClaimed).
	Conflict Conflict

	// Group is what the Canary's CanaryGroup says, when one lists it.
	Group Group

	// RefusedRefs, when not empty, says which of the Canary's references
	// the agent refuses (--no-cross-namespace-refs): no rollout starts
	// until they are fixed.
	RefusedRefs string
}

// Conflict is a claim of another Canary that keeps this one from acting.
type Conflict struct {
	Reason, Message string
}

// Target is the observed state of the workload named by spec.targetRef.
type Target struct {
	// Found is false when the target does not exist.
	Found bool
	// Invalid, when not empty, says why the target cannot be rolled out.
	Invalid string
	// SpecHash identifies the target's current revision.
	SpecHash string
	// Revision is the Flux source revision that applied this spec, if any.
	Revision string
	// Replicas is the target's spec.replicas (0 once serin scaled it down).
	Replicas int32
	// TrackedConfigs maps the ConfigMaps and Secrets the target uses
	// (Kind/name) to the hash of their data, part of SpecHash.
	TrackedConfigs map[string]string
	// Health is the target's rollout state, meaningful when scaled up.
	Health workload.Health
}

// Primary is the observed state of the primary Deployment.
type Primary struct {
	// Exists is false until serin created the primary, and when someone
	// deleted it.
	Exists bool
	// NotGenerated is true for targets that have no primary Deployment
	// (a Service target: serin never touches its workloads).
	NotGenerated bool
	// SpecHash identifies the revision the primary runs.
	SpecHash string
	// ScaledDown is true when the primary's spec.replicas is 0, which
	// serin never sets: someone scaled it down outside serin.
	ScaledDown bool
	// Health is the primary's rollout state.
	Health workload.Health
	// Leaving counts the endpoints of the primary Service that still serve
	// while their pod terminates: pods on their way out to which the data
	// plane may route a request. A promotion is not complete while any
	// old pod may answer.
	Leaving int32
	// Terminating is the primary Deployment's status.terminatingReplicas:
	// pods on their way out, which the endpoints may not show yet (or
	// never will, on a lost node).
	Terminating int32
	// EndpointsSettleAt is when the data plane has had time to apply the
	// last change of the primary's endpoints (the change's time, plus the
	// agent's --data-plane-settle-time); zero when unknown.
	EndpointsSettleAt time.Time
}

// Baseline is the observed state of <target>-baseline, read only for a
// Canary with analysis.judge.baseline.
type Baseline struct {
	// Exists is true when the Canary controls a baseline Deployment.
	Exists bool
	// InSync is true when it and its Service run what the analysis under
	// way wants: the primary's template for this revision's analysis, at
	// the canary's replicas.
	InSync bool
	// Health is the baseline's rollout state.
	Health workload.Health
	// Routed is true when the routing objects name the baseline's
	// Service (with any weight).
	Routed bool
}

// Requests are the user's pending requests: the value of each request
// annotation the agent has not handled yet, or "".
type Requests struct {
	Promote, Abort, Retry, Revert string
	// PromoteTo is serin.dev/promote-to (STAGE@TOKEN).
	PromoteTo string
}

// Routes is what the data plane says about the routing objects: with the
// gatewayapi router, the HTTPRoute's status.parents.
type Routes struct {
	// Programmed is true when the data plane accepted the routing objects as
	// they are (always with the kubernetes router): only then do their
	// weights count as applied.
	Programmed bool
	// Rejected is true when the data plane reported that it does not apply
	// them, rather than not having reported on them yet.
	Rejected bool
	// Message says what is missing, parent by parent, when not programmed.
	Message string
	// ProgrammedAt is when the agent saw the current weights come into
	// force; zero when it did not see it happen (they were in force before
	// the agent started). The next step is due one interval after it at the
	// earliest, so that the analysis judges traffic the data plane applied.
	ProgrammedAt time.Time
	// SettleAt is when the data plane has had time to apply the routes
	// that came into force at ProgrammedAt (the agent's
	// --data-plane-settle-time after it); zero when unknown. Until then a
	// request may still go to the side the routes took traffic from.
	SettleAt time.Time
}

// PrimaryRouted reports whether the routing objects send any request to the
// primary: some share of all requests, or, in an A/B test, the requests it
// does not match.
func (o Observation) PrimaryRouted() bool {
	return o.CanaryWeight < 100 || o.ABTest
}
