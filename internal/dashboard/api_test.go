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
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/agentrequest"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// sameOrigin are the headers of the dashboard's page posting with token.
func sameOrigin(server *httptest.Server, token string) headers {
	return headers{"Origin": server.URL, "Sec-Fetch-Site": "same-origin", TokenHeader: token}
}

func post(t *testing.T, server *httptest.Server, path string, h headers) (*http.Response, string) {
	t.Helper()
	return send(t, server, http.MethodPost, path, h)
}

// The buttons set the annotations the CLI sets, with the value of the
// dashboard's clock, and say when the Canary is suspended.
func TestRequests(t *testing.T) {
	for _, r := range agentrequest.All {
		for _, suspended := range []bool{false, true} {
			name := r.Verb
			if suspended {
				name += ", suspended"
			}
			t.Run(name, func(t *testing.T) {
				canary := sampleCanary()
				canary.Spec.Suspend = suspended
				kube := newFakeClient(nil, canary)
				server := startServer(t, kube, "apps")

				resp, body := post(t, server, "/api/canaries/apps/podinfo/"+r.Verb, sameOrigin(server, testToken))
				if resp.StatusCode != http.StatusAccepted {
					t.Fatalf("%s: %s", resp.Status, body)
				}
				var got requestResult
				if err := json.Unmarshal([]byte(body), &got); err != nil {
					t.Fatal(err)
				}
				want := requestResult{Verb: r.Verb, Value: "2026-05-04T10:15:00Z", Message: r.Verb + " requested: waiting for the agent to act on it"}
				if suspended {
					want.Message = r.Verb + " requested, but the Canary is suspended: the agent acts on it once the Canary is resumed"
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("answer differs (-want +got):\n%s", diff)
				}
				after := &v1alpha1.Canary{}
				if err := kube.Get(context.Background(), client.ObjectKeyFromObject(canary), after); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(map[string]string{r.Annotation: want.Value}, after.Annotations); diff != "" {
					t.Errorf("annotations differ (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestRequestRefused(t *testing.T) {
	readOnly := forbidden()
	readOnly.Get = nil // may read, may not patch
	tests := map[string]struct {
		kube       client.WithWatch
		path       string
		wantStatus int
		wantError  string
	}{
		"unknown verb": {
			kube: newFakeClient(nil, sampleCanary()), path: "/api/canaries/apps/podinfo/suspend",
			wantStatus: http.StatusNotFound, wantError: `no request "suspend": the agent handles promote, abort, retry and revert`,
		},
		"unknown Canary": {
			kube: newFakeClient(nil), path: "/api/canaries/apps/podinfo/promote",
			wantStatus: http.StatusNotFound, wantError: `canaries.serin.dev "podinfo" not found`,
		},
		"another namespace than the dashboard's": {
			kube: newFakeClient(nil, testobj.MakeCanary("podinfo", "shop").Obj()), path: "/api/canaries/shop/podinfo/abort",
			wantStatus: http.StatusNotFound, wantError: "this dashboard shows the namespace apps only",
		},
		"no right to patch": {
			kube: newFakeClient(readOnly, sampleCanary()), path: "/api/canaries/apps/podinfo/retry",
			wantStatus: http.StatusForbidden,
			wantError: "Forbidden: your Kubernetes user may not do this. The dashboard acts with your kubeconfig's permissions only; " +
				"ask for the role in the dashboard's documentation. The API server said: " +
				`canaries.serin.dev "podinfo" is forbidden: User "bob" cannot patch resource "canaries" in API group "serin.dev" in the namespace "apps"`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			server := startServer(t, tc.kube, "apps")
			resp, body := post(t, server, tc.path, sameOrigin(server, testToken))
			var got problem
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.wantStatus || got.Message != tc.wantError {
				t.Errorf("got %s %q, want %d %q", resp.Status, got.Message, tc.wantStatus, tc.wantError)
			}
		})
	}
}

// Any page of the browser can send requests to localhost: only the
// dashboard's own page, with its token, may act, and only requests that
// name the dashboard by address are answered.
func TestGuard(t *testing.T) {
	var patched int
	counting := &interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
		patched++
		return c.Patch(ctx, o, p, opts...)
	}}
	server := startServer(t, newFakeClient(counting, sampleCanary()), "")
	const path = "/api/canaries/apps/podinfo/abort"
	tests := map[string]struct {
		headers    headers
		wantStatus int
		wantError  string
	}{
		"the page, with its token": {
			headers: sameOrigin(server, testToken), wantStatus: http.StatusAccepted,
		},
		"a script without Origin (curl), with the token": {
			headers: headers{TokenHeader: testToken}, wantStatus: http.StatusAccepted,
		},
		"the page by localhost": {
			headers:    headers{"Host": "localhost:3100", "Origin": "http://localhost:3100", TokenHeader: testToken},
			wantStatus: http.StatusAccepted,
		},
		"without the token": {
			headers: sameOrigin(server, ""), wantStatus: http.StatusForbidden,
			wantError: "refused a request without the dashboard's token: reload the page",
		},
		"a wrong token": {
			headers: sameOrigin(server, "guess"), wantStatus: http.StatusForbidden,
			wantError: "refused a request without the dashboard's token: reload the page",
		},
		"another site, even with the token": {
			headers:    headers{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site", TokenHeader: testToken},
			wantStatus: http.StatusForbidden,
			wantError:  "refused a request from another site: cross-origin request detected from Sec-Fetch-Site header",
		},
		"another site, an old browser without Sec-Fetch-Site": {
			headers:    headers{"Origin": "https://evil.example", TokenHeader: testToken},
			wantStatus: http.StatusForbidden,
			wantError:  "refused a request from another site: cross-origin request detected, and/or browser is out of date: Sec-Fetch-Site is missing, and Origin does not match Host",
		},
		"a name rebound to 127.0.0.1 (DNS rebinding)": {
			headers:    headers{"Host": "evil.example:3100", "Origin": "http://evil.example:3100", TokenHeader: testToken},
			wantStatus: http.StatusMisdirectedRequest,
			wantError:  "the dashboard answers only requests to its address (an IP address or localhost), not to evil.example:3100",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before := patched
			resp, body := post(t, server, path, tc.headers)
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("%s %s, want %d", resp.Status, body, tc.wantStatus)
			}
			wantPatches := 0
			if tc.wantStatus == http.StatusAccepted {
				wantPatches = 1
			} else {
				var got problem
				if err := json.Unmarshal([]byte(body), &got); err != nil || got.Message != tc.wantError {
					t.Errorf("error %q (%v), want %q", got.Message, err, tc.wantError)
				}
			}
			if patched-before != wantPatches {
				t.Errorf("%d patches, want %d", patched-before, wantPatches)
			}
		})
	}

	// A rebound name can read nothing either: neither the Canaries nor the
	// page's token.
	for _, path := range []string{"/", "/api/canaries", "/api/events"} {
		resp, body := send(t, server, http.MethodGet, path, headers{"Host": "evil.example:3100"})
		if resp.StatusCode != http.StatusMisdirectedRequest || strings.Contains(body, testToken) {
			t.Errorf("GET %s as evil.example: %s", path, resp.Status)
		}
	}
}
