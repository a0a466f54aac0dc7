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
	"testing"
	"time"

	"github.com/serin-dev/serin/api/v1alpha1"
)

func TestNewProvider(t *testing.T) {
	prom := v1alpha1.MetricProvider{Address: "http://prometheus:9090"}
	tests := map[string]struct {
		cfg     ProviderConfig
		want    Provider
		wantErr string
	}{
		"no type: Prometheus": {
			cfg:  ProviderConfig{Spec: prom, Timeout: time.Second},
			want: &Prometheus{Address: "http://prometheus:9090", Timeout: time.Second},
		},
		"basic auth": {
			cfg:  ProviderConfig{Spec: prom, Secret: map[string][]byte{"username": []byte("u"), "password": []byte("p")}},
			want: &Prometheus{Address: "http://prometheus:9090", Username: "u", Password: "p"},
		},
		"a token": {
			cfg:  ProviderConfig{Spec: prom, Secret: map[string][]byte{"token": []byte("t")}},
			want: &Prometheus{Address: "http://prometheus:9090", Token: "t"},
		},
		"a Secret without credentials": {
			cfg:     ProviderConfig{Spec: prom, Secret: map[string][]byte{"user": []byte("u")}, SecretName: "apps/prom"},
			wantErr: "secret apps/prom has neither username/password nor token",
		},
		"an unknown type": {
			cfg:     ProviderConfig{Spec: v1alpha1.MetricProvider{Type: "opentsdb", Address: "http://tsdb"}},
			wantErr: `metric provider "opentsdb" is not supported (supported: prometheus)`,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := NewProvider(tt.cfg)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g, w := *got.(*Prometheus), *tt.want.(*Prometheus); g != w {
				t.Errorf("provider %+v, want %+v", g, w)
			}
		})
	}
}
