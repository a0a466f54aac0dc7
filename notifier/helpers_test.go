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

package notifier

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	notificationv1 "github.com/fluxcd/notification-controller/api/v1beta3"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

const testRevision = "main@sha1:0123456789abcdef0123456789abcdef01234567"

// testTime is the time of every test event.
var testTime = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// fastRetry keeps retrying tests short.
var fastRetry = RetryPolicy{Max: 2, WaitMin: 10 * time.Millisecond, WaitMax: 20 * time.Millisecond}

func testCanary() *v1alpha1.Canary {
	c := testobj.MakeCanary("podinfo", "apps").Target("apps/v1", "Deployment", "podinfo").Obj()
	c.UID = "9a1c0b6e-0000-4000-8000-000000000001"
	c.Status.Phase = v1alpha1.PhaseSucceeded
	c.Status.LastAttemptedRevision = testRevision
	return c
}

// promoted is the final event of a successful rollout.
func promoted() Event {
	return Event{
		Severity: SeverityInfo, Reason: "Succeeded", Message: "Canary analysis completed successfully, promotion finished (revision " + testRevision + ")",
		Phase: v1alpha1.PhaseSucceeded, Revision: testRevision, Weight: 0, Final: true,
	}
}

// halted is the final event of a failed promotion.
func halted() Event {
	return Event{
		Severity: SeverityError, Reason: "Halted", Message: "promotion halted, routing frozen and canary kept serving: primary not ready",
		Phase: v1alpha1.PhaseHalted, Revision: testRevision, Weight: 50, Final: true,
	}
}

func withAlerts(c *v1alpha1.Canary, alerts ...v1alpha1.CanaryAlert) *v1alpha1.Canary {
	c.Spec.Alerts = alerts
	return c
}

func alertFor(name string, severity v1alpha1.AlertSeverity) v1alpha1.CanaryAlert {
	return v1alpha1.CanaryAlert{ProviderRef: meta.NamespacedObjectReference{Name: name, Namespace: "flux-system"}, Severity: severity}
}

func provider(name, typ string, mutate ...func(*notificationv1.Provider)) *notificationv1.Provider {
	p := &notificationv1.Provider{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "flux-system"},
		Spec:       notificationv1.ProviderSpec{Type: typ},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func withSecret(name string) func(*notificationv1.Provider) {
	return func(p *notificationv1.Provider) { p.Spec.SecretRef = &meta.LocalObjectReference{Name: name} }
}

func secret(name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "flux-system"}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func fakeReader(t *testing.T, objs ...client.Object) client.Reader {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme, notificationv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
}

func testBridge(t *testing.T, opts Options) *Bridge {
	t.Helper()
	if opts.Retry == (RetryPolicy{}) {
		opts.Retry = fastRetry
	}
	opts.ReportingInstance = "serin-agent-0"
	opts.Now = func() time.Time { return testTime }
	opts.Logger = testr.New(t)
	return New(opts)
}

// deliverNow runs one event through a Bridge synchronously, as a worker would.
func deliverNow(b *Bridge, c *v1alpha1.Canary, e Event) bool {
	return b.deliver(context.Background(), job{canary: c.DeepCopy(), event: e, at: b.opts.Now()})
}

// received is one request a sink got.
type received struct {
	// uri is the request target as sent, escapes kept (a GitLab project
	// path is escaped).
	uri                string
	method, path, host string
	header             http.Header
	body               []byte
}

// sink is an HTTP receiver standing in for a chat service or
// notification-controller; it answers with status (200 when 0).
type sink struct {
	*httptest.Server
	mu       sync.Mutex
	requests []received
	status   func(n int) int
}

func newSink(t *testing.T, status func(n int) int) *sink {
	s := &sink{status: status}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.requests = append(s.requests, received{uri: r.RequestURI, method: r.Method, path: r.URL.Path, host: r.Host, header: r.Header.Clone(), body: body})
		n := len(s.requests)
		s.mu.Unlock()
		code := http.StatusOK
		if s.status != nil {
			code = s.status(n)
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *sink) got() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.requests...)
}

// compact returns the compact form of a JSON literal written for people.
func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("bad expected JSON: %v\n%s", err, s)
	}
	return b.String()
}
