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

// Package workload builds the objects serin generates for a Canary's target
// (the primary Deployment and the apex, primary and canary Services), hashes
// the target's spec into a revision, and judges a Deployment's readiness.
// Everything here is pure: it reads Kubernetes objects and returns new ones.
package workload
