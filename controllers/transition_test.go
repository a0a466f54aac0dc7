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

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// A step's next one is due one interval after the transition, counted from
// the reconcile's start; the work queue counts from the return, so the time
// the reconcile took (the status patch) comes off, and a requeue stays one.
func TestRequeueTiming(t *testing.T) {
	start := time.Date(2026, 11, 21, 18, 0, 0, 0, time.UTC)
	c := testobj.MakeCanary("app", "ns").Analysis(v1alpha1.CanaryAnalysis{
		Interval: &metav1.Duration{Duration: 10 * time.Second}, Iterations: 5,
	}).Obj()
	c.Status.LastTransitionTime = &metav1.MicroTime{Time: start}

	for _, tc := range []struct {
		name    string
		now     time.Time
		elapsed time.Duration
		want    time.Duration
	}{
		{"a step just taken, patched in 90 ms", start, 90 * time.Millisecond, 10*time.Second + time.Millisecond - 90*time.Millisecond},
		{"woken 3 s into the interval", start.Add(3 * time.Second), 0, 7*time.Second + time.Millisecond},
		{"overdue", start.Add(12 * time.Second), 0, time.Millisecond},
		{"overdue, slow reconcile", start.Add(12 * time.Second), time.Second, time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fromReturn(requeueAtNextStep(c, tc.now), tc.elapsed); got != tc.want {
				t.Errorf("requeue after %s, want %s", got, tc.want)
			}
		})
	}
	if got := fromReturn(0, time.Second); got != 0 {
		t.Errorf("no requeue became a requeue after %s", got)
	}
}
