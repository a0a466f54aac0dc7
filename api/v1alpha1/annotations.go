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

// Requests to the agent. The CLI (and any user, with kubectl annotate) sets
// one of these annotations on a Canary to a new unique value, usually the
// current time in RFC 3339; the agent acts on it once and records the value
// in status.handledRequests, the way Flux handles reconcile.fluxcd.io/requestedAt.
const (
	// PromoteRequestAnnotation skips the rest of the analysis of the current
	// revision and promotes it.
	PromoteRequestAnnotation = "serin.dev/promote-requested-at"
	// AbortRequestAnnotation rolls the current revision back now.
	AbortRequestAnnotation = "serin.dev/abort-requested-at"
	// RetryRequestAnnotation re-runs the analysis of a failed revision
	// without a new commit.
	RetryRequestAnnotation = "serin.dev/retry-requested-at"
	// RevertRequestAnnotation opens the GitOps revert of the current
	// revision now.
	RevertRequestAnnotation = "serin.dev/revert-requested-at"
	// PromoteToRequestAnnotation, set to STAGE@TOKEN, writes the last
	// promoted revision to the named stage of spec.gitops.promote now:
	// without the soak, and again after a Stopped or Error stage.
	PromoteToRequestAnnotation = "serin.dev/promote-to"
)

// HandledRequests records the value of the last request annotation of each
// kind the agent acted on.
type HandledRequests struct {
	// Promote is the last handled serin.dev/promote-requested-at value.
	// +optional
	Promote string `json:"promote,omitempty"`
	// Abort is the last handled serin.dev/abort-requested-at value.
	// +optional
	Abort string `json:"abort,omitempty"`
	// Retry is the last handled serin.dev/retry-requested-at value.
	// +optional
	Retry string `json:"retry,omitempty"`
	// Revert is the last handled serin.dev/revert-requested-at value.
	// +optional
	Revert string `json:"revert,omitempty"`
	// PromoteTo is the last handled serin.dev/promote-to value.
	// +optional
	PromoteTo string `json:"promoteTo,omitempty"`
}

// NotificationModeAnnotation on a Canary overrides the agent's
// --notification-mode for its events: owner (Flux events attributed to the
// Kustomization or HelmRelease that applied the target), canary (Flux events
// about the Canary itself) or direct (posted straight to the Providers in
// spec.alerts, without notification-controller).
const NotificationModeAnnotation = "serin.dev/notification-mode"

// AdoptAnnotation set to "true" on an existing object lets serin take it
// over as one of the objects it generates for a Canary (the `-primary`
// Deployment, the Services, the HTTPRoute, the primary's autoscaler or
// config copies). Without it, an object of a generated name that no
// controller or another controller owns is left untouched and the Canary
// stalls (AdoptionRefusedReason). An object controlled by another
// controller is never taken over, annotated or not.
const AdoptAnnotation = "serin.dev/adopt"
