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
	"strings"
)

// String is the metric's result in one sentence, e.g.
//
//	latency p99: canary 182 ms vs baseline 121 ms (+50.4 %, p = 0.002): High
//
// with the means of the samples, the ratio of the means as a change (with
// its confidence interval when that, not the change, decided), the
// test's p-value and the class, qualified when a Pass rests on the
// direction or the allowed ratio: "Pass (significant, but lower is not
// bad)", "Pass (significant, but within the allowed +10 %)", "Pass
// (significant, but the mean is not higher)".
func (r MetricResult) String() string { return r.Against("baseline") }

// Against is String with the baseline named baseline, e.g. "primary" when
// the canary is compared with the primary:
//
//	latency p99: canary 182 ms vs primary 121 ms (+50.4 %, p = 0.002): High
func (r MetricResult) Against(baseline string) string {
	name := r.Metric.Name
	if r.Class == NoData {
		return fmt.Sprintf("%s: %s: %s", name, r.NoDataReason, r.Class)
	}
	change := formatChange(r.Ratio)
	if r.intervalDecided() {
		change = r.change()
	}
	return fmt.Sprintf("%s: canary %s vs %s %s (%s, %s): %s%s", name,
		r.value(r.CanaryMean), baseline, r.value(r.BaselineMean), change, formatP(r.p()),
		r.Class, r.qualifier())
}

// Explain is the metric's result in a longer sentence: String's, with the
// sample sizes, the test's statistic (exactly: a whole number or a half)
// and method, the Hodges-Lehmann shift, and why the class.
func (r MetricResult) Explain() string {
	name := r.Metric.Name
	if r.Metric.Critical {
		name += " (critical)"
	}
	if r.Class == NoData {
		return fmt.Sprintf("%s: %s: %s", name, r.NoDataReason, r.Class)
	}
	if c := r.Counts; c != nil {
		return fmt.Sprintf("%s: canary mean %s vs baseline mean %s, %s; "+
			"Cochran-Mantel-Haenszel over %d timestamps (canary %s of %s requests, baseline %s of %s), "+
			"chi-squared = %s, %s; %s: %s",
			name, r.value(r.CanaryMean), r.value(r.BaselineMean), r.change(),
			c.Strata, formatCount(c.CanaryHits), formatCount(c.CanaryTotal), formatCount(c.BaselineHits),
			formatCount(c.BaselineTotal), formatNumber(c.ChiSquared), formatP(c.P), r.why(), r.Class)
	}
	method := "normal approximation"
	if r.Test.Exact {
		method = "exact"
	}
	return fmt.Sprintf("%s: canary mean %s (n = %d) vs baseline mean %s (n = %d), %s; "+
		"Mann-Whitney U = %s of %d, %s (%s), Hodges-Lehmann shift %s; %s: %s",
		name, r.value(r.CanaryMean), r.Test.N1, r.value(r.BaselineMean), r.Test.N2, formatChange(r.Ratio),
		strconv.FormatFloat(r.Test.U, 'f', -1, 64), r.Test.N1*r.Test.N2, formatP(r.Test.P), method,
		withUnit(signed(r.Test.Shift, formatValue), r.Metric.Unit), r.why(), r.Class)
}

// why says why the metric is in its class, the test having run.
func (r MetricResult) why() string {
	alpha := "alpha " + formatNumber(r.Metric.GetAlpha())
	switch {
	case !r.significant():
		return "not significant at " + alpha
	case (r.Class == High || r.Class == Low) && r.allowedRatio() == 1:
		return fmt.Sprintf("significant at %s and %s is bad", alpha, r.way())
	case (r.Class == High || r.Class == Low) && r.Interval:
		return fmt.Sprintf("significant at %s, its %s reaching beyond the allowed %s, and %s is bad", alpha,
			r.confidence(), formatChange(r.allowedRatio()), r.way())
	case r.Class == High || r.Class == Low:
		return fmt.Sprintf("significant at %s, beyond the allowed %s, and %s is bad", alpha,
			formatChange(r.allowedRatio()), r.way())
	}
	return "significant at " + alpha + ", but " + r.passReason()
}

// qualifier is what String adds to a significant Pass: why it passes.
func (r MetricResult) qualifier() string {
	if r.Class != Pass || !r.significant() {
		return ""
	}
	return " (significant, but " + r.passReason() + ")"
}

// passReason says why a significant difference is a Pass: the way the
// canary ranks is harmless, or the means differ by no more than allowed.
func (r MetricResult) passReason() string {
	switch {
	case !r.bad():
		return r.way() + " is not bad"
	case r.allowedRatio() == 1:
		return "the mean is not " + r.way()
	case r.Interval:
		return "its " + r.confidence() + " within the allowed " + formatChange(r.allowedRatio())
	}
	return "within the allowed " + formatChange(r.allowedRatio())
}

// intervalDecided is true when the class rests on the confidence
// interval rather than on the estimate: a High or Low whose estimate is
// within the allowed ratio, or a significant bad change that passes
// because its whole interval is within. String shows the interval then
// only, to stay one short line (a check's message is cut at 160 bytes).
func (r MetricResult) intervalDecided() bool {
	if !r.Interval || !r.significant() || !r.bad() {
		return false
	}
	if r.higher() {
		return r.Ratio <= r.Metric.GetAllowedIncrease()
	}
	return r.Ratio >= r.Metric.GetAllowedDecrease()
}

// change is the effect as a change, with its confidence interval when
// there is one: "-1.55 %" or "-1.55 %, 95 % CI -2.6 to -0.5 %".
func (r MetricResult) change() string {
	if !r.Interval {
		return formatChange(r.Ratio)
	}
	low := signed((r.RatioLow-1)*100, formatNumber)
	return fmt.Sprintf("%s, %s %s to %s", formatChange(r.Ratio), r.confidence(), low, formatChange(r.RatioHigh))
}

// confidence names the confidence interval: "95 % CI" at alpha 0.05.
func (r MetricResult) confidence() string {
	return formatNumber((1-r.Metric.GetAlpha())*100) + " % CI"
}

// way is "higher" or "lower": where the canary ranks.
func (r MetricResult) way() string {
	if r.higher() {
		return "higher"
	}
	return "lower"
}

// allowedRatio is the metric's allowed ratio in the way the canary ranks.
func (r MetricResult) allowedRatio() float64 {
	if r.higher() {
		return r.Metric.GetAllowedIncrease()
	}
	return r.Metric.GetAllowedDecrease()
}

// value is a value of the metric with its unit.
func (r MetricResult) value(v float64) string {
	return withUnit(formatValue(v), r.Metric.Unit)
}

// String is the verdict in one line, e.g.
//
//	score 66.6 (pass >= 95, marginal >= 75): Fail — latency p99 High
//
// naming the metrics that are High or Low (critical ones so marked) and
// those without data.
func (v Verdict) String() string {
	var failed, noData []string
	for _, r := range v.Metrics {
		switch r.Class {
		case High, Low:
			name := r.Metric.Name
			if r.Metric.Critical {
				name = "critical " + name
			}
			failed = append(failed, fmt.Sprintf("%s %s", name, r.Class))
		case NoData:
			name := r.Metric.Name
			if r.Metric.Critical {
				name += " (critical)"
			}
			noData = append(noData, name)
		}
	}
	var details []string
	if len(failed) > 0 {
		details = append(details, strings.Join(failed, ", "))
	}
	if len(noData) > 0 {
		details = append(details, "no data: "+strings.Join(noData, ", "))
	}
	if len(v.Metrics) == 0 {
		details = append(details, "no metrics")
	}
	score := "score " + formatScore(v.Score)
	if v.Class == NoData && !v.hasData() {
		score = "no score"
	}
	line := fmt.Sprintf("%s (pass >= %s, marginal >= %s): %s", score,
		formatNumber(v.Bounds.Pass), formatNumber(v.Bounds.Marginal), v.Class)
	if len(details) > 0 {
		line += " — " + strings.Join(details, "; ")
	}
	return line
}

// Explain is the verdict's line followed by each metric's Explain, one a
// line, indented.
func (v Verdict) Explain() string {
	var b strings.Builder
	b.WriteString(v.String())
	for _, r := range v.Metrics {
		b.WriteString("\n  ")
		b.WriteString(r.Explain())
	}
	return b.String()
}

// hasData is true when a metric of the verdict has data.
func (v Verdict) hasData() bool {
	for _, r := range v.Metrics {
		if r.Class != NoData {
			return true
		}
	}
	return false
}

// formatNumber formats a number with three significant digits, without
// an exponent from 0.001 to 1e9 and with no trailing zeros: 0.25, 99.5,
// 182, 1234.
func formatNumber(v float64) string { return formatDigits(v, 3) }

// formatValue formats a value of a metric as formatNumber, with four
// significant digits: 109.5, 99.14.
func formatValue(v float64) string { return formatDigits(v, 4) }

// formatDigits formats a number with digits significant digits (more
// left of the point), without an exponent from 0.001 to 1e9 and with no
// trailing zeros.
func formatDigits(v float64, digits int) string {
	a := math.Abs(v)
	switch {
	case v == 0:
		return "0"
	case math.IsNaN(v) || math.IsInf(v, 0):
		return strconv.FormatFloat(v, 'g', -1, 64)
	case a < 1e-3 || a >= 1e9:
		return strconv.FormatFloat(v, 'g', digits, 64)
	}
	decimals := max(0, digits-1-int(math.Floor(math.Log10(a))))
	return trimZeros(strconv.FormatFloat(v, 'f', decimals, 64))
}

// signed puts a + before a formatted positive number.
func signed(v float64, format func(float64) string) string {
	if v > 0 {
		return "+" + format(v)
	}
	return format(v)
}

// formatChange formats a ratio as a signed percentage change: 1.5 is
// "+50 %", 0.9 "-10 %", 1 "0 %"; an infinite ratio, from a baseline of
// 0, is "up from 0" or "down from 0".
func formatChange(ratio float64) string {
	switch {
	case math.IsInf(ratio, 1):
		return "up from 0"
	case math.IsInf(ratio, -1):
		return "down from 0"
	}
	return signed((ratio-1)*100, formatNumber) + " %"
}

// formatP formats a p-value: "p = 0.254", "p < 0.001".
func formatP(p float64) string {
	if p < 0.001 {
		return "p < 0.001"
	}
	return "p = " + formatNumber(p)
}

// formatCount formats a number of requests, rounded to a whole one.
func formatCount(v float64) string { return strconv.FormatFloat(math.Round(v), 'f', 0, 64) }

// formatScore formats a score with one decimal at most, rounded down so
// that a score below a bound never shows as the bound: 94.99 is "94.9".
func formatScore(s float64) string {
	return trimZeros(strconv.FormatFloat(math.Floor(s*10)/10, 'f', 1, 64))
}

// withUnit appends a unit to a formatted value, after a space.
func withUnit(s, unit string) string {
	if unit == "" {
		return s
	}
	return s + " " + unit
}

// trimZeros drops the trailing zeros of a decimal fraction, and its point
// when nothing is left after it.
func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}
