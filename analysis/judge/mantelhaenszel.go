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
)

// Counts are the events behind one value of a ratio metric: Hits of Total
// requests, e.g. the requests that did not fail of all the requests a side
// served in one step of the series. The value is a share of Hits (a
// success rate is 100 × Hits / Total). The numbers may be fractional, as
// Prometheus' increase() extrapolates them.
type Counts struct {
	Hits, Total float64
}

// ErrBadCounts is returned for counts that are negative, not finite, or
// with more hits than requests.
var ErrBadCounts = errors.New("counts must be finite, with 0 <= hits <= total")

// CountTest is the outcome of a two-sided Cochran-Mantel-Haenszel test of
// the canary's hits against the baseline's, one 2×2 table (canary or
// baseline, hit or not) a stratum: a timestamp of the series. Within a
// stratum both sides saw the same environment, so whatever varies from
// one timestamp to the next (a downstream fault that comes and goes, the
// weights of the steps) is compared with itself, and every request counts,
// not only one value per step.
type CountTest struct {
	// Delta is the canary's hits minus the hits expected of it were both
	// sides alike, summed over the strata: above 0 the canary's share of
	// hits is higher.
	Delta float64
	// Variance is the variance of Delta under no difference.
	Variance float64
	// ChiSquared is the Mantel-Haenszel statistic, with the continuity
	// correction: (|Delta| - 0.5)² / Variance, 1 degree of freedom.
	ChiSquared float64
	// P is the two-sided p-value; 1 when Variance is 0 (no stratum with
	// both sides and both outcomes: nothing to compare).
	P float64
	// Strata is the number of strata with a non-zero variance, those that
	// tell something.
	Strata int
	// CanaryHits, CanaryTotal, BaselineHits and BaselineTotal are the
	// sums over those strata.
	CanaryHits, CanaryTotal, BaselineHits, BaselineTotal float64
	// Ratio is the Mantel-Haenszel estimate of the canary's share of hits
	// over the baseline's, common to the strata: Σ a·n2/N / Σ c·n1/N, with
	// c the baseline's hits, over the strata where both sides served.
	// Stratified as the test is, so that a side serving more of its
	// requests while a fault lasts (the canary's weight grows during the
	// analysis) is not judged worse for it. 0 when the baseline has no
	// hits, or the canary none (no ratio to speak of).
	Ratio float64
	// LogRatioVariance is the variance of the logarithm of Ratio, by
	// Greenland and Robins' estimator (Biometrics 41, 1985), which holds
	// for many small strata as for few large ones: Σ (n1·n2·m1 - a·c·N) /
	// N² over the product of Ratio's two sums. 0 with Ratio.
	LogRatioVariance float64
}

// RatioInterval is the two-sided 1-alpha confidence interval of Ratio,
// exp(ln Ratio ± z·√LogRatioVariance), z the 1-alpha/2 quantile of the
// standard normal; ok is false without a Ratio.
func (t CountTest) RatioInterval(alpha float64) (low, high float64, ok bool) {
	if t.Ratio <= 0 || math.IsInf(t.Ratio, 0) || math.IsNaN(t.Ratio) {
		return 0, 0, false
	}
	z := math.Sqrt2 * math.Erfinv(1-alpha)
	half := z * math.Sqrt(t.LogRatioVariance)
	return t.Ratio * math.Exp(-half), t.Ratio * math.Exp(half), true
}

// MantelHaenszel runs the two-sided Cochran-Mantel-Haenszel test of the
// canary's counts against the baseline's, stratum by stratum (canary[i]
// and baseline[i] are the same timestamp), as R's
// mantelhaen.test(x, correct = TRUE) does for 2×2×K tables: Delta =
// Σ (a - n1·m1/N), Variance = Σ n1·n2·m1·m2 / (N²·(N-1)), with a the
// canary's hits, n1 and n2 the sides' totals, m1 and m2 the hits and
// misses of both, N = n1 + n2; the statistic (|Delta| - 0.5)² / Variance
// (no correction when |Delta| < 0.5) is χ² with 1 degree of freedom. R
// refuses a stratum of fewer than 2 requests; here a stratum where a side
// served nothing, or where every request had one outcome, has no variance
// and is left out. Unequal lengths and bad counts are errors.
func MantelHaenszel(canary, baseline []Counts) (CountTest, error) {
	if len(canary) != len(baseline) {
		return CountTest{}, fmt.Errorf("%d canary and %d baseline counts: want one of each a timestamp", len(canary), len(baseline))
	}
	var t CountTest
	// The ratio's sums: R = Σ a·n2/N, S = Σ c·n1/N, and the numerator of
	// its log's variance, P = Σ (n1·n2·m1 - a·c·N) / N².
	var sumR, sumS, sumP float64
	for i := range canary {
		a, b := canary[i], baseline[i]
		if !a.valid() || !b.valid() {
			return CountTest{}, fmt.Errorf("counts at %d (canary %v of %v, baseline %v of %v): %w",
				i, a.Hits, a.Total, b.Hits, b.Total, ErrBadCounts)
		}
		n1, n2 := a.Total, b.Total
		n := n1 + n2
		m1 := a.Hits + b.Hits
		m2 := n - m1
		if n1 > 0 && n2 > 0 {
			sumR += a.Hits * n2 / n
			sumS += b.Hits * n1 / n
			sumP += (n1*n2*m1 - a.Hits*b.Hits*n) / (n * n)
		}
		if n < 2 {
			continue
		}
		v := n1 * n2 * m1 * m2 / (n * n * (n - 1))
		if v <= 0 {
			continue
		}
		t.Delta += a.Hits - n1*m1/n
		t.Variance += v
		t.Strata++
		t.CanaryHits += a.Hits
		t.CanaryTotal += n1
		t.BaselineHits += b.Hits
		t.BaselineTotal += n2
	}
	if sumR > 0 && sumS > 0 {
		t.Ratio = sumR / sumS
		t.LogRatioVariance = max(0, sumP/(sumR*sumS))
	}
	if t.Variance <= 0 {
		t.P = 1
		return t, nil
	}
	d := math.Abs(t.Delta)
	if d >= 0.5 {
		d -= 0.5
	}
	t.ChiSquared = d * d / t.Variance
	// χ² with 1 degree of freedom is a squared standard normal.
	t.P = math.Erfc(math.Sqrt(t.ChiSquared) / math.Sqrt2)
	return t, nil
}

// valid is true for finite counts with 0 <= Hits <= Total.
func (c Counts) valid() bool {
	finite := !math.IsNaN(c.Hits) && !math.IsInf(c.Hits, 0) && !math.IsNaN(c.Total) && !math.IsInf(c.Total, 0)
	return finite && c.Hits >= 0 && c.Hits <= c.Total
}
