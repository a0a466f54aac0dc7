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
	"github.com/serin-dev/serin/dataplane"
	"github.com/serin-dev/serin/internal/record"
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
	in, err := m.series(ctx, canary, metric)
	if err != nil {
		return fail("%v", err)
	}
	in.Metric = judgeMetric(canary, metric)
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

// maxJudgedPoints bounds a judged series (Prometheus refuses more than
// 11,000 points a query): a Growing window starts no earlier.
const maxJudgedPoints = 10000

// series reads a judged metric's series, the canary's and its baseline's
// (judgeSide), over the same range, one value per analysis.judge.step,
// each the query with {{ interval }} set to the step so that the values
// cover distinct windows. The range ends now, truncated to the step, and
// starts judgeWindow before. Only the timestamps both sides have a value
// at are kept, so that the two samples cover the same moments. For a
// built-in success rate, the number of requests behind each value is read
// too, and the input carries the counts (judge.Counts) that the judge
// tests instead of the values. A side without data has no values, and
// the other side's are all kept (no data fails the check anyway).
func (m *Metrics) series(ctx context.Context, canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric) (judge.MetricInput, error) {
	in := judge.MetricInput{}
	step := analysisJudge(canary).GetStep()
	window := metric
	window.Interval = &metav1.Duration{Duration: step}
	queries, provider, timeout, err := m.seriesSource(ctx, canary, window)
	if err != nil {
		return in, err
	}
	clock := m.now
	if clock == nil {
		clock = time.Now
	}
	end := clock().Truncate(step)
	rng := providers.Range{Start: end.Add(-judgeWindow(canary, metric, end)).Truncate(step), End: end, Step: step}
	sides := make([][]providers.Point, len(queries))
	errs := make([]error, len(queries))
	var wg sync.WaitGroup
	for i, query := range queries {
		wg.Go(func() { sides[i], errs[i] = m.rangeQuery(ctx, provider, timeout, query, rng) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return in, err
	}
	for _, side := range sides {
		if len(side) == 0 {
			// A side without data: the check says how many values each
			// side has.
			in.Canary, in.Baseline = valuesAt(sides[0], nil), valuesAt(sides[1], nil)
			return in, nil
		}
	}
	at := sameTimes(sides...)
	in.Canary, in.Baseline = valuesAt(sides[0], at), valuesAt(sides[1], at)
	if len(sides) == 4 {
		in.CanaryCounts = countsOf(in.Canary, valuesAt(sides[2], at))
		in.BaselineCounts = countsOf(in.Baseline, valuesAt(sides[3], at))
	}
	return in, nil
}

// judgeWindow is how far back a judged metric's series reaches from end:
// its interval; with analysis.judge.window Growing, from the start of
// the analysis's first step's window (its first recorded step, less the
// interval) once a step is recorded, at most maxJudgedPoints steps.
func judgeWindow(canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric, end time.Time) time.Duration {
	interval := metricInterval(canary, metric)
	cfg := analysisJudge(canary)
	rec := record.Current(&canary.Status)
	if cfg.GetWindow() != v1alpha1.JudgeWindowGrowing || rec == nil {
		return interval
	}
	since := end.Sub(rec.StartedAt.Add(-interval))
	return max(interval, min(since, maxJudgedPoints*cfg.GetStep()))
}

// sameTimes are the timestamps at which every series has a point.
func sameTimes(series ...[]providers.Point) map[int64]bool {
	seen := map[int64]int{}
	for _, s := range series {
		for _, p := range s {
			seen[p.Time.UnixMilli()]++
		}
	}
	at := map[int64]bool{}
	for t, n := range seen {
		if n == len(series) {
			at[t] = true
		}
	}
	return at
}

// valuesAt are the values of a series at the timestamps of at (all of
// them when at is nil), oldest first.
func valuesAt(series []providers.Point, at map[int64]bool) []float64 {
	var values []float64
	for _, p := range series {
		if at == nil || at[p.Time.UnixMilli()] {
			values = append(values, p.Value)
		}
	}
	return values
}

// countsOf are the requests behind a success rate's values: of total
// requests, value % did not fail (bounded to 0..total, as the rate and the
// total are two queries).
func countsOf(rates, totals []float64) []judge.Counts {
	counts := make([]judge.Counts, len(rates))
	for i, rate := range rates {
		total := max(0, totals[i])
		counts[i] = judge.Counts{Hits: min(total, max(0, rate/100*total)), Total: total}
	}
	return counts
}

// rangeQuery sends a range query to its provider within timeout, as
// query does; no data is no points.
func (m *Metrics) rangeQuery(ctx context.Context, provider providers.RangeQuerier, timeout time.Duration, query string, rng providers.Range) ([]providers.Point, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, &DeadlineError{Of: "call", After: timeout})
	defer cancel()
	points, err := provider.RangePoints(ctx, query, rng)
	if cause := context.Cause(ctx); err != nil && cause != nil {
		return nil, cause
	}
	if errors.As(err, new(*providers.ErrNoData)) {
		return nil, nil
	}
	return points, err
}

// seriesSource returns the queries of a judged metric, the canary's then
// its baseline's (judgeSide), and for a built-in success rate the numbers
// of requests of each, in the same order; the provider that answers them
// as series and its timeout: a built-in check's and the agent's
// Prometheus, or a prometheus MetricTemplate's whose query tells the
// sides apart with {{ target }}. Other providers cannot be judged in this
// version.
func (m *Metrics) seriesSource(ctx context.Context, canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric) ([]string, providers.RangeQuerier, time.Duration, error) {
	queries := make([]string, 2)
	switch {
	case metric.IsBuiltin():
		var provider providers.Provider
		var err error
		sides := []side{canarySide, judgeSide(canary)}
		for i, s := range sides {
			if queries[i], provider, err = m.builtinSource(canary, metric, s); err != nil {
				return queries, nil, 0, err
			}
		}
		for _, s := range sides {
			q, err := builtinRequestsQuery(canary, metric, dataplane.Of(canary, m.DataPlane), s)
			if err != nil || q == "" {
				break // no counts: the values are judged
			}
			queries = append(queries, q)
		}
		if len(queries) != 4 {
			queries = queries[:2]
		}
		return queries, provider.(*providers.Prometheus), v1alpha1.DefaultMetricTimeout, nil
	case metric.TemplateRef == nil:
		return queries, nil, 0, fmt.Errorf("templateRef is required unless the name is a built-in check: %s, %s, %s or %s",
			v1alpha1.RequestSuccessRateCheck, v1alpha1.RequestDurationCheck, v1alpha1.GRPCSuccessRateCheck, v1alpha1.PodRestartsCheck)
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
		pods, err := m.statefulSetPods(ctx, canary, s)
		if err != nil {
			return queries, nil, 0, err
		}
		if queries[i], err = renderQueryOf(tpl.Spec.Query, tpl.Spec.Provider.Type, canary, metric, s, pods); err != nil {
			return queries, nil, 0, err
		}
	}
	if queries[0] == queries[1] {
		against := judgeSide(canary)
		return queries, nil, 0, fmt.Errorf("the query of MetricTemplate %s is the same for the canary and the %s: "+
			"the judge queries each side, so the query must select the workload with {{ target }} "+
			"(the %s's is {{ target }}-%s) or its pods with {{ pods }}", name, against, against, against)
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
// Pass. Marginal fails it too, as Fail and NoData do: a step moves
// traffic, so only Pass may advance the weight. Kayenta's Marginal, which
// neither passes nor fails and lets the run go on, is a failed check
// below analysis.threshold: the step is judged again at the same weight.
// false when no metric of the step was judged.
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
