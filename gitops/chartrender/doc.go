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

// Package chartrender renders a tenant's Helm chart, and reads a Helm
// repository's index, in a child process of the agent's own binary, so
// that whatever a tenant's chart or index holds can cost the agent at
// most a bounded child and one failed render, never the agent itself.
//
// It owns:
//   - the parent side, Renderer: it starts os.Executable() with the hidden
//     first argument ChildArg, streams the request on the child's stdin
//     (one file in memory at a time), reads the answer from the child's
//     stdout within a bound, and turns every way the child can end into an
//     error that names the bound it passed and its flag (*BoundError);
//   - the child side, Main, which the agent's main (and the tests' TestMain
//     of the packages that render) calls first thing when os.Args[1] is
//     ChildArg: it bounds its own address space and CPU time, counts the
//     chart's bytes (files and unpacked subchart archives) before Helm's
//     loader sees them, loads the chart, renders it and parses the
//     manifests;
//   - the wire format between them (wire.go).
//
// It knows nothing of Git, Flux or Canaries: gitops decides what to render
// and what a failure means (a fallback to comparing the chart's inputs).
// The flags named in its errors are bound in the agent's main.go.
package chartrender
