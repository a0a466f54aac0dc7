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
	msg := fmt.Sprintf(format, args...)
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
		Final:    phase == v1alpha1.PhaseSucceeded || phase == v1alpha1.PhaseFailed || phase == v1alpha1.PhaseHalted,
	})
}
