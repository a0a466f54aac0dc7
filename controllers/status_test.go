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
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/internal/workload"
)

// The conditions follow the phase, keep the reason and message of the
// transition, and are kstatus-consistent (never Ready and Stalled at once).
func TestSetConditions_FromTransitions(t *testing.T) {
	now := time.Now()
	tests := map[string]struct {
		from, to        v1alpha1.CanaryPhase
		reason          string
		wantReady       bool
		wantStalled     bool
		wantReconciling bool
		wantPromoted    bool
	}{
		"halted to succeeded by a git revert": {v1alpha1.PhaseHalted, v1alpha1.PhaseSucceeded, v1alpha1.RevertedReason, true, false, false, true},
		"progressing to halted":               {v1alpha1.PhaseProgressing, v1alpha1.PhaseHalted, v1alpha1.HaltedReason, false, true, false, false},
		"halted to failed by restore":         {v1alpha1.PhaseHalted, v1alpha1.PhaseFailed, v1alpha1.PromotionFailedReason, false, true, false, false},
		"succeeded to progressing":            {v1alpha1.PhaseSucceeded, v1alpha1.PhaseProgressing, v1alpha1.ProgressingReason, false, false, true, false},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := testobj.MakeCanary("p", "apps").Obj()
			transition(c, tt.from, now, "Before", "before")
			_, _ = setConditions(c, ctrl.Result{}, nil)
			transition(c, tt.to, now, tt.reason, "after %s", "x")
			_, _ = setConditions(c, ctrl.Result{}, nil)
			if got := conditions.IsReady(c); got != tt.wantReady {
				t.Errorf("Ready = %v, want %v", got, tt.wantReady)
			}
			if got := conditions.IsStalled(c); got != tt.wantStalled {
				t.Errorf("Stalled = %v, want %v", got, tt.wantStalled)
			}
			if got := conditions.IsReconciling(c); got != tt.wantReconciling {
				t.Errorf("Reconciling = %v, want %v", got, tt.wantReconciling)
			}
			if got := conditions.IsTrue(c, v1alpha1.PromotedCondition); got != tt.wantPromoted {
				t.Errorf("Promoted = %v, want %v", got, tt.wantPromoted)
			}
			if got := conditions.GetReason(c, meta.ReadyCondition); got != tt.reason {
				t.Errorf("Ready reason = %q, want %q", got, tt.reason)
			}
			if got := conditions.GetMessage(c, meta.ReadyCondition); got != "after x" {
				t.Errorf("Ready message = %q", got)
			}
		})
	}
}

// A new Canary (no phase yet, the reconcile that adds the finalizer) gets
// conditions the API server accepts: a reason is required.
func TestSetConditions_NewCanaryHasReasons(t *testing.T) {
	c := testobj.MakeCanary("p", "apps").Obj()
	_, _ = setConditions(c, ctrl.Result{}, nil)
	for _, cond := range c.Status.Conditions {
		if cond.Reason == "" {
			t.Errorf("condition %s has no reason", cond.Type)
		}
	}
	if !conditions.IsReconciling(c) {
		t.Error("a new canary is reconciling")
	}
}

// Errors are handled as Flux's controllers handle them, and
// observedGeneration records only a settled outcome.
func TestSetConditions_ErrorHandlingAndObservedGeneration(t *testing.T) {
	transient := errors.New("etcdserver: request timed out")
	tests := map[string]struct {
		phase       v1alpha1.CanaryPhase
		suspend     bool
		err         error
		wantTerm    bool
		wantErr     bool
		wantRequeue time.Duration
		wantReady   metav1.ConditionStatus
		wantReason  string // of Reconciling, or Stalled when stalled
		wantStalled bool
		wantSettled bool
		wantMessage string // of Stalled, when set
	}{
		"stall is terminal and settled": {
			phase: v1alpha1.PhaseInitialized, err: &stallingError{Reason: v1alpha1.TargetNotFoundReason, Err: errors.New("deployment podinfo not found")},
			wantTerm: true, wantErr: true, wantReady: metav1.ConditionFalse, wantReason: v1alpha1.TargetNotFoundReason, wantStalled: true, wantSettled: true,
		},
		"a refused object stalls with AdoptionRefused": {
			phase: v1alpha1.PhaseInitializing, err: stallOnForeign(&workload.NotManagedError{Kind: "Service", Name: "podinfo-primary"}),
			wantTerm: true, wantErr: true, wantReady: metav1.ConditionFalse, wantReason: v1alpha1.AdoptionRefusedReason, wantStalled: true, wantSettled: true,
		},
		"an invalid generated object stalls with the API server's message": {
			phase: v1alpha1.PhaseInitializing,
			err: fmt.Errorf("failed to apply httproute podinfo: %w", apierrors.NewInvalid(schema.GroupKind{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute"}, "podinfo",
				field.ErrorList{field.Invalid(field.NewPath("spec", "hostnames").Index(0), "*.*.example.com", "must be a wildcard of one label")})),
			wantTerm: true, wantErr: true, wantReady: metav1.ConditionFalse, wantReason: v1alpha1.InvalidGeneratedObjectReason, wantStalled: true, wantSettled: true,
			wantMessage: `the API server refused HTTPRoute podinfo that serin generates from this Canary; fix the Canary's spec: failed to apply httproute podinfo: HTTPRoute.gateway.networking.k8s.io "podinfo" is invalid: spec.hostnames[0]: Invalid value: "*.*.example.com": must be a wildcard of one label`,
		},
		"wait requeues without an error and is not settled": {
			phase: v1alpha1.PhaseProgressing, err: &waitingError{Reason: v1alpha1.WaitingForPrimaryReason, Err: errors.New("primary not ready"), RequeueAfter: 5 * time.Second},
			wantRequeue: 5 * time.Second, wantReady: metav1.ConditionFalse, wantReason: v1alpha1.WaitingForPrimaryReason,
		},
		"transient error is retried with ProgressingWithRetry": {
			phase: v1alpha1.PhaseSucceeded, err: transient,
			wantErr: true, wantReady: metav1.ConditionFalse, wantReason: meta.ProgressingWithRetryReason,
		},
		"initialized is settled": {
			phase: v1alpha1.PhaseInitialized, wantReady: metav1.ConditionTrue, wantSettled: true,
		},
		"a rollout in progress is not settled": {
			phase: v1alpha1.PhaseProgressing, wantReady: metav1.ConditionFalse, wantReason: string(v1alpha1.PhaseProgressing),
		},
		"halted is stalled and settled": {
			phase: v1alpha1.PhaseHalted, wantReady: metav1.ConditionFalse, wantReason: string(v1alpha1.PhaseHalted), wantStalled: true, wantSettled: true,
		},
		"suspended mid-rollout is settled": {
			phase: v1alpha1.PhaseProgressing, suspend: true, wantReady: metav1.ConditionFalse, wantReason: string(v1alpha1.PhaseProgressing), wantSettled: true,
		},
		"suspended with a transient error is not settled": {
			phase: v1alpha1.PhaseProgressing, suspend: true, err: transient,
			wantErr: true, wantReady: metav1.ConditionFalse, wantReason: meta.ProgressingWithRetryReason,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := testobj.MakeCanary("p", "apps").Phase(tt.phase).Obj()
			c.Spec.Suspend = tt.suspend
			res, err := setConditions(c, ctrl.Result{}, tt.err)
			if got := errors.Is(err, reconcile.TerminalError(nil)); got != tt.wantTerm {
				t.Errorf("terminal = %v, want %v (%v)", got, tt.wantTerm, err)
			}
			if got := err != nil; got != tt.wantErr {
				t.Errorf("error = %v, want an error: %v", err, tt.wantErr)
			}
			if res.RequeueAfter != tt.wantRequeue {
				t.Errorf("requeue after %s, want %s", res.RequeueAfter, tt.wantRequeue)
			}
			if got := conditions.Get(c, meta.ReadyCondition); got == nil || got.Status != tt.wantReady {
				t.Errorf("Ready = %v, want %s", got, tt.wantReady)
			}
			if got := conditions.IsStalled(c); got != tt.wantStalled {
				t.Errorf("Stalled = %v, want %v", got, tt.wantStalled)
			}
			if conditions.IsStalled(c) && conditions.IsReconciling(c) {
				t.Error("Stalled and Reconciling at once")
			}
			reason := conditions.GetReason(c, meta.ReconcilingCondition)
			if tt.wantStalled {
				reason = conditions.GetReason(c, meta.StalledCondition)
			}
			if reason != tt.wantReason {
				t.Errorf("reason = %q, want %q", reason, tt.wantReason)
			}
			if msg := conditions.GetMessage(c, meta.StalledCondition); tt.wantMessage != "" && msg != tt.wantMessage {
				t.Errorf("Stalled message = %q, want %q", msg, tt.wantMessage)
			}
			if got := settled(c, err); got != tt.wantSettled {
				t.Errorf("settled = %v, want %v", got, tt.wantSettled)
			}
		})
	}
}
