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

// Package dataplane is what serin knows of each data plane, the proxy or
// mesh that serves a Canary's traffic: the PromQL of the built-in checks
// on its metrics, and the HTTPRoute features it serves wrongly. One file
// holds one data plane; adding one is that file and its golden queries
// (testdata/<data plane>_<check>.promql, written by UPDATE_GOLDEN=true).
package dataplane

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/template"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// Default is the data plane of the built-in checks when neither the Canary
// (routing.dataPlane) nor the agent (--data-plane) names one: Traefik, the
// data plane serin's testbed runs and the one its presets are verified
// against.
const Default = v1alpha1.TraefikDataPlane

// DataPlane is one proxy or mesh.
type DataPlane struct {
	Name v1alpha1.DataPlane
	// Checks are the queries of the built-in checks, by check name.
	Checks map[string]Check
	// Gaps are the HTTPRoute features it serves wrongly.
	Gaps []Gap
}

// Check is the query of one built-in check on one data plane, or why that
// data plane cannot answer it.
//
// The built-in checks measure the canary's backend Service, <apex>-canary,
// with both routing providers: with gatewayapi it is the canary's backend
// of the HTTPRoute; with kubernetes (blue/green) the apex Service keeps
// selecting the primary during the analysis, so the canary's traffic is
// the one a tester or a route of your own sends to <apex>-canary, as in
// Flagger.
//
// PromQL is a Go template with {{ namespace }}, {{ service }} (the canary's
// backend Service), {{ port }} (its port), {{ workload }} (the canary
// Deployment, for a Deployment target), {{ pods }} (the regular expression
// of the canary workload's pod names) and {{ interval }} (see Vars). A
// success rate is 100 × non-5xx / all responses, the non-5xx sum counting
// as 0 when the canary answered only 5xx; a duration is the 99th
// percentile in milliseconds. No requests give no data (or NaN), which
// fails the check.
//
// Requests, for a success rate, is the number of requests the rate is of,
// over {{ interval }} (the same template): the judge weighs each value of
// the rate by it (analysis/judge.Counts).
type Check struct {
	PromQL      string
	Requests    string
	Unavailable string
}

// registry holds every data plane, by name.
var registry = map[v1alpha1.DataPlane]*DataPlane{}

// register adds a data plane; each file of the package registers its own.
func register(d DataPlane) *DataPlane {
	if _, dup := registry[d.Name]; dup {
		panic("data plane " + string(d.Name) + " registered twice")
	}
	registry[d.Name] = &d
	return &d
}

// Lookup returns the data plane of a name.
func Lookup(name v1alpha1.DataPlane) (*DataPlane, bool) {
	d, ok := registry[name]
	return d, ok
}

// Names are the names of every data plane, sorted.
func Names() []v1alpha1.DataPlane {
	return slices.Sorted(maps.Keys(registry))
}

// Parse checks the name of a data plane (the agent's --data-plane, serin
// convert's).
func Parse(name string) (v1alpha1.DataPlane, error) {
	if _, ok := registry[v1alpha1.DataPlane(name)]; ok {
		return v1alpha1.DataPlane(name), nil
	}
	names := make([]string, 0, len(registry))
	for _, n := range Names() {
		names = append(names, string(n))
	}
	return "", fmt.Errorf("data plane %q is not supported: use one of %s", name, strings.Join(names, ", "))
}

// Of returns the data plane of a Canary: its routing.dataPlane, else
// fallback (the agent's --data-plane), else Default.
func Of(canary *v1alpha1.Canary, fallback v1alpha1.DataPlane) v1alpha1.DataPlane {
	switch {
	case canary.Spec.Routing.DataPlane != "":
		return canary.Spec.Routing.DataPlane
	case fallback != "":
		return fallback
	}
	return Default
}

// Vars are the values of a check's template, each already written for
// where it stands in the query (escaped for a PromQL string literal).
type Vars struct {
	Namespace, Service string
	Port               int32
	// Interval is a PromQL duration.
	Interval string
	// Workload is the canary Deployment's name, Pods the regular
	// expression of the canary workload's pod names; empty when the
	// target has none (a Service target).
	Workload, Pods string
}

// ErrNoWorkload means a data plane whose metrics name workloads, not
// Services, cannot find the canary of a Service target.
var ErrNoWorkload = errors.New("its metrics name the canary by its workload, and a Service target has none: use a MetricTemplate")

// Query renders the PromQL of a built-in check.
func (d *DataPlane) Query(check string, v Vars) (string, error) {
	return d.render(check, v, func(c Check) string { return c.PromQL })
}

// RequestsQuery renders the PromQL of the number of requests behind a
// built-in success rate; "" when the check has none.
func (d *DataPlane) RequestsQuery(check string, v Vars) (string, error) {
	c, ok := d.Checks[check]
	if !ok {
		c, ok = appChecks[check]
	}
	if ok && c.PromQL != "" && c.Requests == "" {
		return "", nil
	}
	return d.render(check, v, func(c Check) string { return c.Requests })
}

// render renders the query of a built-in check that pick chooses.
func (d *DataPlane) render(check string, v Vars, pick func(Check) string) (string, error) {
	c, ok := d.Checks[check]
	if !ok {
		c, ok = appChecks[check]
	}
	if !ok {
		return "", fmt.Errorf("%q is not a built-in check: use %s, %s or %s, or a MetricTemplate (templateRef)",
			check, v1alpha1.RequestSuccessRateCheck, v1alpha1.RequestDurationCheck, v1alpha1.GRPCSuccessRateCheck)
	}
	if c.PromQL == "" {
		return "", fmt.Errorf("%s is not available with data plane %s: %s", check, d.Name, c.Unavailable)
	}
	orNoWorkload := func(s string) (string, error) {
		if s == "" {
			return "", ErrNoWorkload
		}
		return s, nil
	}
	funcs := template.FuncMap{
		"namespace": func() string { return v.Namespace },
		"service":   func() string { return v.Service },
		"port":      func() int32 { return v.Port },
		"interval":  func() string { return v.Interval },
		"pods":      func() (string, error) { return orNoWorkload(v.Pods) },
		"workload":  func() (string, error) { return orNoWorkload(v.Workload) },
	}
	t, err := template.New(check).Funcs(funcs).Parse(pick(c))
	if err != nil {
		return "", fmt.Errorf("built-in query of %s for %s: %w", check, d.Name, err)
	}
	var b strings.Builder
	if err := t.Execute(&b, nil); err != nil {
		if errors.Is(err, ErrNoWorkload) {
			err = ErrNoWorkload
		}
		return "", fmt.Errorf("%s is not available with data plane %s: %w", check, d.Name, err)
	}
	return b.String(), nil
}

// successRate is the percentage of non-5xx responses of a counter, and
// the number of responses it is of.
func successRate(counter, selector, non5xx string) Check {
	return Check{PromQL: successRatePromQL(counter, selector, non5xx), Requests: requests(counter, selector)}
}

// successRatePromQL is the percentage of non-5xx responses of a counter.
func successRatePromQL(counter, selector, non5xx string) string {
	return `100 * (sum(rate(` + counter + `{` + selector + `,` + non5xx + `}[{{ interval }}])) or vector(0))` +
		` / sum(rate(` + counter + `{` + selector + `}[{{ interval }}]))`
}

// requests is the number of responses of a counter over the interval.
func requests(counter, selector string) string {
	return `sum(increase(` + counter + `{` + selector + `}[{{ interval }}]))`
}

// p99 is the 99th percentile of a histogram, times scale (1000 for seconds).
func p99(histogram, selector, scale string) string {
	return scale + `histogram_quantile(0.99, sum by (le) (rate(` + histogram + `{` + selector + `}[{{ interval }}])))`
}
