// Package rollout is serin's canary state machine. Decide is a pure function
// from a Canary (spec and status) and an Observation of the cluster to
// exactly one Action; the controllers package carries actions out. Nothing
// here talks to the API server, so every transition is table-tested.
package rollout
