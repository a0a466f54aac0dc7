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

// Package gitops closes the GitOps loop, both ways, through the Git
// repository of the Flux Kustomization that applies a Canary's target.
//
// Backwards, the revert: when a revision halts a promotion (or, if asked,
// fails its analysis), a Reverter finds the Kustomization and
// GitRepository behind the target, writes a commit that reverts the target
// to its last promoted rendering, and pushes a branch with a pull request,
// or with mode Push fast-forwards the tracked branch, so that the fix
// flows back through the repository.
//
// Forwards, the promotion (waves): a revision a Canary promoted is
// written to the next stage's kustomization (its images:), as a pull
// request or a push, by a Promoter, which then reads the next stage's
// verdict back from the commit statuses that stage's Canary posts on the
// commit that brought the promotion into its branch.
//
// GitReverter and GitPromoter (GitReverter.Promoter) are the Git
// implementations; they share their settings, their limiter (one writing
// job per repository branch at a time) and the way a change is written.
//
// The files:
//   - reverter.go, promoter.go: the contracts, Reverter and Promoter, with
//     their requests, results and states, and Disabled.
//   - git_reverter.go: GitReverter, its options, and a revert's job: the
//     group's sources, the plan of the revert and its message.
//   - git_promoter.go: GitPromoter, a promotion's job and its message,
//     how the commit that brought a promotion in is recognized, and the
//     verdict read from commit statuses.
//   - git_job.go: what both share: the settings (gitCore) and one job on a
//     clone (gitJob): its turn, its history, its Git host and whose token
//     it is sent (hostToken), and the two ways of writing a change, a
//     pull request or a push.
//   - plan.go, plan_edit.go, snapshot.go, render.go, jsondiff.go,
//     yamldoc.go, remote_bases.go: planning and verifying a revert by
//     rendering the target before and after; promote_plan.go plans a
//     promotion the same way.
//   - message.go, signing.go: revert commit messages, every change's
//     message redacted (internal/redact), and signed commits.
//   - source.go, revision.go: from a Canary to its Kustomization,
//     GitRepository, branch, path and commits.
//   - repository.go, clone.go, packguard.go, push.go, history.go, auth.go:
//     the clone, bounded on disk and per object, its history, the push, and
//     the credentials.
//   - host.go, host_gitprovider.go, host_pulls.go, host_status.go,
//     host_http.go: the Git host APIs: pull requests (opened through
//     go-git-providers, found by branch with each host's own query),
//     commit statuses, the hosts and schemes the platform's token goes
//     to (hostList), and the one HTTP client of a repository's host (its
//     CA, unless the token is the platform's; its API origins only; every
//     page, conditional requests, rate limits).
//   - limiter.go, transient.go: the turns and bounds of jobs, and which
//     failures a retry may fix.
//   - helmrelease.go, helm_inputs.go, helm_promote.go, helm_render.go,
//     helm_charts.go, helm_options.go: HelmReleases: their chart's inputs,
//     a wave's promotion, the chart rendered (in the bounded child process
//     of the chartrender package, never in the agent) and the charts of
//     HTTP Helm repositories, cached by credentials.
package gitops
