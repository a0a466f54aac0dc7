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
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testobj"
)

// valueSeries lists the serin_canary_metric_value series as
// "namespace/name/metric=value", sorted.
func valueSeries(t *testing.T, vec *prometheus.GaugeVec) []string {
	t.Helper()
	ch := make(chan prometheus.Metric, 64)
	vec.Collect(ch)
	close(ch)
	var out []string
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		l := map[string]string{}
		for _, p := range d.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		out = append(out, strings.Join([]string{l["namespace"], l["name"], l["metric"]}, "/")+"="+
			strconv.FormatFloat(d.GetGauge().GetValue(), 'g', -1, 64))
	}
	slices.Sort(out)
	return out
}

func TestMetrics_SetValuesReplacesTheCanarysOwnSeries(t *testing.T) {
	labels := []string{"name", "namespace"}
	m := &canaryMetrics{
		status:  prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "status"}, labels),
		weight:  prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "weight"}, labels),
		value:   prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "value"}, append(labels, "metric")),
		started: map[string]time.Time{},
		checks:  map[string][]string{},
	}
	a := testobj.MakeCanary("a", "ns").Obj()
	b := testobj.MakeCanary("b", "ns").Obj()
	check := func(name, value string) v1alpha1.CheckResult {
		return v1alpha1.CheckResult{Name: name, Value: value, Verdict: v1alpha1.VerdictPassed}
	}
	steps := []struct {
		canary *v1alpha1.Canary
		checks []v1alpha1.CheckResult
		forget bool
		want   []string
	}{
		{canary: a, checks: []v1alpha1.CheckResult{check("rate", "99.5"), check("latency", "120")},
			want: []string{"ns/a/latency=120", "ns/a/rate=99.5"}},
		{canary: b, checks: []v1alpha1.CheckResult{check("rate", "98")},
			want: []string{"ns/a/latency=120", "ns/a/rate=99.5", "ns/b/rate=98"}},
		// The next step of a: latency got no value, so its series goes;
		// b's series stays.
		{canary: a, checks: []v1alpha1.CheckResult{check("rate", "97.25"), check("latency", "")},
			want: []string{"ns/a/rate=97.25", "ns/b/rate=98"}},
		// A step without checks removes all of a's.
		{canary: a, want: []string{"ns/b/rate=98"}},
		{canary: a, checks: []v1alpha1.CheckResult{check("rate", "96")},
			want: []string{"ns/a/rate=96", "ns/b/rate=98"}},
		// A deleted Canary's series go with it.
		{canary: a, forget: true, want: []string{"ns/b/rate=98"}},
	}
	for i, s := range steps {
		if s.forget {
			m.forget(s.canary)
		} else {
			m.setValues(s.canary, s.checks)
		}
		if got := valueSeries(t, m.value); !slices.Equal(got, s.want) {
			t.Fatalf("step %d: series %v, want %v", i, got, s.want)
		}
	}
}
