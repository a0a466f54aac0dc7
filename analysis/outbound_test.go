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
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/acl"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/serin-dev/serin/analysis/providers"
	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/tenancy"
)

// fakeReader is an API reader holding objs.
func fakeReader(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
}

func secret(namespace, name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// TestWebhooks_Signed checks a signed call as a receiver does: this is the
// wire format receivers verify (docs/security.md#signed-webhooks), so the
// server recomputes the signature on its own, without serin's code.
func TestWebhooks_Signed(t *testing.T) {
	const token = "s3cr3t-token"
	now := time.Unix(1767225600, 0)
	type received struct {
		timestamp, signature string
		body                 []byte
	}
	var got atomic.Pointer[received]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got.Store(&received{timestamp: r.Header.Get("X-Serin-Timestamp"), signature: r.Header.Get("X-Serin-Signature-256"), body: body})
		// The receiver's check, in full.
		mac := hmac.New(sha256.New, []byte(token))
		mac.Write([]byte(r.Header.Get("X-Serin-Timestamp") + "." + string(body)))
		want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
		ts, err := strconv.ParseInt(r.Header.Get("X-Serin-Timestamp"), 10, 64)
		if !hmac.Equal([]byte(want), []byte(r.Header.Get("X-Serin-Signature-256"))) || err != nil || now.Sub(time.Unix(ts, 0)).Abs() > 5*time.Minute {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer srv.Close()

	c := canary()
	hook := v1alpha1.CanaryWebhook{Name: "gate", Type: v1alpha1.ConfirmPromotionHook, URL: srv.URL,
		SigningSecretRef: &meta.LocalObjectReference{Name: "hook-key"}}
	reader := fakeReader(t, secret("apps", "hook-key", map[string]string{"token": token + "\n"}))
	w := &Webhooks{Tenancy: tenancy.Static(reader, reader, tenancy.Options{}), Now: func() time.Time { return now }}
	if err := w.Call(context.Background(), c, hook, c.Status.Phase); err != nil {
		t.Fatalf("a signed call failed the receiver's check: %v", err)
	}
	r := got.Load()
	if r.timestamp != "1767225600" {
		t.Errorf("X-Serin-Timestamp = %q, want the call's Unix time", r.timestamp)
	}
	wantBody := `{"name":"podinfo","namespace":"apps","phase":"Progressing","checksum":"abc123","type":"confirm-promotion"}`
	if diff := cmp.Diff(wantBody, string(r.body)); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	if want := "sha256=" + SignWebhook([]byte(token), r.timestamp, r.body); r.signature != want {
		t.Errorf("signature = %q, want %q", r.signature, want)
	}

	w.Now = func() time.Time { return now.Add(-time.Hour) }
	if err := w.Call(context.Background(), c, hook, c.Status.Phase); err == nil || !strings.Contains(err.Error(), "answered 401") {
		t.Errorf("a receiver refuses an old timestamp: %v", err)
	}
}

// A signed webhook whose key cannot be read fails without calling, naming
// the Secret.
func TestWebhooks_SigningSecretMissing(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls.Add(1) }))
	defer srv.Close()
	reader := fakeReader(t, secret("apps", "no-token", map[string]string{"key": "x"}), secret("other", "hook-key", map[string]string{"token": "x"}))
	withReader := tenancy.Static(reader, reader, tenancy.Options{})
	tests := map[string]struct {
		tenancy *tenancy.Tenancy
		secret  string
		wantErr string
	}{
		"no such Secret in the Canary's namespace": {tenancy: withReader, secret: "hook-key",
			wantErr: `webhook gate: failed to get the signing Secret apps/hook-key (signingSecretRef): secrets "hook-key" not found`},
		"no token key": {tenancy: withReader, secret: "no-token",
			wantErr: "webhook gate: the signing Secret apps/no-token (signingSecretRef) has no 'token' key, or it is empty"},
		"no tenancy": {secret: "hook-key",
			wantErr: "webhook gate: cannot read the signing Secret apps/hook-key (signingSecretRef): no tenancy configured"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := canary()
			hook := v1alpha1.CanaryWebhook{Name: "gate", URL: srv.URL, Retries: 2, SigningSecretRef: &meta.LocalObjectReference{Name: tt.secret}}
			err := (&Webhooks{Tenancy: tt.tenancy}).Call(context.Background(), c, hook, c.Status.Phase)
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
	if calls.Load() != 0 {
		t.Errorf("an unsigned call was made %d times", calls.Load())
	}
}

// A webhook's POST follows no redirect, is not retried after one, and its
// errors name the URL redacted and quote only an excerpt of the answer.
func TestWebhooks_OutboundPolicy(t *testing.T) {
	var stolen, redirects atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { stolen.Add(1) }))
	defer elsewhere.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			redirects.Add(1)
			http.Redirect(w, r, elsewhere.URL+"/collect?key=abc", http.StatusTemporaryRedirect)
		case "/noisy":
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, "\x1b[31mupstream\x1b[0m failed:\n\n"+strings.Repeat("internal detail ", 100))
		}
	}))
	defer srv.Close()
	base := strings.Replace(srv.URL, "http://", "http://user:pa55@", 1)
	tests := map[string]struct {
		url     string
		wantErr string
	}{
		"redirect refused": {url: base + "/redirect?token=t0k3n",
			wantErr: `webhook w: ` + strings.Replace(srv.URL, "http://", "http://redacted@", 1) + `/redirect?token=redacted: ` +
				`the server answered with a redirect to ` + elsewhere.URL + `/collect?key=redacted, and serin follows none`},
		"answer excerpt": {url: base + "/noisy?token=t0k3n",
			wantErr: `webhook w: ` + strings.Replace(srv.URL, "http://", "http://redacted@", 1) + `/noisy?token=redacted answered 502: ` +
				`"upstream failed: internal detail internal detail internal detai…"`},
		"unparsable URL": {url: "http://user:pa55@h/%zz?token=t0k3n", wantErr: "webhook w: invalid URL <unparsable URL>"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := canary()
			err := (&Webhooks{}).Call(context.Background(), c, v1alpha1.CanaryWebhook{Name: "w", URL: tt.url, Retries: 3}, c.Status.Phase)
			if err == nil {
				t.Fatal("the call succeeded")
			}
			if diff := cmp.Diff(tt.wantErr, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
	if stolen.Load() != 0 || redirects.Load() != 1 {
		t.Errorf("the redirect target was called %d times, the redirecting webhook %d times (want 0 and 1: no retry)", stolen.Load(), redirects.Load())
	}
}

func TestEscapePromQL(t *testing.T) {
	tests := map[string]struct{ in, want string }{
		"ordinary value unchanged": {in: "podinfo-v2.apps_1/api:8080", want: "podinfo-v2.apps_1/api:8080"},
		"regex unchanged":          {in: "5..|4.*(a+)[0-9]{2}", want: "5..|4.*(a+)[0-9]{2}"},
		"unicode unchanged":        {in: "déploiement", want: "déploiement"},
		"double quote":             {in: `x"y`, want: `x\x22y`},
		"single quote":             {in: `it's`, want: `it\x27s`},
		"backtick":                 {in: "a`b", want: `a\x60b`},
		"backslash":                {in: `\d+`, want: `\x5cd+`},
		"newline and CR":           {in: "a\nb\rc", want: `a\x0ab\x0dc`},
		"other controls":           {in: "a\x00\x1b\x7f\u0085b", want: `a\x00\x1b\x7f\u0085b`},
		"line separator":           {in: "a\u2028b", want: `a\u2028b`},
		"invalid UTF-8":            {in: "a\xffb", want: `a\ufffdb`},
		"injection":                {in: `x"} or vector(1) #`, want: `x\x22} or vector(1) #`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := EscapePromQL(tt.in); got != tt.want {
				t.Errorf("EscapePromQL(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// A variable cannot end the string literal it is placed in: the query
// keeps its shape, and Prometheus reads the value back as it was given.
func TestRenderQuery_Escapes(t *testing.T) {
	tests := map[string]struct {
		query, value, want string
	}{
		"double-quoted matcher": {
			query: `sum(rate(http_requests_total{app="{{ variables.app }}"}[1m]))`,
			value: `x"} or vector(1) #`,
			want:  `sum(rate(http_requests_total{app="x\x22} or vector(1) #"}[1m]))`,
		},
		"single-quoted matcher": {
			query: `up{app='{{ variables.app }}'}`,
			value: `x'} or vector(1) #`,
			want:  `up{app='x\x27} or vector(1) #'}`,
		},
		"raw string": {
			query: "up{app=`{{ variables.app }}`}",
			value: "x`} or vector(1) #",
			want:  "up{app=`x\\x60} or vector(1) #`}",
		},
		"newline cannot start a new line": {
			query: `up{app="{{ variables.app }}"}`,
			value: "x\"}\nor vector(1)",
			want:  `up{app="x\x22}\x0aor vector(1)"}`,
		},
		"ordinary value": {
			query: `up{app="{{ variables.app }}",path=~"{{ variables.path }}"}`,
			value: "podinfo-primary",
			want:  `up{app="podinfo-primary",path=~"podinfo-primary"}`,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			metric := v1alpha1.CanaryMetric{Name: "m", TemplateVariables: map[string]string{"app": tt.value, "path": tt.value}}
			got, err := RenderQuery(tt.query, v1alpha1.PrometheusProvider, canary(), metric)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("RenderQuery = %s, want %s", got, tt.want)
			}
		})
	}
}

// The query URL is the provider's address joined with /api/v1/query: a
// path prefix (Thanos, Mimir) and a query of the address are kept.
func TestPrometheusQuery_Address(t *testing.T) {
	var gotPath, gotTenant, gotQuery string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotTenant, gotQuery = r.URL.Path, r.URL.Query().Get("tenant"), r.URL.Query().Get("query")
		_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"scalar","result":[0,"1"]}}`)
	}))
	defer srv.Close()
	tests := map[string]struct {
		address, wantPath, wantTenant string
	}{
		"host":                    {address: srv.URL, wantPath: "/api/v1/query"},
		"trailing slash":          {address: srv.URL + "/", wantPath: "/api/v1/query"},
		"path prefix":             {address: srv.URL + "/prom", wantPath: "/prom/api/v1/query"},
		"path prefix, slash":      {address: srv.URL + "/prom/", wantPath: "/prom/api/v1/query"},
		"query of the address":    {address: srv.URL + "/prom?tenant=a", wantPath: "/prom/api/v1/query", wantTenant: "a"},
		"fragment of the address": {address: srv.URL + "/prom#x", wantPath: "/prom/api/v1/query"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			p := &providers.Prometheus{Address: tt.address, Timeout: time.Second}
			query := `sum(up{job="a&b=c"})`
			if _, err := p.Query(context.Background(), query); err != nil {
				t.Fatal(err)
			}
			if gotPath != tt.wantPath || gotTenant != tt.wantTenant || gotQuery != query {
				t.Errorf("path %q tenant %q query %q; want %q %q %q", gotPath, gotTenant, gotQuery, tt.wantPath, tt.wantTenant, query)
			}
		})
	}
}

// Prometheus errors name the address redacted and quote only an excerpt of
// the answer; a redirect is refused.
func TestPrometheusQuery_OutboundPolicy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/html/"):
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, "<html>\n<body>\x1b[2J"+strings.Repeat("secret internal page ", 50)+"</body></html>")
		case strings.HasPrefix(r.URL.Path, "/redirect/"):
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data?x=1", http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/error/"):
			_, _ = io.WriteString(w, `{"status":"error","errorType":"bad_data","error":"`+strings.Repeat("e", 200)+`"}`)
		}
	}))
	defer srv.Close()
	userinfo := strings.Replace(srv.URL, "http://", "http://u:pa55@", 1)
	redacted := strings.Replace(srv.URL, "http://", "http://redacted@", 1)
	tests := map[string]struct {
		address, wantErr string
	}{
		"not JSON": {address: userinfo + "/html?token=t0k3n",
			wantErr: `prometheus at ` + redacted + `/html?token=redacted answered 200 with no JSON: "<html> <body>secret internal page secret internal page secret i…"`},
		"redirect": {address: userinfo + "/redirect?token=t0k3n",
			wantErr: `prometheus query failed: ` + redacted + `/redirect/api/v1/query?query=redacted&token=redacted: ` +
				`the server answered with a redirect to http://169.254.169.254/latest/meta-data?x=redacted, and serin follows none`},
		"error": {address: srv.URL + "/error",
			wantErr: `prometheus query "up" failed: bad_data: ` + strings.Repeat("e", 63) + "…"},
		"not http": {address: "file:///etc/passwd", wantErr: "prometheus: invalid address file:///etc/passwd: the scheme must be http or https"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := (&providers.Prometheus{Address: tt.address, Timeout: time.Second}).Query(context.Background(), "up")
			if err == nil {
				t.Fatal("the query succeeded")
			}
			if diff := cmp.Diff(tt.wantErr, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// A MetricTemplate reference obeys the Tenancy, and its provider's Secret
// is read through the Tenancy's reader, not the cached Reader.
func TestMetrics_TemplateTenancy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0ken" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"scalar","result":[0,"99"]}}`)
	}))
	defer srv.Close()
	template := func(namespace string) *v1alpha1.MetricTemplate {
		tpl := &v1alpha1.MetricTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "rate"}}
		tpl.Spec.Provider.Address = srv.URL
		tpl.Spec.Provider.SecretRef = &meta.LocalObjectReference{Name: "prom-auth"}
		tpl.Spec.Query = `up{app="{{ target }}"}`
		return tpl
	}
	// The cached Reader has the templates but no Secret: reading a Secret
	// through it fails the check.
	cached := fakeReader(t, template("apps"), template("platform"))
	secrets := fakeReader(t, secret("apps", "prom-auth", map[string]string{"token": "t0ken"}), secret("platform", "prom-auth", map[string]string{"token": "t0ken"}))
	tests := map[string]struct {
		tenancy     *tenancy.Tenancy
		namespace   string
		wantPassed  bool
		wantMessage string
		accessError bool
	}{
		"Secret read through the tenancy": {tenancy: tenancy.Static(cached, secrets, tenancy.Options{}), namespace: "apps",
			wantPassed: true, wantMessage: "metric m: 99"},
		"cross-namespace template allowed": {tenancy: tenancy.Static(cached, secrets, tenancy.Options{}), namespace: "platform",
			wantPassed: true, wantMessage: "metric m: 99"},
		"cross-namespace template refused": {tenancy: tenancy.Static(cached, secrets, tenancy.Options{NoCrossNamespaceRefs: true}), namespace: "platform",
			wantMessage: "metric m: metrics[1].templateRef refers to MetricTemplate platform/rate in another namespace, and cross-namespace " +
				"references are disabled (--no-cross-namespace-refs): use a MetricTemplate in namespace apps", accessError: true},
		"no tenancy: the Reader": {namespace: "apps",
			wantMessage: `metric m: failed to get the provider secret apps/prom-auth: secrets "prom-auth" not found`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := canary()
			metric := v1alpha1.CanaryMetric{Name: "m", TemplateRef: &v1alpha1.TemplateReference{Name: "rate", Namespace: tt.namespace}}
			c.Spec.Analysis.Metrics = []v1alpha1.CanaryMetric{{Name: "other"}, metric}
			m := &Metrics{Reader: cached, Tenancy: tt.tenancy}
			res := m.Check(context.Background(), c, metric)
			if res.Passed != tt.wantPassed || res.Message != tt.wantMessage {
				t.Errorf("Check = %v %q, want %v %q", res.Passed, res.Message, tt.wantPassed, tt.wantMessage)
			}
			_, _, _, err := m.templateSource(context.Background(), c, metric, canarySide)
			if got := acl.IsAccessDenied(err); got != tt.accessError {
				t.Errorf("access denied = %v, want %v (%v)", got, tt.accessError, err)
			}
		})
	}
}
