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

package providers

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// TestDynatrace checks the wire format of Dynatrace's metrics v2 query
// API (GET /api/v2/metrics/query, metricSelector, resolution=Inf, from
// and to in milliseconds over ten 1m intervals, Authorization: Api-Token),
// since Dynatrace cannot run here, and reads answers of the shape its API
// reference gives. The address has a path, as a Managed environment's.
func TestDynatrace(t *testing.T) {
	query := "builtin:service.response.time:filter(eq(dt.entity.service,SERVICE-ABCDEFG0123456789)):percentile(95)\n"
	selector := "builtin:service.response.time:filter(eq(dt.entity.service,SERVICE-ABCDEFG0123456789)):percentile(95)"
	want := wireRequest{
		Method: http.MethodGet,
		Path:   "/e/abc12345/api/v2/metrics/query",
		Query: url.Values{
			"metricSelector": {selector},
			"resolution":     {"Inf"},
			"from":           {strconv.FormatInt(testNow.UnixMilli()-600_000, 10)},
			"to":             {strconv.FormatInt(testNow.UnixMilli(), 10)},
		},
		Header: map[string]string{"Authorization": "Api-Token dt0c01.token", "Accept": "application/json"},
	}
	item := func(service, values string) string {
		return `{"dimensions":["` + service + `"],"dimensionMap":{"dt.entity.service":"` + service + `"},` +
			`"timestamps":[1795435200000],"values":` + values + `}`
	}
	answer := func(data ...string) wireAnswer {
		body := `{"totalCount":1,"nextPageKey":null,"resolution":"Inf","result":[{"metricId":"` + selector + `",` +
			`"dataPointCountRatio":0.0036,"dimensionCountRatio":0.0363,"data":[`
		for i, d := range data {
			if i > 0 {
				body += ","
			}
			body += d
		}
		return wireAnswer{ContentType: "application/json", Body: body + `]}]}`}
	}
	tests := map[string]providerCase{
		"one value":     {answer: answer(item("SERVICE-ABCDEFG0123456789", `[1234.5]`)), want: 1234.5},
		"null: no data": {answer: answer(item("SERVICE-ABCDEFG0123456789", `[null]`)), wantErr: "no values found for query", wantNoData: true},
		"no data items": {answer: answer(), wantErr: "no values found for query", wantNoData: true},
		"two services": {
			answer: answer(item("SERVICE-A", `[1]`), item("SERVICE-B", `[2]`)),
			wantErr: "returned 2 series ({dt.entity.service=SERVICE-A}, {dt.entity.service=SERVICE-B}); " +
				"a metric check needs one number: aggregate the selector to a single series, e.g. :splitBy()",
		},
		"two metrics": {
			answer:  wireAnswer{ContentType: "application/json", Body: `{"totalCount":2,"resolution":"Inf","result":[{"metricId":"a","data":[]},{"metricId":"b","data":[]}]}`},
			wantErr: "selected 2 metrics; a metric check needs one number: select one metric",
		},
		"a bad selector": {
			answer: wireAnswer{Status: http.StatusBadRequest, ContentType: "application/json",
				Body: `{"error":{"code":400,"message":"Syntax error at position 23","constraintViolations":[]}}`},
			wantErr: "answered 400: Syntax error at position 23",
		},
	}
	runProviderCases(t, v1alpha1.MetricProvider{Type: v1alpha1.DynatraceProvider, Address: "/e/abc12345"},
		map[string]string{"dynatrace_token": "dt0c01.token"}, query, want, tests)
}
