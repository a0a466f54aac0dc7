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
	"fmt"
	"regexp"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/dataplane"
)

// podNamePattern is the regular expression of the names of a workload's
// pods: <deployment>-<pod-template-hash>-<suffix>, <daemonset>-<suffix>.
// Neither matches the pods of <name>-primary, whose names have one more
// dash than the pattern allows.
func podNamePattern(target v1alpha1.TargetReference) (string, error) {
	name := regexp.QuoteMeta(target.Name)
	switch target.Kind {
	case v1alpha1.DeploymentKind:
		return name + "-[a-z0-9]+-[a-z0-9]+", nil
	case v1alpha1.DaemonSetKind:
		return name + "-[a-z0-9]+", nil
	}
	return "", dataplane.ErrNoWorkload
}

// BuiltinQuery renders the PromQL of a built-in check (request-success-rate
// or request-duration) for a Canary on a data plane, its names escaped for
// PromQL string literals as a MetricTemplate's are (EscapePromQL).
func BuiltinQuery(canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric, name v1alpha1.DataPlane) (string, error) {
	return builtinQuery(canary, metric, name, canarySide)
}

// side is the workload a query reads: the canary, the primary (a soak
// judges the promoted primary; without a baseline the judge compares
// with it) or the baseline (analysis.judge.baseline).
type side int

const (
	canarySide side = iota
	primarySide
	baselineSide
)

// String names the side in the judge's words.
func (s side) String() string {
	switch s {
	case primarySide:
		return "primary"
	case baselineSide:
		return "baseline"
	}
	return "canary"
}

// builtinQuery is BuiltinQuery of one side: the canary's, or another's
// Service, pods and Deployment (<name>-primary, <name>-baseline).
func builtinQuery(canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric, name v1alpha1.DataPlane, s side) (string, error) {
	d, vars, err := builtinVars(canary, metric, name, s)
	if err != nil {
		return "", err
	}
	return d.Query(metric.Name, vars)
}

// builtinRequestsQuery is the query of the number of requests behind a
// built-in success rate, for side s, as builtinQuery; "" when the check
// is not a rate of requests or its data plane does not count them.
func builtinRequestsQuery(canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric, name v1alpha1.DataPlane, s side) (string, error) {
	if !metric.IsSuccessRate() {
		return "", nil
	}
	d, vars, err := builtinVars(canary, metric, name, s)
	if err != nil {
		return "", err
	}
	return d.RequestsQuery(metric.Name, vars)
}

// builtinVars are a built-in check's data plane and the values of its
// query for side s.
func builtinVars(canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric, name v1alpha1.DataPlane, s side) (*dataplane.DataPlane, dataplane.Vars, error) {
	d, ok := dataplane.Lookup(name)
	if !ok {
		return nil, dataplane.Vars{}, fmt.Errorf("data plane %q has no built-in checks", name)
	}
	target, service := canary.Spec.TargetRef, canary.GetCanaryServiceName()
	switch s {
	case primarySide:
		target.Name, service = canary.GetPrimaryName(), canary.GetPrimaryServiceName()
	case baselineSide:
		target.Name, service = canary.GetBaselineName(), canary.GetBaselineServiceName()
	}
	vars := dataplane.Vars{
		Namespace: EscapePromQL(canary.Namespace),
		Service:   EscapePromQL(service),
		Port:      canary.Spec.Service.Port,
		Interval:  promDuration(metricInterval(canary, metric)),
	}
	if pattern, err := podNamePattern(target); err == nil {
		vars.Pods = EscapePromQL(pattern)
	}
	if target.Kind == v1alpha1.DeploymentKind {
		vars.Workload = EscapePromQL(target.Name)
	}
	return d, vars, nil
}
