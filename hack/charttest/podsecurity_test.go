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

package charttest

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// The agent's pod passes the restricted Pod Security Standard with the
// default values, as the API server's PodSecurity admission judges it
// (the e2e test installs it in a namespace that enforces restricted); the
// checks are not vacuous: without the security contexts it fails.
func TestPodSecurityRestricted(t *testing.T) {
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	restricted := api.LevelVersion{Level: api.LevelRestricted, Version: api.LatestVersion()}
	tests := map[string]struct {
		values  string
		allowed bool
	}{
		"defaults":               {allowed: true},
		"no security contexts":   {values: "podSecurityContext: null\nsecurityContext: null", allowed: false},
		"privilege escalation":   {values: "securityContext: {allowPrivilegeEscalation: true}", allowed: false},
		"no seccomp profile set": {values: "podSecurityContext: {seccompProfile: null}", allowed: false},
	}
	ch := loadChart(t)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r, err := render(context.Background(), ch, parseValues(t, tc.values), testKubeVersion)
			if err != nil {
				t.Fatal(err)
			}
			d := &appsv1.Deployment{}
			r.get(t, "Deployment", testNamespace, "serin-agent", d)
			result := policy.AggregateCheckResults(evaluator.EvaluatePod(restricted, &d.Spec.Template.ObjectMeta, &d.Spec.Template.Spec))
			if result.Allowed != tc.allowed {
				t.Errorf("restricted allows the pod: %v, want %v (%s: %s)", result.Allowed, tc.allowed,
					result.ForbiddenReason(), result.ForbiddenDetail())
			}
		})
	}
}
