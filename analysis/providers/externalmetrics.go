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
const externalMetricsPath = "apis/external.metrics.k8s.io/v1beta1"

// externalMetrics reads one metric of the Kubernetes external metrics API,
// through the API server or, when the MetricTemplate names an address,
// from that metrics server directly (Flagger's way).
type externalMetrics struct {
	// direct calls the metrics server of the template's address, with the
	// Secret's token and nothing of the agent's credentials; nil reads
	// through the API server.
	direct *httpProvider
	token  string
	// host and client reach the API server as the Canary's identity.
	host   string
	client *http.Client
	// namespace is the Canary's: the metric's unless the query names
	// another, which crossNamespace allows.
	namespace      string
	crossNamespace bool
}

func newExternalMetricsProvider(cfg Config) (Provider, error) {
	if cfg.Namespace == "" {
		return nil, errors.New("externalmetrics: no namespace to read the metric in")
	}
	p := &externalMetrics{namespace: cfg.Namespace, crossNamespace: cfg.CrossNamespace}
	if cfg.Spec.Address != "" {
		keys, err := optionalSecretKeys(cfg, "token")
		if err != nil {
			return nil, err
		}
		direct := newHTTPProvider(cfg)
		p.direct, p.token = &direct, keys[0]
		return p, nil
	}
	if cfg.RESTConfig == nil {
		return nil, errors.New("externalmetrics: no API server to read the external metrics API from")
	}
	restConfig := rest.CopyConfig(cfg.RESTConfig)
	restConfig.Timeout = cfg.Timeout
	httpClient, err := rest.HTTPClientFor(restConfig)
	if err != nil {
		return nil, fmt.Errorf("externalmetrics: %w", err)
	}
	host, _, err := rest.DefaultServerUrlFor(restConfig)
	if err != nil {
		return nil, fmt.Errorf("externalmetrics: %w", err)
	}
	p.host, p.client = strings.TrimSuffix(host.String(), "/"), httpClient
	return p, nil
}

// braceQuery is serin's form of a query: a metric name, with a label
// selector in braces: queue_messages_ready{queue=orders,env in (prod)}.
var braceQuery = regexp.MustCompile(`^\s*([A-Za-z_:][A-Za-z0-9_:.\-]*)\s*(?:\{(.*)\})?\s*$`)

// metricName is what a metric's name may be: one path segment.
var metricName = regexp.MustCompile(`^[A-Za-z0-9_:.@\-]+$`)

// parseExternalMetricQuery reads a query in serin's form (NAME{SELECTOR})
// or in Flagger's ([NAMESPACE/]NAME[?labelSelector=URL-ENCODED]); without a
// namespace, the metric is the Canary's namespace's.
func (p *externalMetrics) parse(query string) (namespace, name string, selector labels.Selector, err error) {
	namespace, selector = p.namespace, labels.Everything()
	rawSelector := ""
	if m := braceQuery.FindStringSubmatch(query); m != nil {
		name, rawSelector = m[1], m[2]
	} else {
		u, err := url.Parse("query:///" + strings.TrimSpace(query))
		if err != nil {
			return "", "", nil, fmt.Errorf("externalmetrics: query %q is neither NAME{SELECTOR} nor NAMESPACE/NAME?labelSelector=…: %w", query, err)
		}
		parts := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
		switch {
		case len(parts) == 1:
			name = parts[0]
		case len(parts) == 2 && parts[0] != "":
			namespace, name = parts[0], parts[1]
		default:
			return "", "", nil, fmt.Errorf("externalmetrics: query %q is neither NAME{SELECTOR} nor NAMESPACE/NAME?labelSelector=…", query)
		}
		rawSelector = u.Query().Get("labelSelector")
	}
	if !metricName.MatchString(name) {
		return "", "", nil, fmt.Errorf("externalmetrics: query %q names no metric: want NAME{SELECTOR} or NAMESPACE/NAME?labelSelector=…", query)
	}
	if strings.TrimSpace(rawSelector) != "" {
		if selector, err = labels.Parse(rawSelector); err != nil {
			return "", "", nil, fmt.Errorf("externalmetrics: the label selector of query %q: %w", query, err)
		}
	}
	if namespace != p.namespace && !p.crossNamespace {
		return "", "", nil, fmt.Errorf("externalmetrics: query %q reads namespace %s, not the Canary's (%s), and cross-namespace "+
			"references are disabled (--no-cross-namespace-refs)", query, namespace, p.namespace)
	}
	return namespace, name, selector, nil
}

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

// Query reads the metric of query and returns the sum of its items, as a
// HorizontalPodAutoscaler sums an external metric's (Flagger took the
// first item: the same for one series); no item is no data.
func (p *externalMetrics) Query(ctx context.Context, query string) (float64, error) {
	namespace, name, selector, err := p.parse(query)
	if err != nil {
		return 0, err
	}
	params := url.Values{}
	if s := selector.String(); s != "" {
		params.Set("labelSelector", s)
	}
	status, body, err := p.get(ctx, namespace, name, params)
	if err != nil {
		return 0, err
	}
	switch {
	case status == http.StatusNotFound:
		return 0, fmt.Errorf("externalmetrics: %s serves no external metric %s in namespace %s (404): "+
			"is an adapter (KEDA, prometheus-adapter, …) registered for external.metrics.k8s.io/v1beta1, and does it serve this metric? %s",
			p.where(), name, namespace, statusMessage(body))
	case status == http.StatusForbidden || status == http.StatusUnauthorized:
		return 0, fmt.Errorf("externalmetrics: reading metric %s in namespace %s is refused (%d): grant get on "+
			"external.metrics.k8s.io to the identity serin reads it as (its own, the Canary's service account, or the Secret's token) %s",
			name, namespace, status, statusMessage(body))
	case status != http.StatusOK:
		return 0, fmt.Errorf("externalmetrics: metric %s in namespace %s: HTTP %d %s", name, namespace, status, statusMessage(body))
	}
	var list externalMetricValueList
	if err := json.Unmarshal(body, &list); err != nil {
		return 0, fmt.Errorf("externalmetrics: metric %s in namespace %s: the answer is not an ExternalMetricValueList: %w", name, namespace, err)
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

// where names what serves the metrics, for messages.
func (p *externalMetrics) where() string {
	if p.direct != nil {
		return "the metrics server of provider.address"
	}
	return "the API server"
}

// get reads a metric from the metrics server of the address, or through the
// API server: the answer's status and body.
func (p *externalMetrics) get(ctx context.Context, namespace, name string, params url.Values) (int, []byte, error) {
	elem := []string{externalMetricsPath, "namespaces", url.PathEscape(namespace), url.PathEscape(name)}
	header := http.Header{"Accept": {"application/json"}}
	if p.direct != nil {
		if p.token != "" {
			header.Set("Authorization", "Bearer "+p.token)
		}
		_, answer, err := p.direct.fetch(ctx, http.MethodGet, params, header, nil, elem...)
		if err != nil {
			return 0, nil, err
		}
		return answer.Status, answer.Body, nil
	}
	u := p.host + "/" + externalMetricsPath + "/namespaces/" + url.PathEscape(namespace) + "/" + url.PathEscape(name)
	if len(params) > 0 {
		u += "?" + params.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, fmt.Errorf("externalmetrics: %w", err)
	}
	req.Header = header
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("externalmetrics: metric %s in namespace %s: %w", name, namespace, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, nil, fmt.Errorf("externalmetrics: metric %s in namespace %s: %w", name, namespace, err)
	}
	return resp.StatusCode, body, nil
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
