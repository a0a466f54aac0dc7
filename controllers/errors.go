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

package controllers

import (
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/workload"
	"github.com/serin-dev/serin/routing"
)

// stallingError means a person must act: the Canary or its target is wrong
// in a way retrying will not fix. It sets Stalled=True and is not retried;
// a change to the Canary or its target brings the next reconcile.
type stallingError struct {
	Reason string
	Err    error
	// RetryAfter, when set, reconciles the Canary again after it: the fix
	// is an object created that no watch sees (missingObjectPoll).
	RetryAfter time.Duration
}

func (e *stallingError) Error() string { return e.Err.Error() }
func (e *stallingError) Unwrap() error { return e.Err }

// stallOnForeign turns a generated object the Canary may not take over
// (workload.NotManagedError, from an action or a router) into a stall: a
// person must delete it or annotate it serin.dev/adopt=true, which no
// retry does; a change to the object does not reconcile the Canary, one to
// the Canary does.
func stallOnForeign(err error) error {
	var foreign *workload.NotManagedError
	var stalling *stallingError
	if errors.As(err, &foreign) && !errors.As(err, &stalling) {
		return &stallingError{Reason: v1alpha1.AdoptionRefusedReason, Err: foreign}
	}
	return err
}

// stallOnRouteRef turns a route of routing.routeRefs that serin cannot
// steer (routing.RouteRefError) into a stall naming it. A missing route
// is looked for again after missingObjectPoll (the caches see no route
// without the watch label); a change to an existing route reconciles the
// Canary (canariesForRoute).
func stallOnRouteRef(err error) error {
	var ref *routing.RouteRefError
	var stalling *stallingError
	if !errors.As(err, &ref) || errors.As(err, &stalling) {
		return err
	}
	out := &stallingError{Reason: v1alpha1.RouteRefInvalidReason, Err: ref}
	if ref.Missing {
		out.RetryAfter = missingObjectPoll
	}
	return out
}

// stallOnInvalid turns a write of a generated object that the API server
// refused as invalid (a routing.hosts entry it rejects, a label or
// annotation key of the Canary's service metadata it does not accept) into
// a stall naming the object, with the API server's message: the same
// write fails again until the Canary's spec changes, which reconciles it.
func stallOnInvalid(err error) error {
	var stalling *stallingError
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || errors.As(err, &stalling) || !errors.As(err, &status) {
		return err
	}
	what := "an object"
	if d := status.Status().Details; d != nil && d.Name != "" {
		what = d.Kind + " " + d.Name
	}
	return &stallingError{Reason: v1alpha1.InvalidGeneratedObjectReason, Err: fmt.Errorf(
		"the API server refused %s that serin generates from this Canary; fix the Canary's spec: %w", what, err)}
}

// waitingError means the reconcile waits for something outside serin (a
// Deployment rollout, a gate) and is retried after RequeueAfter without
// backoff; the conditions say what it waits for.
type waitingError struct {
	Reason       string
	Err          error
	RequeueAfter time.Duration
}

func (e *waitingError) Error() string { return e.Err.Error() }
func (e *waitingError) Unwrap() error { return e.Err }

// ignoreNoMatch treats a kind the cluster does not serve (the Gateway API
// not installed) as not found.
func ignoreNoMatch(err error) error {
	if meta.IsNoMatchError(err) {
		return apierrors.NewNotFound(schema.GroupResource{}, "")
	}
	return err
}
