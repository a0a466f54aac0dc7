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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/workload"
)

// A Canary acts only on what it owns: a claim of another Canary stalls it
// before any action of any phase (every action writes), and a primary
// scaled to zero outside serin is scaled back before anything else.
func TestDecide_Ownership(t *testing.T) {
	claimed := Conflict{Reason: v1alpha1.TargetClaimedReason, Message: "Deployment podinfo is rolled out by Canary first, created earlier"}
	tests := map[string]struct {
		canary *v1alpha1.Canary
		obs    Observation
		want   Action
	}{
		"claimed before initialization": {
			canary: canary(""),
			obs:    Observation{Now: t0, Conflict: claimed},
			want:   Stall(claimed),
		},
		"claimed mid-analysis, with a step due": {
			canary: canary(v1alpha1.PhaseProgressing),
			obs: func() Observation {
				o := observed(t0.Add(2*time.Minute), "v2", ready, "v1", ready)
				o.Conflict = claimed
				return o
			}(),
			want: Stall(claimed),
		},
		"claimed with the target gone: no shield either": {
			canary: canary(v1alpha1.PhaseProgressing),
			obs:    Observation{Now: t0, Conflict: claimed, CanaryWeight: 20, Primary: Primary{Exists: true, Health: ready}},
			want:   Stall(claimed),
		},
		"primary scaled to zero while initialized": {
			canary: canary(v1alpha1.PhaseInitialized, func(c *v1alpha1.Canary) { c.Status.LastPromotedSpec = "v2" }),
			obs: func() Observation {
				o := observed(t0, "v2", ready, "v2", workload.Health{Ready: true, Message: "0 of 0 replicas available"})
				o.Primary.ScaledDown = true
				o.Target.Replicas = 0
				return o
			}(),
			want: ScalePrimary{},
		},
		"primary scaled to zero mid-analysis": {
			canary: canary(v1alpha1.PhaseProgressing),
			obs: func() Observation {
				o := observed(t0, "v2", ready, "v1", workload.Health{Ready: true})
				o.Primary.ScaledDown = true
				return o
			}(),
			want: ScalePrimary{},
		},
		"primary pods evicted while succeeded: Ready says so": {
			canary: canary(v1alpha1.PhaseSucceeded, func(c *v1alpha1.Canary) { c.Status.LastPromotedSpec = "v2" }),
			obs: func() Observation {
				o := observed(t0, "v2", ready, "v2", dark)
				o.Target.Replicas = 0
				return o
			}(),
			want: PrimaryUnavailable{Message: dark.Message},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Decide(tt.canary, tt.obs)); diff != "" {
				t.Errorf("Decide() (-want +got):\n%s", diff)
			}
		})
	}
}

// A revert Retrying after a Git host failure is tried again once due, and
// waited for until then, in Failed as in Halted.
func TestDecide_RevertRetry(t *testing.T) {
	retrying := func(phase v1alpha1.CanaryPhase) *v1alpha1.Canary {
		return canary(phase, revertOn(v1alpha1.RevertTrigger(phase)), attempted("main@sha1:v2"), func(c *v1alpha1.Canary) {
			c.Status.Revert = &v1alpha1.RevertStatus{Revision: "main@sha1:v2", State: "Retrying", Attempts: 2,
				NextAttemptTime: &metav1.Time{Time: t0.Add(10 * time.Second)}}
		})
	}
	idle := func(now time.Time) Observation {
		o := observed(now, "v2", ready, "v1", ready)
		o.Target.Replicas = 0
		return o
	}
	halted := func(now time.Time) Observation { return observed(now, "v2", ready, "v2", failed) }
	tests := map[string]struct {
		canary *v1alpha1.Canary
		obs    Observation
		want   Action
	}{
		"failed, not due": {canary: retrying(v1alpha1.PhaseFailed), obs: idle(t0), want: Wait{RequeueAfter: 10 * time.Second}},
		"failed, due":     {canary: retrying(v1alpha1.PhaseFailed), obs: idle(t0.Add(10 * time.Second)), want: OpenRevert{}},
		"halted, not due": {canary: retrying(v1alpha1.PhaseHalted), obs: halted(t0.Add(4 * time.Second)), want: Wait{RequeueAfter: 6 * time.Second}},
		"halted, overdue": {canary: retrying(v1alpha1.PhaseHalted), obs: halted(t0.Add(time.Minute)), want: OpenRevert{}},
		"halted, the revert running off the reconcile": {canary: func() *v1alpha1.Canary {
			c := retrying(v1alpha1.PhaseHalted)
			c.Status.Revert.State, c.Status.Revert.NextAttemptTime = "Pending", nil
			return c
		}(), obs: halted(t0), want: OpenRevert{}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Decide(tt.canary, tt.obs)); diff != "" {
				t.Errorf("Decide() (-want +got):\n%s", diff)
			}
		})
	}
}
