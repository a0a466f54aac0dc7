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
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/internal/version"
)

func agentDeployment(namespace string, containers ...corev1.Container) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "serin-agent", Namespace: namespace},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{Containers: containers},
		}},
	}
}

func TestVersion(t *testing.T) {
	agent := corev1.Container{Name: "agent", Image: "ghcr.io/serin-dev/serin:v0.3.0"}
	sidecar := corev1.Container{Name: "proxy", Image: "proxy:v9"}
	// clientJSON opens the JSON report of testVersion.
	const clientJSON = `{
  "client": {
    "version": "v0.3.0",
    "gitCommit": "0123456789abcdef0123456789abcdef01234567",
    "gitTreeState": "clean",
    "goVersion": "go1.26.8",
    "platform": "linux/amd64"
  },
`
	const clientLine = "serin: v0.3.0 (commit 0123456789abcdef0123456789abcdef01234567, go1.26.8 linux/amd64)\n"
	tests := map[string]struct {
		args      []string
		objects   []client.Object
		clientErr error
		version   *version.Info
		want      string
		wantErr   string
	}{
		"agent found": {
			args:    []string{"version"},
			objects: []client.Object{agentDeployment("serin-system", sidecar, agent)},
			want:    clientLine + "serin-agent: v0.3.0\n",
		},
		"agent in another namespace": {
			args:    []string{"version", "--agent-namespace", "delivery"},
			objects: []client.Object{agentDeployment("delivery", agent)},
			want:    clientLine + "serin-agent: v0.3.0\n",
		},
		"agent not installed": {
			args: []string{"version"},
			want: clientLine + "serin-agent: unknown (deployments.apps \"serin-agent\" not found)\n",
		},
		"cluster unreachable": {
			args:      []string{"version"},
			clientErr: errors.New("loading kubeconfig: no configuration has been provided"),
			want:      clientLine + "serin-agent: unknown (loading kubeconfig: no configuration has been provided)\n",
		},
		"client only": {
			args:      []string{"version", "--client"},
			clientErr: errors.New("must not be called"),
			want:      clientLine,
		},
		"a dirty build": {
			args: []string{"version", "--client"},
			version: &version.Info{Version: "0123456789ab-dirty", GitCommit: "0123456789abcdef0123456789abcdef01234567",
				GitTreeState: "dirty", GoVersion: "go1.26.8", Platform: "darwin/arm64"},
			want: "serin: 0123456789ab-dirty (commit 0123456789abcdef0123456789abcdef01234567, dirty, go1.26.8 darwin/arm64)\n",
		},
		"no commit known": {
			args:    []string{"version", "--client"},
			version: &version.Info{Version: "v0.3.0", GoVersion: "go1.26.8", Platform: "linux/arm64"},
			want:    "serin: v0.3.0 (go1.26.8 linux/arm64)\n",
		},
		"json": {
			args:    []string{"version", "-o", "json"},
			objects: []client.Object{agentDeployment("serin-system", agent)},
			want: clientJSON + `  "agent": {
    "version": "v0.3.0"
  }
}
`,
		},
		"json, agent unknown": {
			args:      []string{"version", "--output=json"},
			clientErr: errors.New("no configuration has been provided"),
			want: clientJSON + `  "agent": {
    "error": "no configuration has been provided"
  }
}
`,
		},
		"json, client only": {
			args:    []string{"version", "--client", "-o", "json"},
			version: &version.Info{Version: "dev", GoVersion: "go1.26.8", Platform: "linux/amd64"},
			want:    "{\n  \"client\": {\n    \"version\": \"dev\",\n    \"goVersion\": \"go1.26.8\",\n    \"platform\": \"linux/amd64\"\n  }\n}\n",
		},
		"unknown output": {
			args:    []string{"version", "-o", "yaml"},
			wantErr: `unknown output format "yaml": use json, or leave --output out`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := newTestEnvironment(t, newFakeClient(tc.objects...))
			if tc.clientErr != nil {
				env.newClient = func() (client.WithWatch, error) { return nil, tc.clientErr }
			}
			if tc.version != nil {
				env.version = func() version.Info { return *tc.version }
			}
			run := runCommand(context.Background(), env, tc.args...)
			if tc.wantErr != "" {
				if run.err == nil || run.err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", run.err, tc.wantErr)
				}
				return
			}
			if run.err != nil {
				t.Fatal(run.err)
			}
			if diff := cmp.Diff(tc.want, run.stdout); diff != "" {
				t.Errorf("output differs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestImageTag(t *testing.T) {
	tests := map[string]struct{ image, want string }{
		"tag":                  {"ghcr.io/serin-dev/serin:v0.3.0", "v0.3.0"},
		"tag and digest":       {"ghcr.io/serin-dev/serin:v0.3.0@sha256:abcd", "v0.3.0"},
		"registry port no tag": {"localhost:5000/serin", "localhost:5000/serin"},
		"registry port tag":    {"localhost:5000/serin:v1", "v1"},
		"no tag":               {"serin-agent", "serin-agent"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, imageTag(tc.image)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompletion(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"canary names": {
			args: []string{"__complete", "promote", "p"},
			want: "podinfo\n:4\nCompletion ended with directive: ShellCompDirectiveNoFileComp\n",
		},
		"group names": {
			args: []string{"__complete", "get", "group", "s"},
			want: "storefront\n:4\nCompletion ended with directive: ShellCompDirectiveNoFileComp\n",
		},
		"groups of --group": {
			args: []string{"__complete", "abort", "--group", ""},
			want: "billing\nstorefront\n:4\nCompletion ended with directive: ShellCompDirectiveNoFileComp\n",
		},
		"bash script": {args: []string{"completion", "bash"}},
		"zsh script":  {args: []string{"completion", "zsh"}},
		"fish script": {args: []string{"completion", "fish"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := newTestEnvironment(t, newFakeClient(append(listedCanaries(), listedGroups()...)...))
			run := runCommand(context.Background(), env, tc.args...)
			if run.err != nil {
				t.Fatal(run.err)
			}
			if tc.want == "" {
				if len(run.stdout) < 100 {
					t.Errorf("expected a completion script, got %q", run.stdout)
				}
				return
			}
			if diff := cmp.Diff(tc.want, run.stdout+run.stderr); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
