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
	"fmt"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/record"
)

// transition sets the phase, the reason and message a person reads, and
// the transition time the next analysis step is scheduled from.
// A phase that ends a rollout ends its analysis record too.
func transition(obj *v1alpha1.Canary, phase v1alpha1.CanaryPhase, now time.Time, reason, format string, args ...any) {
	obj.Status.Phase = phase
	t := metav1.NewMicroTime(now)
	obj.Status.LastTransitionTime = &t
	switch phase {
	case v1alpha1.PhaseSucceeded, v1alpha1.PhaseFailed, v1alpha1.PhaseHalted:
		record.Finish(&obj.Status, phase, now, fmt.Sprintf(format, args...))
	}
	if phase == v1alpha1.PhaseSucceeded || phase == v1alpha1.PhaseInitialized {
		conditions.MarkTrue(obj, meta.ReadyCondition, reason, format, args...)
		return
	}
	conditions.MarkFalse(obj, meta.ReadyCondition, reason, format, args...)
}

// requeueAtNextStep schedules the reconcile of the next analysis step.
func requeueAtNextStep(obj *v1alpha1.Canary, now time.Time) time.Duration {
	next := obj.GetAnalysisInterval()
	if t := obj.Status.LastTransitionTime; t != nil {
		next = t.Add(obj.GetAnalysisInterval()).Sub(now)
	}
	if next < 0 {
		next = 0
	}
	// A timer never fires early; the millisecond only keeps the delay
	// positive, since zero would mean no requeue.
	return next + time.Millisecond
}
