package rollout

import "fmt"

// Action is the one thing the controller does in a reconcile. Every action
// is idempotent: doing it twice has the effect of doing it once.
type Action interface {
	fmt.Stringer
	isAction()
}

// Stall stops reconciling until the Canary or its target changes: a person
// must fix something (Stalled=True with Reason and Message).
type Stall struct {
	Reason  string
	Message string
}

// Initialize creates the Services and the primary Deployment from the target.
type Initialize struct{}

// WaitForPrimary waits for the primary to become ready; a watch on the
// primary Deployment brings the next reconcile.
type WaitForPrimary struct {
	Message string
}

// CompleteInitialization scales the target to zero once the primary serves,
// and records the target's revision as promoted.
type CompleteInitialization struct{}

// Idle has nothing to do: no new revision and nothing drifted.
type Idle struct{}

func (Stall) isAction()                  {}
func (Initialize) isAction()             {}
func (WaitForPrimary) isAction()         {}
func (CompleteInitialization) isAction() {}
func (Idle) isAction()                   {}

func (a Stall) String() string                { return fmt.Sprintf("stall(%s: %s)", a.Reason, a.Message) }
func (Initialize) String() string             { return "initialize" }
func (a WaitForPrimary) String() string       { return "wait-for-primary(" + a.Message + ")" }
func (CompleteInitialization) String() string { return "complete-initialization" }
func (Idle) String() string                   { return "idle" }
