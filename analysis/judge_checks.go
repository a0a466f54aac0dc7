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
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serin-dev/serin/analysis/judge"
	"github.com/serin-dev/serin/analysis/providers"
	"github.com/serin-dev/serin/api/v1alpha1"
)

// The judge (issue #47): a metric with a judge block is queried for the
// canary and for its baseline as two series over the metric's interval,
// and classified by analysis/judge; the step's judged metrics are then
// scored together (judgeStep), and the verdict is one more check of the
// step, named JudgeCheck. The baseline is <target>-baseline with
// analysis.judge.baseline (the primary's revision, pods as young as the
// canary's, on the canary's share of the traffic), else the primary: it
// serves the same requests at the same time, but its pods are older and,
// at most weights, carry more of the load.

// JudgeCheck names the judge's verdict among a step's checks.
const JudgeCheck = "judge"

// judgeSide is the side the canary is compared with: the baseline
// Deployment with analysis.judge.baseline, else the primary.
func judgeSide(canary *v1alpha1.Canary) side {
	if canary.WantsBaseline() {
		return baselineSide
	}
	return primarySide
}

// judgedCheck runs a judged metric: its thresholdRange first, as any
// check, when it has one (a hard floor); then its query for each side as
// a series, classified by judge.Classify. The check fails when the range
// does, when a series cannot be read, and when the metric has no data
// (too few values a side), as a check whose query gives no value does. A
// metric that is High or Low does not fail the check by itself: the
// step's judgement scores the judged metrics together.
func (m *Metrics) judgedCheck(ctx context.Context, canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric) MetricResult {
	res := MetricResult{Name: metric.Name}
	if metric.ThresholdRange != nil {
		if res = m.thresholdCheck(ctx, canary, metric, canarySide); !res.Passed {
			return res
		}
	}
	fail := func(format string, args ...any) MetricResult {
		res.Passed = false
		res.Message = fmt.Sprintf("metric %s: judge: ", metric.Name) + fmt.Sprintf(format, args...)
		return res
	}
	in := judge.MetricInput{Metric: judgeMetric(canary, metric)}
	var err error
	if in.Canary, in.Baseline, err = m.series(ctx, canary, metric); err != nil {
		return fail("%v", err)
	}
	r, err := judge.Classify(in)
	if err != nil {
		return fail("%v", err)
	}
	res.Judged = &in
	against := judgeSide(canary).String()
	if r.Class == judge.NoData {
		return fail("%s: no data, which fails the check as a query without values does: %s",
			strings.ReplaceAll(r.NoDataReason, "baseline", against), m.noDataHint(canary, metric))
	}
	if !res.HasValue {
		res.Value, res.HasValue = r.CanaryMean, true
	}
	res.Passed = true
	res.Message = "metric " + r.Against(against)
	return res
}

// judgeMetric is how the judge classifies a metric: its judge block, with
// the percentages as ratios, and analysis.judge's alpha.
func judgeMetric(canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric) judge.Metric {
	j := metric.Judge
	jm := judge.Metric{
		Name:      metric.Name,
		Direction: judge.Direction(j.Direction),
		Alpha:     analysisJudge(canary).GetAlpha(),
		Critical:  j.Critical,
		Unit:      builtinUnit(metric),
	}
	if j.MaxIncreasePercent != nil {
		jm.AllowedIncrease = 1 + *j.MaxIncreasePercent/100
	}
	if j.MaxDecreasePercent != nil {
		jm.AllowedDecrease = 1 - *j.MaxDecreasePercent/100
	}
	if j.Weight != nil {
		jm.Weight = float64(*j.Weight)
	}
	return jm
}

// analysisJudge is the Canary's analysis.judge; nil (the defaults) when
// unset.
func analysisJudge(canary *v1alpha1.Canary) *v1alpha1.AnalysisJudge {
	if canary.Spec.Analysis == nil {
		return nil
	}
	return canary.Spec.Analysis.Judge
}

// builtinUnit is the unit of a built-in check's values, for messages.
func builtinUnit(metric v1alpha1.CanaryMetric) string {
	switch {
	case !metric.IsBuiltin():
		return ""
	case metric.Name == v1alpha1.RequestDurationCheck:
		return "ms"
	}
	return "%"
}

// series reads a judged metric's series, the canary's and its baseline's
// (judgeSide),
// over the same range: the metric's interval up to now, truncated to the
// step, one value per analysis.judge.step, each the query with
// {{ interval }} set to the step so that the values cover distinct
// windows. A side without data has no values.
func (m *Metrics) series(ctx context.Context, canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric) (canaryValues, baselineValues []float64, err error) {
	step := analysisJudge(canary).GetStep()
	window := metric
	window.Interval = &metav1.Duration{Duration: step}
	queries, provider, timeout, err := m.seriesSource(ctx, canary, window)
	if err != nil {
		return nil, nil, err
	}
	clock := m.now
	if clock == nil {
		clock = time.Now
	}
	end := clock().Truncate(step)
	rng := providers.Range{Start: end.Add(-metricInterval(canary, metric)), End: end, Step: step}
	var sides [2][]float64
	var errs [2]error
	var wg sync.WaitGroup
	for i, query := range queries {
		wg.Go(func() { sides[i], errs[i] = m.rangeQuery(ctx, provider, timeout, query, rng) })
	}
	wg.Wait()
	return sides[0], sides[1], errors.Join(errs[:]...)
}

// rangeQuery sends a range query to its provider within timeout, as
// query does; no data is no values.
func (m *Metrics) rangeQuery(ctx context.Context, provider providers.RangeQuerier, timeout time.Duration, query string, rng providers.Range) ([]float64, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, &DeadlineError{Of: "call", After: timeout})
	defer cancel()
	values, err := provider.RangeQuery(ctx, query, rng)
	if cause := context.Cause(ctx); err != nil && cause != nil {
		return nil, cause
	}
	if errors.As(err, new(*providers.ErrNoData)) {
		return nil, nil
	}
	return values, err
}

// seriesSource returns the queries of a judged metric, the canary's then
// its baseline's (judgeSide), the provider that answers them as series and its
// timeout: a built-in check's and the agent's Prometheus, or a prometheus
// MetricTemplate's whose query tells the sides apart with {{ target }}.
// Other providers cannot be judged in this version.
func (m *Metrics) seriesSource(ctx context.Context, canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric) ([2]string, providers.RangeQuerier, time.Duration, error) {
	var queries [2]string
	switch {
	case metric.IsBuiltin():
		var provider providers.Provider
		var err error
		for i, s := range []side{canarySide, judgeSide(canary)} {
			if queries[i], provider, err = m.builtinSource(canary, metric, s); err != nil {
				return queries, nil, 0, err
			}
		}
		return queries, provider.(*providers.Prometheus), v1alpha1.DefaultMetricTimeout, nil
	case metric.TemplateRef == nil:
		return queries, nil, 0, fmt.Errorf("templateRef is required unless the name is a built-in check: %s or %s",
			v1alpha1.RequestSuccessRateCheck, v1alpha1.RequestDurationCheck)
	}
	tpl, err := m.template(ctx, canary, metric)
	if err != nil {
		return queries, nil, 0, err
	}
	name := tpl.Namespace + "/" + tpl.Name
	if t := tpl.Spec.Provider.Type; t != "" && t != v1alpha1.PrometheusProvider {
		return queries, nil, 0, fmt.Errorf("MetricTemplate %s uses the %s provider, and the judge reads series from prometheus only "+
			"(and the built-in checks): use a prometheus MetricTemplate, or remove the metric's judge block", name, t)
	}
	for i, s := range []side{canarySide, judgeSide(canary)} {
		if queries[i], err = renderQuery(tpl.Spec.Query, tpl.Spec.Provider.Type, canary, metric, s); err != nil {
			return queries, nil, 0, err
		}
	}
	if queries[0] == queries[1] {
		against := judgeSide(canary)
		return queries, nil, 0, fmt.Errorf("the query of MetricTemplate %s is the same for the canary and the %s: "+
			"the judge queries each side, so the query must select the workload with {{ target }} "+
			"(the %s's is {{ target }}-%s)", name, against, against, against)
	}
	provider, err := m.provider(ctx, canary, tpl, metricInterval(canary, metric))
	if err != nil {
		return queries, nil, 0, err
	}
	rq, ok := provider.(providers.RangeQuerier)
	if !ok {
		return queries, nil, 0, fmt.Errorf("MetricTemplate %s: its provider cannot answer range queries", name)
	}
	return queries, rq, tpl.GetTimeout(), nil
}

// judgeStep scores a step's judged metrics together (judge.Judge) and
// returns the verdict as a check named JudgeCheck: its value is the
// score, its min the pass score, and it passes only when the verdict is
// Pass. Marginal fails it too, as Fail and NoData do: serin has no
// "continue, but warn" step; analysis.threshold is what tolerates a few
// failed checks. false when no metric of the step was judged.
func judgeStep(canary *v1alpha1.Canary, results []MetricResult) (MetricResult, bool) {
	var inputs []judge.MetricInput
	for _, r := range results {
		if r.Judged != nil {
			inputs = append(inputs, *r.Judged)
		}
	}
	if len(inputs) == 0 {
		return MetricResult{}, false
	}
	cfg := analysisJudge(canary)
	pass := float64(cfg.GetPassScore())
	res := MetricResult{Name: JudgeCheck, Min: &pass}
	v, err := judge.Judge(inputs, judge.Bounds{Pass: pass, Marginal: float64(cfg.GetMarginalScore())})
	if err != nil {
		res.Message = "judge: " + err.Error()
		return res, true
	}
	for _, r := range v.Metrics {
		if r.Class != judge.NoData {
			res.Value, res.HasValue = v.Score, true
			break
		}
	}
	res.Passed = v.Class == judge.Pass
	res.Message = judgeMessage(v, judgeSide(canary).String())
	return res, true
}

// judgeMessage is the verdict in the judge's words: the score against
// its bounds, the class and the metrics that are High or Low, then each
// of those with its means, change and p-value against the side named
// against (baseline or primary), e.g.
//
//	judge: score 50 (pass >= 95, marginal >= 75): Fail — request-duration High; request-duration: canary 182 ms vs primary 121 ms (+50.4 %, p = 0.002): High
func judgeMessage(v judge.Verdict, against string) string {
	parts := []string{"judge: " + v.String()}
	for _, r := range v.Metrics {
		if r.Class == judge.High || r.Class == judge.Low {
			parts = append(parts, r.Against(against))
		}
	}
	return strings.Join(parts, "; ")
}
