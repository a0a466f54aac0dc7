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
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestConvertExamples converts four Flagger examples and compares the
// manifests (stdout) and the report (stderr) with golden files.
func TestConvertExamples(t *testing.T) {
	tests := map[string]struct {
		example string
		wantErr string
	}{
		"blue/green with the kubernetes provider": {example: "bluegreen-kubernetes"},
		"canary with the Gateway API":             {example: "canary-gatewayapi"},
		"Istio with builtin metrics and webhooks": {example: "builtin-metrics-webhooks"},
		"values past serin's bounds":              {example: "past-serin-bounds"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := newTestEnvironment(t, newFakeClient())
			input := filepath.Join("testdata", "convert", tc.example+".yaml")
			run := runCommand(context.Background(), env, "convert", "-f", input, "--allow-lossy")
			if run.err != nil {
				t.Fatal(run.err)
			}
			assertGolden(t, "convert/"+tc.example+".out.yaml", run.stdout)
			assertGolden(t, "convert/"+tc.example+".report", run.stderr)
		})
	}
}

// TestConvertExitBehaviour checks that a lossy conversion fails and prints
// no manifest unless --allow-lossy is given, and that a lossless one
// succeeds either way.
func TestConvertExitBehaviour(t *testing.T) {
	tests := map[string]struct {
		example    string
		allowLossy bool
		wantErr    string
		wantOutput bool
	}{
		"lossy, refused": {
			example: "builtin-metrics-webhooks",
			wantErr: "5 fields could not be mapped, so nothing was written: fix the input, or pass --allow-lossy to print the conversion anyway",
		},
		"lossy, allowed": {example: "builtin-metrics-webhooks", allowLossy: true, wantOutput: true},
		"lossless":       {example: "bluegreen-kubernetes", wantOutput: true},
		"lossless, allowed anyway": {
			example: "bluegreen-kubernetes", allowLossy: true, wantOutput: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := newTestEnvironment(t, newFakeClient())
			args := []string{"convert", "-f", filepath.Join("testdata", "convert", tc.example+".yaml")}
			if tc.allowLossy {
				args = append(args, "--allow-lossy")
			}
			run := runCommand(context.Background(), env, args...)
			if diff := cmp.Diff(tc.wantErr, errorText(run.err)); diff != "" {
				t.Errorf("error differs (-want +got):\n%s", diff)
			}
			if gotOutput := run.stdout != ""; gotOutput != tc.wantOutput {
				t.Errorf("printed manifests: %t, want %t:\n%s", gotOutput, tc.wantOutput, run.stdout)
			}
		})
	}
}

func TestConvertInputErrors(t *testing.T) {
	tests := map[string]struct {
		args    []string
		stdin   string
		wantErr string
	}{
		"file is required": {
			args: []string{"convert"}, wantErr: `required flag(s) "file" not set`,
		},
		"unreadable YAML": {
			args: []string{"convert", "-f", "-"}, stdin: "kind: [",
			wantErr: "reading standard input: document 1: yaml: line 1: did not find expected node content",
		},
		"missing file": {
			args: []string{"convert", "-f", "testdata/convert/nope.yaml"}, wantErr: "open testdata/convert/nope.yaml: no such file or directory",
		},
		"a document that is not Flagger's passes through": {
			args: []string{"convert", "-f", "testdata/kubeconfig"},
		},
		"--gateway needs the Gateway's namespace": {
			args:    []string{"convert", "-f", "testdata/kubeconfig", "--gateway", "public"},
			wantErr: `--gateway "public": want NAMESPACE/NAME or NAMESPACE/NAME/LISTENER`,
		},
		"--data-plane is one serin knows": {
			args: []string{"convert", "-f", "testdata/kubeconfig", "--data-plane", "consul"},
			wantErr: `--data-plane: data plane "consul" is not supported: use one of ` +
				"application, cilium, contour, envoy-gateway, istio, kuma, linkerd, nginx-gateway-fabric, traefik",
		},
		"a Contour Canary converts with nothing lost onto the Gateway named": {
			args: []string{"convert", "-f", "-", "--gateway", "gateways/public/https", "--data-plane", "envoy-gateway"},
			stdin: "apiVersion: flagger.app/v1beta1\nkind: Canary\nmetadata: {name: podinfo, namespace: apps}\nspec:\n" +
				"  provider: contour\n  targetRef: {apiVersion: apps/v1, kind: Deployment, name: podinfo}\n  service: {port: 9898}\n" +
				"  analysis: {interval: 1m, threshold: 5, stepWeight: 10, maxWeight: 50, metrics: [{name: request-success-rate, thresholdRange: {min: 99}}]}\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := newTestEnvironment(t, newFakeClient())
			root := newRootCommand(env)
			root.SetArgs(tc.args)
			root.SetIn(strings.NewReader(tc.stdin))
			root.SetOut(io.Discard)
			root.SetErr(io.Discard)
			if diff := cmp.Diff(tc.wantErr, errorText(root.Execute())); diff != "" {
				t.Errorf("error differs (-want +got):\n%s", diff)
			}
		})
	}
}
