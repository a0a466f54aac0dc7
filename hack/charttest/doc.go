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

// Package charttest tests the Helm chart charts/serin with the Helm Go SDK:
// its rendering for each value, that its CRDs and RBAC rules are the
// generated ones, and, on the local testbed, that it installs, that the
// agent runs with nothing but the chart's RBAC, and that an uninstall keeps
// the CRDs.
//
// It is a Go module of its own so that Helm's dependencies (OCI registries,
// SQL storage drivers, Wasm plugins) stay out of serin's go.mod; it uses
// serin's packages through a replace directive (see CONTRIBUTING.md).
package charttest
