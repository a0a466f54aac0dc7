package controllers

import (
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// stallingError means a person must act: the Canary or its target is wrong
// in a way retrying will not fix. It sets Stalled=True and is not retried;
// a change to the Canary or its target brings the next reconcile.
type stallingError struct {
	Reason string
	Err    error
}

func (e *stallingError) Error() string { return e.Err.Error() }
func (e *stallingError) Unwrap() error { return e.Err }

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
