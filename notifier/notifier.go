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

// Package notifier sends a Canary's events out through Flux: as Flux events
// to notification-controller (attributed to the Flux object that applied the
// target, or to the Canary), and directly to the Flux notification Providers
// a Canary names in spec.alerts.
package notifier

import (
	"context"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// Severity of an event, for Alerts and spec.alerts[].severity.
type Severity string

const (
	// SeverityInfo: progress and success.
	SeverityInfo Severity = "info"
	// SeverityWarn: waits (gates closed) and failures.
	SeverityWarn Severity = "warn"
	// SeverityError: failures only (rollback, halt, revert failed).
	SeverityError Severity = "error"
)

// Event is one thing a Canary reports.
type Event struct {
	// Severity of the event.
	Severity Severity
	// Reason is a CamelCase reason (the Kubernetes Event reason).
	Reason string
	// Message is short, human, and names what happened and why.
	Message string
	// Phase is the Canary's phase after the event.
	Phase v1alpha1.CanaryPhase
	// Revision is the Flux source revision being rolled out, if known.
	Revision string
	// Weight is the canary's traffic percentage.
	Weight int
	// Final marks the last event of a rollout (promoted, rolled back,
	// halted): commit-status Providers mark the commit on it. Only the
	// phase-change event (Reason equal to Phase) of a successful rollout
	// gets a commit-status companion; see docs/notifications.md.
	Final bool
	// Progress marks a step that moved a rollout on (a weight, an
	// iteration): the first events a full delivery queue gives up, since
	// the Canary's status.analyses keeps the steps.
	Progress bool
}

// Notifier sends a Canary's events. Implementations must not block the
// reconcile: they queue and deliver in the background, with retries.
type Notifier interface {
	Notify(ctx context.Context, canary *v1alpha1.Canary, e Event)
}

// Nop drops every event; the Kubernetes Event is still recorded.
type Nop struct{}

// Notify does nothing.
func (Nop) Notify(context.Context, *v1alpha1.Canary, Event) {}
