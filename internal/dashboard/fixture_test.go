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

package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/record"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// testNow is the clock of the requests' values; testToken the page's token.
var testNow = time.Date(2026, 5, 4, 10, 15, 0, 0, time.UTC)

const testToken = "test-token"

// rolloutStart is when the sample's failed rollout began.
var rolloutStart = time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)

const (
	goodRevision   = "main@sha1:1111111111111111111111111111111111111111"
	badRevision    = "main@sha1:2222222222222222222222222222222222222222"
	latestRevision = "main@sha1:3333333333333333333333333333333333333333"
)

// sampleCanary is a Canary in the middle of its second rollout: the first
// failed on its error rate and has a revert pull request; the second is at
// weight 40. Its record is written by the agent's own record functions.
func sampleCanary() *v1alpha1.Canary {
	c := testobj.MakeCanary("podinfo", "apps").
		Gateway("gateways", "public").
		Analysis(v1alpha1.CanaryAnalysis{Interval: &metav1.Duration{Duration: 30 * time.Second}, Threshold: 2, StepWeight: 20, MaxWeight: 60}).
		Phase(v1alpha1.PhaseProgressing).Weight(40).Checks(0, 1).
		Promoted("spec-1", goodRevision).
		Obj()
	st := &c.Status
	st.Conditions = []metav1.Condition{{
		Type: meta.ReadyCondition, Status: metav1.ConditionFalse, Reason: "Progressing",
		Message: "analysing revision " + latestRevision, LastTransitionTime: metav1.NewTime(rolloutStart.Add(10 * time.Minute)),
	}}
	st.Revert = &v1alpha1.RevertStatus{Revision: badRevision, State: "Opened", PullRequestURL: "https://git.example/apps/pulls/7"}

	st.LastAppliedSpec, st.LastAttemptedRevision = "spec-2", badRevision
	record.AddStep(st, step(rolloutStart, 20, v1alpha1.VerdictPassed, "", checks(errorRate("0.2", v1alpha1.VerdictPassed))))
	record.AddStep(st, step(rolloutStart.Add(30*time.Second), 40, v1alpha1.VerdictFailed, "1 of 2 failed checks",
		checks(errorRate("7.5", v1alpha1.VerdictFailed))))
	record.Finish(st, v1alpha1.PhaseFailed, rolloutStart.Add(time.Minute), "canary analysis failed: error-rate 7.5 above max 1")

	st.LastAppliedSpec, st.LastAttemptedRevision = "spec-3", latestRevision
	smoke := v1alpha1.WebhookResult{Name: "smoke", Type: v1alpha1.RolloutHook, Verdict: v1alpha1.VerdictPassed}
	record.AddStep(st, step(rolloutStart.Add(10*time.Minute), 20, v1alpha1.VerdictPassed, "",
		checks(errorRate("0.1", v1alpha1.VerdictPassed), latency("120", v1alpha1.VerdictPassed)), smoke))
	record.AddStep(st, step(rolloutStart.Add(10*time.Minute+30*time.Second), 40, v1alpha1.VerdictFailed, "1 of 2 failed checks",
		checks(errorRate("", v1alpha1.VerdictFailed), latency("180", v1alpha1.VerdictPassed)), smoke))
	return c
}

// step is an analysis step with its checks and webhooks.
func step(at time.Time, weight int, verdict, message string, checks []v1alpha1.CheckResult, hooks ...v1alpha1.WebhookResult) v1alpha1.AnalysisStep {
	return v1alpha1.AnalysisStep{At: metav1.NewMicroTime(at), Weight: weight, Verdict: verdict, Message: message, Checks: checks, Webhooks: hooks}
}

func checks(c ...v1alpha1.CheckResult) []v1alpha1.CheckResult { return c }

func errorRate(value, verdict string) v1alpha1.CheckResult {
	c := v1alpha1.CheckResult{Name: "error-rate", Value: value, Max: "1", Verdict: verdict}
	if value == "" {
		c.Message = "no values found for the query"
	}
	return c
}

func latency(value, verdict string) v1alpha1.CheckResult {
	return v1alpha1.CheckResult{Name: "latency", Value: value, Min: "0", Max: "500", Verdict: verdict}
}

// newFakeClient is a fake API server holding objects, with the status
// subresource of Canaries, through funcs when given (to refuse requests).
func newFakeClient(funcs *interceptor.Funcs, objects ...client.Object) client.WithWatch {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	builder := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).WithStatusSubresource(&v1alpha1.Canary{})
	if funcs != nil {
		builder = builder.WithInterceptorFuncs(*funcs)
	}
	return builder.Build()
}

// startServer serves the dashboard of kube, watching, until the test ends.
func startServer(t *testing.T, kube client.WithWatch, namespace string) *httptest.Server {
	t.Helper()
	s, err := New(kube, Options{Namespace: namespace, Token: testToken, Now: func() time.Time { return testNow },
		RetryDelay: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go s.Run(ctx)
	server := httptest.NewServer(s)
	t.Cleanup(func() {
		cancel()
		server.CloseClientConnections()
		server.Close()
	})
	return server
}

// headers are a request's headers by name; "Host" sets the Host.
type headers map[string]string

// send makes a request of the dashboard and reads its answer.
func send(t *testing.T, server *httptest.Server, method, path string, h headers) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, server.URL+path, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := server.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// get answers a GET of path as the page's script makes it.
func get(t *testing.T, server *httptest.Server, path string) (*http.Response, string) {
	t.Helper()
	return send(t, server, http.MethodGet, path, nil)
}

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	name string
	data string
}

// decode reads the event's data into v.
func (e sseEvent) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(e.data), v); err != nil {
		t.Fatalf("event %s: %v: %s", e.name, err, e.data)
	}
}

// eventReader reads an event stream.
type eventReader struct {
	t      *testing.T
	events chan sseEvent
}

func openEvents(t *testing.T, server *httptest.Server, query string) *eventReader {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, server.URL+"/api/events"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := server.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("event stream answered %s, %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	r := &eventReader{t: t, events: make(chan sseEvent, 100)}
	go r.read(resp.Body)
	return r
}

func (r *eventReader) read(body io.ReadCloser) {
	defer body.Close()
	defer close(r.events)
	scanner := bufio.NewScanner(body)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	var event sseEvent
	for scanner.Scan() {
		line := scanner.Text()
		switch {
		case line == "":
			if event.name != "" {
				r.events <- event
			}
			event = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			event.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			event.data = strings.TrimPrefix(line, "data: ")
		}
	}
}

// next returns the next event, failing the test after a few seconds.
func (r *eventReader) next() sseEvent {
	r.t.Helper()
	select {
	case event, ok := <-r.events:
		if !ok {
			r.t.Fatal("the event stream ended")
		}
		return event
	case <-time.After(5 * time.Second):
		r.t.Fatal("no event within 5s")
	}
	return sseEvent{}
}

// nextNamed skips events until one named name.
func (r *eventReader) nextNamed(name string) sseEvent {
	r.t.Helper()
	for {
		if event := r.next(); event.name == name {
			return event
		}
	}
}
