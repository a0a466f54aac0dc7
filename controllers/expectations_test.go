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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serin-dev/serin/api/v1alpha1"
)

func TestWriteExpectations(t *testing.T) {
	key := types.NamespacedName{Namespace: "apps", Name: "podinfo"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	written := &v1alpha1.CanaryStatus{Phase: v1alpha1.PhaseProgressing, CanaryWeight: 20,
		LastTransitionTime: &metav1.MicroTime{Time: t0.Add(123*time.Millisecond + 456*time.Nanosecond)}}
	cachedOld := &v1alpha1.CanaryStatus{Phase: v1alpha1.PhaseProgressing, CanaryWeight: 0,
		LastTransitionTime: &metav1.MicroTime{Time: t0.Add(-time.Minute)}}
	// The API keeps microseconds: the cached copy of what was written.
	cachedNew := written.DeepCopy()
	cachedNew.LastTransitionTime = &metav1.MicroTime{Time: t0.Add(123 * time.Millisecond)}

	e := newWriteExpectations()
	if e.stale(key, cachedOld, t0) {
		t.Fatal("stale without a write")
	}
	e.wrote(key, cachedOld, written, t0)
	if !e.stale(key, cachedOld, t0.Add(time.Second)) {
		t.Error("the cache before the write must be stale")
	}
	if e.stale(key, cachedNew, t0.Add(time.Second)) {
		t.Error("the cache with the write (seconds precision) must not be stale")
	}
	if e.stale(key, cachedOld, t0.Add(time.Second)) {
		t.Error("once caught up, the expectation is gone")
	}
	// A cache still holding the status the write replaced is behind,
	// however long the watch takes: acting on it would take the step
	// again. Only a lost event is not waited for past staleCacheLimit.
	e.wrote(key, cachedOld, written, t0)
	if !e.stale(key, cachedOld, t0.Add(expectationTimeout+time.Second)) {
		t.Error("the status the write replaced must stay stale past expectationTimeout")
	}
	if e.stale(key, cachedOld, t0.Add(staleCacheLimit+time.Second)) {
		t.Error("past staleCacheLimit the cached status wins")
	}

	// A status neither written nor replaced was changed by something
	// else: it wins once expectationTimeout has passed.
	foreign := cachedOld.DeepCopy()
	foreign.FailedChecks = 1
	e.wrote(key, cachedOld, written, t0)
	if !e.stale(key, foreign, t0.Add(time.Second)) {
		t.Error("a foreign status must wait for expectationTimeout")
	}
	if e.stale(key, foreign, t0.Add(expectationTimeout+time.Second)) {
		t.Error("a foreign status older than the timeout must not block")
	}

	// A write that changed nothing the rollout is scheduled by leaves no
	// status to wait for.
	message := cachedOld.DeepCopy()
	message.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Progressing", Message: "waiting for the canary"}}
	e.wrote(key, cachedOld, message, t0)
	if e.stale(key, cachedOld, t0.Add(time.Second)) {
		t.Error("a write that changed no scheduling field must not block")
	}
}
