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

package testbed

import (
	"net/http/httptest"
	"testing"
)

func TestVerb(t *testing.T) {
	for _, tc := range []struct{ method, target, want string }{
		{"GET", "/api/v1/namespaces/default/pods", "list"},
		{"GET", "/api/v1/namespaces/default/pods/p", "get"},
		{"GET", "/api/v1/namespaces/default", "get"},
		{"GET", "/api/v1/namespaces", "list"},
		{"GET", "/api/v1/nodes/n", "get"},
		{"GET", "/apis/apps/v1/deployments", "list"},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments?watch=true&resourceVersion=1", "watch"},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments/d", "get"},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments/d/scale", "get"},
		{"GET", "/apis/flagger.app/v1beta1/namespaces/ns/canaries", "list"},
		{"GET", "/apis", "get"},
		{"GET", "/version", "get"},
		{"PUT", "/apis/flagger.app/v1beta1/namespaces/ns/canaries/c/status", "update"},
		{"PATCH", "/apis/apps/v1/namespaces/ns/deployments/d", "patch"},
		{"POST", "/api/v1/namespaces/ns/events", "create"},
		{"DELETE", "/api/v1/namespaces/ns/pods/p", "delete"},
	} {
		if got := Verb(httptest.NewRequest(tc.method, tc.target, nil)); got != tc.want {
			t.Errorf("%s %s: got %s, want %s", tc.method, tc.target, got, tc.want)
		}
	}
}
