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

package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDisplayName(t *testing.T) {
	tests := map[string]string{
		"serin":                         "serin",
		"/usr/local/bin/serin":          "serin",
		"./bin/serin":                   "serin",
		"/usr/local/bin/kubectl-serin":  "kubectl serin",
		"kubectl-serin":                 "kubectl serin",
		`C:\bin\kubectl-serin.exe`:      "kubectl serin",
		"/usr/local/bin/kubectl-serinx": "serin",
		"/tmp/go-build/serin.test":      "serin",
	}
	for argv0, want := range tests {
		t.Run(argv0, func(t *testing.T) {
			if got := DisplayName(strings.ReplaceAll(argv0, `\`, "/")); got != want {
				t.Errorf("DisplayName(%q) = %q, want %q", argv0, got, want)
			}
		})
	}
}

// Run as kubectl's plugin, the help, the usage lines and the examples say
// `kubectl serin`; the commands and flags are the same.
func TestSetDisplayName(t *testing.T) {
	tests := map[string]struct {
		args []string
		// want are lines the output must hold, unwanted lines it must not.
		want, unwanted []string
	}{
		"root help": {
			args: []string{"--help"},
			want: []string{
				"  kubectl serin [command]",
				`Use "kubectl serin [command] --help" for more information about a command.`,
			},
			unwanted: []string{"  serin [command]"},
		},
		"subcommand usage and examples": {
			args: []string{"get", "canaries", "--help"},
			want: []string{
				"  kubectl serin get canaries [NAME] [flags]",
				"  kubectl serin get canaries -A --status-selector ready=false",
			},
			unwanted: []string{"  serin get canaries -A --status-selector ready=false"},
		},
		"an example after a pipe, a file name left alone": {
			args: []string{"convert", "--help"},
			want: []string{
				"  kubectl serin convert -f flagger-canary.yaml > serin-canary.yaml",
				"  kubectl get canaries.flagger.app podinfo -n apps -o yaml | kubectl serin convert -f -",
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := newTestEnvironment(t, newFakeClient())
			root := newRootCommand(env)
			SetDisplayName(root, "kubectl serin")
			var out syncBuffer
			root.SetArgs(tc.args)
			root.SetOut(&out)
			root.SetErr(&out)
			if err := root.ExecuteContext(context.Background()); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(out.String(), "\n")
			for _, want := range tc.want {
				if !contains(lines, want) {
					t.Errorf("the output lacks %q:\n%s", want, out.String())
				}
			}
			for _, unwanted := range tc.unwanted {
				if contains(lines, unwanted) {
					t.Errorf("the output holds %q:\n%s", unwanted, out.String())
				}
			}
		})
	}
}

// As serin, nothing changes.
func TestSetDisplayNameSerin(t *testing.T) {
	env := newTestEnvironment(t, newFakeClient())
	root := newRootCommand(env)
	before := root.Commands()[0].Example
	SetDisplayName(root, "serin")
	if diff := cmp.Diff(before, root.Commands()[0].Example); diff != "" {
		t.Errorf("(-before +after):\n%s", diff)
	}
	if _, ok := root.Annotations["cobra_annotation_command_display_name"]; ok {
		t.Error("the display name annotation is set for serin")
	}
}

func contains(lines []string, line string) bool {
	for _, l := range lines {
		if strings.TrimRight(l, " ") == line {
			return true
		}
	}
	return false
}
