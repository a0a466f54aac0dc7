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
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/template"
	"time"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/analysis/judge"
	"github.com/serin-dev/serin/analysis/providers"
	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/dataplane"
	"github.com/serin-dev/serin/internal/tenancy"
)

// MetricResult is the outcome of one metric check.
type MetricResult struct {
	// Name of the check.
	Name string
	// Value is the query's result, when HasValue.
	Value float64
	// HasValue is true when the query gave a value.
	HasValue bool
	// Min and Max are the check's thresholdRange.
	Min, Max *float64
	// Passed is true when the value lies in the thresholdRange.
	Passed bool
	// Message explains a failure for events and conditions.
	Message string
	// Judged holds a judged metric's series, the canary's and the
	// primary's, for the step's judgement (judge_checks.go); nil for a
	// metric without judge, in a soak, or when the check failed before
	// the series were read.
	Judged *judge.MetricInput
}

// Metrics runs metric checks: MetricTemplates, read with Reader, and their
// Secrets, read through Tenancy, and the built-in checks, sent to
// MetricsServer.
type Metrics struct {
	Reader client.Reader
	// Pods lists pods for pod-restarts, uncached (the agent's APIReader):
	// the agent keeps no pod informer.
	Pods client.Reader
	// Tenancy decides which MetricTemplates a Canary may reference and
	// reads their providers' Secrets on its behalf, uncached; nil allows
	// every reference and reads the Secrets with Reader.
	Tenancy *tenancy.Tenancy
	// MetricsServer is the address of the Prometheus the built-in checks
	// query (the agent's --metrics-server); without it they fail.
	MetricsServer string
	// DataPlane is the data plane of the Canaries that set no
	// routing.dataPlane (the agent's --data-plane); empty means
	// dataplane.Default.
	DataPlane v1alpha1.DataPlane
	// now is the clock of the judge's range queries; nil is time.Now.
	now func() time.Time
}

// Check runs one metric check of a Canary's canary side.
func (m *Metrics) Check(ctx context.Context, canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric) MetricResult {
	return m.check(ctx, canary, metric, canarySide)
}

// check runs one metric check of the canary side, or of the primary (a
// soak): the built-in checks query the primary's Service and pods, and a
// MetricTemplate's {{ target }} is the primary.
func (m *Metrics) check(ctx context.Context, canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric, s side) MetricResult {
	if metric.IsPodCheck() {
		// A count, never judged (CEL refuses judge on it).
		return m.podRestartsCheck(ctx, canary, metric, s)
	}
	if metric.Judge != nil && s == canarySide {
		return m.judgedCheck(ctx, canary, metric)
	}
	return m.thresholdCheck(ctx, canary, metric, s)
}

// thresholdCheck queries a check's value and holds it to its
// thresholdRange.
func (m *Metrics) thresholdCheck(ctx context.Context, canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric, s side) MetricResult {
	res := MetricResult{Name: metric.Name}
	if r := metric.ThresholdRange; r != nil {
		res.Min, res.Max = r.Min, r.Max
	}
	fail := func(format string, args ...any) MetricResult {
		res.Message = fmt.Sprintf("metric %s: ", metric.Name) + fmt.Sprintf(format, args...)
		return res
	}
	query, provider, timeout, err := m.source(ctx, canary, metric, s)
	if err != nil {
		return fail("%v", err)
	}
	v, err := m.query(ctx, provider, timeout, query)
	if errors.As(err, new(*providers.ErrNoData)) {
		return fail("%v: %s", err, m.noDataHint(canary, metric))
	}
	if err != nil {
		return fail("%v", err)
	}
	res.Value, res.HasValue = v, true
	if r := metric.ThresholdRange; r != nil {
		if r.Min != nil && v < *r.Min {
			return fail("%g < %g (thresholdRange.min)", v, *r.Min)
		}
		if r.Max != nil && v > *r.Max {
			return fail("%g > %g (thresholdRange.max)", v, *r.Max)
		}
	}
	res.Passed = true
	res.Message = fmt.Sprintf("metric %s: %g", metric.Name, v)
	return res
}

// noDataHint is what a check without data asks the user.
func (m *Metrics) noDataHint(canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric) string {
	if metric.IsBuiltin() {
		return fmt.Sprintf("is the canary receiving traffic through %s, and does Prometheus scrape its metrics? "+
			"(the data plane is routing.dataPlane, else the agent's --data-plane)", dataplane.Of(canary, m.DataPlane))
	}
	return "is the canary receiving traffic?"
}

// query sends a query to its provider within timeout. A query that gets no
// answer in time fails with a *DeadlineError: the provider's timeout, or
// the deadline of ctx (the analysis step's) when that comes first.
func (m *Metrics) query(ctx context.Context, provider providers.Provider, timeout time.Duration, query string) (float64, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, &DeadlineError{Of: "call", After: timeout})
	defer cancel()
	v, err := provider.Query(ctx, query)
	if cause := context.Cause(ctx); err != nil && cause != nil {
		return 0, cause
	}
	return v, err
}

// source returns the query of a check, the provider to send it to and the
// query's timeout: a built-in check's preset and the agent's metrics
// server, or a MetricTemplate's query and provider.
func (m *Metrics) source(ctx context.Context, canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric, s side) (string, providers.Provider, time.Duration, error) {
	switch {
	case metric.IsBuiltin():
		query, provider, err := m.builtinSource(canary, metric, s)
		return query, provider, v1alpha1.DefaultMetricTimeout, err
	case metric.TemplateRef == nil:
		return "", nil, 0, fmt.Errorf("templateRef is required unless the name is a built-in check: %s, %s, %s or %s",
			v1alpha1.RequestSuccessRateCheck, v1alpha1.RequestDurationCheck, v1alpha1.GRPCSuccessRateCheck, v1alpha1.PodRestartsCheck)
	}
	return m.templateSource(ctx, canary, metric, s)
}

// builtinSource is a built-in check's query for the Canary's data plane,
// sent to the agent's metrics server.
func (m *Metrics) builtinSource(canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric, s side) (string, providers.Provider, error) {
	query, err := builtinQuery(canary, metric, dataplane.Of(canary, m.DataPlane), s)
	if err != nil {
		return "", nil, err
	}
	if m.MetricsServer == "" {
		return "", nil, errors.New("a built-in check needs a Prometheus: start the agent with --metrics-server=<Prometheus URL>")
	}
	return query, &providers.Prometheus{Address: m.MetricsServer, Timeout: v1alpha1.DefaultMetricTimeout}, nil
}

// templateSource is a MetricTemplate's rendered query, its provider and
// the provider's timeout.
func (m *Metrics) templateSource(ctx context.Context, canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric, s side) (string, providers.Provider, time.Duration, error) {
	tpl, err := m.template(ctx, canary, metric)
	if err != nil {
		return "", nil, 0, err
	}
	pods, err := m.statefulSetPods(ctx, canary, s)
	if err != nil {
		return "", nil, 0, err
	}
	query, err := renderQueryOf(tpl.Spec.Query, tpl.Spec.Provider.Type, canary, metric, s, pods)
	if err != nil {
		return "", nil, 0, err
	}
	provider, err := m.provider(ctx, canary, tpl, metricInterval(canary, metric))
	if err != nil {
		return "", nil, 0, err
	}
	return query, provider, tpl.GetTimeout(), nil
}

// template reads the MetricTemplate of a check, if the Canary may
// reference it.
func (m *Metrics) template(ctx context.Context, canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric) (*v1alpha1.MetricTemplate, error) {
	tpl := &v1alpha1.MetricTemplate{}
	key := types.NamespacedName{Namespace: metric.TemplateRef.Namespace, Name: metric.TemplateRef.Name}
	if key.Namespace == "" {
		key.Namespace = canary.Namespace
	}
	if err := m.Tenancy.CheckRef(canary, templateRefField(canary, metric), "MetricTemplate", key); err != nil {
		return nil, err
	}
	if err := m.Reader.Get(ctx, key, tpl); err != nil {
		return nil, fmt.Errorf("failed to get MetricTemplate %s: %w", key, err)
	}
	return tpl, nil
}

// templateRefField names a check's templateRef in the Canary's spec, for
// messages: metrics[i].templateRef.
func templateRefField(canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric) string {
	if canary.Spec.Analysis != nil {
		for i, m := range canary.Spec.Analysis.Metrics {
			if m.Name == metric.Name {
				return fmt.Sprintf("metrics[%d].templateRef", i)
			}
		}
	}
	return "metrics[].templateRef"
}

// secretReader is the reader of the Secrets of c's MetricTemplates: the
// Tenancy's, else Reader.
func (m *Metrics) secretReader(c *v1alpha1.Canary) (client.Reader, error) {
	if m.Tenancy == nil {
		return m.Reader, nil
	}
	return m.Tenancy.SecretReader(c)
}

// provider builds the providers.Provider of a MetricTemplate, with the data of its
// Secret, read on the Canary's behalf, for a check over interval.
func (m *Metrics) provider(ctx context.Context, canary *v1alpha1.Canary, tpl *v1alpha1.MetricTemplate, interval time.Duration) (providers.Provider, error) {
	cfg := providers.Config{Spec: tpl.Spec.Provider, Timeout: tpl.GetTimeout(), Interval: interval, Namespace: canary.Namespace}
	if tpl.Spec.Provider.Type == v1alpha1.ExternalMetricsProvider && tpl.Spec.Provider.Address == "" {
		restConfig, err := m.Tenancy.RESTConfig(canary)
		if err != nil {
			return nil, fmt.Errorf("externalmetrics: %w", err)
		}
		cfg.RESTConfig = restConfig
	}
	cfg.CrossNamespace = m.Tenancy == nil || !m.Tenancy.Options().NoCrossNamespaceRefs
	if ref := tpl.Spec.Provider.SecretRef; ref != nil {
		cfg.SecretName = tpl.Namespace + "/" + ref.Name
		reader, err := m.secretReader(canary)
		if err != nil {
			return nil, fmt.Errorf("cannot read the provider secret %s: %w", cfg.SecretName, err)
		}
		secret := &corev1.Secret{}
		if err := reader.Get(ctx, types.NamespacedName{Namespace: tpl.Namespace, Name: ref.Name}, secret); err != nil {
			return nil, fmt.Errorf("failed to get the provider secret %s: %w", cfg.SecretName, m.Tenancy.AccessError(canary, err))
		}
		cfg.Secret = secret.Data
		if cfg.Secret == nil {
			cfg.Secret = map[string][]byte{}
		}
	}
	return providers.New(cfg)
}

// RenderQuery renders a MetricTemplate's query, in the query language of
// provider, with Flagger's variables: {{ name }}, {{ namespace }},
// {{ target }}, {{ service }}, {{ interval }} and {{ variables.NAME }}.
// A value placed inside a string literal is escaped for it, as the
// language reads it back (EscapePromQL for PromQL); a value placed
// anywhere else may only be a plain token (letters, digits and
// _ . : / * -), else the check fails naming the variable: no value can
// change the query's shape (querylang.go).
func RenderQuery(query string, provider v1alpha1.MetricProviderType, canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric) (string, error) {
	return renderQuery(query, provider, canary, metric, canarySide)
}

// renderQuery is RenderQuery with {{ target }} the workload of side s,
// and {{ pods }} a regular expression of its pods' names:
// the primary (a soak judges the promoted primary, the judge without a
// baseline compares with it) or the baseline.
func renderQuery(query string, provider v1alpha1.MetricProviderType, canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric, s side) (string, error) {
	return renderQueryOf(query, provider, canary, metric, s, "")
}

// renderQueryOf is renderQuery with {{ pods }} the pattern pods when it is
// not "" (a StatefulSet's ordinals, which only its status tells).
func renderQueryOf(query string, provider v1alpha1.MetricProviderType, canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric, s side, pods string) (string, error) {
	target := canary.Spec.TargetRef.Name
	switch s {
	case primarySide:
		target = canary.GetPrimaryName()
	case baselineSide:
		target = canary.GetBaselineName()
	}
	interval := metricInterval(canary, metric)
	// Each value is rendered as a marker first, found with the language's
	// string rules, then written for where it stands.
	values, names := map[string]string{}, map[string]string{}
	var markers []string
	marker := func(name, value string) string {
		m := fmt.Sprintf("SERINQUERYVAR%dZ", len(markers))
		markers = append(markers, m)
		values[m] = value
		names[m] = name
		return m
	}
	vars := make(map[string]string, len(metric.TemplateVariables))
	for _, k := range slices.Sorted(maps.Keys(metric.TemplateVariables)) {
		vars[k] = marker("variables."+k, metric.TemplateVariables[k])
	}
	funcs := template.FuncMap{
		"name":      func() string { return marker("name", canary.Name) },
		"namespace": func() string { return marker("namespace", canary.Namespace) },
		"target":    func() string { return marker("target", target) },
		// pods is a regular expression of the names of the side's pods,
		// for a worker's own metrics (pod="..." in the series), which no
		// Service names: the judge compares the canary's pods with the
		// primary's on the same query.
		"pods": func() (string, error) {
			if pods != "" {
				return marker("pods", pods), nil
			}
			ref := canary.Spec.TargetRef
			ref.Name = target
			pattern, err := podNamePattern(ref)
			if err != nil {
				return "", fmt.Errorf("{{ pods }} names the pods of a Deployment, DaemonSet or StatefulSet target, not of a %s", ref.Kind)
			}
			return marker("pods", pattern), nil
		},
		"service":   func() string { return marker("service", canary.GetServiceName()) },
		"interval":  func() string { return promDuration(interval) },
		"variables": func() map[string]string { return vars },
	}
	t, err := template.New(metric.Name).Funcs(funcs).Option("missingkey=error").Parse(query)
	if err != nil {
		return "", fmt.Errorf("query template: %w", err)
	}
	var b strings.Builder
	if err := t.Execute(&b, nil); err != nil {
		return "", fmt.Errorf("query template: %w", err)
	}
	return writeValues(b.String(), languageOf(provider), markers, values, names)
}

// writeValues replaces each marker of rendered by its value, written for
// where it stands; names are the variables' names by marker, for errors.
func writeValues(rendered string, lang queryLanguage, markers []string, values, names map[string]string) (string, error) {
	var out strings.Builder
	last := 0
	for _, p := range lang.placements(rendered, markers) {
		v := values[p.marker]
		var written string
		var err error
		if p.quote == 0 {
			written, err = tokenOnly(v, "the query outside a string literal")
		} else {
			written, err = lang.escape(v, p.quote)
		}
		if err != nil {
			return "", fmt.Errorf("query variable %s: %w: quote it in the MetricTemplate's query, or change its value", names[p.marker], err)
		}
		out.WriteString(rendered[last:p.start])
		out.WriteString(written)
		last = p.start + len(p.marker)
	}
	out.WriteString(rendered[last:])
	return out.String(), nil
}

// metricInterval is a check's range window: its interval, else the
// analysis interval.
func metricInterval(canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric) time.Duration {
	if metric.Interval != nil && metric.Interval.Duration > 0 {
		return metric.Interval.Duration
	}
	return canary.GetAnalysisInterval()
}

// promDuration formats a duration as Prometheus reads it (1m, 30s, 1500ms).
func promDuration(d time.Duration) string {
	switch {
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return fmt.Sprintf("%dms", d/time.Millisecond)
}

// EscapePromQL escapes s for the inside of a PromQL string literal: the
// characters that could end the literal or the line (backslash, double
// and single quotes, backtick, control characters) become \xNN or \uNNNN
// escapes, which PromQL reads back as the character itself in a double-
// or single-quoted string. Every other character, letters, digits and the
// punctuation of names, paths and regular expressions, is unchanged. A
// value placed outside a string literal is PromQL, as in Flagger: a
// MetricTemplate quotes the variables it matches on.
func EscapePromQL(s string) string {
	if !strings.ContainsFunc(s, promQLUnsafe) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !promQLUnsafe(r):
			b.WriteRune(r)
		case r < utf8.RuneSelf:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// promQLUnsafe reports whether r may end a PromQL string literal, or the
// line it is on.
func promQLUnsafe(r rune) bool {
	switch r {
	case '\\', '"', '\'', '`', utf8.RuneError:
		return true
	}
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}
