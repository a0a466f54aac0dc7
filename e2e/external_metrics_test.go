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

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// A MetricTemplate of type externalmetrics read through the testbed's
// real API server and its aggregation layer: an APIService registers an
// adapter for external.metrics.k8s.io/v1beta1, which the API server proxies
// to. The adapter is the test's (KEDA's and prometheus-adapter's are too
// big to build here), and serves one metric, error_percent, computed from
// the testbed's real Prometheus (Traefik's series of the Service its
// selector names), so that the value the check reads is the traffic the
// canary served. Before the APIService, the check fails with the API
// server's 404, and says an adapter is missing; with it, a good revision
// is promoted (0 % errors) and a revision failing half its requests is
// rolled back on the value the adapter answered.
func TestMetrics_ExternalMetrics(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	adapter := startExternalMetricsAdapter(t)

	g.Expect(k8s.Create(ctx, testobj.MakeDeployment("podinfo", ns).Image("podinfo:v1").Obj())).To(Succeed())
	tpl := &v1alpha1.MetricTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "errors", Namespace: ns},
		Spec: v1alpha1.MetricTemplateSpec{
			Provider: v1alpha1.MetricProvider{Type: v1alpha1.ExternalMetricsProvider},
			// Flagger's form; NAME{SELECTOR} reads the same.
			Query: "{{ namespace }}/error_percent?labelSelector=service%3D{{ service }}-canary",
		},
	}
	g.Expect(k8s.Create(ctx, tpl)).To(Succeed())

	c := testobj.MakeCanary("podinfo", ns).ProgressDeadlineSeconds(30).Analysis(v1alpha1.CanaryAnalysis{
		Interval:   &metav1.Duration{Duration: interval},
		Threshold:  2,
		Iterations: 3,
		Metrics: []v1alpha1.CanaryMetric{{Name: "errors", TemplateRef: &v1alpha1.TemplateReference{Name: "errors"},
			ThresholdRange: &v1alpha1.ThresholdRange{Max: ptrFloat(1)}}},
	}).Obj()
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseInitialized, 30*time.Second)
	startBlueGreenTraffic(t, g, ns)

	// No adapter yet: the API server answers 404, and the check says why.
	releaseRevision(g, ns, "podinfo", "podinfo:v2", nil)
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(lastCheckMessage(c)).To(ContainSubstring("serves no external metric error_percent in namespace " + ns + " (404)"))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseFailed, 60*time.Second)

	adapter.register(t, g)
	releaseRevision(g, ns, "podinfo", "podinfo:v3", nil)
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 90*time.Second)
	passed := checksOf(c.Status.Analyses[0], v1alpha1.VerdictPassed)
	t.Logf("promoted v3: %v", passed)
	g.Expect(passed).To(HaveKeyWithValue("errors", 0.0))

	releaseRevision(g, ns, "podinfo", "podinfo:v4", erroring(50))
	waitForPhase(g, c, v1alpha1.PhaseFailed, 90*time.Second)
	failed := checksOf(c.Status.Analyses[0], v1alpha1.VerdictFailed)
	t.Logf("rolled back v4: %v", failed)
	g.Expect(failed).To(HaveKeyWithValue("errors", BeNumerically("~", 50, 15)), "the adapter's value decided it")

	got := adapter.requests()
	g.Expect(got).NotTo(BeEmpty())
	t.Logf("adapter: %d requests through the API server, the first %s", len(got), got[0])
	g.Expect(got[0]).To(HavePrefix("/apis/external.metrics.k8s.io/v1beta1/namespaces/" + ns + "/error_percent?labelSelector=service%3Dpodinfo-canary"))
	expectNoUserErrors(t, g, ns)
}

// lastCheckMessage is the message of the newest check of the newest
// analysis record.
func lastCheckMessage(c *v1alpha1.Canary) string {
	if len(c.Status.Analyses) == 0 {
		return ""
	}
	steps := c.Status.Analyses[0].Steps
	for i := len(steps) - 1; i >= 0; i-- {
		for _, check := range steps[i].Checks {
			if check.Message != "" {
				return check.Message
			}
		}
	}
	return ""
}

// externalMetricsAdapter is a test adapter of the external metrics API on
// loopback (TLS, as the aggregation layer requires).
type externalMetricsAdapter struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string
}

func (a *externalMetricsAdapter) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.seen...)
}

// startExternalMetricsAdapter serves discovery and error_percent: 100 ×
// the 5xx share of what Traefik's backend of the Service of the selector
// (service=NAME) answered in the last 5 s, from the testbed's Prometheus.
func startExternalMetricsAdapter(t *testing.T) *externalMetricsAdapter {
	t.Helper()
	a := &externalMetricsAdapter{}
	const prefix = "/apis/external.metrics.k8s.io/v1beta1"
	a.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == prefix {
			fmt.Fprint(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"external.metrics.k8s.io/v1beta1","resources":[]}`)
			return
		}
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, prefix+"/"), "/")
		if len(parts) != 3 || parts[0] != "namespaces" || parts[2] != "error_percent" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"no such metric","code":404}`)
			return
		}
		a.mu.Lock()
		a.seen = append(a.seen, r.URL.RequestURI())
		a.mu.Unlock()
		selector, err := labels.Parse(r.URL.Query().Get("labelSelector"))
		service, ok := "", false
		if err == nil {
			service, ok = selector.RequiresExactMatch("service")
		}
		if !ok {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"want labelSelector service=NAME","code":400}`)
			return
		}
		backend := fmt.Sprintf(`service="%s-%s-http-%d@kubernetesgateway"`, parts[1], service, appPort)
		value, found, err := promValue(r.Context(), `100 * (sum(rate(traefik_service_requests_total{`+backend+`,code=~"5.."}[5s])) or vector(0))`+
			` / sum(rate(traefik_service_requests_total{`+backend+`}[5s]))`)
		if err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":%q,"code":500}`, err.Error())
			return
		}
		items := "[]"
		if found {
			items = fmt.Sprintf(`[{"metricName":"error_percent","metricLabels":{"service":%q},"timestamp":%q,"value":"%dm"}]`,
				service, time.Now().UTC().Format(time.RFC3339), int64(value*1000))
		}
		fmt.Fprintf(w, `{"kind":"ExternalMetricValueList","apiVersion":"external.metrics.k8s.io/v1beta1","metadata":{},"items":%s}`, items)
	}))
	t.Cleanup(a.srv.Close)
	return a
}

// register makes the API server serve the adapter: an ExternalName
// Service for localhost (the aggregation layer dials an ExternalName
// Service's name) and the APIService, until it is Available.
func (a *externalMetricsAdapter) register(t *testing.T, g Gomega) {
	t.Helper()
	ctx := context.Background()
	ns := newNamespace(t)
	_, port, _ := net.SplitHostPort(a.srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "external-metrics", Namespace: ns},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost",
			Ports: []corev1.ServicePort{{Name: "https", Port: int32(p)}}},
	}
	g.Expect(k8s.Create(ctx, svc)).To(Succeed())
	apiService := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1",
		"kind":       "APIService",
		"metadata":   map[string]any{"name": "v1beta1.external.metrics.k8s.io"},
		"spec": map[string]any{
			"group": "external.metrics.k8s.io", "version": "v1beta1",
			"service":               map[string]any{"namespace": ns, "name": "external-metrics", "port": int64(p)},
			"insecureSkipTLSVerify": true, "groupPriorityMinimum": int64(100), "versionPriority": int64(100),
		},
	}}
	g.Expect(k8s.Create(ctx, apiService)).To(Succeed())
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), apiService) })
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(apiService), apiService)).To(Succeed())
		conditions, _, _ := unstructured.NestedSlice(apiService.Object, "status", "conditions")
		available := ""
		for _, c := range conditions {
			if m, ok := c.(map[string]any); ok && m["type"] == "Available" {
				available = fmt.Sprint(m["status"], ": ", m["message"])
			}
		}
		g.Expect(available).To(HavePrefix("True"))
	}, 60*time.Second, 500*time.Millisecond).Should(Succeed(), "the APIService of the adapter is Available")
}

// promValue runs an instant query on the testbed's Prometheus: its one
// value, or not found.
func promValue(ctx context.Context, query string) (float64, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, prom.URL+"/api/v1/query?"+url.Values{"query": {query}}.Encode(), nil)
	if err != nil {
		return 0, false, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	var answer struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		return 0, false, err
	}
	if len(answer.Data.Result) == 0 {
		return 0, false, nil
	}
	s, _ := answer.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v != v { // NaN: no requests
		return 0, false, nil
	}
	return v, true, nil
}
