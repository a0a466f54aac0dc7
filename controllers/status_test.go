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
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testobj"
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
