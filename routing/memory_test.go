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
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/serin-dev/serin/internal/testing/testobj"
)

// Memory behaves as the real routers do for the code that drives them:
// Reconcile creates routes on the primary and keeps the weights of
// existing ones, SetRoutes needs routes and records only the writes that
// change the weights, GetRoutes reads back what was set, and Finalize
// hands the routes back.
func TestMemory(t *testing.T) {
	ctx := context.Background()
	c := testobj.MakeCanary("podinfo", "apps").Obj()
	m := &Memory{}

	if got, err := m.GetRoutes(ctx, c, podinfo); err != nil || got.Found {
		t.Fatalf("GetRoutes() before Reconcile = %+v, %v; want not found", got, err)
	}
	if err := m.SetRoutes(ctx, c, podinfo, Canary(10)); err == nil {
		t.Error("SetRoutes() without routes: no error")
	}
	if err := m.Reconcile(ctx, c, podinfo); err != nil {
		t.Fatal(err)
	}
	for _, w := range []Weights{Canary(10), Canary(10), Canary(30), AllPrimary} {
		if err := m.SetRoutes(ctx, c, podinfo, w); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Reconcile(ctx, c, podinfo); err != nil {
		t.Fatal(err)
	}
	if err := m.SetRoutes(ctx, c, podinfo, Canary(50)); err != nil {
		t.Fatal(err)
	}
	if err := m.Reconcile(ctx, c, podinfo); err != nil { // keeps 50
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Weights{Canary(10), Canary(30), AllPrimary, Canary(50)}, m.Writes("apps", "podinfo")); diff != "" {
		t.Errorf("Writes() (-want +got):\n%s", diff)
	}
	got, err := m.GetRoutes(ctx, c, podinfo)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Routes{Found: true, Weights: Canary(50), Status: Programmed}, got); diff != "" {
		t.Errorf("GetRoutes() (-want +got):\n%s", diff)
	}

	if m.Finalized("apps", "podinfo") {
		t.Error("Finalized() before Finalize")
	}
	if err := m.Finalize(ctx, c, podinfo); err != nil {
		t.Fatal(err)
	}
	if !m.Finalized("apps", "podinfo") {
		t.Error("Finalized() = false after Finalize")
	}
	if got, _ := m.GetRoutes(ctx, c, podinfo); got.Found {
		t.Errorf("GetRoutes() after Finalize = %+v, want not found", got)
	}
}

// SetWeights puts routes in place without a write; Status is what the
// data plane reports; Err fails every call, as an unreachable API server.
func TestMemory_SetWeightsStatusAndErr(t *testing.T) {
	ctx := context.Background()
	c := testobj.MakeCanary("podinfo", "apps").Obj()
	rejected := RouteStatus{Rejected: true, Generation: 3, Message: "gateway gateways/public: Accepted=False"}
	m := &Memory{Status: &rejected}
	m.SetWeights("apps", "podinfo", Canary(25))
	if writes := m.Writes("apps", "podinfo"); len(writes) != 0 {
		t.Errorf("Writes() after SetWeights = %v, want none", writes)
	}
	got, err := m.GetRoutes(ctx, c, podinfo)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Routes{Found: true, Weights: Canary(25), Status: rejected}, got); diff != "" {
		t.Errorf("GetRoutes() (-want +got):\n%s", diff)
	}
	other := testobj.MakeCanary("podinfo", "other").Obj()
	if got, _ := m.GetRoutes(ctx, other, podinfo); got.Found {
		t.Errorf("routes of the namespace other found: %+v", got)
	}

	m.Err = errors.New("connection refused")
	for name, call := range map[string]func() error{
		"Reconcile": func() error { return m.Reconcile(ctx, c, podinfo) },
		"SetRoutes": func() error { return m.SetRoutes(ctx, c, podinfo, AllPrimary) },
		"GetRoutes": func() error { _, err := m.GetRoutes(ctx, c, podinfo); return err },
		"Finalize":  func() error { return m.Finalize(ctx, c, podinfo) },
	} {
		if err := call(); !errors.Is(err, m.Err) {
			t.Errorf("%s: %v, want %v", name, err, m.Err)
		}
	}
	if m.Finalized("apps", "podinfo") || len(m.Writes("apps", "podinfo")) != 0 {
		t.Error("a failed call changed the routes")
	}
}
