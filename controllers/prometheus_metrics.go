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
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/record"
	"github.com/serin-dev/serin/internal/rollout"
)

// canaryMetrics are serin's Prometheus metrics, served with
// controller-runtime's on the agent's metrics address.
type canaryMetrics struct {
	status   *prometheus.GaugeVec
	weight   *prometheus.GaugeVec
	duration *prometheus.HistogramVec
	total    *prometheus.CounterVec
	stepLag  prometheus.Histogram
	value    *prometheus.GaugeVec
	writes   *prometheus.CounterVec

	mu      sync.Mutex
	started map[string]time.Time
	// checks holds, per Canary, the check names that have a value
	// series, so that a step replaces its own series without scanning
	// every Canary's.
	checks map[string][]string
}

var (
	registerOnce  sync.Once
	sharedMetrics *canaryMetrics
)

// newCanaryMetrics registers the metrics once per process.
func newCanaryMetrics() *canaryMetrics {
	registerOnce.Do(func() {
		labels := []string{"name", "namespace"}
		m := &canaryMetrics{
			status: prometheus.NewGaugeVec(prometheus.GaugeOpts{
				Name: "serin_canary_status",
				Help: "Canary state: 0 progressing, 1 succeeded or initialized, 2 failed, 3 halted.",
			}, labels),
			weight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
				Name: "serin_canary_weight",
				Help: "Traffic percentage routed to the canary.",
			}, labels),
			duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
				Name:    "serin_canary_duration_seconds",
				Help:    "Duration of rollouts, from the new revision to promotion, rollback or halt.",
				Buckets: []float64{10, 30, 60, 120, 300, 600, 1200, 3600},
			}, labels),
			total: prometheus.NewCounterVec(prometheus.CounterOpts{
				Name: "serin_canary_total",
				Help: "Rollouts that ended, by result (succeeded, failed).",
			}, append(labels, "result")),
			stepLag: prometheus.NewHistogram(prometheus.HistogramOpts{
				Name:    "serin_canary_step_lag_seconds",
				Help:    "Delay between when an analysis step was due (last transition + interval, or + the time the gateway applied the weights when later) and when it ran; the first step of an analysis, which waits for the canary to be ready, is not counted.",
				Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 2.5, 5, 10},
			}),
			value: prometheus.NewGaugeVec(prometheus.GaugeOpts{
				Name: "serin_canary_metric_value",
				Help: "Value of a Canary's metric check at its last analysis step (the metric label is the check's name); a check that got no value has no series.",
			}, append(labels, "metric")),
			writes: prometheus.NewCounterVec(prometheus.CounterOpts{
				Name: "serin_canary_status_writes_total",
				Help: "Reconciles that changed a Canary's status (one status patch each, two when the conditions changed too), by the action decided (Step, Wait, RecordWeights, …; none before one was decided) and whether the reconcile failed.",
			}, []string{"action", "failed"}),
			started: map[string]time.Time{},
			checks:  map[string][]string{},
		}
		ctrlmetrics.Registry.MustRegister(m.status, m.weight, m.duration, m.total, m.stepLag, m.value, m.writes)
		sharedMetrics = m
	})
	return sharedMetrics
}

func key(obj *v1alpha1.Canary) string { return obj.Namespace + "/" + obj.Name }

// setPhase records the phase as a status value.
func (m *canaryMetrics) setPhase(obj *v1alpha1.Canary) {
	v := 0.0
	switch obj.Status.Phase {
	case v1alpha1.PhaseSucceeded, v1alpha1.PhaseInitialized:
		v = 1
	case v1alpha1.PhaseFailed:
		v = 2
	case v1alpha1.PhaseHalted:
		v = 3
	}
	m.status.WithLabelValues(obj.Name, obj.Namespace).Set(v)
}

// wroteStatus counts a reconcile that changed the status, by the action
// decided: which work costs the API server its writes.
func (m *canaryMetrics) wroteStatus(action rollout.Action, failed bool) {
	name := "none"
	if action != nil {
		name = strings.TrimPrefix(fmt.Sprintf("%T", action), "rollout.")
	}
	m.writes.WithLabelValues(name, strconv.FormatBool(failed)).Inc()
}

func (m *canaryMetrics) setWeight(obj *v1alpha1.Canary) {
	m.weight.WithLabelValues(obj.Name, obj.Namespace).Set(float64(obj.Status.CanaryWeight))
}

func (m *canaryMetrics) startRollout(obj *v1alpha1.Canary, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.started[key(obj)] = now
}

func (m *canaryMetrics) endRollout(obj *v1alpha1.Canary, now time.Time, succeeded bool) {
	result := "failed"
	if succeeded {
		result = "succeeded"
	}
	m.total.WithLabelValues(obj.Name, obj.Namespace, result).Inc()
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, ok := m.started[key(obj)]; ok {
		m.duration.WithLabelValues(obj.Name, obj.Namespace).Observe(now.Sub(t).Seconds())
		delete(m.started, key(obj))
	}
}

// setValues records the values of a step's metric checks, replacing the
// previous step's: a check removed from the spec, or that got no value,
// has no series.
func (m *canaryMetrics) setValues(obj *v1alpha1.Canary, checks []v1alpha1.CheckResult) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var names []string
	for _, c := range checks {
		if v, ok := record.ParseValue(c.Value); ok {
			m.value.WithLabelValues(obj.Name, obj.Namespace, c.Name).Set(v)
			names = append(names, c.Name)
		}
	}
	for _, old := range m.checks[key(obj)] {
		if !slices.Contains(names, old) {
			m.value.DeleteLabelValues(obj.Name, obj.Namespace, old)
		}
	}
	if len(names) == 0 {
		delete(m.checks, key(obj))
		return
	}
	m.checks[key(obj)] = names
}

// forget drops the series of a deleted Canary.
func (m *canaryMetrics) forget(obj *v1alpha1.Canary) {
	m.status.DeleteLabelValues(obj.Name, obj.Namespace)
	m.weight.DeleteLabelValues(obj.Name, obj.Namespace)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, name := range m.checks[key(obj)] {
		m.value.DeleteLabelValues(obj.Name, obj.Namespace, name)
	}
	delete(m.checks, key(obj))
	delete(m.started, key(obj))
}

// observeStep records how late an analysis step ran.
func (m *canaryMetrics) observeStep(obj *v1alpha1.Canary, obs rollout.Observation) {
	if obj.Status.LastTransitionTime != nil {
		m.stepLag.Observe(max(obs.Now.Sub(rollout.StepDue(obj, obs)).Seconds(), 0))
	}
}
