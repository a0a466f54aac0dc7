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

	"k8s.io/apimachinery/pkg/types"

	"github.com/serin-dev/serin/routing"
)

// The weights come into force when the agent first sees their generation
// programmed after seeing it (or another) otherwise; what was programmed
// before the agent looked has no known time.
func TestRouteClocks(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	programmed := func(gen int64) routing.RouteStatus { return routing.RouteStatus{Programmed: true, Generation: gen} }
	pending := func(gen int64) routing.RouteStatus { return routing.RouteStatus{Generation: gen} }
	key := types.NamespacedName{Namespace: "apps", Name: "podinfo"}

	c := newRouteClocks()
	steps := []struct {
		name string
		st   routing.RouteStatus
		now  time.Time
		want time.Time
	}{
		{"programmed before the agent looked", programmed(1), at(0), time.Time{}},
		{"still the same", programmed(1), at(5), time.Time{}},
		{"new weights, not reported yet", pending(2), at(10), time.Time{}},
		{"accepted", programmed(2), at(12), at(12)},
		{"later observations keep the time", programmed(2), at(40), at(12)},
		{"new weights accepted before the agent saw them pending", programmed(3), at(70), at(70)},
		{"rejected", pending(4), at(80), time.Time{}},
		{"accepted once fixed", programmed(4), at(300), at(300)},
		{"kubernetes router: nothing to wait for", routing.Programmed, at(310), at(310)},
		{"and no generation to change", routing.Programmed, at(320), at(310)},
	}
	for _, s := range steps {
		if got := c.programmedSince(key, s.st, s.now); !got.Equal(s.want) {
			t.Errorf("%s: programmed since %v, want %v", s.name, got, s.want)
		}
	}
	c.forget(key)
	if got := c.programmedSince(key, programmed(4), at(400)); !got.IsZero() {
		t.Errorf("after forget: %v, want zero", got)
	}
}

// The endpoint clock times a change of the primary's endpoints from the
// first observation of the new ones; the first observation of all is no
// change the agent saw.
func TestEndpointClocks(t *testing.T) {
	c := newEndpointClocks()
	key := types.NamespacedName{Namespace: "apps", Name: "podinfo"}
	t0 := time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC)
	steps := []struct {
		endpoints string
		at        time.Time
		want      time.Time
	}{
		{"a b", t0, time.Time{}},
		{"a b", t0.Add(time.Second), time.Time{}},
		{"a c", t0.Add(2 * time.Second), t0.Add(2 * time.Second)},
		{"a c", t0.Add(3 * time.Second), t0.Add(2 * time.Second)},
		{"c", t0.Add(4 * time.Second), t0.Add(4 * time.Second)},
	}
	for _, s := range steps {
		if got := c.changedAt(key, s.endpoints, s.at); !got.Equal(s.want) {
			t.Errorf("changedAt(%q, %s) = %s, want %s", s.endpoints, s.at, got, s.want)
		}
	}
	c.forget(key)
	if got := c.changedAt(key, "d", t0.Add(5*time.Second)); !got.IsZero() {
		t.Errorf("after forget: %s", got)
	}
}
