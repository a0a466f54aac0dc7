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
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The agent logs the API server's refusals inside a quoted error (console
// and JSON encodings alike), where the user's quotes are escaped.
func TestRefusals(t *testing.T) {
	const user = "system:serviceaccount:serin-system:serin-agent"
	quoted := `2026-11-23T14:01:13.496Z	ERROR	controller-runtime.cache.UnhandledError	Failed to watch	{"type": "*v1.Service", ` +
		`"error": "failed to list *v1.Service: services is forbidden: User \"` + user + `\" cannot list resource \"services\" in API group \"\" at the cluster scope"}`
	plain := `E1123 14:01:13.496 reflector.go:343] services is forbidden: User "` + user + `" cannot list resource "services"`
	other := `ERROR	Failed to watch	{"error": "services is forbidden: User \"someone-else\" cannot list resource \"services\""}`
	log := "INFO	setup	starting serin-agent\n" + quoted + "\n" + other + "\n" + plain + "\n"
	if diff := cmp.Diff([]string{quoted, plain}, refusals(log, user)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := refusals("INFO	setup	starting serin-agent\n", user); got != nil {
		t.Errorf("refusals in a clean log: %q", got)
	}
}
