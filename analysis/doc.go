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

// Package analysis runs a Canary's checks: webhooks (gates and hooks, with
// Flagger's payload and semantics) and metric checks (a MetricTemplate's
// query against its provider, or a built-in check's query for the Canary's
// data plane against the agent's Prometheus, compared with the
// thresholdRange, and for a metric with a judge block, compared with the
// primary as two series by analysis/judge: judge_checks.go), run by the
// Runner off the reconcile workers, the
// namespaces taking turns. The metric providers are in analysis/providers,
// one file each behind the Provider seam. Every call has a timeout;
// nothing here decides what the rollout does next.
package analysis
