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

package v1alpha1

// Condition types of a Canary, besides Flux's Ready, Reconciling and Stalled
// (github.com/fluxcd/pkg/apis/meta), which make a Canary kstatus-compatible:
// Ready is True when the Canary is Initialized or Succeeded, Reconciling
// while a rollout is in progress, Stalled when a person or a new Git revision
// must act.
const (
	// PromotedCondition is True when the last revision was promoted, so that
	// `kubectl wait canary/NAME --for=condition=promoted` works as in Flagger.
	PromotedCondition string = "Promoted"
)

// Reasons of the Canary conditions.
const (
	// InitializingReason: the primary copy and Services are being created.
	InitializingReason string = "Initializing"
	// InitializedReason: the primary serves and no rollout is running.
	InitializedReason string = "Initialized"
	// WaitingForPrimaryReason: the primary is not ready yet.
	WaitingForPrimaryReason string = "WaitingForPrimary"
	// ProgressingReason: a rollout is in progress.
	ProgressingReason string = "Progressing"
	// SucceededReason: the last revision was promoted.
	SucceededReason string = "Succeeded"
	// FailedReason: the last revision was rolled back.
	FailedReason string = "Failed"
	// PromotionFailedReason: the primary failed during promotion and was
	// restored to its last known good template.
	PromotionFailedReason string = "PromotionFailed"
	// HaltedReason: the primary failed during promotion; routing is frozen.
	HaltedReason string = "Halted"
	// ShieldedReason (an event): during or after a promotion, the primary
	// or the canary had no pod ready to serve while the other had, so all
	// traffic went to the other side.
	ShieldedReason string = "Shielded"
	// PrimaryRepairedReason (an event): the primary Deployment was deleted
	// after initialization; serin re-created it with the last promoted
	// revision.
	PrimaryRepairedReason string = "PrimaryRepaired"
	// PrimaryUnavailableReason: the side the routes send users to has no
	// pod ready to serve (the primary was scaled down, its pods evicted or
	// failing), so Ready is False until it has; serin restores what it
	// generated meanwhile.
	PrimaryUnavailableReason string = "PrimaryUnavailable"
	// WaitingForGroupReason: a step passed, or the rollout is ready to
	// start, and the member waits for the other members of its group's
	// release (lockstep, dependsOn, or the release's window).
	WaitingForGroupReason string = "WaitingForGroup"
	// GroupFailedReason: another member of the group's release failed, so
	// this member was rolled back (or never started) with it.
	GroupFailedReason string = "GroupFailed"
	// InvalidGroupReason: the Canary's CanaryGroup cannot be followed (the
	// Canary is listed by two groups, or dependsOn forms a cycle); the
	// message says what to fix.
	InvalidGroupReason string = "InvalidGroup"
	// MembersNotReleasedReason (a CanaryGroup): a member was rolled back
	// with an earlier release and serves its last promoted revision while
	// Git has another; a new revision or serin retry --group releases it.
	MembersNotReleasedReason string = "MembersNotReleased"
	// RevertedReason: the target returned to the last promoted spec.
	RevertedReason string = "Reverted"
	// TargetNotFoundReason: the target named by spec.targetRef does not exist.
	TargetNotFoundReason string = "TargetNotFound"
	// InvalidTargetReason: the target exists but cannot be rolled out as
	// is: its selector, or it is not the Canary's to roll out (serin
	// generated it for a Canary, or another controller owns it).
	InvalidTargetReason string = "InvalidTarget"
	// InvalidGeneratedObjectReason: the API server refused an object serin
	// generates from the Canary's spec as invalid (a routing.hosts entry,
	// a label or annotation of spec.service); the message is the API
	// server's, naming the object and the field.
	InvalidGeneratedObjectReason string = "InvalidGeneratedObject"
	// TargetClaimedReason: another Canary, created earlier, rolls out the
	// same target or generates an object of the same name. The later
	// Canary writes nothing and calls no webhook until the other is gone.
	TargetClaimedReason string = "TargetClaimed"
	// AdoptionRefusedReason: an object with the name of one serin
	// generates for the Canary exists and is not controlled by it; serin
	// leaves it untouched until someone deletes it or annotates it
	// serin.dev/adopt=true (AdoptAnnotation). One controlled by another
	// controller, another Canary included, is never taken over.
	AdoptionRefusedReason string = "AdoptionRefused"
	// RouteRefInvalidReason: a route of routing.routeRefs cannot be
	// steered: it does not exist, it has no rule whose only backend is the
	// apex Service, or another Canary steers it. The message names the
	// route and what to fix; nothing of it is written meanwhile.
	RouteRefInvalidReason string = "RouteRefInvalid"
	// RouteNotProgrammedReason: the gateway has not accepted the HTTPRoute's
	// current weights (a parent rejected it, or has not reported on its
	// generation yet); the rollout waits, and stalls past the progress
	// deadline.
	RouteNotProgrammedReason string = "RouteNotProgrammed"
	// BaselineNotReadyReason: the baseline Deployment the judge compares
	// the canary with (analysis.judge.baseline) has no ready pods; the
	// analysis waits for it, and stalls past the progress deadline, the
	// baseline never routed meanwhile.
	BaselineNotReadyReason string = "BaselineNotReady"
	// AccessDeniedReason: a reference the agent refuses (another namespace
	// under --no-cross-namespace-refs), or a write the API server refused
	// to the service account serin impersonates for the Canary. The message
	// names the reference or the account, and the fix. The same reason as
	// Flux's (fluxcd/pkg/apis/acl).
	AccessDeniedReason string = "AccessDenied"
	// UnsupportedByDataPlaneReason: the Canary asks the HTTPRoute for a
	// feature its data plane (routing.dataPlane, else the agent's
	// --data-plane) does not implement and would serve wrongly (Traefik
	// answers every request of a rule with a filter it lacks with a 500).
	// serin writes no route until the field is removed or the data plane
	// changed; the message names both.
	UnsupportedByDataPlaneReason string = "UnsupportedByDataPlane"
	// InvalidPromotionReason: a stage of spec.gitops.promote can never be
	// promoted to as written (its Canary is this Canary itself, its path
	// or branch is not one Git can take, its soak cannot fail), in a form
	// the API server's validation could not see; the message names the
	// field and what to change. No rollout starts until it is fixed.
	InvalidPromotionReason string = "InvalidPromotion"
	// ReconciliationFailedReason: a transient error; serin retries with backoff.
	ReconciliationFailedReason string = "ReconciliationFailed"
)
