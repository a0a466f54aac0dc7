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

package main

import (
	"strings"
	"testing"
)

// The demo says, before it builds, how many of its components it builds
// and about how long they take on the machine's cores.
func TestBuildPlan(t *testing.T) {
	for name, tc := range map[string]struct {
		missing []string
		cores   int
		want    string
	}{
		"cold on 2 cores": {missing: []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok",
			"notification-controller", "source-controller", "kustomize-controller", "gitea", "traefik"}, cores: 2,
			want: "building 10 of the demo's 10 testbed components, once (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, notification-controller, source-controller, kustomize-controller, gitea, traefik): about 38 minutes on this machine's 2 cores"},
		"two left on 4 cores": {missing: []string{"gitea", "traefik"}, cores: 4,
			want: "building 2 of the demo's 10 testbed components, once (gitea, traefik): about 6 minutes on this machine's 4 cores"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := buildPlan(tc.missing, tc.cores); !strings.HasPrefix(got, tc.want) {
				t.Errorf("buildPlan = %q, want it to start with %q", got, tc.want)
			}
		})
	}
}

// helm-controller, which no act starts, is not among the demo's
// components.
func TestDemoComponents_OnlyWhatTheActsStart(t *testing.T) {
	for _, c := range demoComponents {
		if c.name == "helm-controller" || strings.HasPrefix(c.name, "flagger") {
			t.Errorf("the demo builds %s, which none of its acts starts", c.name)
		}
	}
}
