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
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
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

// Each reconcile that changes a Canary's status counts once in
// serin_canary_status_writes_total, under the action decided: what the
// API server's status patches are for, when the agent falls behind.
func TestMetrics_StatusWritesByAction(t *testing.T) {
	canary := podinfoCanary().Obj()
	f := newActionReconciler(t, canary, podinfoTarget(2))
	m := newCanaryMetrics()
	count := func(action, failed string) float64 {
		var d dto.Metric
		if err := m.writes.WithLabelValues(action, failed).Write(&d); err != nil {
			t.Fatal(err)
		}
		return d.GetCounter().GetValue()
	}
	reconcile := func() error {
		_, err := f.r.Reconcile(ctrl.LoggerInto(context.Background(), ctrl.Log), reconcileRequest(client.ObjectKeyFromObject(canary)))
		return err
	}
	steps := []struct {
		fail           string // a write made to fail
		action, failed string // the series that counts the reconcile
		wantErr        bool
	}{
		// The finalizer first: the status says the Canary initializes,
		// before any action was decided.
		{action: "none", failed: "false"},
		// A failed initialization records why, and counts as failed.
		{fail: "create Deployment/podinfo-primary", action: "Initialize", failed: "true", wantErr: true},
		{action: "Initialize", failed: "false"},
	}
	for i, s := range steps {
		f.calls.Fail = map[string]error{}
		if s.fail != "" {
			f.calls.Fail[s.fail] = injectedFault
		}
		before := count(s.action, s.failed)
		if err := reconcile(); (err != nil) != s.wantErr {
			t.Fatalf("reconcile %d: error %v, want an error %v (writes %v)", i, err, s.wantErr, f.calls.Writes)
		}
		if got := count(s.action, s.failed) - before; got != 1 {
			t.Errorf("reconcile %d: status_writes{action=%q,failed=%q} grew by %v, want 1", i, s.action, s.failed, got)
		}
	}

	// A reconcile counts exactly when it changed the status: here the
	// primary waits to be ready, the first wait says so, the next one
	// changes nothing.
	total := func() float64 {
		ch := make(chan prometheus.Metric, 64)
		m.writes.Collect(ch)
		close(ch)
		sum := 0.0
		for c := range ch {
			var d dto.Metric
			if err := c.Write(&d); err != nil {
				t.Fatal(err)
			}
			sum += d.GetCounter().GetValue()
		}
		return sum
	}
	unchanged := 0
	for i := range 3 {
		var before, after v1alpha1.Canary
		f.get("podinfo", &before)
		counted := total()
		if err := reconcile(); err != nil {
			t.Fatalf("wait %d: %v", i, err)
		}
		f.get("podinfo", &after)
		changed := !apiequality.Semantic.DeepEqual(before.Status, after.Status)
		if !changed {
			unchanged++
		}
		if got, want := total()-counted, map[bool]float64{true: 1, false: 0}[changed]; got != want {
			t.Errorf("wait %d: the status changed %v, counted %v, want %v", i, changed, got, want)
		}
	}
	if unchanged == 0 {
		t.Error("every wait changed the status: the case of no write was not tested")
	}
}
