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
	"math"
	"testing"
)

// The classification of a metric: direction, allowed ratios, NoData, with
// the sentence that says why.
func TestClassify(t *testing.T) {
	base := series(20, 100, 1) // 100..119, mean 109.5
	latency := Metric{Name: "latency p99", Unit: "ms", Direction: Increase}
	// R's ?wilcox.test example (p = 0.254) and endmemo's second example
	// (p = 0.00136), see TestMannWhitney_PublishedValues.
	rX := []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}
	rY := []float64{1.15, 0.88, 0.90, 0.74, 1.21}
	tests := map[string]struct {
		metric           Metric
		canary, baseline []float64
		wantClass        Class
		wantString       string
	}{
		"increase, bad: High": {metric: latency, canary: series(20, 150, 1), baseline: base, wantClass: High,
			wantString: "latency p99: canary 159.5 ms vs baseline 109.5 ms (+45.7 %, p < 0.001): High"},
		"decrease where an increase is bad: Pass, reported": {metric: latency, canary: series(20, 50, 1), baseline: base,
			wantClass:  Pass,
			wantString: "latency p99: canary 59.5 ms vs baseline 109.5 ms (-45.7 %, p < 0.001): Pass (significant, but lower is not bad)"},
		"increase, either way bad: High": {metric: Metric{Name: "cpu"}, canary: series(20, 150, 1), baseline: base,
			wantClass: High, wantString: "cpu: canary 159.5 vs baseline 109.5 (+45.7 %, p < 0.001): High"},
		"decrease, either way bad: Low": {metric: Metric{Name: "cpu"}, canary: series(20, 50, 1), baseline: base,
			wantClass: Low, wantString: "cpu: canary 59.5 vs baseline 109.5 (-45.7 %, p < 0.001): Low"},
		"significant increase within the allowed ratio: Pass": {
			metric: Metric{Name: "latency p50", Unit: "ms", Direction: Increase, AllowedIncrease: 1.01},
			canary: series(20, 100.5, 0.01), baseline: series(20, 100, 0.01), wantClass: Pass,
			wantString: "latency p50: canary 100.6 ms vs baseline 100.1 ms (+0.5 %, p < 0.001): Pass (significant, but within the allowed +1 %)"},
		"significant increase beyond the allowed ratio: High": {
			metric: Metric{Name: "latency p50", Unit: "ms", Direction: Increase, AllowedIncrease: 1.004},
			canary: series(20, 100.5, 0.01), baseline: series(20, 100, 0.01), wantClass: High,
			wantString: "latency p50: canary 100.6 ms vs baseline 100.1 ms (+0.5 %, p < 0.001): High"},
		"success rate down beyond the allowed ratio: Low": {
			metric: Metric{Name: "success rate", Unit: "%", Direction: Decrease, AllowedDecrease: 0.99},
			canary: series(20, 90, 0.1), baseline: series(20, 99, 0.01), wantClass: Low,
			wantString: "success rate: canary 90.95 % vs baseline 99.1 % (-8.22 %, p < 0.001): Low"},
		"success rate up: Pass": {
			metric: Metric{Name: "success rate", Unit: "%", Direction: Decrease, AllowedDecrease: 0.99},
			canary: series(20, 99.5, 0.01), baseline: series(20, 99, 0.01), wantClass: Pass,
			wantString: "success rate: canary 99.6 % vs baseline 99.1 % (+0.505 %, p < 0.001): Pass (significant, but higher is not bad)"},
		"ranks higher, mean lower: Pass": {metric: latency,
			canary: []float64{2, 2, 2, 2, 2, 2}, baseline: []float64{1, 1, 1, 1, 1, 100}, wantClass: Pass,
			wantString: "latency p99: canary 2 ms vs baseline 17.5 ms (-88.6 %, p = 0.0405): Pass (significant, but the mean is not higher)"},
		"not significant: Pass": {metric: latency, canary: rX, baseline: rY, wantClass: Pass,
			wantString: "latency p99: canary 1.313 ms vs baseline 0.976 ms (+34.5 %, p = 0.254): Pass"},
		"significant at 0.01": {metric: Metric{Name: "queue", Alpha: 0.01, Direction: Increase},
			canary: []float64{1233, 4356, 987, 39999, 1111, 200000}, baseline: []float64{1, 5, 9, 24, 56, 21, 3, 7, 21, 4},
			wantClass: High, wantString: "queue: canary 41281 vs baseline 15.1 (+273284 %, p = 0.00136): High"},
		"identical samples: Pass, p = 1": {metric: latency, canary: base, baseline: base, wantClass: Pass,
			wantString: "latency p99: canary 109.5 ms vs baseline 109.5 ms (0 %, p = 1): Pass"},
		"errors where the baseline has none: High": {metric: Metric{Name: "error rate", Direction: Increase},
			canary: []float64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, baseline: make([]float64, 20),
			wantClass: High, wantString: "error rate: canary 0.5 vs baseline 0 (up from 0, p < 0.001): High"},
		"2 canary values: NoData": {metric: latency, canary: []float64{1, 2}, baseline: base, wantClass: NoData,
			wantString: "latency p99: 2 canary and 20 baseline values, at least 3 a side needed: NoData"},
		"no baseline: NoData": {metric: latency, canary: base, wantClass: NoData,
			wantString: "latency p99: 20 canary and 0 baseline values, at least 3 a side needed: NoData"},
		"3 and 3 cannot be significant at 0.05: NoData": {metric: latency, canary: []float64{10, 11, 12},
			baseline: []float64{1, 2, 3}, wantClass: NoData,
			wantString: "latency p99: 3 canary and 3 baseline values cannot be significant at alpha 0.05: NoData"},
		"3 and 5 can be: High": {metric: latency, canary: []float64{10, 11, 12}, baseline: []float64{1, 2, 3, 4, 5},
			wantClass: High, wantString: "latency p99: canary 11 ms vs baseline 3 ms (+267 %, p = 0.0357): High"},
		"NaN: NoData": {metric: latency, canary: []float64{1, 2, math.NaN()}, baseline: base, wantClass: NoData,
			wantString: "latency p99: canary[2] is NaN: not a finite number: NoData"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Classify(MetricInput{Metric: tt.metric, Canary: tt.canary, Baseline: tt.baseline})
			if err != nil {
				t.Fatal(err)
			}
			if got.Class != tt.wantClass || got.String() != tt.wantString {
				t.Errorf("got %s\n%s\nwant %s\n%s", got.Class, got, tt.wantClass, tt.wantString)
			}
		})
	}
}

func TestClassify_InvalidMetric(t *testing.T) {
	base := series(5, 1, 1)
	tests := map[string]struct {
		metric  Metric
		wantErr string
	}{
		"unknown direction": {metric: Metric{Direction: "Up"},
			wantErr: `direction "Up": want Increase, Decrease or Either`},
		"negative weight": {metric: Metric{Weight: -1}, wantErr: "weight -1: want a number >= 0"},
		"allowed increase below 1": {metric: Metric{AllowedIncrease: 0.9},
			wantErr: "allowed increase 0.9: want a ratio >= 1 (1.1 allows 10 % more)"},
		"allowed decrease above 1": {metric: Metric{AllowedDecrease: 1.1},
			wantErr: "allowed decrease 1.1: want a ratio in (0, 1] (0.9 allows 10 % less)"},
		"alpha 1": {metric: Metric{Alpha: 1}, wantErr: "alpha 1: want a significance level in (0, 1)"},
		"NaN alpha": {metric: Metric{Alpha: math.NaN()},
			wantErr: "alpha NaN: want a significance level in (0, 1)"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Classify(MetricInput{Metric: tt.metric, Canary: base, Baseline: base})
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("got error %v, want %s", err, tt.wantErr)
			}
		})
	}
}

// The score, the bounds and the verdict, with its one-line summary.
func TestJudge(t *testing.T) {
	passes := func(names ...string) []MetricInput {
		var ins []MetricInput
		for _, name := range names {
			ins = append(ins, makeInput(name).Obj())
		}
		return ins
	}
	tests := map[string]struct {
		metrics    []MetricInput
		bounds     Bounds
		wantClass  Class
		wantScore  float64
		wantString string
	}{
		"every metric passes": {metrics: passes("a", "b", "c"), wantClass: Pass, wantScore: 100,
			wantString: "score 100 (pass >= 95, marginal >= 75): Pass"},
		"one of three High: Fail": {metrics: append(passes("a", "b"), makeInput("c").High().Obj()),
			wantClass: Fail, wantScore: 200.0 / 3,
			wantString: "score 66.6 (pass >= 95, marginal >= 75): Fail — c High"},
		"19 of 20: the pass bound, Pass": {
			metrics: append(passes("1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16",
				"17", "18", "19"), makeInput("20").High().Obj()),
			wantClass: Pass, wantScore: 95,
			wantString: "score 95 (pass >= 95, marginal >= 75): Pass — 20 High"},
		"3 of 4: the marginal bound, Marginal": {metrics: append(passes("a", "b", "c"), makeInput("d").Low().Obj()),
			wantClass: Marginal, wantScore: 75,
			wantString: "score 75 (pass >= 95, marginal >= 75): Marginal — d Low"},
		"weights": {metrics: []MetricInput{makeInput("a").Weight(3).Obj(), makeInput("b").High().Obj()},
			wantClass: Marginal, wantScore: 75,
			wantString: "score 75 (pass >= 95, marginal >= 75): Marginal — b High"},
		// 100 * (0.1 + 0.35) / (0.1 + 0.35 + 0.15) is 74.99999999999999
		// in float64.
		"weights that add up inexactly still reach the bound": {metrics: []MetricInput{
			makeInput("a").Weight(0.1).Obj(), makeInput("b").Weight(0.35).Obj(), makeInput("c").Weight(0.15).High().Obj()},
			wantClass: Marginal, wantScore: 75,
			wantString: "score 75 (pass >= 95, marginal >= 75): Marginal — c High"},
		"bounds of one's own": {metrics: append(passes("a"), makeInput("b").High().Obj()),
			bounds: Bounds{Pass: 50, Marginal: 25}, wantClass: Pass, wantScore: 50,
			wantString: "score 50 (pass >= 50, marginal >= 25): Pass — b High"},
		"a critical metric High fails whatever the score": {
			metrics: append(passes("a", "b", "c"), makeInput("d").High().Critical().Obj()),
			bounds:  Bounds{Pass: 50, Marginal: 25}, wantClass: Fail, wantScore: 75,
			wantString: "score 75 (pass >= 50, marginal >= 25): Fail — critical d High"},
		"NoData is left out of the score": {metrics: append(passes("a", "b"), makeInput("c").NoData().Obj()),
			wantClass: Pass, wantScore: 100,
			wantString: "score 100 (pass >= 95, marginal >= 75): Pass — no data: c"},
		"every metric NoData: NoData, not Pass": {
			metrics:   []MetricInput{makeInput("a").NoData().Obj(), makeInput("b").NoData().Obj()},
			wantClass: NoData, wantScore: 0,
			wantString: "no score (pass >= 95, marginal >= 75): NoData — no data: a, b"},
		"no metrics: NoData": {wantClass: NoData, wantScore: 0,
			wantString: "no score (pass >= 95, marginal >= 75): NoData — no metrics"},
		"a critical metric NoData: NoData, not Pass": {
			metrics:   append(passes("a", "b"), makeInput("c").NoData().Critical().Obj()),
			wantClass: NoData, wantScore: 100,
			wantString: "score 100 (pass >= 95, marginal >= 75): NoData — no data: c (critical)"},
		"a critical metric NoData and a failing score: Fail": {
			metrics: append(passes("a"), makeInput("b").High().Obj(), makeInput("c").Low().Obj(),
				makeInput("d").NoData().Critical().Obj()),
			wantClass: Fail, wantScore: 100.0 / 3,
			wantString: "score 33.3 (pass >= 95, marginal >= 75): Fail — b High, c Low; no data: d (critical)"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Judge(tt.metrics, tt.bounds)
			if err != nil {
				t.Fatal(err)
			}
			if got.Class != tt.wantClass || math.Abs(got.Score-tt.wantScore) > 1e-6 || got.String() != tt.wantString {
				t.Errorf("got %s, score %v: %s\nwant %s, score %v: %s", got.Class, got.Score, got, tt.wantClass,
					tt.wantScore, tt.wantString)
			}
			if len(got.Metrics) != len(tt.metrics) {
				t.Errorf("got %d metric results, want %d", len(got.Metrics), len(tt.metrics))
			}
		})
	}
}

func TestJudge_Errors(t *testing.T) {
	tests := map[string]struct {
		metrics []MetricInput
		bounds  Bounds
		wantErr string
	}{
		"pass bound below the default marginal one": {bounds: Bounds{Pass: 70},
			wantErr: "score bounds pass 70, marginal 75: want 0 <= marginal <= pass <= 100"},
		"pass bound above 100": {bounds: Bounds{Pass: 101},
			wantErr: "score bounds pass 101, marginal 75: want 0 <= marginal <= pass <= 100"},
		"NaN bound": {bounds: Bounds{Marginal: math.NaN()},
			wantErr: "score bounds pass 95, marginal NaN: want 0 <= marginal <= pass <= 100"},
		"invalid metric": {metrics: []MetricInput{{Metric: Metric{Name: "a", AllowedIncrease: 0.5}}},
			wantErr: `metric "a": allowed increase 0.5: want a ratio >= 1 (1.1 allows 10 % more)`},
		"one name twice": {metrics: []MetricInput{makeInput("a").Obj(), makeInput("a").High().Obj()},
			wantErr: `metric "a": given twice`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Judge(tt.metrics, tt.bounds)
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("got error %v, want %s", err, tt.wantErr)
			}
		})
	}
}

// inputBuilder builds a MetricInput for the tests: a metric that passes
// (the same samples each side) unless told otherwise.
type inputBuilder struct{ in MetricInput }

func makeInput(name string) *inputBuilder {
	return &inputBuilder{MetricInput{Metric: Metric{Name: name}, Canary: series(10, 100, 1), Baseline: series(10, 100, 1)}}
}

// High makes the canary higher than the baseline by half.
func (b *inputBuilder) High() *inputBuilder { b.in.Canary = series(10, 150, 1); return b }

// Low makes the canary lower than the baseline by half.
func (b *inputBuilder) Low() *inputBuilder { b.in.Canary = series(10, 50, 1); return b }

// NoData leaves the canary two values.
func (b *inputBuilder) NoData() *inputBuilder { b.in.Canary = b.in.Canary[:2]; return b }

func (b *inputBuilder) Weight(w float64) *inputBuilder { b.in.Metric.Weight = w; return b }

func (b *inputBuilder) Critical() *inputBuilder { b.in.Metric.Critical = true; return b }

func (b *inputBuilder) Obj() MetricInput { return b.in }

// series is n values from from, step apart.
func series(n int, from, step float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = from + float64(i)*step
	}
	return xs
}

// Float noise is no difference: two success rates of 100 % that a query's
// arithmetic leaves one bit apart tie (seen on the testbed: "Low
// (-1.11e-14 %, p = 0.0131)" rolled a good release back).
func TestClassify_FloatNoiseTies(t *testing.T) {
	canary := []float64{100, 99.99999999999999, 100, 99.99999999999999, 100, 99.99999999999999, 100, 99.99999999999999}
	baseline := []float64{100, 100, 100, 100, 100, 100, 100, 100}
	res, err := Classify(MetricInput{Metric: Metric{Name: "request-success-rate", Direction: Decrease}, Canary: canary, Baseline: baseline})
	if err != nil {
		t.Fatal(err)
	}
	if res.Class != Pass || res.Test.P != 1 {
		t.Errorf("Classify = %s (p = %g), want Pass with p = 1: %s", res.Class, res.Test.P, res.Explain())
	}
}
