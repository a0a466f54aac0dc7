package rollout

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testobj"
	"github.com/serin-dev/serin/internal/workload"
)

func TestDecide(t *testing.T) {
	found := Target{Found: true, SpecHash: "v1", Replicas: 2}
	ready := Primary{Exists: true, SpecHash: "v1", Health: workload.Health{Ready: true}}
	tests := map[string]struct {
		phase v1alpha1.CanaryPhase
		obs   Observation
		want  Action
	}{
		"target missing stalls with what to fix": {
			obs: Observation{},
			want: Stall{Reason: v1alpha1.TargetNotFoundReason,
				Message: "Deployment apps/podinfo named by spec.targetRef not found: create it or fix spec.targetRef.name"},
		},
		"target missing stalls in any phase": {
			phase: v1alpha1.PhaseSucceeded,
			obs:   Observation{},
			want: Stall{Reason: v1alpha1.TargetNotFoundReason,
				Message: "Deployment apps/podinfo named by spec.targetRef not found: create it or fix spec.targetRef.name"},
		},
		"invalid target stalls": {
			obs:  Observation{Target: Target{Found: true, Invalid: "no selector"}},
			want: Stall{Reason: v1alpha1.InvalidTargetReason, Message: "no selector"},
		},
		"new canary initializes": {
			obs:  Observation{Target: found},
			want: Initialize{},
		},
		"services missing initializes, even with a primary": {
			phase: v1alpha1.PhaseInitializing,
			obs:   Observation{Target: found, Primary: ready},
			want:  Initialize{},
		},
		"primary missing initializes": {
			phase: v1alpha1.PhaseInitializing,
			obs:   Observation{Target: found, ServicesInSync: true},
			want:  Initialize{},
		},
		"target changed during initialization updates the primary": {
			phase: v1alpha1.PhaseInitializing,
			obs:   Observation{Target: Target{Found: true, SpecHash: "v2"}, Primary: ready, ServicesInSync: true},
			want:  Initialize{},
		},
		"primary rolling out waits": {
			phase: v1alpha1.PhaseInitializing,
			obs: Observation{Target: found, ServicesInSync: true,
				Primary: Primary{Exists: true, SpecHash: "v1", Health: workload.Health{Message: "1 of 2 replicas updated"}}},
			want: WaitForPrimary{Message: "1 of 2 replicas updated"},
		},
		"primary failed stalls: the target keeps serving": {
			phase: v1alpha1.PhaseInitializing,
			obs: Observation{Target: found, ServicesInSync: true,
				Primary: Primary{Exists: true, SpecHash: "v1", Health: workload.Health{Failed: true, Message: "exceeded its progress deadline"}}},
			want: Stall{Reason: v1alpha1.WaitingForPrimaryReason, Message: "exceeded its progress deadline"},
		},
		"primary ready completes initialization": {
			phase: v1alpha1.PhaseInitializing,
			obs:   Observation{Target: found, Primary: ready, ServicesInSync: true},
			want:  CompleteInitialization{},
		},
		"initialized canary without a new revision is idle": {
			phase: v1alpha1.PhaseInitialized,
			obs:   Observation{Target: found, Primary: ready, ServicesInSync: true},
			want:  Idle{},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := testobj.MakeCanary("podinfo", "apps").Phase(tt.phase).Obj()
			got := Decide(c, tt.obs)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decide() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
