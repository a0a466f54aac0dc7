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

package analysis

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/dataplane"
)

// builtinCanary is a Deployment target on port 9898, routed by provider.
func builtinCanary(provider v1alpha1.RoutingProvider) *v1alpha1.Canary {
	c := canary()
	c.Spec.Service.Port = 9898
	c.Spec.Routing.Provider = provider
	return c
}

func builtinMetric(name string) v1alpha1.CanaryMetric {
	return v1alpha1.CanaryMetric{Name: name, Interval: &metav1.Duration{Duration: time.Minute}}
}

// Every data plane × check × routing provider renders, for a Canary, the
// query of the data plane's golden file (dataplane/testdata): both routing
// providers measure the canary's backend Service, so they share one file.
func TestBuiltinQuery_Golden(t *testing.T) {
	for _, name := range dataplane.Names() {
		d, _ := dataplane.Lookup(name)
		for check := range d.Checks {
			golden := filepath.Join("..", "dataplane", "testdata", fmt.Sprintf("%s_%s.promql", name, check))
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			for _, provider := range []v1alpha1.RoutingProvider{v1alpha1.GatewayAPIRouting, v1alpha1.KubernetesRouting} {
				t.Run(fmt.Sprintf("%s/%s/%s", name, check, provider), func(t *testing.T) {
					query, err := BuiltinQuery(builtinCanary(provider), builtinMetric(check), name)
					got := query + "\n"
					if err != nil {
						got = "# not available: " + err.Error() + "\n"
					}
					if got != string(want) {
						t.Errorf("BuiltinQuery:\n%s\nwant (%s):\n%s", got, golden, want)
					}
				})
			}
		}
	}
}

func TestBuiltinQuery_Errors(t *testing.T) {
	serviceTarget := builtinCanary(v1alpha1.GatewayAPIRouting)
	serviceTarget.Spec.TargetRef = v1alpha1.TargetReference{APIVersion: "v1", Kind: "Service", Name: "podinfo"}
	tests := map[string]struct {
		canary    *v1alpha1.Canary
		metric    string
		dataPlane v1alpha1.DataPlane
		wantErr   string
	}{
		"not a built-in name": {canary: canary(), metric: "error-rate", dataPlane: v1alpha1.TraefikDataPlane,
			wantErr: `"error-rate" is not a built-in check`},
		"unknown data plane": {canary: canary(), metric: v1alpha1.RequestDurationCheck, dataPlane: "consul",
			wantErr: `data plane "consul" has no built-in checks`},
		"pods of a Service target": {canary: serviceTarget, metric: v1alpha1.RequestDurationCheck, dataPlane: v1alpha1.ApplicationDataPlane,
			wantErr: "request-duration is not available with data plane application: its metrics name the canary by its workload, and a Service target has none"},
		"workload of a Service target": {canary: serviceTarget, metric: v1alpha1.RequestSuccessRateCheck, dataPlane: v1alpha1.CiliumDataPlane,
			wantErr: "request-success-rate is not available with data plane cilium: its metrics name the canary by its workload, and a Service target has none"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := BuiltinQuery(tt.canary, builtinMetric(tt.metric), tt.dataPlane)
			if err == nil || !contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
	// A Service target's backend is a Service: data planes that name
	// Services measure it.
	if _, err := BuiltinQuery(serviceTarget, builtinMetric(v1alpha1.RequestSuccessRateCheck), v1alpha1.IstioDataPlane); err != nil {
		t.Errorf("istio, Service target: %v", err)
	}
}

// The application data plane finds the canary's pods by name: those of
// the target workload, never those of its -primary copy, nor of another
// workload whose name starts the same.
func TestPodNamePattern(t *testing.T) {
	tests := []struct {
		kind, name string
		match      []string
		noMatch    []string
	}{
		{kind: "Deployment", name: "podinfo",
			match:   []string{"podinfo-7d9f8c5b4-x2x4z", "podinfo-5c6b7d-abcde"},
			noMatch: []string{"podinfo-primary-7d9f8c5b4-x2x4z", "podinfo-x2x4z", "podinfo-api-7d9f8c5b4-x2x4z", "other-7d9f8c5b4-x2x4z"}},
		{kind: "DaemonSet", name: "node.agent",
			match:   []string{"node.agent-x2x4z"},
			noMatch: []string{"node.agent-primary-x2x4z", "nodeXagent-x2x4z", "node.agent-7d9f8c5b4-x2x4z"}},
	}
	for _, tt := range tests {
		pattern, err := podNamePattern(v1alpha1.TargetReference{Kind: tt.kind, Name: tt.name})
		if err != nil {
			t.Fatalf("%s %s: %v", tt.kind, tt.name, err)
		}
		re := regexp.MustCompile("^(?:" + pattern + ")$") // PromQL anchors =~
		for _, pod := range tt.match {
			if !re.MatchString(pod) {
				t.Errorf("%s %s: %s does not match %s", tt.kind, tt.name, pattern, pod)
			}
		}
		for _, pod := range tt.noMatch {
			if re.MatchString(pod) {
				t.Errorf("%s %s: %s matches %s", tt.kind, tt.name, pattern, pod)
			}
		}
	}
	if _, err := podNamePattern(v1alpha1.TargetReference{Kind: "Service", Name: "podinfo"}); err == nil {
		t.Error("a Service target has pod names")
	}
}

// Kuma's checks select the canary pods' own proxies by their Kuma service,
// <svc>_<ns>_svc_<port>: the canary Service's, on any port, never the
// primary's or the apex's, nor another namespace's; with service.name set,
// the canary Service is named after it, not after the target (where
// Flagger's kuma query, which uses the target, finds nothing).
func TestBuiltinQuery_KumaSelectsTheCanaryProxies(t *testing.T) {
	tests := map[string]struct {
		serviceName string
		match       []string
		noMatch     []string
	}{
		"apex named after the target": {
			match:   []string{"podinfo-canary_apps_svc_9898", "podinfo-canary_apps_svc_80"},
			noMatch: []string{"podinfo-primary_apps_svc_9898", "podinfo_apps_svc_9898", "podinfo-canary_other_svc_9898", "podinfo-canary_apps_svc_http", "xpodinfo-canary_apps_svc_9898"},
		},
		"service.name": {
			serviceName: "frontend",
			match:       []string{"frontend-canary_apps_svc_9898"},
			noMatch:     []string{"podinfo-canary_apps_svc_9898", "frontend-primary_apps_svc_9898"},
		},
	}
	selector := regexp.MustCompile(`service=~"([^"]+)"`)
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := builtinCanary(v1alpha1.GatewayAPIRouting)
			c.Spec.Service.Name = tt.serviceName
			for _, check := range []string{v1alpha1.RequestSuccessRateCheck, v1alpha1.RequestDurationCheck} {
				query, err := BuiltinQuery(c, builtinMetric(check), v1alpha1.KumaDataPlane)
				if err != nil {
					t.Fatal(err)
				}
				found := selector.FindAllStringSubmatch(query, -1)
				if len(found) == 0 {
					t.Fatalf("%s: no service selector in %s", check, query)
				}
				for _, f := range found {
					re := regexp.MustCompile("^(?:" + f[1] + ")$") // PromQL anchors =~
					for _, service := range tt.match {
						if !re.MatchString(service) {
							t.Errorf("%s: %s does not match %s", check, f[1], service)
						}
					}
					for _, service := range tt.noMatch {
						if re.MatchString(service) {
							t.Errorf("%s: %s matches %s", check, f[1], service)
						}
					}
				}
			}
		})
	}
}

// A built-in check sends its preset to the agent's Prometheus
// (/api/v1/query, the exact query as the query parameter) and compares the
// answer with the thresholdRange; no data, NaN and a missing metrics server
// fail it with a message that says what to look at.
func TestMetrics_BuiltinCheck(t *testing.T) {
	tests := map[string]struct {
		body          string
		noServer      bool
		metric        v1alpha1.CanaryMetric
		wantPassed    bool
		wantMessage   string
		wantNoRequest bool
	}{
		"success rate within range": {
			body:        `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000,"99.5"]}]}}`,
			metric:      v1alpha1.CanaryMetric{Name: v1alpha1.RequestSuccessRateCheck, ThresholdRange: &v1alpha1.ThresholdRange{Min: ptr.To(99.0)}},
			wantPassed:  true,
			wantMessage: "metric request-success-rate: 99.5",
		},
		"duration over max": {
			body:        `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000,"750"]}]}}`,
			metric:      v1alpha1.CanaryMetric{Name: v1alpha1.RequestDurationCheck, ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(500.0)}},
			wantMessage: "metric request-duration: 750 > 500 (thresholdRange.max)",
		},
		"no traffic": {
			body:        `{"status":"success","data":{"resultType":"vector","result":[]}}`,
			metric:      v1alpha1.CanaryMetric{Name: v1alpha1.RequestSuccessRateCheck, ThresholdRange: &v1alpha1.ThresholdRange{Min: ptr.To(99.0)}},
			wantMessage: "is the canary receiving traffic through traefik, and does Prometheus scrape its metrics?",
		},
		"NaN, no requests in the interval": {
			body:        `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000,"NaN"]}]}}`,
			metric:      v1alpha1.CanaryMetric{Name: v1alpha1.RequestDurationCheck, ThresholdRange: &v1alpha1.ThresholdRange{Max: ptr.To(500.0)}},
			wantMessage: "is the canary receiving traffic through traefik",
		},
		"no metrics server": {
			noServer:      true,
			metric:        v1alpha1.CanaryMetric{Name: v1alpha1.RequestSuccessRateCheck, ThresholdRange: &v1alpha1.ThresholdRange{Min: ptr.To(99.0)}},
			wantMessage:   "metric request-success-rate: a built-in check needs a Prometheus: start the agent with --metrics-server=<Prometheus URL>",
			wantNoRequest: true,
		},
		"not a built-in, no templateRef": {
			metric:        v1alpha1.CanaryMetric{Name: "error-rate"},
			wantMessage:   "templateRef is required unless the name is a built-in check",
			wantNoRequest: true,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var gotPath, gotQuery string
			requests := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests++
				gotPath, gotQuery = r.URL.Path, r.URL.Query().Get("query")
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			m := &Metrics{MetricsServer: srv.URL + "/"}
			if tt.noServer {
				m.MetricsServer = ""
			}
			c := builtinCanary(v1alpha1.GatewayAPIRouting)
			res := m.Check(context.Background(), c, tt.metric)
			if res.Passed != tt.wantPassed || !contains(res.Message, tt.wantMessage) {
				t.Errorf("got passed=%v %q, want passed=%v %q", res.Passed, res.Message, tt.wantPassed, tt.wantMessage)
			}
			if tt.wantNoRequest {
				if requests != 0 {
					t.Errorf("%d requests to Prometheus, want none", requests)
				}
				return
			}
			want, err := BuiltinQuery(c, tt.metric, v1alpha1.TraefikDataPlane)
			if err != nil {
				t.Fatal(err)
			}
			if gotPath != "/api/v1/query" || gotQuery != want {
				t.Errorf("request: path %q query %q, want /api/v1/query and %q", gotPath, gotQuery, want)
			}
		})
	}
}

// The Canary's routing.dataPlane wins over the agent's, and a check its
// data plane cannot answer fails without a query.
func TestMetrics_BuiltinCheckDataPlane(t *testing.T) {
	var gotQuery string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotQuery = r.URL.Query().Get("query")
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"12"]}]}}`))
	}))
	defer srv.Close()
	m := &Metrics{MetricsServer: srv.URL, DataPlane: v1alpha1.TraefikDataPlane}
	c := builtinCanary(v1alpha1.GatewayAPIRouting)
	c.Spec.Routing.DataPlane = v1alpha1.IstioDataPlane
	duration := v1alpha1.CanaryMetric{Name: v1alpha1.RequestDurationCheck}
	if res := m.Check(context.Background(), c, duration); !res.Passed || !contains(gotQuery, "istio_request_duration_milliseconds_bucket") {
		t.Errorf("istio: %+v, query %q", res, gotQuery)
	}
	gotQuery = ""
	c.Spec.Routing.DataPlane = v1alpha1.NGINXGatewayFabricDataPlane
	res := m.Check(context.Background(), c, duration)
	if res.Passed || !contains(res.Message, "request-duration is not available with data plane nginx-gateway-fabric") || gotQuery != "" {
		t.Errorf("nginx-gateway-fabric: %+v, query %q", res, gotQuery)
	}
}

// A soak judges the primary, and with analysis.judge.baseline the judge
// reads the baseline: every data plane's built-in checks render with that
// side's Service, pods and Deployment where the canary's were, and a
// MetricTemplate's {{ target }} is that side's workload.
func TestBuiltinQuery_Sides(t *testing.T) {
	c := builtinCanary(v1alpha1.GatewayAPIRouting)
	tests := map[side]struct {
		workload, service, template string
	}{
		primarySide:  {c.GetPrimaryName(), c.GetPrimaryServiceName(), `up{pod=~"podinfo-primary-.*"}`},
		baselineSide: {c.GetBaselineName(), c.GetBaselineServiceName(), `up{pod=~"podinfo-baseline-.*"}`},
	}
	for s, tt := range tests {
		for _, name := range dataplane.Names() {
			d, _ := dataplane.Lookup(name)
			for check := range d.Checks {
				canaryQuery, err := builtinQuery(c, builtinMetric(check), name, canarySide)
				if err != nil {
					continue // not available on this data plane
				}
				got, err := builtinQuery(c, builtinMetric(check), name, s)
				if err != nil {
					t.Fatalf("%s %s/%s: %v", s, name, check, err)
				}
				// Every name of the canary's side becomes the other's.
				want := strings.NewReplacer(c.GetCanaryServiceName(), tt.service,
					c.Spec.TargetRef.Name+"-[", tt.workload+"-[",
					`"`+c.Spec.TargetRef.Name+`"`, `"`+tt.workload+`"`).Replace(canaryQuery)
				if got != want || got == canaryQuery {
					t.Errorf("%s %s/%s query:\n%s\nwant:\n%s", s, name, check, got, want)
				}
			}
		}
		q, err := renderQuery(`up{pod=~"{{ target }}-.*"}`, v1alpha1.PrometheusProvider, c, builtinMetric("custom"), s)
		if err != nil || q != tt.template {
			t.Errorf("template on the %s = %q, %v", s, q, err)
		}
	}
	// The testbed's data plane, spelled out.
	q, err := builtinQuery(c, builtinMetric(v1alpha1.RequestSuccessRateCheck), v1alpha1.TraefikDataPlane, baselineSide)
	if err != nil || !strings.Contains(q, `service="apps-podinfo-baseline-http-9898@kubernetesgateway"`) {
		t.Errorf("traefik baseline query = %q, %v", q, err)
	}
}
