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
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	notificationv1 "github.com/fluxcd/notification-controller/api/v1beta3"
	"github.com/google/go-cmp/cmp"
)

// A delivery follows no redirect and does not retry one; its errors name
// only the receiver's origin (the path of a webhook is its credential) and
// quote at most an excerpt of the answer.
func TestPostOutboundPolicy(t *testing.T) {
	var stolen, redirects atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { stolen.Add(1) }))
	defer elsewhere.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/redirect/"):
			redirects.Add(1)
			http.Redirect(w, r, elsewhere.URL+"/collect?key=abc", http.StatusPermanentRedirect)
		case strings.HasPrefix(r.URL.Path, "/noisy/"):
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, "\x1b[1minvalid_token\x1b[0m\r\n"+strings.Repeat("x", 2000))
		}
	}))
	defer srv.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	tests := map[string]struct {
		url     string
		wantErr string
	}{
		"redirect refused, not retried": {url: srv.URL + "/redirect/T000/B000/very-secret",
			wantErr: "failed to post to " + srv.URL + ": the server answered with a redirect to " + elsewhere.URL + "/collect?key=redacted, and serin follows none"},
		"answer excerpt": {url: srv.URL + "/noisy/T000/B000/very-secret",
			wantErr: `request failed with status code 400: "invalid_token ` + strings.Repeat("x", 49) + `…"`},
		"connection refused, origin only": {url: strings.Replace(closed.URL, "http://", "http://user:pa55@", 1) + "/hooks/very-secret?token=t0k3n",
			wantErr: "failed to post to " + closed.URL + ": dial tcp " + strings.TrimPrefix(closed.URL, "http://") + ": connect: connection refused"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			err := post(context.Background(), fastRetry, endpoint{}, request{url: tt.url, body: []byte("{}")})
			if err == nil {
				t.Fatal("the delivery succeeded")
			}
			if diff := cmp.Diff(tt.wantErr, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
	if stolen.Load() != 0 || redirects.Load() != 1 {
		t.Errorf("the redirect target was called %d times, the redirecting receiver %d times (want 0 and 1)", stolen.Load(), redirects.Load())
	}
}

// A Provider's proxy with credentials is not printed when it is invalid.
func TestResolveProviderRedactsProxy(t *testing.T) {
	p := provider("p", notificationv1.GenericProvider, func(p *notificationv1.Provider) {
		p.Spec.Address = "https://example.com/hook"
		p.Spec.Proxy = "http://user:pa55@proxy:port/"
	})
	_, err := resolveProvider(context.Background(), fakeReader(t), p)
	if err == nil || strings.Contains(err.Error(), "pa55") {
		t.Errorf("resolveProvider() = %v, want an error without the proxy's password", err)
	}
}
