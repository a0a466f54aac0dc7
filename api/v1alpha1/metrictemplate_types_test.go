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

package v1alpha1

import "testing"

// Datadog and New Relic default to their US API, as in Flagger,
// CloudWatch to its region's endpoint, Google Cloud Monitoring to Google's
// API; the others have no default.
func TestMetricProviderGetAddress(t *testing.T) {
	tests := map[string]struct {
		provider MetricProvider
		want     string
	}{
		"set":                   {provider: MetricProvider{Type: DatadogProvider, Address: "https://api.datadoghq.eu"}, want: "https://api.datadoghq.eu"},
		"datadog":               {provider: MetricProvider{Type: DatadogProvider}, want: "https://api.datadoghq.com"},
		"newrelic":              {provider: MetricProvider{Type: NewRelicProvider}, want: "https://insights-api.newrelic.com"},
		"prometheus, no value":  {provider: MetricProvider{Type: PrometheusProvider}, want: ""},
		"cloudwatch":            {provider: MetricProvider{Type: CloudWatchProvider, Region: "eu-west-1"}, want: "https://monitoring.eu-west-1.amazonaws.com"},
		"cloudwatch in China":   {provider: MetricProvider{Type: CloudWatchProvider, Region: "cn-north-1"}, want: "https://monitoring.cn-north-1.amazonaws.com.cn"},
		"cloudwatch, set":       {provider: MetricProvider{Type: CloudWatchProvider, Region: "us-east-1", Address: "https://vpce.example"}, want: "https://vpce.example"},
		"cloudwatch, no region": {provider: MetricProvider{Type: CloudWatchProvider}, want: ""},
		"stackdriver":           {provider: MetricProvider{Type: StackdriverProvider}, want: "https://monitoring.googleapis.com"},
		"stackdriver, set":      {provider: MetricProvider{Type: StackdriverProvider, Address: "https://monitoring-psc.p.googleapis.com"}, want: "https://monitoring-psc.p.googleapis.com"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tt.provider.GetAddress(); got != tt.want {
				t.Errorf("GetAddress() = %q, want %q", got, tt.want)
			}
		})
	}
}
