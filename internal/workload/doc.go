// Package workload builds the objects serin generates for a Canary's target
// (the primary Deployment and the apex, primary and canary Services), hashes
// the target's spec into a revision, and judges a Deployment's readiness.
// Everything here is pure: it reads Kubernetes objects and returns new ones.
package workload
