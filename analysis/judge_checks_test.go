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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// judgeNow is the clock of the judge's tests: the range queries end at
// it, truncated to the step.
var judgeNow = time.Unix(1795435212, 0)

// judgePrometheus is a Prometheus whose range queries must span the
// judge's window (5m up to judgeNow truncated to 30s, a value each 30s)
// and whose series are primary's for a query that names the primary,
// baseline's for one that names the baseline, else canary's; nil is no
// series. An instant query gets instant.
func judgePrometheus(t *testing.T, canary, primary, baseline []float64, instant string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/query":
			fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1795435212,%q]}]}}`, instant)
			return
		case "/api/v1/query_range":
		default:
			t.Errorf("unexpected path %s", r.URL.Path)
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet || q.Get("start") != "1795434900" || q.Get("end") != "1795435200" || q.Get("step") != "30" {
			t.Errorf("range query %s %v: want GET, start 1795434900, end 1795435200, step 30", r.Method, q)
		}
		if !strings.Contains(q.Get("query"), "[30s]") {
			t.Errorf("range query %q: want {{ interval }} rendered as the step, 30s", q.Get("query"))
		}
		values := canary
		if strings.Contains(q.Get("query"), "podinfo-primary") {
			values = primary
		}
		if strings.Contains(q.Get("query"), "podinfo-baseline") {
			values = baseline
		}
		var points []string
		for i, v := range values {
			points = append(points, fmt.Sprintf(`[%d,"%g"]`, 1795434900+30*i, v))
		}
		result := ""
		if values != nil {
			result = `{"metric":{},"values":[` + strings.Join(points, ",") + `]}`
		}
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[%s]}}`, result)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func judged(name string, j v1alpha1.MetricJudge) v1alpha1.CanaryMetric {
	return v1alpha1.CanaryMetric{Name: name, Interval: &metav1.Duration{Duration: 5 * time.Minute}, Judge: &j}
}

// A step's judged metrics are compared with the primary and scored
// together; the verdict is the step's last check, in the judge's words,
// and anything but Pass fails it. No data fails the metric's own check,
// as a query without values does; a query that cannot tell the sides
// apart, or a provider other than prometheus, fails the check saying
// what to fix.
func TestRunStep_Judge(t *testing.T) {
	steady := []float64{120, 122, 118, 121, 119, 120, 123, 117, 120, 121}
	slower := []float64{180, 183, 178, 182, 181, 179, 184, 180, 182, 181}
	rates := []float64{99.9, 99.8, 99.9, 100, 99.9, 99.8, 100, 99.9, 99.9, 99.8}
	duration := judged(v1alpha1.RequestDurationCheck, v1alpha1.MetricJudge{Direction: v1alpha1.JudgeIncrease, MaxIncreasePercent: ptr.To(10.0)})
	success := judged(v1alpha1.RequestSuccessRateCheck, v1alpha1.MetricJudge{Direction: v1alpha1.JudgeDecrease, Weight: ptr.To(4)})
	template := func(name string) v1alpha1.CanaryMetric {
		m := judged(name, v1alpha1.MetricJudge{})
		m.TemplateRef = &v1alpha1.TemplateReference{Name: name}
		return m
	}
	tests := map[string]struct {
		metrics        []v1alpha1.CanaryMetric
		canary         []float64
		primary        []float64
		instant        string
		wantChecks     []string // name: passed
		wantFailure    string
		wantJudgeValue float64
	}{
		"Pass": {
			metrics: []v1alpha1.CanaryMetric{duration}, canary: steady, primary: steady,
			wantChecks:     []string{"request-duration: true", "judge: true"},
			wantJudgeValue: 100,
		},
		"High fails the judgement": {
			metrics: []v1alpha1.CanaryMetric{duration}, canary: slower, primary: steady,
			wantChecks: []string{"request-duration: true", "judge: false"},
			wantFailure: "judge: score 0 (pass >= 95, marginal >= 75): Fail — request-duration High; " +
				"request-duration: canary 181 ms vs primary 120.1 ms (+50.7 %, p < 0.001): High",
		},
		"High on a light metric is Marginal, a failed check": {
			// Both metrics read the same series here: the success rate
			// (weight 4) is higher, which direction Decrease does not
			// count as bad.
			metrics: []v1alpha1.CanaryMetric{duration, success},
			canary:  slower, primary: steady,
			wantChecks:     []string{"request-duration: true", "request-success-rate: true", "judge: false"},
			wantFailure:    "judge: score 80 (pass >= 95, marginal >= 75): Marginal — request-duration High; request-duration: canary 181 ms vs primary 120.1 ms",
			wantJudgeValue: 80,
		},
		"thresholdRange and judge: both must pass": {
			metrics: []v1alpha1.CanaryMetric{func() v1alpha1.CanaryMetric {
				m := duration
				m.ThresholdRange = &v1alpha1.ThresholdRange{Max: ptr.To(150.0)}
				return m
			}()},
			canary: steady, primary: steady, instant: "200",
			wantChecks:  []string{"request-duration: false"},
			wantFailure: "metric request-duration: 200 > 150 (thresholdRange.max)",
		},
		"NoData fails the metric's check": {
			metrics: []v1alpha1.CanaryMetric{success}, canary: nil, primary: rates,
			wantChecks: []string{"request-success-rate: false", "judge: false"},
			wantFailure: "metric request-success-rate: judge: 0 canary and 10 primary values, at least 3 a side needed: " +
				"no data, which fails the check as a query without values does: is the canary receiving traffic through traefik",
		},
		"a template without {{ target }}": {
			metrics: []v1alpha1.CanaryMetric{template("errors")}, canary: steady, primary: steady,
			wantChecks: []string{"errors: false"},
			wantFailure: "metric errors: judge: the query of MetricTemplate apps/errors is the same for the canary and the primary: " +
				"the judge queries each side, so the query must select the workload with {{ target }} (the primary's is {{ target }}-primary)",
		},
		"a template with {{ target }}": {
			metrics: []v1alpha1.CanaryMetric{template("latency")}, canary: steady, primary: steady,
			wantChecks:     []string{"latency: true", "judge: true"},
			wantJudgeValue: 100,
		},
		"a provider other than prometheus": {
			metrics: []v1alpha1.CanaryMetric{template("dd")}, canary: steady, primary: steady,
			wantChecks: []string{"dd: false"},
			wantFailure: "metric dd: judge: MetricTemplate apps/dd uses the datadog provider, and the judge reads series from " +
				"prometheus only (and the built-in checks): use a prometheus MetricTemplate, or remove the metric's judge block",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			srv := judgePrometheus(t, tt.canary, tt.primary, nil, tt.instant)
			tpl := func(name string, provider v1alpha1.MetricProviderType, query string) *v1alpha1.MetricTemplate {
				tpl := &v1alpha1.MetricTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name}}
				tpl.Spec.Provider = v1alpha1.MetricProvider{Type: provider, Address: srv.URL}
				tpl.Spec.Query = query
				return tpl
			}
			m := &Metrics{
				MetricsServer: srv.URL,
				Reader: fakeReader(t,
					tpl("errors", v1alpha1.PrometheusProvider, `sum(rate(errors{namespace="{{ namespace }}"}[{{ interval }}]))`),
					tpl("latency", v1alpha1.PrometheusProvider, `avg(rate(latency{pod=~"{{ target }}-[a-z0-9]+-[a-z0-9]+"}[{{ interval }}]))`),
					tpl("dd", v1alpha1.DatadogProvider, `avg:latency{app:{{ target }}}`)),
				now: func() time.Time { return judgeNow },
			}
			c := builtinCanary(v1alpha1.GatewayAPIRouting)
			c.Spec.Analysis.Metrics = tt.metrics
			out := (&Runner{metrics: m}).runStep(context.Background(), Work{Canary: c, Metrics: tt.metrics})
			var checks []string
			for _, r := range out.Metrics {
				checks = append(checks, fmt.Sprintf("%s: %v", r.Name, r.Passed))
				if r.Name == JudgeCheck && tt.wantJudgeValue != 0 && (!r.HasValue || r.Value != tt.wantJudgeValue || *r.Min != 95) {
					t.Errorf("judge value %v (%v), min %v; want %v, min 95", r.Value, r.HasValue, *r.Min, tt.wantJudgeValue)
				}
			}
			if diff := cmp.Diff(tt.wantChecks, checks); diff != "" {
				t.Errorf("checks (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(out.MetricFailure, tt.wantFailure) || (tt.wantFailure == "") != (out.MetricFailure == "") {
				t.Errorf("failure\n got %q\nwant %q", out.MetricFailure, tt.wantFailure)
			}
		})
	}
}

// With analysis.judge.baseline the judge compares the canary with
// <target>-baseline, not the primary, and says so: the built-in checks
// read <service>-baseline's series, a template's {{ target }} is the
// baseline.
func TestRunStep_JudgeBaseline(t *testing.T) {
	steady := []float64{120, 122, 118, 121, 119, 120, 123, 117, 120, 121}
	slower := []float64{180, 183, 178, 182, 181, 179, 184, 180, 182, 181}
	duration := judged(v1alpha1.RequestDurationCheck, v1alpha1.MetricJudge{Direction: v1alpha1.JudgeIncrease, MaxIncreasePercent: ptr.To(10.0)})
	latency := judged("latency", v1alpha1.MetricJudge{Direction: v1alpha1.JudgeIncrease})
	latency.TemplateRef = &v1alpha1.TemplateReference{Name: "latency"}
	errors := judged("errors", v1alpha1.MetricJudge{})
	errors.TemplateRef = &v1alpha1.TemplateReference{Name: "errors"}
	tests := map[string]struct {
		metrics []v1alpha1.CanaryMetric
		// The primary is as slow as the canary: only a comparison with
		// the baseline finds the canary High.
		canary, primary, baseline []float64
		wantChecks                []string
		wantFailure               string
	}{
		"built-in: High against the baseline, whatever the primary": {
			metrics: []v1alpha1.CanaryMetric{duration}, canary: slower, primary: slower, baseline: steady,
			wantChecks: []string{"request-duration: true", "judge: false"},
			wantFailure: "judge: score 0 (pass >= 95, marginal >= 75): Fail — request-duration High; " +
				"request-duration: canary 181 ms vs baseline 120.1 ms (+50.7 %, p < 0.001): High",
		},
		"built-in: Pass against the baseline, whatever the primary": {
			metrics: []v1alpha1.CanaryMetric{duration}, canary: steady, primary: slower, baseline: steady,
			wantChecks: []string{"request-duration: true", "judge: true"},
		},
		"a template's {{ target }} is the baseline": {
			metrics: []v1alpha1.CanaryMetric{latency}, canary: slower, primary: slower, baseline: steady,
			wantChecks:  []string{"latency: true", "judge: false"},
			wantFailure: "judge: score 0 (pass >= 95, marginal >= 75): Fail — latency High; latency: canary 181 vs baseline 120.1",
		},
		"a baseline without data fails the metric's check, naming it": {
			metrics: []v1alpha1.CanaryMetric{duration}, canary: steady, primary: steady, baseline: nil,
			wantChecks:  []string{"request-duration: false", "judge: false"},
			wantFailure: "metric request-duration: judge: 10 canary and 0 baseline values, at least 3 a side needed: no data",
		},
		"a template without {{ target }} names the baseline": {
			metrics: []v1alpha1.CanaryMetric{errors}, canary: steady, primary: steady, baseline: steady,
			wantChecks: []string{"errors: false"},
			wantFailure: "metric errors: judge: the query of MetricTemplate apps/errors is the same for the canary and the baseline: " +
				"the judge queries each side, so the query must select the workload with {{ target }} (the baseline's is {{ target }}-baseline)",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			srv := judgePrometheus(t, tt.canary, tt.primary, tt.baseline, "")
			tpl := func(name, query string) *v1alpha1.MetricTemplate {
				tpl := &v1alpha1.MetricTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name}}
				tpl.Spec.Provider = v1alpha1.MetricProvider{Type: v1alpha1.PrometheusProvider, Address: srv.URL}
				tpl.Spec.Query = query
				return tpl
			}
			m := &Metrics{
				MetricsServer: srv.URL,
				Reader: fakeReader(t,
					tpl("errors", `sum(rate(errors{namespace="{{ namespace }}"}[{{ interval }}]))`),
					tpl("latency", `avg(rate(latency{pod=~"{{ target }}-[a-z0-9]+-[a-z0-9]+"}[{{ interval }}]))`)),
				now: func() time.Time { return judgeNow },
			}
			c := builtinCanary(v1alpha1.GatewayAPIRouting)
			c.Spec.Analysis.Metrics = tt.metrics
			c.Spec.Analysis.Judge = &v1alpha1.AnalysisJudge{Baseline: true}
			out := (&Runner{metrics: m}).runStep(context.Background(), Work{Canary: c, Metrics: tt.metrics})
			var checks []string
			for _, r := range out.Metrics {
				checks = append(checks, fmt.Sprintf("%s: %v", r.Name, r.Passed))
			}
			if diff := cmp.Diff(tt.wantChecks, checks); diff != "" {
				t.Errorf("checks (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(out.MetricFailure, tt.wantFailure) || (tt.wantFailure == "") != (out.MetricFailure == "") {
				t.Errorf("failure\n got %q\nwant %q", out.MetricFailure, tt.wantFailure)
			}
		})
	}
}

// A built-in success rate is judged on its requests: the judge reads the
// rate and the number of requests of each side (4 range queries), at the
// timestamps both sides have, and tests the counts (Cochran-Mantel-
// Haenszel). With analysis.judge.window Growing the range starts at the
// first recorded step's window (its time less the interval).
func TestRunStep_JudgeCounts(t *testing.T) {
	// Per 30 s: the canary serves 100 requests, the primary 200; a fault
	// of 1 to 8 % hits both at the same timestamps, and the canary fails
	// 1.5 % more. The primary has one timestamp more (the first), which
	// is left out.
	fault := []float64{0, 0, 0, 0, 2, 8, 5, 1, 7, 3, 6, 4, 8, 2, 5, 3}
	firstStep := judgeNow.Add(-5 * time.Minute)
	tests := map[string]struct {
		window    v1alpha1.JudgeWindow
		wantStart int64
	}{
		"Sliding: the metric's interval":                   {window: "", wantStart: 1795434900},
		"Growing: from the first recorded step's interval": {window: v1alpha1.JudgeWindowGrowing, wantStart: 1795434600},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var queries []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				q := r.URL.Query()
				query := q.Get("query")
				if got := q.Get("start"); got != fmt.Sprint(tt.wantStart) {
					t.Errorf("range query %q starts at %s, want %d", query, got, tt.wantStart)
				}
				primary := strings.Contains(query, "podinfo-primary")
				requests := strings.Contains(query, "increase(")
				var points []string
				for i := -1; i < len(fault); i++ {
					f := 0.0
					if i >= 0 {
						f = fault[i]
					} else if !primary {
						continue
					}
					v := 100 - f
					switch {
					case requests && primary:
						v = 200
					case requests:
						v = 100
					case !primary:
						v = 100 - f - 1 - float64((i+2)%2)
					}
					points = append(points, fmt.Sprintf(`[%d,"%g"]`, tt.wantStart+30*int64(i+1), v))
				}
				queries = append(queries, query)
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[%s]}]}}`,
					strings.Join(points, ","))
			}))
			t.Cleanup(srv.Close)
			m := &Metrics{MetricsServer: srv.URL, now: func() time.Time { return judgeNow }}
			success := judged(v1alpha1.RequestSuccessRateCheck, v1alpha1.MetricJudge{Direction: v1alpha1.JudgeDecrease,
				MaxDecreasePercent: ptr.To(1.0)})
			c := builtinCanary(v1alpha1.GatewayAPIRouting)
			c.Spec.Analysis.Metrics = []v1alpha1.CanaryMetric{success}
			c.Spec.Analysis.Judge = &v1alpha1.AnalysisJudge{Window: tt.window}
			c.Status.LastAppliedSpec = "abc"
			c.Status.Analyses = []v1alpha1.AnalysisRecord{{Spec: "abc", StartedAt: metav1.NewMicroTime(firstStep)}}
			out := (&Runner{metrics: m}).runStep(context.Background(), Work{Canary: c, Metrics: c.Spec.Analysis.Metrics})
			want := "judge: score 0 (pass >= 95, marginal >= 75): Fail — request-success-rate Low; " +
				"request-success-rate: canary 95.12 % vs primary 96.62 % (-1.55 %, p = 0.0131): Low"
			if out.MetricFailure != want {
				t.Errorf("failure\n got %q\nwant %q", out.MetricFailure, want)
			}
			if len(queries) != 4 {
				t.Errorf("%d range queries, want 4 (rate and requests of each side): %q", len(queries), queries)
			}
		})
	}
}
