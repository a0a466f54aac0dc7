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
	"strings"
	"testing"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// A tenant's hostile value never changes a query's shape, in any
// provider's language: inside a string literal it is escaped as that
// language reads it back; outside one only a plain token goes, and the
// check fails naming the variable.
func TestRenderQuery_HostileValuesPerProvider(t *testing.T) {
	type want struct {
		query string // the rendered query; "" when refused
		err   string // a part of the refusal
	}
	tests := map[string]struct {
		provider v1alpha1.MetricProviderType
		query    string
		value    string
		want     want
	}{
		"prometheus: quoted, a matcher that ends the selector": {
			provider: v1alpha1.PrometheusProvider, query: `sum(rate(http_requests_total{app="{{ variables.v }}"}[1m]))`,
			value: `x"} or vector(1) #`, want: want{query: `sum(rate(http_requests_total{app="x\x22} or vector(1) #"}[1m]))`},
		},
		"prometheus: unquoted, a new clause": {
			provider: v1alpha1.PrometheusProvider, query: `sum(rate(x[{{ variables.v }}]))`,
			value: `1m]) or sum(secret_total[1m`, want: want{err: "query variable variables.v: it is placed in the query outside a string literal"},
		},
		"prometheus: unquoted, a plain token": {
			provider: v1alpha1.PrometheusProvider, query: `sum(rate(x[{{ variables.v }}]))`,
			value: `5m`, want: want{query: `sum(rate(x[5m]))`},
		},
		"stackdriver: PromQL rules": {
			provider: v1alpha1.StackdriverProvider, query: `up{app='{{ variables.v }}'}`,
			value: `x'} or up{`, want: want{query: `up{app='x\x27} or up{'}`},
		},
		"influxdb: a string that ends, and an interpolation": {
			provider: v1alpha1.InfluxDBProvider, query: `from(bucket: "apps") |> filter(fn: (r) => r.app == "{{ variables.v }}")`,
			value: `x") |> yield() //${token}\`, want: want{query: `from(bucket: "apps") |> filter(fn: (r) => r.app == "x\") |> yield() //\${token}\\")`},
		},
		"influxdb: a newline": {
			provider: v1alpha1.InfluxDBProvider, query: `r.app == "{{ variables.v }}"`,
			value: "x\n|> drop()", want: want{err: "control character"},
		},
		"newrelic: a quote that ends the string": {
			provider: v1alpha1.NewRelicProvider, query: `SELECT count(*) FROM Transaction WHERE appName = '{{ variables.v }}' SINCE 1 minute ago`,
			value: `x' OR appName LIKE '%`, want: want{query: `SELECT count(*) FROM Transaction WHERE appName = 'x\' OR appName LIKE \'%' SINCE 1 minute ago`},
		},
		"newrelic: a backtick name": {
			provider: v1alpha1.NewRelicProvider, query: "SELECT average(`{{ variables.v }}`) FROM Metric",
			value: "x`) FROM Secret SELECT (`y", want: want{err: "a backtick-quoted NRQL name"},
		},
		"graphite: an argument that ends": {
			provider: v1alpha1.GraphiteProvider, query: `sumSeries(seriesByTag('app={{ variables.v }}'))`,
			value: `x'),secret.*,('`, want: want{query: `sumSeries(seriesByTag('app=x\'),secret.*,(\''))`},
		},
		"graphite: a path of tokens": {
			provider: v1alpha1.GraphiteProvider, query: `sumSeries(apps.{{ variables.v }}.requests)`,
			value: `podinfo-*`, want: want{query: `sumSeries(apps.podinfo-*.requests)`},
		},
		"graphite: a path that calls": {
			provider: v1alpha1.GraphiteProvider, query: `sumSeries(apps.{{ variables.v }}.requests)`,
			value: `x),secret.*,(y`, want: want{err: "outside a string literal"},
		},
		"splunk: SignalFlow strings": {
			provider: v1alpha1.SplunkProvider, query: `data('requests', filter=filter('app', "{{ variables.v }}")).publish()`,
			value: `x")).publish(); data("secret`, want: want{query: `data('requests', filter=filter('app', "x\")).publish(); data(\"secret")).publish()`},
		},
		"dynatrace: the tilde escapes": {
			provider: v1alpha1.DynatraceProvider, query: `builtin:service.errors.total.rate:filter(eq("dt.entity.service","{{ variables.v }}"))`,
			value: `x~"),or(eq("a","b`, want: want{query: `builtin:service.errors.total.rate:filter(eq("dt.entity.service","x~~~"),or(eq(~"a~",~"b"))`},
		},
		"cloudwatch: a JSON string": {
			provider: v1alpha1.CloudWatchProvider, query: `[{"Id":"e","MetricStat":{"Metric":{"Dimensions":[{"Name":"app","Value":"{{ variables.v }}"}]}}}]`,
			value: `x"}]},{"Id":"secret`, want: want{query: `[{"Id":"e","MetricStat":{"Metric":{"Dimensions":[{"Name":"app","Value":"x\"}]},{\"Id\":\"secret"}]}}}]`},
		},
		"datadog: every value is a token": {
			provider: v1alpha1.DatadogProvider, query: `sum:requests{app:{{ variables.v }}}.as_count()`,
			value: `x},sum:secret{*`, want: want{err: "outside a string literal"},
		},
		"datadog: a tag value": {
			provider: v1alpha1.DatadogProvider, query: `sum:requests{app:{{ variables.v }},env:{{ namespace }}}.as_count()`,
			value: `podinfo`, want: want{query: `sum:requests{app:podinfo,env:apps}.as_count()`},
		},
		"externalmetrics: a selector": {
			provider: v1alpha1.ExternalMetricsProvider, query: `requests{app={{ variables.v }}}`,
			value: `x,team!=nobody`, want: want{err: "outside a string literal"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			metric := v1alpha1.CanaryMetric{Name: "m", TemplateVariables: map[string]string{"v": tt.value}}
			got, err := RenderQuery(tt.query, tt.provider, canary(), metric)
			if tt.want.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want.err) {
					t.Fatalf("RenderQuery = %q, %v; want an error containing %q", got, err, tt.want.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want.query {
				t.Errorf("RenderQuery =\n%s\nwant\n%s", got, tt.want.query)
			}
		})
	}
}
