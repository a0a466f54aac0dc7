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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/serin-dev/serin/api/v1alpha1"
)

func TestNew(t *testing.T) {
	prom := v1alpha1.MetricProvider{Address: "http://prometheus:9090"}
	tests := map[string]struct {
		cfg     Config
		want    Provider
		wantErr string
	}{
		"no type: Prometheus": {
			cfg:  Config{Spec: prom, Timeout: time.Second},
			want: &Prometheus{Address: "http://prometheus:9090", Timeout: time.Second},
		},
		"basic auth": {
			cfg:  Config{Spec: prom, Secret: map[string][]byte{"username": []byte("u"), "password": []byte("p")}},
			want: &Prometheus{Address: "http://prometheus:9090", Username: "u", Password: "p"},
		},
		"a token": {
			cfg:  Config{Spec: prom, Secret: map[string][]byte{"token": []byte("t")}},
			want: &Prometheus{Address: "http://prometheus:9090", Token: "t"},
		},
		"headers": {
			cfg: Config{Spec: v1alpha1.MetricProvider{Address: "http://mimir/prometheus",
				Headers: map[string][]string{"X-Scope-OrgID": {"team-a", "team-b"}}}},
			want: &Prometheus{Address: "http://mimir/prometheus", Headers: http.Header{"X-Scope-Orgid": {"team-a", "team-b"}}},
		},
		"an Authorization header": {
			cfg:     Config{Spec: v1alpha1.MetricProvider{Address: "http://prom", Headers: map[string][]string{"authorization": {"Bearer x"}}}},
			wantErr: "provider.headers cannot set Authorization: put the credentials in the Secret of secretRef",
		},
		"a Secret without credentials": {
			cfg:     Config{Spec: prom, Secret: map[string][]byte{"user": []byte("u")}, SecretName: "apps/prom"},
			wantErr: "secret apps/prom has neither username/password nor token",
		},
		"an unknown type": {
			cfg:     Config{Spec: v1alpha1.MetricProvider{Type: "opentsdb", Address: "http://tsdb"}},
			wantErr: `metric provider "opentsdb" is not supported (supported: cloudwatch, datadog, dynatrace, externalmetrics, graphite, influxdb, newrelic, prometheus, splunk, stackdriver)`,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := New(tt.cfg)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("provider differs (-want +got):\n%s", diff)
			}
		})
	}
}
