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
	"testing"

	"k8s.io/utils/ptr"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testutil"
)

// Through a check: a value that is not one finite number fails whatever
// the thresholdRange, also the side of the range that is not bounded.
func TestMetrics_CheckNeedsOneFiniteNumber(t *testing.T) {
	minOnly := &v1alpha1.ThresholdRange{Min: ptr.To(99.0)}
	maxOnly := &v1alpha1.ThresholdRange{Max: ptr.To(500.0)}
	both := &v1alpha1.ThresholdRange{Min: ptr.To(0.0), Max: ptr.To(100.0)}
	vector := func(values ...string) string {
		body := `{"status":"success","data":{"resultType":"vector","result":[`
		for i, v := range values {
			if i > 0 {
				body += ","
			}
			body += `{"metric":{"pod":"podinfo-` + string(rune('a'+i)) + `"},"value":[1714567890.123,"` + v + `"]}`
		}
		return body + `]}}`
	}
	tests := map[string]struct {
		body        string
		check       string
		rng         *v1alpha1.ThresholdRange
		wantPassed  bool
		wantMessage string
	}{
		"finite, in range": {body: vector("99.5"), check: v1alpha1.RequestSuccessRateCheck, rng: minOnly, wantPassed: true,
			wantMessage: "metric request-success-rate: 99.5"},
		"+Inf under a min-only range": {body: vector("+Inf"), check: v1alpha1.RequestSuccessRateCheck, rng: minOnly,
			wantMessage: "returned +Inf, not a finite number"},
		"-Inf under a max-only range": {body: vector("-Inf"), check: v1alpha1.RequestDurationCheck, rng: maxOnly,
			wantMessage: "returned -Inf, not a finite number"},
		"+Inf under a max-only range": {body: vector("+Inf"), check: v1alpha1.RequestDurationCheck, rng: maxOnly,
			wantMessage: "returned +Inf, not a finite number"},
		"NaN under both bounds": {body: vector("NaN"), check: v1alpha1.RequestSuccessRateCheck, rng: both,
			wantMessage: "returned NaN, no data (0/0: no requests in the interval?): is the canary receiving traffic through traefik"},
		"several series, each in range": {body: vector("99.5", "99.9"), check: v1alpha1.RequestSuccessRateCheck, rng: minOnly,
			wantMessage: `returned 2 series ({pod="podinfo-a"}, {pod="podinfo-b"}); a metric check needs one number`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			m := &Metrics{MetricsServer: testutil.PrometheusAnswer(t, tt.body).URL}
			metric := v1alpha1.CanaryMetric{Name: tt.check, ThresholdRange: tt.rng}
			res := m.Check(context.Background(), builtinCanary(v1alpha1.GatewayAPIRouting), metric)
			if res.Passed != tt.wantPassed || !contains(res.Message, tt.wantMessage) {
				t.Errorf("got passed=%v %q, want passed=%v %q", res.Passed, res.Message, tt.wantPassed, tt.wantMessage)
			}
		})
	}
}
