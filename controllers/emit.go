package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/notifier"
)

// emit records a Kubernetes Event on the Canary and sends the same event
// through the notifier (Flux events, Providers). Messages name the canary's
// revision so that a person reading Slack knows which commit it is about.
func (r *CanaryReconciler) emit(ctx context.Context, obj *v1alpha1.Canary, severity notifier.Severity, reason, format string, args ...any) {
	r.send(ctx, obj, severity, reason, false, fmt.Sprintf(format, args...))
}

// send records and notifies one event; final marks the phase change that
// ends a rollout, on which commit-status Providers mark the commit.
func (r *CanaryReconciler) send(ctx context.Context, obj *v1alpha1.Canary, severity notifier.Severity, reason string, final bool, msg string) {
	eventType := corev1.EventTypeNormal
	if severity != notifier.SeverityInfo {
		eventType = corev1.EventTypeWarning
	}
	r.Event(obj, eventType, reason, msg)
	if r.Notifier == nil {
		return
	}
	phase := obj.Status.Phase
	r.Notifier.Notify(ctx, obj, notifier.Event{
		Severity: severity,
		Reason:   reason,
		Message:  msg,
		Phase:    phase,
		Revision: obj.Status.LastAttemptedRevision,
		Weight:   obj.Status.CanaryWeight,
		Final:    final,
	})
}
