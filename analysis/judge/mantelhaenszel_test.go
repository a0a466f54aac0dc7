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
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// R's own examples of mantelhaen.test (?mantelhaen.test, R 4.x), with
// their printed results:
//
//	mantelhaen.test(Rabbits)        Mantel-Haenszel X-squared = 3.9286, df = 1, p-value = 0.04747
//	mantelhaen.test(UCBAdmissions)  Mantel-Haenszel X-squared = 1.4269, df = 1, p-value = 0.2323
//
// The first table of a stratum is the "canary" row: hits in its first
// column.
func TestMantelHaenszel_PublishedValues(t *testing.T) {
	tests := map[string]struct {
		canary, baseline []Counts
		wantChi, wantP   float64
		wantDelta        float64
	}{
		// Rabbits: Delay None (canary) / 1.5h (baseline), Cured (hit) /
		// Died, five penicillin levels.
		"R Rabbits": {
			canary:   []Counts{{0, 6}, {3, 6}, {6, 6}, {5, 6}, {2, 2}},
			baseline: []Counts{{0, 5}, {0, 6}, {2, 6}, {6, 6}, {5, 5}},
			wantChi:  3.9286, wantP: 0.04747, wantDelta: 3,
		},
		// UCBAdmissions: Male (canary) / Female, Admitted (hit) /
		// Rejected, departments A to F.
		"R UCBAdmissions": {
			canary:   []Counts{{512, 825}, {353, 560}, {120, 325}, {138, 417}, {53, 191}, {22, 373}},
			baseline: []Counts{{89, 108}, {17, 25}, {202, 593}, {131, 375}, {94, 393}, {24, 341}},
			wantChi:  1.4269, wantP: 0.2323, wantDelta: -15.357,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := MantelHaenszel(tt.canary, tt.baseline)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got.ChiSquared-tt.wantChi) > 5e-5 || math.Abs(got.P-tt.wantP) > 5e-5 ||
				math.Abs(got.Delta-tt.wantDelta) > 5e-4 {
				t.Errorf("chi-squared %v, p %v, delta %v; R: %v, %v, %v", got.ChiSquared, got.P, got.Delta,
					tt.wantChi, tt.wantP, tt.wantDelta)
			}
		})
	}
}

// A stratum that tells nothing (a side with no requests, or one outcome
// only) is left out; nothing to compare is p = 1; bad counts are errors.
func TestMantelHaenszel_EdgeCases(t *testing.T) {
	got, err := MantelHaenszel([]Counts{{0, 0}, {50, 50}, {3, 10}}, []Counts{{5, 10}, {80, 80}, {9, 10}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Strata != 1 || got.CanaryTotal != 10 || got.BaselineTotal != 10 {
		t.Errorf("strata %d, totals %v and %v: want only the third stratum", got.Strata, got.CanaryTotal, got.BaselineTotal)
	}
	all, err := MantelHaenszel([]Counts{{100, 100}}, []Counts{{200, 200}})
	if err != nil || all.P != 1 || all.Strata != 0 {
		t.Errorf("every request a hit: %+v, %v; want p 1, no stratum", all, err)
	}
	for name, c := range map[string][]Counts{
		"more hits than requests": {{11, 10}},
		"negative":                {{-1, 10}},
		"NaN":                     {{math.NaN(), 10}},
	} {
		if _, err := MantelHaenszel(c, []Counts{{1, 10}}); !errors.Is(err, ErrBadCounts) {
			t.Errorf("%s: error %v, want ErrBadCounts", name, err)
		}
	}
	if _, err := MantelHaenszel([]Counts{{1, 2}}, nil); err == nil || !strings.Contains(err.Error(), "1 canary and 0 baseline") {
		t.Errorf("unequal lengths: error %v", err)
	}
}

// Why counts: a fault that comes and goes hits both sides alike, and a
// regression of +1.5 points under it is plain in the requests while the
// per-step rates, each of ~100 requests, overlap. The same data, given as
// values only, is not significant to Mann-Whitney; given with its counts,
// it is Low. Before the fault (4 timestamps) the canary fails 1.5 % of 100
// requests and the baseline none of 200; then the fault fails 1 to 8 % of
// every side's requests, moving from one timestamp to the next, and the
// canary 1.5 % more (the baseline's 200 requests a timestamp, the
// canary's 100).
func TestClassify_CountsCancelASharedFault(t *testing.T) {
	fault := []float64{0, 0, 0, 0, 2, 8, 5, 1, 7, 3, 6, 4, 8, 2, 5, 3}
	var canary, baseline []Counts
	var canaryRates, baselineRates []float64
	for i, f := range fault {
		// Rounded as requests are: the canary's extra errors alternate
		// 1 and 2 a timestamp (1.5 %).
		c := Counts{Hits: 100 - f - 1 - float64(i%2), Total: 100}
		b := Counts{Hits: 200 - 2*f, Total: 200}
		canary, baseline = append(canary, c), append(baseline, b)
		canaryRates = append(canaryRates, 100*c.Hits/c.Total)
		baselineRates = append(baselineRates, 100*b.Hits/b.Total)
	}
	metric := Metric{Name: "request-success-rate", Unit: "%", Direction: Decrease, AllowedDecrease: 0.99}
	values, err := Classify(MetricInput{Metric: metric, Canary: canaryRates, Baseline: baselineRates})
	if err != nil {
		t.Fatal(err)
	}
	counts, err := Classify(MetricInput{Metric: metric, Canary: canaryRates, Baseline: baselineRates,
		CanaryCounts: canary, BaselineCounts: baseline})
	if err != nil {
		t.Fatal(err)
	}
	if values.Class != Pass || counts.Class != Low {
		t.Errorf("values only: %s; with counts: %s; want Pass, then Low", values, counts)
	}
	want := "request-success-rate: canary 95.12 % vs baseline 96.62 % (-1.55 %, p = 0.0131): Low"
	if got := counts.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := counts.Explain(); !strings.Contains(got, "Cochran-Mantel-Haenszel over 16 timestamps (canary 1522 of 1600 requests, baseline 3092 of 3200), chi-squared = 6.15, p = 0.0131") {
		t.Errorf("Explain() = %q", got)
	}
}

// The Mantel-Haenszel ratio and Greenland and Robins' variance of its
// logarithm. The University Group Diabetes Program's tolbutamide data, in
// two age strata (deaths of patients; Rothman and Greenland, Modern
// Epidemiology, where the pooled risk ratio is 1.33): here the deaths are
// the hits, tolbutamide the canary. The variance and the 90 % limits are
// the estimator's formula worked by hand (to 1e-9 with a calculator: the
// ratio 14.4664/10.9134, the variance 10.5893/157.880). With one stratum
// the variance is Katz's of a single table, 1/a - 1/n1 + 1/c - 1/n2.
func TestMantelHaenszel_RatioAndItsInterval(t *testing.T) {
	got, err := MantelHaenszel([]Counts{{8, 106}, {22, 98}}, []Counts{{5, 120}, {16, 85}})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.Ratio-1.3255553241551052) > 1e-9 || math.Abs(got.LogRatioVariance-0.06707148364941264) > 1e-9 {
		t.Errorf("ratio %v, variance of its log %v; want 1.32556, 0.0670715", got.Ratio, got.LogRatioVariance)
	}
	if fmt.Sprintf("%.2f", got.Ratio) != "1.33" {
		t.Errorf("ratio %.2f, the book's 1.33", got.Ratio)
	}
	low, high, ok := got.RatioInterval(0.1)
	if !ok || math.Abs(low-0.86575321) > 1e-6 || math.Abs(high-2.02955865) > 1e-6 {
		t.Errorf("90 %% interval %v to %v (%v), want 0.865753 to 2.029559", low, high, ok)
	}
	one, err := MantelHaenszel([]Counts{{8, 106}}, []Counts{{5, 120}})
	if err != nil {
		t.Fatal(err)
	}
	katz := 1.0/8 - 1.0/106 + 1.0/5 - 1.0/120
	if math.Abs(one.Ratio-(8.0/106)/(5.0/120)) > 1e-12 || math.Abs(one.LogRatioVariance-katz) > 1e-12 {
		t.Errorf("one stratum: ratio %v, variance %v; want %v, Katz's %v", one.Ratio, one.LogRatioVariance, (8.0/106)/(5.0/120), katz)
	}
	// Without hits on a side there is no ratio, and no interval.
	none, err := MantelHaenszel([]Counts{{3, 10}}, []Counts{{0, 10}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := none.RatioInterval(0.05); ok || none.Ratio != 0 {
		t.Errorf("baseline without hits: ratio %v, interval %v; want none", none.Ratio, ok)
	}
}

// The allowed change is held against the far end of the counts' interval:
// a significant decrease whose estimate is within the allowed 1 % but
// whose interval reaches beyond it is Low (the canary cannot show that it
// is within), and the same change measured on ten times the requests,
// its interval inside, passes. Without counts the estimate alone is held
// against the bound, Kayenta's rule.
func TestClassify_CountsHoldTheBoundAgainstTheInterval(t *testing.T) {
	metric := Metric{Name: "request-success-rate", Unit: "%", Direction: Decrease, AllowedDecrease: 0.99}
	run := func(scale float64) MetricResult {
		t.Helper()
		var canary, baseline []Counts
		var canaryRates, baselineRates []float64
		for range 20 {
			// 99.2 % of the canary's requests succeed, 100 % of the
			// baseline's: -0.8 %, within the allowed -1 %.
			c := Counts{Hits: 992 * scale, Total: 1000 * scale}
			b := Counts{Hits: 1000 * scale, Total: 1000 * scale}
			canary, baseline = append(canary, c), append(baseline, b)
			canaryRates, baselineRates = append(canaryRates, 99.2), append(baselineRates, 100)
		}
		res, err := Classify(MetricInput{Metric: metric, Canary: canaryRates, Baseline: baselineRates,
			CanaryCounts: canary, BaselineCounts: baseline})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	few, many := run(0.05), run(1)
	if few.Class != Low || !few.Interval || few.RatioLow >= 0.99 || few.Ratio < 0.99 {
		t.Errorf("50 requests a timestamp: %s; want Low, the estimate within -1 %%, the interval beyond", few.Explain())
	}
	if many.Class != Pass || many.RatioLow < 0.99 || many.Counts.P >= 0.05 {
		t.Errorf("1,000 requests a timestamp: %s; want a significant Pass, its interval within -1 %%", many.Explain())
	}
	// The interval decided, so the line shows it.
	if want := "request-success-rate: canary 99.2 % vs baseline 100 % (-0.8 %, 95 % CI -1.35 to -0.246 %, p = 0.0136): Low"; few.String() != want {
		t.Errorf("String() = %q, want %q", few.String(), want)
	}
	if want := "its 95 % CI within the allowed -1 %"; !strings.Contains(many.String(), want) {
		t.Errorf("String() = %q, want it to say %q", many.String(), want)
	}
	if want := "its 95 % CI reaching beyond the allowed -1 %, and lower is bad: Low"; !strings.Contains(few.Explain(), want) {
		t.Errorf("Explain() = %q, want it to say %q", few.Explain(), want)
	}
}
