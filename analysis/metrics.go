package analysis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/template"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// MetricResult is the outcome of one metric check.
type MetricResult struct {
	// Name of the check.
	Name string
	// Value is the query's result, when there was one.
	Value float64
	// Passed is true when the value lies in the thresholdRange.
	Passed bool
	// Message explains a failure for events and conditions.
	Message string
}

// Metrics runs metric checks: MetricTemplates, read with Reader with their
// Secrets, and the built-in checks, sent to MetricsServer.
type Metrics struct {
	Reader client.Reader
	// MetricsServer is the address of the Prometheus the built-in checks
	// query (the agent's --metrics-server); without it they fail.
	MetricsServer string
	// DataPlane is the data plane of the Canaries that set no
	// routing.dataPlane (the agent's --data-plane); empty means
	// DefaultDataPlane.
	DataPlane v1alpha1.DataPlane
}

// Check runs one metric check of a Canary.
func (m *Metrics) Check(ctx context.Context, canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric) MetricResult {
	res := MetricResult{Name: metric.Name}
	fail := func(format string, args ...any) MetricResult {
		res.Message = fmt.Sprintf("metric %s: ", metric.Name) + fmt.Sprintf(format, args...)
		return res
	}
	query, provider, err := m.source(ctx, canary, metric)
	if err != nil {
		return fail("%v", err)
	}
	v, err := m.query(ctx, provider, query)
	var noData *ErrNoData
	switch {
	case errors.As(err, &noData) && metric.IsBuiltin():
		dataPlane := DataPlaneOf(canary, m.DataPlane)
		return fail("%v: is the canary receiving traffic through %s, and does Prometheus scrape its metrics? "+
			"(the data plane is routing.dataPlane, else the agent's --data-plane)", err, dataPlane)
	case errors.As(err, &noData):
		return fail("%v: is the canary receiving traffic?", err)
	case err != nil:
		return fail("%v", err)
	}
	res.Value = v
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

// query sends a query to its provider within the provider's timeout. A
// query that gets no answer in time fails with a *DeadlineError: the
// provider's timeout, or the deadline of ctx (the analysis step's) when that
// comes first.
func (m *Metrics) query(ctx context.Context, provider *Prometheus, query string) (float64, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, provider.Timeout, &DeadlineError{Of: "call", After: provider.Timeout})
	defer cancel()
	v, err := provider.Query(ctx, query)
	if cause := context.Cause(ctx); err != nil && cause != nil {
		return 0, cause
	}
	return v, err
}

// source returns the query of a check and the Prometheus to send it to:
// a built-in check's preset and the agent's metrics server, or a
// MetricTemplate's query and provider.
func (m *Metrics) source(ctx context.Context, canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric) (string, *Prometheus, error) {
	switch {
	case metric.IsBuiltin():
		return m.builtinSource(canary, metric)
	case metric.TemplateRef == nil:
		return "", nil, fmt.Errorf("templateRef is required unless the name is a built-in check: %s or %s",
			v1alpha1.RequestSuccessRateCheck, v1alpha1.RequestDurationCheck)
	}
	return m.templateSource(ctx, canary, metric)
}

// builtinSource is a built-in check's query for the Canary's data plane,
// sent to the agent's metrics server.
func (m *Metrics) builtinSource(canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric) (string, *Prometheus, error) {
	query, err := BuiltinQuery(canary, metric, DataPlaneOf(canary, m.DataPlane))
	if err != nil {
		return "", nil, err
	}
	if m.MetricsServer == "" {
		return "", nil, errors.New("a built-in check needs a Prometheus: start the agent with --metrics-server=<Prometheus URL>")
	}
	return query, &Prometheus{Address: m.MetricsServer, Timeout: v1alpha1.DefaultMetricTimeout}, nil
}

// templateSource is a MetricTemplate's rendered query and its provider.
func (m *Metrics) templateSource(ctx context.Context, canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric) (string, *Prometheus, error) {
	tpl := &v1alpha1.MetricTemplate{}
	ns := metric.TemplateRef.Namespace
	if ns == "" {
		ns = canary.Namespace
	}
	if err := m.Reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: metric.TemplateRef.Name}, tpl); err != nil {
		return "", nil, fmt.Errorf("failed to get MetricTemplate %s/%s: %w", ns, metric.TemplateRef.Name, err)
	}
	query, err := RenderQuery(tpl.Spec.Query, canary, metric)
	if err != nil {
		return "", nil, err
	}
	provider, err := m.provider(ctx, tpl)
	if err != nil {
		return "", nil, err
	}
	return query, provider, nil
}

// provider builds the query client of a MetricTemplate, with credentials
// from its Secret.
func (m *Metrics) provider(ctx context.Context, tpl *v1alpha1.MetricTemplate) (*Prometheus, error) {
	if t := tpl.Spec.Provider.Type; t != "" && t != v1alpha1.PrometheusProvider {
		return nil, fmt.Errorf("metric provider %q is not supported", t)
	}
	p := &Prometheus{
		Address:            tpl.Spec.Provider.Address,
		InsecureSkipVerify: tpl.Spec.Provider.InsecureSkipVerify,
		Timeout:            tpl.GetTimeout(),
	}
	if ref := tpl.Spec.Provider.SecretRef; ref != nil {
		secret := &corev1.Secret{}
		if err := m.Reader.Get(ctx, types.NamespacedName{Namespace: tpl.Namespace, Name: ref.Name}, secret); err != nil {
			return nil, fmt.Errorf("failed to get the provider secret %s/%s: %w", tpl.Namespace, ref.Name, err)
		}
		p.Username, p.Password, p.Token = string(secret.Data["username"]), string(secret.Data["password"]), string(secret.Data["token"])
		if p.Token == "" && p.Username == "" {
			return nil, fmt.Errorf("secret %s/%s has neither username/password nor token", tpl.Namespace, ref.Name)
		}
	}
	return p, nil
}

// RenderQuery renders a MetricTemplate's query with Flagger's variables:
// {{ name }}, {{ namespace }}, {{ target }}, {{ service }}, {{ interval }}
// and {{ variables.NAME }}.
func RenderQuery(query string, canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric) (string, error) {
	interval := metricInterval(canary, metric)
	vars := metric.TemplateVariables
	if vars == nil {
		vars = map[string]string{}
	}
	funcs := template.FuncMap{
		"name":      func() string { return canary.Name },
		"namespace": func() string { return canary.Namespace },
		"target":    func() string { return canary.Spec.TargetRef.Name },
		"service":   func() string { return canary.GetServiceName() },
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
	return b.String(), nil
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
