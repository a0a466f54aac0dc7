// Package analysis runs a Canary's checks: webhooks (gates and hooks, with
// Flagger's payload and semantics) and metric checks (a MetricTemplate's
// query against its provider, or a built-in check's query for the Canary's
// data plane against the agent's Prometheus, compared with the
// thresholdRange). Every call has a timeout; nothing here decides what the
// rollout does next.
package analysis
