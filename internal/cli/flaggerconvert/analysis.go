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

package flaggerconvert

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// Flagger's defaults where they differ from serin's: the converted Canary
// states them so that it behaves as the Flagger one did.
const (
	flaggerDefaultThreshold      = 1
	flaggerDefaultMaxWeight      = 100
	flaggerDefaultMetricInterval = time.Minute
)

func (c canaryConverter) analysis(in *flaggerAnalysis, path string) *v1alpha1.CanaryAnalysis {
	if in == nil {
		return nil
	}
	out := &v1alpha1.CanaryAnalysis{
		Interval:   c.interval(path+".interval", in.Interval),
		Threshold:  c.atMost(path+".threshold", in.Threshold, v1alpha1.MaxThreshold),
		Iterations: c.atMost(path+".iterations", in.Iterations, v1alpha1.MaxIterations),
	}
	if out.Threshold == 0 {
		out.Threshold = flaggerDefaultThreshold
	}
	c.steps(in, path, out)
	out.Match = c.abTestMatches(in, path)
	out.Mirror = c.mirror(in, path, len(out.Match) > 0)
	out.MirrorWeight = c.mirrorWeight(in, path, out.Mirror)
	out.SessionAffinity = c.sessionAffinity(in, path)
	out.PrimaryReadyThreshold = c.readyThreshold(path+".primaryReadyThreshold", in.PrimaryReadyThreshold)
	out.CanaryReadyThreshold = c.readyThreshold(path+".canaryReadyThreshold", in.CanaryReadyThreshold)
	interval := v1alpha1.DefaultAnalysisInterval
	if out.Interval != nil {
		interval = out.Interval.Duration
	}
	out.Metrics = c.metrics(in.Metrics, path, interval)
	out.Webhooks = c.webhooks(in.Webhooks, path)
	return out
}

// steps maps the traffic steps. Flagger runs blue/green when iterations is
// set, whatever the weights say, and prefers stepWeights to stepWeight.
func (c canaryConverter) steps(in *flaggerAnalysis, path string, out *v1alpha1.CanaryAnalysis) {
	if in.Iterations > 0 {
		ignored := "ignored by Flagger when analysis.iterations is set (blue/green)"
		if in.StepWeight > 0 {
			c.report.drop(path+".stepWeight", "%s", ignored)
		}
		if len(in.StepWeights) > 0 {
			c.report.drop(path+".stepWeights", "%s", ignored)
		}
		if in.MaxWeight > 0 {
			c.report.drop(path+".maxWeight", "%s", ignored)
		}
		if in.StepWeightPromotion > 0 {
			c.report.drop(path+".stepWeightPromotion", "%s", ignored)
		}
		return
	}
	out.StepWeightPromotion = in.StepWeightPromotion
	switch {
	case len(in.StepWeights) > 0:
		out.StepWeights = in.StepWeights
		out.MaxWeight = in.MaxWeight
		if in.StepWeight > 0 {
			c.report.drop(path+".stepWeight", "ignored by Flagger when analysis.stepWeights is set")
		}
	case in.StepWeight > 0:
		out.StepWeight = in.StepWeight
		out.MaxWeight = in.MaxWeight
		if out.MaxWeight == 0 {
			out.MaxWeight = flaggerDefaultMaxWeight
		}
	}
}

// abTestMatches maps analysis.match, an A/B test, as Flagger's gatewayapi
// router does: each match request's headers and query parameters, exact
// or by regular expression (a cookie is a regular expression on the Cookie
// header). Its uri and method, which that router ignores, and a condition
// Gateway API cannot express are reported and left out; a match request
// left with no condition is left out (it would select every request).
// routing drops them all when the Canary does not route with gatewayapi.
func (c canaryConverter) abTestMatches(in *flaggerAnalysis, path string) []v1alpha1.AnalysisMatch {
	if !present(in.Match) || string(in.Match) == "[]" {
		return nil
	}
	var requests []flaggerMatchRequest
	if err := json.Unmarshal(in.Match, &requests); err != nil {
		c.report.drop(path+".match", "not a list of match requests (%v): left out", err)
		return nil
	}
	if in.Iterations == 0 {
		c.report.drop(path+".match", "without analysis.iterations Flagger shifts weights within the matched requests; "+
			"serin's A/B test (analysis.match) counts iterations: left out, so the weights apply to every request")
		return nil
	}
	var out []v1alpha1.AnalysisMatch
	for i, m := range requests {
		field := fmt.Sprintf("%s.match[%d]", path, i)
		c.dropIstioMatchFields(field, m)
		if m.URI != nil {
			c.report.drop(field+".uri", "Flagger's gatewayapi router takes the headers and query parameters of analysis.match, not its uri: put the path in routing.match")
		}
		if m.Method != nil {
			c.report.drop(field+".method", "Flagger's gatewayapi router takes the headers and query parameters of analysis.match, not its method: put it in routing.match")
		}
		var match v1alpha1.AnalysisMatch
		match.Headers, match.QueryParams = c.headerAndQueryMatches(field, m)
		if len(match.Headers) == 0 && len(match.QueryParams) == 0 {
			c.report.drop(field, "no header or query parameter serin can match: left out, as it would send every request to the canary")
			continue
		}
		out = append(out, match)
	}
	if len(out) > 8 {
		c.report.drop(path+".match", "%d match requests: serin takes at most 8; the first 8 were kept", len(out))
		out = out[:8]
	}
	return out
}

// mirror maps analysis.mirror: Flagger's gatewayapi router mirrors during a
// blue/green analysis (iterations), as serin does; with weights, or in an
// A/B test, it is reported and left out. routing drops it when the Canary
// does not route with gatewayapi.
func (c canaryConverter) mirror(in *flaggerAnalysis, path string, abTest bool) bool {
	switch {
	case !in.Mirror:
		return false
	case in.Iterations == 0:
		c.report.drop(path+".mirror", "serin mirrors during a blue/green analysis (analysis.iterations) only: left out")
		return false
	case abTest:
		c.report.drop(path+".mirror", "serin does not mirror during an A/B test (analysis.match): left out")
		return false
	}
	return true
}

// mirrorWeight maps the share of the requests mirrored (Istio's
// mirrorPercentage under Flagger, the RequestMirror filter's percent in
// serin); it is reported and left out with a mirror left out, and above
// 100 % (which Istio refuses).
func (c canaryConverter) mirrorWeight(in *flaggerAnalysis, path string, mirrored bool) *int32 {
	switch {
	case in.MirrorWeight <= 0:
		return nil // every request, Flagger's default
	case !in.Mirror:
		c.report.drop(path+".mirrorWeight", "ignored by Flagger without analysis.mirror: left out")
		return nil
	case !mirrored:
		c.report.drop(path+".mirrorWeight", "left out with analysis.mirror")
		return nil
	case in.MirrorWeight > 100:
		c.report.drop(path+".mirrorWeight", "%d is not a percentage: left out, every request is mirrored", in.MirrorWeight)
		return nil
	}
	return ptr.To(int32(in.MirrorWeight))
}

// sessionAffinity maps analysis.sessionAffinity, which pins users while
// weights move: with iterations (Flagger ignores it there) or without a
// cookie name it is reported and left out; routing drops it when the
// Canary does not route with gatewayapi.
func (c canaryConverter) sessionAffinity(in *flaggerAnalysis, path string) *v1alpha1.SessionAffinity {
	sa := in.SessionAffinity
	switch {
	case sa == nil:
		return nil
	case in.Iterations > 0:
		c.report.drop(path+".sessionAffinity", "ignored by Flagger when analysis.iterations is set: no weights move")
		return nil
	case sa.CookieName == "":
		c.report.drop(path+".sessionAffinity", "no cookieName: left out")
		return nil
	}
	out := *sa
	if out.MaxAge < 0 {
		c.report.drop(path+".sessionAffinity.maxAge", "%d is not a lifetime: left out, the default (a day) applies", out.MaxAge)
		out.MaxAge = 0
	}
	return &out
}

// readyThreshold maps primaryReadyThreshold or canaryReadyThreshold, a
// percentage of the replicas that must be available, within serin's 1 to
// 100. Flagger ignores them for a Service target, which serin judges by its
// ready endpoints and whose API refuses them.
func (c canaryConverter) readyThreshold(field string, value *int) *int {
	switch {
	case value == nil:
		return nil
	case c.in.Spec.TargetRef.Kind == "Service":
		c.report.drop(field, "a Service target has no replicas: Flagger ignores it, serin judges the Service by its ready endpoints")
		return nil
	case *value < 1:
		c.report.drop(field, "%d%% is under serin's minimum of 1%%: converted to 1%%; serin never counts a Deployment "+
			"without an available replica as ready", *value)
		return ptr.To(1)
	case *value > 100:
		c.report.drop(field, "%d%% is over 100%%: converted to 100%%, every replica", *value)
		return ptr.To(100)
	}
	return ptr.To(*value)
}

// duration parses a Flagger duration; an unparsable one is dropped.
func (c canaryConverter) duration(field, value string) *metav1.Duration {
	if value == "" {
		return nil
	}
	d, err := time.ParseDuration(value)
	if err != nil {
		c.report.drop(field, "%q is not a duration: %v", value, err)
		return nil
	}
	return &metav1.Duration{Duration: d}
}

// Flagger takes values that serin's API server refuses (an interval of
// 500ms, a webhook timeout of 1m, 10 retries): convert brings each within
// serin's bounds and reports the change, so that the Canary it writes is
// one the API server accepts.

// interval parses an analysis or metric interval, within 1s to 24h.
func (c canaryConverter) interval(field, value string) *metav1.Duration {
	d := c.duration(field, value)
	switch {
	case d == nil:
		return nil
	case d.Duration < v1alpha1.MinAnalysisInterval:
		d.Duration = v1alpha1.MinAnalysisInterval
	case d.Duration > v1alpha1.MaxAnalysisInterval:
		d.Duration = v1alpha1.MaxAnalysisInterval
	default:
		return d
	}
	c.report.drop(field, "%s is outside serin's bounds, 1s to 24h: converted to %s", value, shortDuration(d.Duration))
	return d
}

// webhookTimeout parses a webhook's timeout: more than 0s and at most the
// bound of one call of its type, 30m for a pre-rollout, rollout or
// post-rollout hook (a load test), 30s for the others.
func (c canaryConverter) webhookTimeout(field, value string, hookType v1alpha1.HookType) *metav1.Duration {
	bound, words := v1alpha1.MaxWebhookTimeout, "30s"
	if hookType.IsLong() {
		bound, words = v1alpha1.MaxLongHookTimeout, "30m"
	}
	d := c.duration(field, value)
	switch {
	case d == nil:
		return nil
	case d.Duration <= 0:
		c.report.drop(field, "%s is outside serin's bounds, more than 0s and at most %s: left out, so the default of 10s applies", value, words)
		return nil
	case d.Duration > bound:
		c.report.drop(field, "%s is over serin's bound of one %s webhook call, %s: converted to %s", value, hookType, words, words)
		d.Duration = bound
	}
	return d
}

// atMost returns value, or max with a report when value is over it.
func (c canaryConverter) atMost(field string, value, max int) int {
	if value <= max {
		return value
	}
	c.report.drop(field, "%d is over serin's maximum of %d: converted to %d", value, max, max)
	return max
}

// shortDuration writes a duration without its zero minutes and seconds
// (24h, 1m, 30s), as a person would.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// builtinMetrics are Flagger's metrics that need no template; serin has the
// same built-in checks, under the same names.
var builtinMetrics = map[string]bool{v1alpha1.RequestSuccessRateCheck: true, v1alpha1.RequestDurationCheck: true}

func (c canaryConverter) metrics(in []flaggerMetric, path string, analysisInterval time.Duration) []v1alpha1.CanaryMetric {
	var out []v1alpha1.CanaryMetric
	for i, metric := range in {
		field := fmt.Sprintf("%s.metrics[%d]", path, i)
		switch {
		case metric.TemplateRef != nil:
			if builtinMetrics[metric.Name] {
				c.report.drop(field+".name", "Flagger runs its built-in %s check as well as the template; serin runs the "+
					"template only: add a metric named %s without templateRef for the built-in check", metric.Name, metric.Name)
			}
			out = append(out, c.templateMetric(metric, field, analysisInterval))
		case builtinMetrics[metric.Name]:
			out = append(out, c.builtinMetric(metric, field, analysisInterval))
		case metric.Query != "":
			if m, ok := c.inlineMetric(metric, field, analysisInterval); ok {
				out = append(out, m)
			}
		case legacyBuiltinMetrics[metric.Name] != "":
			builtin := legacyBuiltinMetrics[metric.Name]
			c.report.note(field+".name", "%s, a built-in check's name before Flagger 1.0: converted to the built-in %s", metric.Name, builtin)
			metric.Name = builtin
			out = append(out, c.builtinMetric(metric, field, analysisInterval))
		default:
			c.report.drop(field, "%q has neither templateRef nor query; the metric was left out", metric.Name)
		}
	}
	return out
}

func (c canaryConverter) templateMetric(in flaggerMetric, field string, analysisInterval time.Duration) v1alpha1.CanaryMetric {
	out := c.metric(in, field, analysisInterval)
	out.TemplateRef = &v1alpha1.TemplateReference{Name: in.TemplateRef.Name, Namespace: in.TemplateRef.Namespace}
	namespace := cmp.Or(in.TemplateRef.Namespace, c.in.Metadata.Namespace)
	if !c.templates[namespace+"/"+in.TemplateRef.Name] {
		c.report.note(field+".templateRef", "the MetricTemplate %s/%s is not in the input: convert it as well (serin convert -f DIRECTORY reads "+
			"every file of a folder), or the Canary's check fails until a serin MetricTemplate of that name exists", namespace, in.TemplateRef.Name)
	}
	out.TemplateVariables = in.TemplateVariables
	switch {
	case in.Threshold != nil && in.ThresholdRange != nil:
		c.report.note(field+".threshold", "ignored by Flagger when thresholdRange is set; left out")
	case in.Threshold != nil:
		// Flagger fails a template's value above its deprecated threshold.
		out.ThresholdRange = &v1alpha1.ThresholdRange{Max: in.Threshold}
	}
	if in.Query != "" {
		c.report.drop(field+".query", "ignored by Flagger when templateRef is set")
	}
	return out
}

// builtinMetric converts one of Flagger's built-in checks to serin's. Its
// deprecated threshold is the lowest success rate, or the highest duration
// in milliseconds, when thresholdRange is not set.
func (c canaryConverter) builtinMetric(in flaggerMetric, field string, analysisInterval time.Duration) v1alpha1.CanaryMetric {
	out := c.metric(in, field, analysisInterval)
	switch {
	case in.Threshold != nil && in.ThresholdRange != nil:
		c.report.note(field+".threshold", "ignored by Flagger when thresholdRange is set; left out")
	case in.Threshold != nil && in.Name == v1alpha1.RequestSuccessRateCheck:
		out.ThresholdRange = &v1alpha1.ThresholdRange{Min: in.Threshold}
	case in.Threshold != nil:
		out.ThresholdRange = &v1alpha1.ThresholdRange{Max: in.Threshold}
	}
	if in.Query != "" {
		c.report.drop(field+".query", "inline queries need a MetricTemplate: put the query of %q in a "+
			"MetricTemplate and reference it with templateRef; the built-in check was converted", in.Name)
	}
	if len(in.TemplateVariables) > 0 {
		c.report.drop(field+".templateVariables", "used by templates only")
	}
	return out
}

// metric converts what templates and built-in checks share: the name, the
// range and the interval.
func (c canaryConverter) metric(in flaggerMetric, field string, analysisInterval time.Duration) v1alpha1.CanaryMetric {
	out := v1alpha1.CanaryMetric{Name: in.Name, Interval: c.interval(field+".interval", in.Interval)}
	if in.Interval == "" && analysisInterval != flaggerDefaultMetricInterval {
		// Flagger's metric interval defaults to 1m, serin's to the analysis interval.
		out.Interval = &metav1.Duration{Duration: flaggerDefaultMetricInterval}
	}
	if in.ThresholdRange != nil {
		out.ThresholdRange = &v1alpha1.ThresholdRange{Min: in.ThresholdRange.Min, Max: in.ThresholdRange.Max}
	}
	return out
}

// builtinDataPlanes are the Flagger providers whose built-in checks serin
// has: their metrics are the same data plane's (Contour names its Envoy
// clusters alike for its HTTPProxies and for HTTPRoutes). Flagger's kubernetes and
// gatewayapi providers query the pods' own http_request_duration_seconds,
// as serin's application data plane does.
var builtinDataPlanes = map[string]v1alpha1.DataPlane{
	"istio":      v1alpha1.IstioDataPlane,
	"traefik":    v1alpha1.TraefikDataPlane,
	"contour":    v1alpha1.ContourDataPlane,
	"kuma":       v1alpha1.KumaDataPlane,
	"linkerd":    v1alpha1.LinkerdDataPlane,
	"kubernetes": v1alpha1.ApplicationDataPlane,
	"gatewayapi": v1alpha1.ApplicationDataPlane,
}

// dataPlane is the data plane of the converted built-in checks: the one of
// Flagger's provider, or none (the agent's --data-plane) when serin cannot
// tell which data plane Flagger's provider queried.
func (c canaryConverter) dataPlane(analysis *v1alpha1.CanaryAnalysis) v1alpha1.DataPlane {
	if analysis == nil || !slices.ContainsFunc(analysis.Metrics, func(m v1alpha1.CanaryMetric) bool { return m.IsBuiltin() }) {
		return ""
	}
	provider := c.in.Spec.Provider
	if dataPlane, ok := builtinDataPlanes[baseProvider(provider)]; ok { // gatewayapi:v1
		return dataPlane
	}
	if c.opts.DataPlane != "" {
		return c.opts.DataPlane
	}
	if c.ingressToGateway() {
		// The traffic leaves the ingress controller for the Gateway: its
		// proxy's metrics are the ones left to measure the canary by.
		c.report.note("spec.provider", "the built-in checks query the proxy that serves the Gateway %s, no longer %s's: "+
			"routing.dataPlane is left to the agent's --data-plane (serin convert --data-plane sets it)", gatewayName(*c.opts.Gateway), provider)
		return ""
	}
	which := fmt.Sprintf("provider %s", provider)
	if provider == "" {
		which = "an unset provider"
	}
	c.report.drop("spec.provider", "the built-in checks query the metrics of the data plane that serves the canary, "+
		"which %s does not name: set routing.dataPlane (traefik, envoy-gateway, istio, nginx-gateway-fabric, cilium, contour, kuma, linkerd or application), "+
		"or the agent's --data-plane applies (serin convert --data-plane sets it)", which)
	return ""
}

// webhookTypes are Flagger's hook types; serin has the same ones.
var webhookTypes = map[string]v1alpha1.HookType{
	"":                         v1alpha1.RolloutHook,
	"rollout":                  v1alpha1.RolloutHook,
	"pre-rollout":              v1alpha1.PreRolloutHook,
	"post-rollout":             v1alpha1.PostRolloutHook,
	"confirm-rollout":          v1alpha1.ConfirmRolloutHook,
	"confirm-traffic-increase": v1alpha1.ConfirmTrafficIncreaseHook,
	"confirm-promotion":        v1alpha1.ConfirmPromotionHook,
	"rollback":                 v1alpha1.RollbackHook,
	"event":                    v1alpha1.EventHook,
}

func (c canaryConverter) webhooks(in []flaggerWebhook, path string) []v1alpha1.CanaryWebhook {
	var out []v1alpha1.CanaryWebhook
	for i, hook := range in {
		field := fmt.Sprintf("%s.webhooks[%d]", path, i)
		hookType, known := webhookTypes[hook.Type]
		if !known {
			c.report.drop(field+".type", "%q is not a webhook type; the webhook was left out", hook.Type)
			continue
		}
		if hook.MuteAlert {
			c.report.drop(field+".muteAlert", "muting a webhook's alerts is not supported")
		}
		out = append(out, v1alpha1.CanaryWebhook{
			Name:     hook.Name,
			Type:     hookType,
			URL:      hook.URL,
			Timeout:  c.webhookTimeout(field+".timeout", hook.Timeout, hookType),
			Retries:  c.atMost(field+".retries", hook.Retries, v1alpha1.MaxWebhookRetries),
			Metadata: hook.Metadata,
		})
	}
	return out
}
