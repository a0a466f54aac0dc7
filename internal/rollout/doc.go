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

// Package rollout is serin's canary state machine. Decide is a pure function
// from a Canary (spec and status) and an Observation of the cluster to
// exactly one Action; the controllers package carries actions out. An
// analysis step's verdict, which only the analysis runner has once the
// step ran, goes through DecideStep, which picks the one action that
// follows it. Nothing here talks to the API server, so every transition is
// table-tested.
//
// A CanaryGroup's rules are here too: group.go decides what the group
// imposes on a member (its release's key, the lockstep gate, dependsOn,
// the release's failure), group_release.go what the group's status
// reports (the current release and its verdict), group_validity.go when a
// group cannot be followed (a Canary in two groups, a dependsOn cycle).
package rollout
