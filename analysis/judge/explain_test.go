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

	"github.com/google/go-cmp/cmp"
)

// The longer form: a verdict's line, then each metric's, with the sample
// sizes, the test and the reason.
func TestVerdict_Explain(t *testing.T) {
	rX := []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}
	rY := []float64{1.15, 0.88, 0.90, 0.74, 1.21}
	may := []float64{41, 36, 12, 18, 28, 23, 19, 8, 7, 16, 11, 14, 18, 14, 34, 6, 30, 11, 1, 11, 4, 32, 23, 45, 115, 37}
	august := []float64{39, 9, 16, 78, 35, 66, 122, 89, 110, 44, 28, 65, 22, 59, 23, 31, 44, 21, 9, 45, 168, 73, 76, 118, 84, 85}
	v, err := Judge([]MetricInput{
		{Metric: Metric{Name: "latency p99", Unit: "ms", Direction: Increase, AllowedIncrease: 1.1, Critical: true},
			Canary: series(20, 150, 1), Baseline: series(20, 100, 1)},
		{Metric: Metric{Name: "latency p50", Unit: "ms", Direction: Increase}, Canary: rX, Baseline: rY},
		{Metric: Metric{Name: "success rate", Unit: "%", Direction: Decrease},
			Canary: series(60, 99.5, 0.001), Baseline: series(60, 99, 0.001)},
		{Metric: Metric{Name: "error rate", Direction: Increase, AllowedIncrease: 1.5},
			Canary:   []float64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
			Baseline: []float64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}},
		{Metric: Metric{Name: "cpu"}, Canary: []float64{1}, Baseline: []float64{1, 2, 3}},
		{Metric: Metric{Name: "ozone", Direction: Increase}, Canary: may, Baseline: august},
	}, Bounds{})
	if err != nil {
		t.Fatal(err)
	}
	want := "score 80 (pass >= 95, marginal >= 75): Fail — critical latency p99 High; no data: cpu\n" +
		"  latency p99 (critical): canary mean 159.5 ms (n = 20) vs baseline mean 109.5 ms (n = 20), +45.7 %; " +
		"Mann-Whitney U = 400 of 400, p < 0.001 (exact), Hodges-Lehmann shift +50 ms; " +
		"significant at alpha 0.05, beyond the allowed +10 %, and higher is bad: High\n" +
		"  latency p50: canary mean 1.313 ms (n = 10) vs baseline mean 0.976 ms (n = 5), +34.5 %; " +
		"Mann-Whitney U = 35 of 50, p = 0.254 (exact), Hodges-Lehmann shift +0.305 ms; not significant at alpha 0.05: Pass\n" +
		"  success rate: canary mean 99.53 % (n = 60) vs baseline mean 99.03 % (n = 60), +0.505 %; " +
		"Mann-Whitney U = 3600 of 3600, p < 0.001 (normal approximation), Hodges-Lehmann shift +0.5 %; " +
		"significant at alpha 0.05, but higher is not bad: Pass\n" +
		"  error rate: canary mean 0.5 (n = 20) vs baseline mean 0.3 (n = 20), +66.7 %; " +
		"Mann-Whitney U = 240 of 400, p = 0.208 (normal approximation), Hodges-Lehmann shift 0; not significant at alpha 0.05: Pass\n" +
		"  cpu: 1 canary and 3 baseline values, at least 3 a side needed: NoData\n" +
		"  ozone: canary mean 23.62 (n = 26) vs baseline mean 59.96 (n = 26), -60.6 %; " +
		"Mann-Whitney U = 127.5 of 676, p < 0.001 (normal approximation), Hodges-Lehmann shift -32; " +
		"significant at alpha 0.05, but lower is not bad: Pass"
	if diff := cmp.Diff(want, v.Explain()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestFormat(t *testing.T) {
	tests := map[string]struct {
		format func(float64) string
		in     float64
		want   string
	}{
		"number, three digits":         {formatNumber, 182.4, "182"},
		"number, fraction":             {formatNumber, 0.25, "0.25"},
		"number, rounded":              {formatNumber, 99.54, "99.5"},
		"number, negative":             {formatNumber, -17.36, "-17.4"},
		"number, more left of the dot": {formatNumber, 1234.4, "1234"},
		"number, small":                {formatNumber, 0.0001234, "0.000123"},
		"number, large":                {formatNumber, 1.5e10, "1.5e+10"},
		"number, zero":                 {formatNumber, 0, "0"},
		"value, four digits":           {formatValue, 99.136, "99.14"},
		"value, integer":               {formatValue, 121, "121"},
		"change, up":                   {formatChange, 1.5, "+50 %"},
		"change, up a little":          {formatChange, 1.504, "+50.4 %"},
		"change, down":                 {formatChange, 0.9, "-10 %"},
		"change, none":                 {formatChange, 1, "0 %"},
		"change, from 0":               {formatChange, math.Inf(1), "up from 0"},
		"change, below 0 from 0":       {formatChange, math.Inf(-1), "down from 0"},
		"p, below 0.001":               {formatP, 0.0004, "p < 0.001"},
		"p, 0.001":                     {formatP, 0.001, "p = 0.001"},
		"p, three digits":              {formatP, 0.2544, "p = 0.254"},
		"p, near alpha":                {formatP, 0.0496, "p = 0.0496"},
		"p, 1":                         {formatP, 1, "p = 1"},
		"score, whole":                 {formatScore, 100, "100"},
		"score, rounded down":          {formatScore, 200.0 / 3, "66.6"},
		"score, never up to the bound": {formatScore, 94.99, "94.9"},
		"score, zero":                  {formatScore, 0, "0"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tt.format(tt.in); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// Against names the side the canary is compared with: the primary, when
// the baseline is the primary (serin's phase 1).
func TestMetricResult_Against(t *testing.T) {
	r, err := Classify(MetricInput{Metric: Metric{Name: "latency p99", Unit: "ms", Direction: Increase},
		Canary: series(20, 150, 1), Baseline: series(20, 100, 1)})
	if err != nil {
		t.Fatal(err)
	}
	want := "latency p99: canary 159.5 ms vs primary 109.5 ms (+45.7 %, p < 0.001): High"
	if got := r.Against("primary"); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got, want := r.String(), "latency p99: canary 159.5 ms vs baseline 109.5 ms (+45.7 %, p < 0.001): High"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
