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

package dataplane

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/internal/testing/testutil"
)

// podinfoCanary is a Deployment target routed through a Gateway.
func podinfoCanary() *v1alpha1.Canary {
	return testobj.MakeCanary("podinfo", "apps").UID("uid-podinfo").Gateway("gateways", "public").Hosts("podinfo.example.com").Obj()
}

// goldenVars are the values a Deployment target podinfo in apps, on port
// 9898, with a 1m interval gives a check's template.
var goldenVars = Vars{
	Namespace: "apps", Service: "podinfo-canary", Port: 9898, Interval: "1m",
	Workload: "podinfo", Pods: "podinfo-[a-z0-9]+-[a-z0-9]+",
}

// Every data plane × check renders the query of its golden file
// (testdata/<data plane>_<check>.promql; UPDATE_GOLDEN=true writes them),
// or says why the data plane cannot answer the check.
func TestQuery_Golden(t *testing.T) {
	for _, name := range Names() {
		d, _ := Lookup(name)
		for check := range d.Checks {
			t.Run(fmt.Sprintf("%s/%s", name, check), func(t *testing.T) {
				query, err := d.Query(check, goldenVars)
				got := query + "\n"
				if err != nil {
					got = "# not available: " + err.Error() + "\n"
				}
				testutil.Golden(t, filepath.Join("testdata", fmt.Sprintf("%s_%s.promql", name, check)), got)
			})
		}
	}
}

// Every data plane that answers the success rate counts its requests too
// (testdata/<data plane>_requests.promql), for the judge's counts test.
func TestRequestsQuery_Golden(t *testing.T) {
	for _, name := range Names() {
		d, _ := Lookup(name)
		t.Run(string(name), func(t *testing.T) {
			query, err := d.RequestsQuery(v1alpha1.RequestSuccessRateCheck, goldenVars)
			if err == nil && query == "" {
				t.Fatalf("%s has a success rate and no requests query", name)
			}
			got := query + "\n"
			if err != nil {
				got = "# not available: " + err.Error() + "\n"
			}
			testutil.Golden(t, filepath.Join("testdata", fmt.Sprintf("%s_requests.promql", name)), got)
		})
	}
}

// grpc-success-rate reads Traefik's gRPC codes on Traefik, and the canary
// pods' own everywhere else: each data plane renders the query of its
// golden file (testdata/<data plane>_grpc-success-rate.promql) and counts
// its calls (testdata/<data plane>_grpc-requests.promql).
func TestGRPCSuccessRate_Golden(t *testing.T) {
	for _, name := range Names() {
		d, _ := Lookup(name)
		t.Run(string(name), func(t *testing.T) {
			query, err := d.Query(v1alpha1.GRPCSuccessRateCheck, goldenVars)
			if err != nil {
				t.Fatal(err)
			}
			testutil.Golden(t, filepath.Join("testdata", fmt.Sprintf("%s_%s.promql", name, v1alpha1.GRPCSuccessRateCheck)), query+"\n")
			requests, err := d.RequestsQuery(v1alpha1.GRPCSuccessRateCheck, goldenVars)
			if err != nil || requests == "" {
				t.Fatalf("requests of grpc-success-rate: %q, %v", requests, err)
			}
			testutil.Golden(t, filepath.Join("testdata", fmt.Sprintf("%s_grpc-requests.promql", name)), requests+"\n")
		})
	}
	if _, err := (&DataPlane{Name: "none"}).Query("grpc-succes-rate", goldenVars); err == nil || !strings.Contains(err.Error(), "grpc-success-rate") {
		t.Errorf("a misspelled check: %v; want an error naming the built-in checks", err)
	}
}

// Every data plane answers both built-in checks, or says why not.
func TestEveryDataPlaneHasBothChecks(t *testing.T) {
	for _, name := range Names() {
		d, _ := Lookup(name)
		for _, check := range []string{v1alpha1.RequestSuccessRateCheck, v1alpha1.RequestDurationCheck} {
			c, ok := d.Checks[check]
			if !ok || (c.PromQL == "") == (c.Unavailable == "") {
				t.Errorf("%s %s: %+v, want a query or why there is none", name, check, c)
			}
		}
	}
}

// A data plane whose metrics name workloads cannot find a Service
// target's canary, and says so.
func TestQuery_NoWorkload(t *testing.T) {
	d, _ := Lookup(v1alpha1.CiliumDataPlane)
	_, err := d.Query(v1alpha1.RequestSuccessRateCheck, Vars{Namespace: "apps", Service: "podinfo-canary", Port: 80, Interval: "1m"})
	want := "request-success-rate is not available with data plane cilium: its metrics name the canary by its workload, and a Service target has none: use a MetricTemplate"
	if err == nil || err.Error() != want {
		t.Errorf("Query: %v, want %q", err, want)
	}
	if _, err := d.Query("error-rate", goldenVars); err == nil {
		t.Error("error-rate is a built-in check")
	}
}

func TestOf(t *testing.T) {
	c := podinfoCanary()
	if got := Of(c, ""); got != v1alpha1.TraefikDataPlane {
		t.Errorf("no data plane anywhere: %s, want traefik", got)
	}
	if got := Of(c, v1alpha1.IstioDataPlane); got != v1alpha1.IstioDataPlane {
		t.Errorf("the agent's: %s, want istio", got)
	}
	c.Spec.Routing.DataPlane = v1alpha1.CiliumDataPlane
	if got := Of(c, v1alpha1.IstioDataPlane); got != v1alpha1.CiliumDataPlane {
		t.Errorf("the Canary's: %s, want cilium", got)
	}
}

func TestParse(t *testing.T) {
	if got, err := Parse("envoy-gateway"); err != nil || got != v1alpha1.EnvoyGatewayDataPlane {
		t.Errorf("envoy-gateway: %q, %v", got, err)
	}
	_, err := Parse("consul")
	want := `data plane "consul" is not supported: use one of application, cilium, contour, envoy-gateway, istio, kuma, linkerd, nginx-gateway-fabric, traefik`
	if err == nil || err.Error() != want {
		t.Errorf("consul: %v, want %q", err, want)
	}
}
