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

// Package providers holds the metric providers a MetricTemplate names, one
// file each behind the Provider seam (Prometheus, Datadog, New Relic,
// Graphite, InfluxDB, Dynatrace, Splunk, CloudWatch, Google Cloud
// Monitoring, Kubernetes external metrics), with what they share: the
// bounded HTTP call (providercall.go) and two request signers (AWS
// Signature Version 4, Google's OAuth 2.0 service accounts). A new
// provider is one file that adds its factory to New's table, its
// wire-format test, and how its query language quotes a variable
// (analysis/querylang.go).
package providers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// Provider is a metrics backend: it answers a MetricTemplate's rendered
// query with one number. A query with no answer fails with *ErrNoData.
type Provider interface {
	Query(ctx context.Context, query string) (float64, error)
}

// Config is what a Provider is built from: a MetricTemplate's
// provider and the data of its secretRef, read on the Canary's behalf.
type Config struct {
	// Spec is the MetricTemplate's provider.
	Spec v1alpha1.MetricProvider
	// Secret is the data of spec.secretRef; nil without one. SecretName
	// names it in errors.
	Secret     map[string][]byte
	SecretName string
	// Timeout bounds one query.
	Timeout time.Duration
	// Interval is the check's interval: the window of the providers that
	// query a range (datadog, newrelic, dynatrace, splunk, cloudwatch).
	Interval time.Duration
	// RESTConfig reaches the API server as the Canary's identity (the
	// agent's, or the service account it impersonates for the Canary), and
	// Namespace is the Canary's: where externalmetrics reads its metric,
	// unless the query names another and CrossNamespace allows it.
	RESTConfig     *rest.Config
	Namespace      string
	CrossNamespace bool
}

// providerFactories build the Providers of each type.
var providerFactories = map[v1alpha1.MetricProviderType]func(Config) (Provider, error){
	v1alpha1.PrometheusProvider:      newPrometheusProvider,
	v1alpha1.DatadogProvider:         newDatadogProvider,
	v1alpha1.NewRelicProvider:        newNewRelicProvider,
	v1alpha1.GraphiteProvider:        newGraphiteProvider,
	v1alpha1.InfluxDBProvider:        newInfluxDBProvider,
	v1alpha1.DynatraceProvider:       newDynatraceProvider,
	v1alpha1.SplunkProvider:          newSplunkProvider,
	v1alpha1.CloudWatchProvider:      newCloudWatchProvider,
	v1alpha1.StackdriverProvider:     newStackdriverProvider,
	v1alpha1.ExternalMetricsProvider: newExternalMetricsProvider,
}

// New builds the Provider a MetricTemplate names; an empty type is
// Prometheus.
func New(cfg Config) (Provider, error) {
	t := cfg.Spec.Type
	if t == "" {
		t = v1alpha1.PrometheusProvider
	}
	build, ok := providerFactories[t]
	if !ok {
		var known []string
		for k := range providerFactories {
			known = append(known, string(k))
		}
		slices.Sort(known)
		return nil, fmt.Errorf("metric provider %q is not supported (supported: %s)", t, strings.Join(known, ", "))
	}
	return build(cfg)
}

// newPrometheusProvider is a Prometheus, with basic auth (username and
// password) or a bearer token from the Secret, and the provider's headers.
func newPrometheusProvider(cfg Config) (Provider, error) {
	p := &Prometheus{
		Address:            cfg.Spec.Address,
		InsecureSkipVerify: cfg.Spec.InsecureSkipVerify,
		Timeout:            cfg.Timeout,
	}
	for name, values := range cfg.Spec.Headers {
		if strings.EqualFold(name, "Authorization") {
			return nil, errors.New("provider.headers cannot set Authorization: put the credentials in the Secret of secretRef")
		}
		if p.Headers == nil {
			p.Headers = http.Header{}
		}
		for _, v := range values {
			p.Headers.Add(name, v)
		}
	}
	if cfg.Secret != nil {
		p.Username, p.Password, p.Token = string(cfg.Secret["username"]), string(cfg.Secret["password"]), string(cfg.Secret["token"])
		if p.Token == "" && p.Username == "" {
			return nil, fmt.Errorf("secret %s has neither username/password nor token", cfg.SecretName)
		}
	}
	return p, nil
}
