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

package routing

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// podinfoBaseline is podinfo's Target with a baseline, routed or not.
func podinfoBaseline(routed bool) Target {
	t := podinfo
	t.BaselineService, t.RouteBaseline = "podinfo-baseline", routed
	return t
}

// With a routed baseline the HTTPRoute splits three ways: the baseline
// gets the canary's weight, taken from the primary's share; read back,
// the primary's share is both. Without, the baseline leaves the route.
func TestGatewayAPIRouter_Baseline(t *testing.T) {
	c := podinfoCanary()
	baselineRoute := func(w Weights) *gatewayv1.HTTPRoute {
		r := serinRoute(c, w)
		r.Spec = routeSpec(c, podinfoBaseline(true), w)
		return r
	}
	tests := map[string]struct {
		existing     *gatewayv1.HTTPRoute
		target       Target
		set          Weights
		wantWeights  map[string]int32
		wantWrites   []string
		wantRead     Weights
		wantBaseline bool
	}{
		"routed: the canary's weight from the primary's share": {
			existing:     serinRoute(c, Canary(10)),
			target:       podinfoBaseline(true),
			set:          Canary(20),
			wantWeights:  map[string]int32{"podinfo-primary": 60, "podinfo-baseline": 20, "podinfo-canary": 20},
			wantWrites:   []string{"patch HTTPRoute/podinfo"},
			wantRead:     Canary(20),
			wantBaseline: true,
		},
		"routed at weight 0: named, with nothing": {
			existing:     serinRoute(c, AllPrimary),
			target:       podinfoBaseline(true),
			set:          AllPrimary,
			wantWeights:  map[string]int32{"podinfo-primary": 100, "podinfo-baseline": 0, "podinfo-canary": 0},
			wantWrites:   []string{"patch HTTPRoute/podinfo"},
			wantRead:     AllPrimary,
			wantBaseline: true,
		},
		"routed at 50: the primary keeps nothing": {
			existing:     serinRoute(c, Canary(40)),
			target:       podinfoBaseline(true),
			set:          Canary(50),
			wantWeights:  map[string]int32{"podinfo-primary": 0, "podinfo-baseline": 50, "podinfo-canary": 50},
			wantWrites:   []string{"patch HTTPRoute/podinfo"},
			wantRead:     Canary(50),
			wantBaseline: true,
		},
		"past 50 the baseline is bounded by the primary's share": {
			existing:     serinRoute(c, Canary(40)),
			target:       podinfoBaseline(true),
			set:          Canary(100),
			wantWeights:  map[string]int32{"podinfo-primary": 0, "podinfo-baseline": 0, "podinfo-canary": 100},
			wantWrites:   []string{"patch HTTPRoute/podinfo"},
			wantRead:     Canary(100),
			wantBaseline: true,
		},
		"the split in force: no write": {
			existing:     baselineRoute(Canary(20)),
			target:       podinfoBaseline(true),
			set:          Canary(20),
			wantWeights:  map[string]int32{"podinfo-primary": 60, "podinfo-baseline": 20, "podinfo-canary": 20},
			wantRead:     Canary(20),
			wantBaseline: true,
		},
		"taken off: the same weights, the primary's share whole again": {
			existing:    baselineRoute(Canary(20)),
			target:      podinfoBaseline(false),
			set:         Canary(20),
			wantWeights: map[string]int32{"podinfo-primary": 80, "podinfo-canary": 20},
			wantWrites:  []string{"patch HTTPRoute/podinfo"},
			wantRead:    Canary(20),
		},
		"a target without a baseline never writes one": {
			existing:    serinRoute(c, Canary(10)),
			target:      Target{ApexService: "podinfo", PrimaryService: "podinfo-primary", CanaryService: "podinfo-canary", Port: 9898, RouteBaseline: true},
			set:         Canary(20),
			wantWeights: map[string]int32{"podinfo-primary": 80, "podinfo-canary": 20},
			wantWrites:  []string{"patch HTTPRoute/podinfo"},
			wantRead:    Canary(20),
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			w := newRouteWorld(t, tt.existing, nil)
			router := &GatewayAPIRouter{Client: w.client, FieldOwner: "serin"}
			if err := router.SetRoutes(context.Background(), c, tt.target, tt.set); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantWrites, w.calls.Writes); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantWeights, weightsIn(w.route())); diff != "" {
				t.Errorf("weights (-want +got):\n%s", diff)
			}
			got, err := router.GetRoutes(context.Background(), c, tt.target)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Found || got.Weights != tt.wantRead || got.Baseline != tt.wantBaseline {
				t.Errorf("GetRoutes() = found %v, %+v, baseline %v; want %+v, baseline %v", got.Found, got.Weights, got.Baseline, tt.wantRead, tt.wantBaseline)
			}
		})
	}
}

// The in-memory router the action tests use records whether the
// baseline is routed, as the HTTPRoute does.
func TestMemory_Baseline(t *testing.T) {
	c := podinfoCanary()
	m := &Memory{}
	m.SetWeights("apps", "podinfo", Canary(10))
	ctx := context.Background()
	if err := m.SetRoutes(ctx, c, podinfoBaseline(true), Canary(10)); err != nil {
		t.Fatal(err)
	}
	if got, _ := m.GetRoutes(ctx, c, podinfoBaseline(true)); !got.Baseline || got.Weights != Canary(10) {
		t.Errorf("after routing the baseline: %+v", got)
	}
	if err := m.SetRoutes(ctx, c, podinfoBaseline(false), Canary(10)); err != nil {
		t.Fatal(err)
	}
	if got, _ := m.GetRoutes(ctx, c, podinfoBaseline(false)); got.Baseline {
		t.Errorf("after taking the baseline off: %+v", got)
	}
	if diff := cmp.Diff([]Weights{Canary(10), Canary(10)}, m.Writes("apps", "podinfo")); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
}
