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

package workload

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// endpoint is an endpoint of address with its conditions (nil: not
// published).
func endpoint(address string, ready, serving, terminating *bool) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{address},
		Conditions: discoveryv1.EndpointConditions{Ready: ready, Serving: serving, Terminating: terminating}}
}

// The endpoints that may still answer for a primary of ready pods: those
// serving while they terminate, and ready ones beyond the workload's ready
// replicas (pods it no longer counts, the slice not updated yet); a pod
// that terminates and no longer serves (a lost node) is not one.
func TestLeavingEndpoints(t *testing.T) {
	yes, no := ptr.To(true), ptr.To(false)
	tests := []struct {
		name      string
		endpoints []discoveryv1.Endpoint
		ready     int32
		want      int32
	}{
		{"every endpoint is a ready pod", []discoveryv1.Endpoint{endpoint("a", yes, yes, no), endpoint("b", yes, yes, no)}, 2, 0},
		{"an old pod serving while it terminates", []discoveryv1.Endpoint{endpoint("a", yes, yes, no), endpoint("b", no, yes, yes)}, 1, 1},
		{"serving not published: ready counts", []discoveryv1.Endpoint{endpoint("b", yes, nil, yes)}, 0, 1},
		{"an old pod the slice still lists as ready", []discoveryv1.Endpoint{endpoint("a", yes, yes, no), endpoint("b", yes, yes, no), endpoint("c", yes, yes, no)}, 2, 1},
		{"a pod on a lost node", []discoveryv1.Endpoint{endpoint("a", yes, yes, no), endpoint("b", no, no, yes)}, 1, 0},
		{"fewer endpoints than ready pods (the slice behind)", []discoveryv1.Endpoint{endpoint("a", yes, yes, no)}, 2, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			slices := []discoveryv1.EndpointSlice{{Endpoints: tc.endpoints}}
			if got := LeavingEndpoints(slices, tc.ready); got != tc.want {
				t.Errorf("LeavingEndpoints = %d, want %d", got, tc.want)
			}
		})
	}
}

// The key of the endpoints changes with an endpoint or a condition, not
// with their order; the change time is the slices' latest trigger time.
func TestEndpointsKeyAndChange(t *testing.T) {
	yes, no := ptr.To(true), ptr.To(false)
	a, b := endpoint("10.0.0.1", yes, yes, no), endpoint("10.0.0.2", yes, yes, no)
	key := EndpointsKey([]discoveryv1.EndpointSlice{{Endpoints: []discoveryv1.Endpoint{a, b}}})
	if EndpointsKey([]discoveryv1.EndpointSlice{{Endpoints: []discoveryv1.Endpoint{b}}, {Endpoints: []discoveryv1.Endpoint{a}}}) != key {
		t.Error("the key depends on the order")
	}
	leaving := endpoint("10.0.0.2", no, yes, yes)
	if EndpointsKey([]discoveryv1.EndpointSlice{{Endpoints: []discoveryv1.Endpoint{a, leaving}}}) == key {
		t.Error("the key does not change when an endpoint terminates")
	}
	t0 := time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC)
	slice := func(at time.Time) discoveryv1.EndpointSlice {
		return discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			corev1.EndpointsLastChangeTriggerTime: at.Format(time.RFC3339Nano)}}}
	}
	if got := EndpointsChangedAt([]discoveryv1.EndpointSlice{slice(t0), slice(t0.Add(time.Second)), {}}); !got.Equal(t0.Add(time.Second)) {
		t.Errorf("EndpointsChangedAt = %s, want %s", got, t0.Add(time.Second))
	}
	if got := EndpointsChangedAt([]discoveryv1.EndpointSlice{{}}); !got.IsZero() {
		t.Errorf("EndpointsChangedAt without the annotation = %s", got)
	}
}
