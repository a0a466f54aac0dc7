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

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1 "k8s.io/api/core/v1"

	"github.com/serin-dev/serin/analysis"
	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/redact"
	"github.com/serin-dev/serin/notifier"
)

// emit records a Kubernetes Event on the Canary and sends the same event
// through the notifier (Flux events, Providers). Messages name the canary's
// revision so that a person reading Slack knows which commit it is about.
func (r *CanaryReconciler) emit(ctx context.Context, obj *v1alpha1.Canary, severity notifier.Severity, reason, format string, args ...any) {
	r.send(ctx, obj, severity, reason, false, fmt.Sprintf(format, args...))
}

// emitStep announces an analysis step that moved the rollout on (a weight
// increase, an iteration) to the event webhooks and the notifier, but
// records no Kubernetes Event: the step is in status.analyses, written
// with the step's status patch, so that a step costs the API server one
// write. Events are for transitions and failures.
func (r *CanaryReconciler) emitStep(ctx context.Context, obj *v1alpha1.Canary, reason, format string, args ...any) {
	r.announce(ctx, obj, notifier.Event{Severity: notifier.SeverityInfo, Reason: reason, Message: redact.Text(fmt.Sprintf(format, args...)), Progress: true})
}

// send records and notifies one event; final marks the phase change that
// ends a rollout, on which commit-status Providers mark the commit. The
// message is redacted (redact.Text): it may quote an error that names a
// URL with its credentials.
func (r *CanaryReconciler) send(ctx context.Context, obj *v1alpha1.Canary, severity notifier.Severity, reason string, final bool, msg string) {
	msg = redact.Text(msg)
	eventType := corev1.EventTypeNormal
	if severity != notifier.SeverityInfo {
		eventType = corev1.EventTypeWarning
	}
	r.Event(obj, eventType, reason, msg)
	r.announce(ctx, obj, notifier.Event{Severity: severity, Reason: reason, Message: msg, Final: final})
}

// announce sends an event to the Canary's event webhooks and the notifier,
// with the Canary's phase, revision and weight.
func (r *CanaryReconciler) announce(ctx context.Context, obj *v1alpha1.Canary, e notifier.Event) {
	r.callEventHooks(obj, e.Message)
	if r.Notifier == nil {
		return
	}
	e.Phase = obj.Status.Phase
	e.Revision = obj.Status.LastAttemptedRevision
	e.Weight = obj.Status.CanaryWeight
	r.Notifier.Notify(ctx, obj, e)
}

// callEventHooks sends an event to the Canary's `event` webhooks, fire and
// forget, through the analysis runner's bounded queue: they never slow the
// rollout down, and a flood of events drops the oldest calls (counted in
// serin_webhook_calls_dropped_total) rather than piling up goroutines.
func (r *CanaryReconciler) callEventHooks(obj *v1alpha1.Canary, msg string) {
	hooks := analysis.Hooks(obj, v1alpha1.EventHook)
	if len(hooks) == 0 {
		return
	}
	snapshot := obj.DeepCopy()
	for _, h := range hooks {
		h.Metadata = withEventMessage(h.Metadata, msg)
		r.Analysis.Fire(snapshot, h, func(err error) {
			if err != nil {
				ctrl.Log.WithName("event-webhook").Info("event webhook failed", "canary", client.ObjectKeyFromObject(snapshot), "webhook", h.Name, "error", err.Error())
			}
		})
	}
}

// withEventMessage adds the event's message to a webhook's metadata, as
// Flagger's event webhooks carry it.
func withEventMessage(md map[string]string, msg string) map[string]string {
	out := make(map[string]string, len(md)+1)
	for k, v := range md {
		out[k] = v
	}
	out["eventMessage"] = msg
	return out
}
