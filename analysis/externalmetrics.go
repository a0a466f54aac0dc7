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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
)

// externalMetricsPath is the API of external metrics, which the API server
// serves through an adapter registered as an APIService.
const externalMetricsPath = "/apis/external.metrics.k8s.io/v1beta1"

// externalMetrics reads one metric of the Kubernetes external metrics API
// in a namespace, through the API server.
type externalMetrics struct {
	host      string
	client    *http.Client
	namespace string
}

func newExternalMetricsProvider(cfg ProviderConfig) (Provider, error) {
	if cfg.RESTConfig == nil {
		return nil, errors.New("external-metrics: no API server to read the external metrics API from")
	}
	if cfg.Namespace == "" {
		return nil, errors.New("external-metrics: no namespace to read the metric in")
	}
	restConfig := rest.CopyConfig(cfg.RESTConfig)
	restConfig.Timeout = cfg.Timeout
	httpClient, err := rest.HTTPClientFor(restConfig)
	if err != nil {
		return nil, fmt.Errorf("external-metrics: %w", err)
	}
	host, _, err := rest.DefaultServerUrlFor(restConfig)
	if err != nil {
		return nil, fmt.Errorf("external-metrics: %w", err)
	}
	return &externalMetrics{host: strings.TrimSuffix(host.String(), "/"), client: httpClient, namespace: cfg.Namespace}, nil
}

// externalMetricQuery is a metric name, with a label selector in braces:
// queue_messages_ready{queue=orders,env in (prod)}.
var externalMetricQuery = regexp.MustCompile(`^\s*([A-Za-z_:][A-Za-z0-9_:.\-]*)\s*(?:\{(.*)\})?\s*$`)

// externalMetricValueList is what the external metrics API answers
// (external.metrics.k8s.io/v1beta1 ExternalMetricValueList): one item a
// series, its value a Kubernetes quantity.
type externalMetricValueList struct {
	Kind  string `json:"kind"`
	Items []struct {
		MetricName   string            `json:"metricName"`
		MetricLabels map[string]string `json:"metricLabels"`
		Value        resource.Quantity `json:"value"`
	} `json:"items"`
}

// Query reads the metric of query (NAME or NAME{SELECTOR}) in the Canary's
// namespace and returns the sum of its items, as a HorizontalPodAutoscaler
// sums an external metric's; no item is no data.
func (p *externalMetrics) Query(ctx context.Context, query string) (float64, error) {
	m := externalMetricQuery.FindStringSubmatch(query)
	if m == nil {
		return 0, fmt.Errorf("external-metrics: query %q is not a metric name with an optional label selector in braces, "+
			"such as queue_messages_ready{queue=orders}", query)
	}
	name, selector := m[1], labels.Everything()
	if strings.TrimSpace(m[2]) != "" {
		parsed, err := labels.Parse(m[2])
		if err != nil {
			return 0, fmt.Errorf("external-metrics: the label selector of query %q: %w", query, err)
		}
		selector = parsed
	}
	u := p.host + externalMetricsPath + "/namespaces/" + url.PathEscape(p.namespace) + "/" + url.PathEscape(name)
	if s := selector.String(); s != "" {
		u += "?" + url.Values{"labelSelector": {s}}.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, fmt.Errorf("external-metrics: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("external-metrics: metric %s in namespace %s: %w", name, p.namespace, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, fmt.Errorf("external-metrics: metric %s in namespace %s: %w", name, p.namespace, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return 0, fmt.Errorf("external-metrics: the API server serves no external metric %s in namespace %s (404): "+
			"is an adapter (KEDA, prometheus-adapter, …) registered for external.metrics.k8s.io/v1beta1, and does it serve this metric? %s",
			name, p.namespace, statusMessage(body))
	case resp.StatusCode == http.StatusForbidden:
		return 0, fmt.Errorf("external-metrics: reading metric %s in namespace %s is forbidden (403): grant get on "+
			"external.metrics.k8s.io to the identity serin reads it as (its own, or the Canary's service account) %s",
			name, p.namespace, statusMessage(body))
	case resp.StatusCode != http.StatusOK:
		return 0, fmt.Errorf("external-metrics: metric %s in namespace %s: HTTP %d %s", name, p.namespace, resp.StatusCode, statusMessage(body))
	}
	var list externalMetricValueList
	if err := json.Unmarshal(body, &list); err != nil {
		return 0, fmt.Errorf("external-metrics: metric %s in namespace %s: the answer is not an ExternalMetricValueList: %w", name, p.namespace, err)
	}
	if len(list.Items) == 0 {
		return 0, &ErrNoData{Query: query}
	}
	sum := 0.0
	for _, item := range list.Items {
		sum += item.Value.AsApproximateFloat64()
	}
	return sum, nil
}

// statusMessage is the message of a Kubernetes Status answer, or the start
// of any other body.
func statusMessage(body []byte) string {
	var status struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(body, &status); err == nil && status.Message != "" {
		return "(" + status.Message + ")"
	}
	if s := strings.TrimSpace(string(body)); s != "" {
		if len(s) > 200 {
			s = s[:200] + "…"
		}
		return "(" + s + ")"
	}
	return ""
}
