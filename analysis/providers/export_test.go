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
	"testing"
	"time"
)

// GoogleTestProject is the project of the fake Google's service account,
// for the external tests of this package (package providers_test), which
// check a provider through analysis.Metrics.
const GoogleTestProject = googleTestProject

// StartFakeGoogle starts a fake of Google's token endpoint and Cloud
// Monitoring's Prometheus API answering an instant query with a scalar,
// on the real clock; it returns its address and the service account key
// (JSON) whose token URI is its own.
func StartFakeGoogle(t *testing.T, scalar string) (address, serviceAccountKey string) {
	g := newFakeGoogle(t, promAnswer("scalar", scalar))
	g.now = time.Now
	return g.srv.URL, googleKeyJSON(t, googleTestKey(), g.tokenURI())
}
