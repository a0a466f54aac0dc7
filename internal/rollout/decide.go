package rollout

import (
	"fmt"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// Decide returns the next action for a Canary given what was observed.
func Decide(c *v1alpha1.Canary, o Observation) Action {
	ref := c.Spec.TargetRef
	if !o.Target.Found {
		return Stall{
			Reason:  v1alpha1.TargetNotFoundReason,
			Message: fmt.Sprintf("%s %s/%s named by spec.targetRef not found: create it or fix spec.targetRef.name", ref.Kind, c.Namespace, ref.Name),
		}
	}
	if o.Target.Invalid != "" {
		return Stall{Reason: v1alpha1.InvalidTargetReason, Message: o.Target.Invalid}
	}

	switch c.Status.Phase {
	case "", v1alpha1.PhaseInitializing:
		return decideInitialization(o)
	}
	return Idle{}
}

// decideInitialization creates the generated objects, services first, and
// waits for the primary before taking the target's pods away.
func decideInitialization(o Observation) Action {
	switch {
	case !o.ServicesInSync || !o.Primary.Exists || o.Primary.SpecHash != o.Target.SpecHash:
		return Initialize{}
	case o.Primary.Health.Failed:
		return Stall{Reason: v1alpha1.WaitingForPrimaryReason, Message: o.Primary.Health.Message}
	case !o.Primary.Health.Ready:
		return WaitForPrimary{Message: o.Primary.Health.Message}
	}
	return CompleteInitialization{}
}
