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
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// exactBelow is the sample size from which the exact distribution of U is
// no longer used: as R's wilcox.test, the p-value is exact when both
// samples have fewer than 50 values and no value is tied.
const exactBelow = 50

var (
	// ErrEmptySample is returned for a sample with no value.
	ErrEmptySample = errors.New("empty sample")
	// ErrNotFinite is returned for a sample with a NaN or an infinite
	// value.
	ErrNotFinite = errors.New("not a finite number")
)

// Result is the outcome of a two-sided Mann-Whitney U test (the Wilcoxon
// rank-sum test) of a canary sample against a baseline sample.
type Result struct {
	// U is the statistic of the canary sample: the number of pairs
	// (canary value, baseline value) in which the canary value is the
	// larger, a tie counting one half. It is R's W for
	// wilcox.test(canary, baseline) and lies in [0, N1*N2]; N1*N2/2 is
	// what no difference gives on average, above it the canary ranks
	// higher.
	U float64
	// P is the two-sided p-value: the probability, were both samples
	// from one distribution, of a U at least as far from N1*N2/2.
	P float64
	// Shift is the Hodges-Lehmann estimate of how far the canary is
	// shifted from the baseline: the median of the differences
	// canary[i] - baseline[j] over all pairs.
	Shift float64
	// Exact is true when P comes from the exact distribution of U,
	// false when from the normal approximation, with the correction for
	// ties and the continuity correction.
	Exact bool
	// N1 and N2 are the sizes of the canary and the baseline samples.
	N1, N2 int
}

// MannWhitney runs the two-sided Mann-Whitney U test of canary against
// baseline, as R's wilcox.test(canary, baseline) does with its defaults:
// tied values get the mean of their ranks; the p-value is exact (from the
// distribution of U, counted) when both samples have fewer than 50 values
// and no tie, and otherwise from the normal approximation with the
// variance corrected for ties and the continuity correction. When every
// value is the same the samples cannot differ: U is N1*N2/2 and P is 1.
// A sample that is empty or has a value that is NaN or infinite is an
// error.
func MannWhitney(canary, baseline []float64) (Result, error) {
	if err := checkSample("canary", canary); err != nil {
		return Result{}, err
	}
	if err := checkSample("baseline", baseline); err != nil {
		return Result{}, err
	}
	n1, n2 := len(canary), len(baseline)
	rankSum, tieSum := rankCanary(canary, baseline)
	res := Result{
		U:     rankSum - float64(n1)*float64(n1+1)/2,
		Shift: hodgesLehmann(canary, baseline),
		N1:    n1,
		N2:    n2,
	}
	if n1 < exactBelow && n2 < exactBelow && tieSum == 0 {
		res.P, res.Exact = exactP(res.U, n1, n2), true
	} else {
		res.P = normalP(res.U, n1, n2, tieSum, true)
	}
	return res, nil
}

// checkSample returns an error for an empty sample or one with a value
// that is not finite, naming the sample and the value's index.
func checkSample(name string, sample []float64) error {
	if len(sample) == 0 {
		return fmt.Errorf("%s: %w", name, ErrEmptySample)
	}
	for i, v := range sample {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s[%d] is %v: %w", name, i, v, ErrNotFinite)
		}
	}
	return nil
}

// rankCanary ranks the canary and baseline values together, 1 for the
// smallest, tied values sharing the mean of their ranks, and returns the
// sum of the canary's ranks and the sum of t³ - t over the groups of t
// tied values (0 when no value is tied).
func rankCanary(canary, baseline []float64) (rankSum, tieSum float64) {
	type value struct {
		v      float64
		canary bool
	}
	all := make([]value, 0, len(canary)+len(baseline))
	for _, v := range canary {
		all = append(all, value{v, true})
	}
	for _, v := range baseline {
		all = append(all, value{v, false})
	}
	slices.SortFunc(all, func(a, b value) int { return cmp.Compare(a.v, b.v) })
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		// Values i..j-1 are tied at ranks i+1..j: each gets their mean.
		midrank := float64(i+1+j) / 2
		for _, x := range all[i:j] {
			if x.canary {
				rankSum += midrank
			}
		}
		if t := float64(j - i); t > 1 {
			tieSum += t*t*t - t
		}
		i = j
	}
	return rankSum, tieSum
}

// exactP is the two-sided p-value of U = u for samples of n1 and n2
// distinct values, from the distribution of U: twice the probability of
// the tail that u is in, at most 1, as R's wilcox.test.
func exactP(u float64, n1, n2 int) float64 {
	counts := uCounts(n1, n2)
	k := int(math.Round(u))
	var tail, total float64
	for i, c := range counts {
		total += c
		if (u > float64(n1*n2)/2 && i >= k) || (u <= float64(n1*n2)/2 && i <= k) {
			tail += c
		}
	}
	return math.Min(1, 2*tail/total)
}

// uCounts returns, for each u in 0..n1*n2, in how many of the
// (n1+n2)!/(n1! n2!) orders of n1 canary and n2 baseline values, all
// distinct, the canary's U is u. The count c(i, j, u) for i canary and j
// baseline values follows from where the largest value is: a canary one
// is larger than the j baseline values, a baseline one than none, so
// c(i, j, u) = c(i-1, j, u-j) + c(i, j-1, u) (Mann and Whitney, 1947).
// The counts, up to C(98, 49) ≈ 2.5e28 below exactBelow, are float64s,
// as R's.
func uCounts(n1, n2 int) []float64 {
	// rows[i] is c(i, j, ·) for the j reached; j = 0 to start: one order,
	// with U = 0.
	rows := make([][]float64, n1+1)
	for i := range rows {
		rows[i] = make([]float64, n1*n2+1)
		rows[i][0] = 1
	}
	for j := 1; j <= n2; j++ {
		// In place, i rising: rows[i-1] already holds c(i-1, j, ·) and
		// rows[i] still c(i, j-1, ·). c(0, j, ·) is that of j = 0.
		for i := 1; i <= n1; i++ {
			for u := i * j; u >= j; u-- {
				rows[i][u] += rows[i-1][u-j]
			}
		}
	}
	return rows[n1]
}

// normalP is the two-sided p-value of U = u from the normal
// approximation, as R's wilcox.test with exact = FALSE: U has mean
// n1*n2/2 and variance n1*n2/12 * ((N+1) - tieSum/(N(N-1))), N = n1+n2;
// with correct, u is moved half a step towards the mean first. When the
// variance is 0 (every value tied) the p-value is 1.
func normalP(u float64, n1, n2 int, tieSum float64, correct bool) float64 {
	m1, m2 := float64(n1), float64(n2)
	n := m1 + m2
	variance := m1 * m2 / 12 * ((n + 1) - tieSum/(n*(n-1)))
	if variance <= 0 {
		return 1
	}
	z := u - m1*m2/2
	if correct {
		switch {
		case z > 0:
			z -= 0.5
		case z < 0:
			z += 0.5
		}
	}
	z /= math.Sqrt(variance)
	return math.Min(1, math.Erfc(math.Abs(z)/math.Sqrt2))
}

// hodgesLehmann is the median of the differences canary[i] -
// baseline[j] over all pairs, found without making the len(canary) *
// len(baseline) differences: the k-th smallest is searched for among the
// float64 values, counting the differences at most a value in one pass
// over the sorted samples (64 passes at most).
func hodgesLehmann(canary, baseline []float64) float64 {
	x, y := slices.Clone(canary), slices.Clone(baseline)
	slices.Sort(x)
	slices.Sort(y)
	n := len(x) * len(y)
	low := kthDifference(x, y, (n+1)/2)
	if n%2 == 1 {
		return low + 0 // + 0 turns a -0 into 0
	}
	high := kthDifference(x, y, n/2+1)
	return low/2 + high/2 + 0
}

// kthDifference is the k-th smallest (from 1) of the differences x[i] -
// y[j] of the sorted x and y: the smallest float64 d with at least k
// differences at most d, which is one of them. The float64s are searched
// in their order, through keys: unsigned integers in the same order.
func kthDifference(x, y []float64, k int) float64 {
	low := orderKey(x[0] - y[len(y)-1])
	high := orderKey(x[len(x)-1] - y[0])
	for low < high {
		mid := low + (high-low)/2
		if countAtMost(x, y, fromOrderKey(mid)) >= k {
			high = mid
		} else {
			low = mid + 1
		}
	}
	return fromOrderKey(low)
}

// countAtMost counts the differences x[i] - y[j] of the sorted x and y
// that are at most d. For each x[i], rising, those are the y[j] from the
// first whose difference is at most d, an index that never falls.
func countAtMost(x, y []float64, d float64) int {
	count, j := 0, 0
	for _, xi := range x {
		for j < len(y) && xi-y[j] > d {
			j++
		}
		count += len(y) - j
	}
	return count
}

// orderKey maps a float64 that is not NaN to an unsigned integer in the
// same order: the sign bit set for positive numbers, every bit flipped
// for negative ones.
func orderKey(f float64) uint64 {
	b := math.Float64bits(f)
	if b>>63 == 0 {
		return b | 1<<63
	}
	return ^b
}

// fromOrderKey is the inverse of orderKey.
func fromOrderKey(k uint64) float64 {
	if k>>63 == 1 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}
