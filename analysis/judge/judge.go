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

package judge

import (
	"fmt"
	"math"
	"strconv"
)

// Direction is which change of a metric is bad.
type Direction string

const (
	// Either: a change either way is bad. The default.
	Either Direction = "Either"
	// Increase: an increase is bad, as for an error rate or a latency.
	Increase Direction = "Increase"
	// Decrease: a decrease is bad, as for a success rate.
	Decrease Direction = "Decrease"
)

// Class is the classification of a metric (Pass, High, Low or NoData) or
// of a judgement (Pass, Marginal, Fail or NoData).
type Class string

const (
	// Pass: for a metric, no bad change; for a judgement, a score of at
	// least Bounds.Pass.
	Pass Class = "Pass"
	// High: the canary is higher than the baseline, significantly and by
	// more than the metric allows, and an increase is bad.
	High Class = "High"
	// Low: the canary is lower than the baseline, significantly and by
	// more than the metric allows, and a decrease is bad.
	Low Class = "Low"
	// NoData: for a metric, too few samples (or invalid ones) to judge;
	// for a judgement, no metric with data, or a critical one without.
	NoData Class = "NoData"
	// Marginal: a judgement whose score is below Bounds.Pass but at least
	// Bounds.Marginal.
	Marginal Class = "Marginal"
	// Fail: a judgement whose score is below Bounds.Marginal, or with a
	// critical metric High or Low.
	Fail Class = "Fail"
)

// Defaults of a Metric's and of the Bounds' zero fields.
const (
	DefaultAlpha         = 0.05
	DefaultWeight        = 1.0
	DefaultPassScore     = 95.0
	DefaultMarginalScore = 75.0
)

// MinSamples is the fewest values each side needs for a metric to be
// judged. Fewer is NoData, and so are sizes with which no outcome could
// be significant at the metric's alpha (3 and 3 at 0.05: the smallest
// two-sided p-value is 2/C(6, 3) = 0.1).
const MinSamples = 3

// Metric says how to judge one metric. The zero value of a field means
// its default: use the getters.
type Metric struct {
	// Name of the metric, for the text, e.g. "latency p99".
	Name string
	// Weight of the metric in the score; 0 means 1.
	Weight float64
	// Direction is which change is bad; empty means Either.
	Direction Direction
	// AllowedIncrease is the largest ratio of the canary's mean to the
	// baseline's that is not High, at least 1: 1.01 allows 1 % more.
	// 0 means 1: any significant increase is High.
	AllowedIncrease float64
	// AllowedDecrease is the smallest ratio of the canary's mean to the
	// baseline's that is not Low, in (0, 1]: 0.99 allows 1 % less.
	// 0 means 1: any significant decrease is Low.
	AllowedDecrease float64
	// Alpha is the significance level of the test, in (0, 1); 0 means
	// 0.05.
	Alpha float64
	// Unit of the values, for the text, e.g. "ms" or "%".
	Unit string
	// Critical: the metric High or Low fails the judgement whatever the
	// score, and the metric without data makes it NoData.
	Critical bool
}

// GetWeight is the metric's weight, 1 by default.
func (m Metric) GetWeight() float64 { return orDefault(m.Weight, DefaultWeight) }

// GetDirection is the metric's bad direction, Either by default.
func (m Metric) GetDirection() Direction {
	if m.Direction == "" {
		return Either
	}
	return m.Direction
}

// GetAllowedIncrease is the metric's allowed increase ratio, 1 by
// default.
func (m Metric) GetAllowedIncrease() float64 { return orDefault(m.AllowedIncrease, 1) }

// GetAllowedDecrease is the metric's allowed decrease ratio, 1 by
// default.
func (m Metric) GetAllowedDecrease() float64 { return orDefault(m.AllowedDecrease, 1) }

// GetAlpha is the metric's significance level, 0.05 by default.
func (m Metric) GetAlpha() float64 { return orDefault(m.Alpha, DefaultAlpha) }

// Validate returns an error for a field out of its range.
func (m Metric) Validate() error {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch d := m.GetDirection(); {
	case d != Either && d != Increase && d != Decrease:
		return fmt.Errorf("direction %q: want %s, %s or %s", d, Increase, Decrease, Either)
	case !finite(m.Weight) || m.Weight < 0:
		return fmt.Errorf("weight %v: want a number >= 0", m.Weight)
	case !finite(m.AllowedIncrease) || (m.AllowedIncrease != 0 && m.AllowedIncrease < 1):
		return fmt.Errorf("allowed increase %v: want a ratio >= 1 (1.1 allows 10 %% more)", m.AllowedIncrease)
	case !finite(m.AllowedDecrease) || m.AllowedDecrease < 0 || m.AllowedDecrease > 1:
		return fmt.Errorf("allowed decrease %v: want a ratio in (0, 1] (0.9 allows 10 %% less)", m.AllowedDecrease)
	case !finite(m.Alpha) || m.Alpha < 0 || m.Alpha >= 1:
		return fmt.Errorf("alpha %v: want a significance level in (0, 1)", m.Alpha)
	}
	return nil
}

// MetricInput is a metric and its samples: the values of the canary and
// of the baseline, e.g. one per scrape interval, taken over the same time
// and traffic.
type MetricInput struct {
	Metric   Metric
	Canary   []float64
	Baseline []float64
	// CanaryCounts and BaselineCounts, for a ratio metric (a success
	// rate), are the requests behind the values, one pair a timestamp;
	// given, the test is MantelHaenszel on them instead of MannWhitney on
	// the values. Optional.
	CanaryCounts, BaselineCounts []Counts
}

// MetricResult is the classification of a metric, with what it rests on.
type MetricResult struct {
	// Metric is the metric as configured.
	Metric Metric
	// Class is Pass, High, Low or NoData.
	Class Class
	// NoDataReason says why the Class is NoData.
	NoDataReason string
	// Test is the Mann-Whitney test of the canary against the baseline;
	// zero when the Class is NoData, or when Counts is set.
	Test Result
	// Counts is the Cochran-Mantel-Haenszel test of the canary's counts
	// against the baseline's, when the input had counts; it decides then.
	Counts *CountTest
	// CanaryMean and BaselineMean are the means of the samples; zero when
	// the Class is NoData.
	CanaryMean, BaselineMean float64
	// Ratio is the effect size: the canary's mean over the baseline's
	// when that is positive; in general 1 + (canary - baseline) /
	// |baseline|, so that above 1 is always an increase; ±Inf when the
	// baseline's mean is 0 and the canary's is not, 1 when both are 0.
	// With counts, the Mantel-Haenszel ratio of the sides' shares of hits
	// (CountTest.Ratio) instead, when there is one.
	Ratio float64
	// RatioLow and RatioHigh are the 1-alpha confidence interval of Ratio
	// when it is the counts' (Interval true); the allowed ratio is held
	// against the interval's far end then, not against Ratio.
	RatioLow, RatioHigh float64
	Interval            bool
}

// Classify classifies a metric, Kayenta-style: High when the Mann-Whitney
// test (MantelHaenszel instead when the input has counts) is significant
// (p < alpha) with the canary ranking higher, the
// ratio of the means is above the allowed increase and an increase is
// bad; Low symmetrically; otherwise Pass, a significant change in the
// harmless direction or within the allowed ratio included; NoData when a
// side has fewer than MinSamples values, too few for any outcome to be
// significant (Mann-Whitney only: the counts test's power is in the
// requests, not the values), a value that is NaN or infinite, or counts
// that are not one a side per timestamp, or bad. The error is for an
// invalid Metric only.
func Classify(in MetricInput) (MetricResult, error) {
	m := in.Metric
	if err := m.Validate(); err != nil {
		return MetricResult{}, err
	}
	res := MetricResult{Metric: m, Class: NoData}
	canary, baseline := quantized(in.Canary), quantized(in.Baseline)
	n1, n2 := len(canary), len(baseline)
	withCounts := in.CanaryCounts != nil || in.BaselineCounts != nil
	test, err := MannWhitney(canary, baseline)
	switch {
	case n1 < MinSamples || n2 < MinSamples:
		res.NoDataReason = fmt.Sprintf("%d canary and %d baseline values, at least %d a side needed", n1, n2, MinSamples)
		return res, nil
	case err != nil:
		res.NoDataReason = err.Error()
		return res, nil
	case withCounts:
		counts, err := MantelHaenszel(in.CanaryCounts, in.BaselineCounts)
		if err != nil {
			res.NoDataReason = err.Error()
			return res, nil
		}
		res.Counts = &counts
	case smallestP(n1, n2) >= m.GetAlpha():
		res.NoDataReason = fmt.Sprintf("%d canary and %d baseline values cannot be significant at alpha %s",
			n1, n2, formatNumber(m.GetAlpha()))
		return res, nil
	default:
		res.Test = test
	}
	res.CanaryMean, res.BaselineMean = mean(canary), mean(baseline)
	res.Ratio = ratio(res.CanaryMean, res.BaselineMean)
	if res.Counts != nil {
		if low, high, ok := res.Counts.RatioInterval(m.GetAlpha()); ok {
			res.Ratio, res.RatioLow, res.RatioHigh, res.Interval = res.Counts.Ratio, low, high, true
		}
	}
	res.Class = Pass
	switch {
	case !res.significant():
		return res, nil
	case res.higher() && res.bad() && res.farHigh() > m.GetAllowedIncrease():
		res.Class = High
	case res.lower() && res.bad() && res.farLow() < m.GetAllowedDecrease():
		res.Class = Low
	}
	return res, nil
}

// farHigh is the highest ratio the data leave plausible: the confidence
// interval's upper end when there is one, else the ratio. A significant
// increase is held against the allowed one there: the canary passes only
// if the data show that its increase, whatever it is, is within the
// allowed one (as a non-inferiority trial is judged), not when its
// estimate merely happens to fall inside while the truth may not.
func (r MetricResult) farHigh() float64 {
	if r.Interval {
		return r.RatioHigh
	}
	return r.Ratio
}

// farLow is farHigh's counterpart for a decrease: the lowest plausible
// ratio.
func (r MetricResult) farLow() float64 {
	if r.Interval {
		return r.RatioLow
	}
	return r.Ratio
}

// significantDigits is the precision the values are compared at: a query's
// arithmetic (100 * (1 - errors/total)) leaves float noise in its last
// bits, which must not rank two equal success rates apart.
const significantDigits = 9

// quantized returns the values rounded to significantDigits (NaN and
// infinities kept, for MannWhitney to refuse).
func quantized(values []float64) []float64 {
	out := make([]float64, len(values))
	for i, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) || v == 0 {
			out[i] = v
			continue
		}
		r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', significantDigits, 64), 64)
		if err != nil {
			r = v
		}
		out[i] = r
	}
	return out
}

// significant is true when the test's p-value is below the metric's
// alpha.
func (r MetricResult) significant() bool { return r.p() < r.Metric.GetAlpha() }

// p is the p-value of the test that decided: the counts' when there are
// counts, else the Mann-Whitney test's.
func (r MetricResult) p() float64 {
	if r.Counts != nil {
		return r.Counts.P
	}
	return r.Test.P
}

// higher is true when the canary ranks higher than the baseline: U above
// its mean under no difference; with counts, more hits than expected.
func (r MetricResult) higher() bool {
	if r.Counts != nil {
		return r.Counts.Delta > 0
	}
	return r.Test.U > float64(r.Test.N1*r.Test.N2)/2
}

// lower is true when the canary ranks lower than the baseline.
func (r MetricResult) lower() bool {
	if r.Counts != nil {
		return r.Counts.Delta < 0
	}
	return r.Test.U < float64(r.Test.N1*r.Test.N2)/2
}

// bad is true when the direction the canary ranks in is a bad one for the
// metric.
func (r MetricResult) bad() bool {
	switch r.Metric.GetDirection() {
	case Increase:
		return r.higher()
	case Decrease:
		return r.lower()
	}
	return true
}

// Bounds are the scores a judgement passes with (at least Pass) and is
// marginal with (at least Marginal), from 0 to 100. The zero value of a
// field means its default, as Kayenta's: 95 and 75.
type Bounds struct {
	Pass, Marginal float64
}

// GetPass is the pass bound, 95 by default.
func (b Bounds) GetPass() float64 { return orDefault(b.Pass, DefaultPassScore) }

// GetMarginal is the marginal bound, 75 by default.
func (b Bounds) GetMarginal() float64 { return orDefault(b.Marginal, DefaultMarginalScore) }

// Validate returns an error unless 0 <= marginal <= pass <= 100, the
// defaults applied.
func (b Bounds) Validate() error {
	pass, marginal := b.GetPass(), b.GetMarginal()
	if !(0 <= marginal && marginal <= pass && pass <= 100) { // also false for NaN
		return fmt.Errorf("score bounds pass %v, marginal %v: want 0 <= marginal <= pass <= 100", pass, marginal)
	}
	return nil
}

// Verdict is the judgement of a canary against its baseline over its
// metrics.
type Verdict struct {
	// Class is Pass, Marginal, Fail or NoData.
	Class Class
	// Score is 100 times the weight of the metrics that Pass over the
	// weight of the metrics with data; 0 when none has data.
	Score float64
	// Bounds are the bounds the score was held against, the defaults
	// applied.
	Bounds Bounds
	// Metrics are the metrics' results, in the order given.
	Metrics []MetricResult
}

// Judge classifies each metric and scores the canary, Kayenta-style.
// The score is 100 * (weight of the Pass metrics) / (weight of the
// metrics with data): NoData metrics do not count. The verdict is, in
// this order: Fail when a critical metric is High or Low, whatever the
// score (the score is still reported); NoData when no metric has data;
// Fail when the score is below the marginal bound; NoData when a critical
// metric has no data (the canary cannot be shown good without it);
// Marginal when the score is below the pass bound; otherwise Pass. The
// error is for invalid bounds, an invalid metric or two metrics of one
// name; samples too few or invalid are NoData, not errors.
func Judge(metrics []MetricInput, bounds Bounds) (Verdict, error) {
	if err := bounds.Validate(); err != nil {
		return Verdict{}, err
	}
	v := Verdict{Bounds: Bounds{Pass: bounds.GetPass(), Marginal: bounds.GetMarginal()}}
	seen := make(map[string]bool, len(metrics))
	for _, in := range metrics {
		if seen[in.Metric.Name] {
			return Verdict{}, fmt.Errorf("metric %q: given twice", in.Metric.Name)
		}
		seen[in.Metric.Name] = true
		res, err := Classify(in)
		if err != nil {
			return Verdict{}, fmt.Errorf("metric %q: %w", in.Metric.Name, err)
		}
		v.Metrics = append(v.Metrics, res)
	}
	v.Score, v.Class = score(v.Metrics, v.Bounds)
	return v, nil
}

// score is the score of the classified metrics and the verdict's class,
// by the rules of Judge.
func score(results []MetricResult, b Bounds) (float64, Class) {
	var passWeight, dataWeight float64
	criticalFailed, criticalNoData := false, false
	for _, r := range results {
		w := r.Metric.GetWeight()
		switch r.Class {
		case NoData:
			criticalNoData = criticalNoData || r.Metric.Critical
			continue
		case High, Low:
			criticalFailed = criticalFailed || r.Metric.Critical
		case Pass:
			passWeight += w
		}
		dataWeight += w
	}
	s := 0.0
	if dataWeight > 0 {
		// Rounded to 1e-9 so that weights such as 0.1 + 0.2 cannot put a
		// score of 95 at 94.99999999999999.
		s = math.Round(100*passWeight/dataWeight*1e9) / 1e9
	}
	switch {
	case criticalFailed:
		return s, Fail
	case dataWeight == 0:
		return s, NoData
	case s < b.Marginal:
		return s, Fail
	case criticalNoData:
		return s, NoData
	case s < b.Pass:
		return s, Marginal
	}
	return s, Pass
}

// smallestP is the smallest two-sided p-value the test can give with n1
// and n2 distinct values: 2 / C(n1+n2, n1), U at an end of its range.
func smallestP(n1, n2 int) float64 {
	orders := 1.0
	for i := 1; i <= n2; i++ {
		orders = orders * float64(n1+i) / float64(i)
	}
	return math.Min(1, 2/orders)
}

// mean is the mean of a non-empty sample.
func mean(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// ratio is the effect size of a canary mean against a baseline mean, as
// MetricResult.Ratio.
func ratio(canary, baseline float64) float64 {
	if baseline == 0 {
		switch {
		case canary > 0:
			return math.Inf(1)
		case canary < 0:
			return math.Inf(-1)
		}
		return 1
	}
	return 1 + (canary-baseline)/math.Abs(baseline)
}

// orDefault is v, or def when v is 0.
func orDefault(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}
