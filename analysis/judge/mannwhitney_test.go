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
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The test against published results. Each case names where its expected
// values were published; R prints four significant digits, so its
// p-values are held to half a unit of the last digit printed. Neither R
// nor scipy was run for these tests (neither is on the development
// machine): every expected value was also recomputed by a separate
// throwaway script (plain Python, brute-force exact counts), which
// agreed.
func TestMannWhitney_PublishedValues(t *testing.T) {
	// R's ?wilcox.test example ("Hollander & Wolfe (1973), 69f.").
	rX := []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}
	rY := []float64{1.15, 0.88, 0.90, 0.74, 1.21}
	// The Ozone of May (month 5) and of August (month 8) in R's
	// airquality data set, NAs left out.
	may := []float64{41, 36, 12, 18, 28, 23, 19, 8, 7, 16, 11, 14, 18, 14, 34, 6, 30, 11, 1, 11, 4, 32, 23, 45, 115, 37}
	august := []float64{39, 9, 16, 78, 35, 66, 122, 89, 110, 44, 28, 65, 22, 59, 23, 31, 44, 21, 9, 45, 168, 73, 76, 118, 84, 85}
	endmemoX := []float64{1, 5, 9, 24, 56, 21, 3, 7, 21, 4}
	tests := map[string]struct {
		canary, baseline []float64
		wantU            float64
		wantP, tolerance float64
		wantExact        bool
		wantShift        float64
	}{
		// R's ?wilcox.test: wilcox.test(x, y, alternative = "g") prints
		// W = 35, p-value = 0.1272, the exact P(U >= 35) = 382/3003;
		// two-sided is twice that, 764/3003 = 0.2544 (no tie, n < 50:
		// exact). The shift is the median of the 50 differences x - y,
		// (0.30 + 0.31)/2 by hand, which R reports as the "difference in
		// location" of an exact test with conf.int = TRUE.
		"R wilcox.test example, exact": {canary: rX, baseline: rY,
			wantU: 35, wantP: 764.0 / 3003, tolerance: 1e-12, wantExact: true, wantShift: 0.305},
		// R's ?wilcox.test: wilcox.test(Ozone ~ Month, data = airquality,
		// subset = Month %in% c(5, 8)) prints W = 127.5, p-value =
		// 0.0001208 (ties: normal approximation with continuity
		// correction); R's pairwise.wilcox.test(Ozone, Month) prints the
		// same comparison Holm-adjusted (x 9) as 0.0011. Shift: median of
		// the 676 differences, by hand.
		"R airquality Ozone May vs August, ties": {canary: may, baseline: august,
			wantU: 127.5, wantP: 0.0001208, tolerance: 0.00000005, wantShift: -32},
		// R output published at endmemo.com/r/wilcoxon.php:
		// wilcox.test(x, y) with x <- c(1,5,9,24,56,21,3,7,21,4),
		// y <- c(12,15,5,9,9,14,56,22,3,7,32,5) prints W = 51.5,
		// p-value = 0.5966 (ties).
		"R endmemo example 1, ties": {canary: endmemoX,
			baseline: []float64{12, 15, 5, 9, 9, 14, 56, 22, 3, 7, 32, 5},
			wantU:    51.5, wantP: 0.5966, tolerance: 0.00005, wantShift: -2},
		// Same page: y <- c(1233,4356,987,39999,1111,200000) prints
		// W = 0, p-value = 0.001364 (x ties 21 with itself).
		"R endmemo example 2, ties": {canary: endmemoX,
			baseline: []float64{1233, 4356, 987, 39999, 1111, 200000},
			wantU:    0, wantP: 0.001364, tolerance: 0.0000005, wantShift: -2766},
		// ClickHouse's tests/queries/0_stateless/01560_mann_whitney.sql
		// expects mannWhitneyUTest(left, right) = (223, 0.5426959774289482),
		// scipy.stats.mannwhitneyu's asymptotic two-sided p-value with the
		// tie and continuity corrections, to full precision.
		"ClickHouse/scipy, ties, 20 and 20": {
			canary: []float64{310, 195, 530, 155, 530, 245, 385, 450, 465, 545, 170, 180, 125, 180, 230, 75, 430, 480, 495, 295},
			baseline: []float64{116, 171, 176, 421, 111, 326, 481, 111, 346, 441, 261, 411, 206, 521, 456, 446, 296, 51,
				426, 261},
			wantU: 223, wantP: 0.5426959774289482, tolerance: 1e-12, wantShift: 24},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := MannWhitney(tt.canary, tt.baseline)
			if err != nil {
				t.Fatal(err)
			}
			if got.U != tt.wantU || got.Exact != tt.wantExact || math.Abs(got.P-tt.wantP) > tt.tolerance ||
				math.Abs(got.Shift-tt.wantShift) > 1e-9 {
				t.Errorf("got U = %v, p = %v, exact %v, shift %v; want U = %v, p = %v ± %v, exact %v, shift %v",
					got.U, got.P, got.Exact, got.Shift, tt.wantU, tt.wantP, tt.tolerance, tt.wantExact, tt.wantShift)
			}
		})
	}
}

// R's ?wilcox.test example again, through the normal approximation
// without the continuity correction: wilcox.test(x, y, alternative = "g",
// exact = FALSE, correct = FALSE) prints p-value = 0.1103, so two-sided
// 0.2207 (0.22067 by hand: z = 10 / sqrt(200/3)).
func TestNormalP_RExampleWithoutContinuityCorrection(t *testing.T) {
	got := normalP(35, 10, 5, 0, false)
	if math.Abs(got-2*0.1103) > 2*0.00005 {
		t.Errorf("got p = %v, want 2 * 0.1103", got)
	}
}

// The exact distribution of U against published tables of the
// Mann-Whitney test's critical values (two-tailed, alpha 0.05: the
// largest u with P(U <= u) <= 0.025), found in every statistics
// textbook's appendix, and against Mann and Whitney's counts for 3 and 3.
func TestUCounts_PublishedTables(t *testing.T) {
	if diff := cmp.Diff([]float64{1, 1, 2, 3, 3, 3, 3, 2, 1, 1}, uCounts(3, 3)); diff != "" {
		t.Errorf("counts of U for 3 and 3 (-want +got):\n%s", diff)
	}
	for n, wantCritical := range map[int]int{5: 2, 10: 23, 20: 127} {
		counts := uCounts(n, n)
		var total float64
		for _, c := range counts {
			total += c
		}
		if want := binomial(2*n, n); math.Abs(total-want) > want*1e-12 {
			t.Errorf("n = %d: counts add up to %v, want C(%d, %d) = %v", n, total, 2*n, n, want)
		}
		var below float64
		for u := 0; u <= wantCritical; u++ {
			below += counts[u]
		}
		if below/total > 0.025 || (below+counts[wantCritical+1])/total <= 0.025 {
			t.Errorf("n = %d: the critical U at 0.05 two-tailed is not %d: P(U <= %d) = %v", n, wantCritical,
				wantCritical, below/total)
		}
	}
}

// Near 50 values a side, where the exact path gives way to the normal
// one, the two agree within 0.005 (0.0017 at most here, at p around 0.55),
// so the switch makes no jump.
func TestMannWhitney_ExactAndNormalAgreeNear50(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 1))
	for _, shift := range []float64{0, 0.2, 0.4, 0.6} {
		canary, baseline := make([]float64, 49), make([]float64, 49)
		for i := range canary {
			canary[i] = rng.NormFloat64() + shift
			baseline[i] = rng.NormFloat64()
		}
		res, err := MannWhitney(canary, baseline)
		if err != nil {
			t.Fatal(err)
		}
		normal := normalP(res.U, 49, 49, 0, true)
		if !res.Exact || math.Abs(res.P-normal) > 0.005 {
			t.Errorf("shift %v: exact %v p = %v, normal approximation p = %v", shift, res.Exact, res.P, normal)
		}
	}
	// 50 values: the normal approximation, for the same kind of sample.
	res, err := MannWhitney(make50(0.05), make50(0))
	if err != nil {
		t.Fatal(err)
	}
	if res.Exact {
		t.Errorf("50 values a side: got the exact p-value, want the normal approximation")
	}
}

// Swapping the samples mirrors U (U' = n1*n2 - U) and the shift, and
// keeps the two-sided p-value, on either path.
func TestMannWhitney_SwapSymmetry(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 2))
	samples := func(n int, tied bool) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = rng.ExpFloat64() * 100
			if tied {
				xs[i] = math.Round(xs[i] / 20)
			}
		}
		return xs
	}
	tests := map[string]struct{ canary, baseline []float64 }{
		"exact, 7 and 12":           {samples(7, false), samples(12, false)},
		"exact, 40 and 49":          {samples(40, false), samples(49, false)},
		"normal, ties, 30 and 25":   {samples(30, true), samples(25, true)},
		"normal, 120 and 80":        {samples(120, false), samples(80, false)},
		"normal, ties, 300 and 301": {samples(300, true), samples(301, true)},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			a, err := MannWhitney(tt.canary, tt.baseline)
			if err != nil {
				t.Fatal(err)
			}
			b, err := MannWhitney(tt.baseline, tt.canary)
			if err != nil {
				t.Fatal(err)
			}
			if b.U != float64(a.N1*a.N2)-a.U || math.Abs(a.P-b.P) > 1e-12 || b.Shift != -a.Shift ||
				a.Exact != b.Exact {
				t.Errorf("got U = %v, p = %v, shift %v; swapped U = %v, p = %v, shift %v", a.U, a.P, a.Shift,
					b.U, b.P, b.Shift)
			}
		})
	}
}

// The Hodges-Lehmann shift is the median of all the differences, as
// sorting them gives, with ties, an odd and an even count of pairs.
func TestMannWhitney_ShiftIsTheMedianOfTheDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 3))
	for _, n := range [][2]int{{37, 41}, {40, 30}, {1, 1}, {1, 2}, {200, 150}} {
		canary, baseline := make([]float64, n[0]), make([]float64, n[1])
		for i := range canary {
			canary[i] = math.Round(rng.NormFloat64()*10) / 4
		}
		for i := range baseline {
			baseline[i] = math.Round(rng.NormFloat64()*10)/4 - 1
		}
		var diffs []float64
		for _, x := range canary {
			for _, y := range baseline {
				diffs = append(diffs, x-y)
			}
		}
		slices.Sort(diffs)
		want := diffs[len(diffs)/2]
		if len(diffs)%2 == 0 {
			want = (diffs[len(diffs)/2-1] + diffs[len(diffs)/2]) / 2
		}
		res, err := MannWhitney(canary, baseline)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(res.Shift-want) > 1e-12 {
			t.Errorf("%d and %d values: got shift %v, want %v", n[0], n[1], res.Shift, want)
		}
	}
}

func TestMannWhitney_EdgeCases(t *testing.T) {
	tests := map[string]struct {
		canary, baseline []float64
		want             Result
		wantErr          error
	}{
		"all identical: p = 1": {canary: []float64{5, 5, 5}, baseline: []float64{5, 5, 5, 5},
			want: Result{U: 6, P: 1, Shift: 0, N1: 3, N2: 4}},
		"one value each": {canary: []float64{1}, baseline: []float64{2},
			want: Result{U: 0, P: 1, Shift: -1, Exact: true, N1: 1, N2: 1}},
		"every canary value above every baseline one, exact": {canary: []float64{4, 5, 6, 7}, baseline: []float64{0, 1, 2, 3},
			want: Result{U: 16, P: 2.0 / 70, Shift: 4, Exact: true, N1: 4, N2: 4}},
		"empty canary":       {baseline: []float64{1}, wantErr: ErrEmptySample},
		"empty baseline":     {canary: []float64{1}, baseline: []float64{}, wantErr: ErrEmptySample},
		"NaN in the canary":  {canary: []float64{1, math.NaN()}, baseline: []float64{1}, wantErr: ErrNotFinite},
		"+Inf in a baseline": {canary: []float64{1}, baseline: []float64{math.Inf(1)}, wantErr: ErrNotFinite},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := MannWhitney(tt.canary, tt.baseline)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("got error %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b float64) bool {
				return math.Abs(a-b) <= 1e-12
			})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMannWhitney_ErrorNamesTheValue(t *testing.T) {
	_, err := MannWhitney([]float64{1, 2, math.NaN()}, []float64{1})
	if err == nil || err.Error() != "canary[2] is NaN: not a finite number" {
		t.Errorf("got %v", err)
	}
}

// make50 is 50 values from 0 to 4.9, plus shift.
func make50(shift float64) []float64 {
	xs := make([]float64, 50)
	for i := range xs {
		xs[i] = float64(i)/10 + shift + 0.001
	}
	return xs
}

// binomial is C(n, k) as a float64.
func binomial(n, k int) float64 {
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return c
}
