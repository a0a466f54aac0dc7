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
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
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
			wantErr: "4 fields could not be mapped, so nothing was written: fix the input, or pass --allow-lossy to print the conversion anyway",
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
			args: []string{"convert"}, wantErr: "at least one of the flags in the group [file kustomize] is required",
		},
		"unreadable YAML": {
			args: []string{"convert", "-f", "-"}, stdin: "kind: [",
			wantErr: "reading standard input: document 1: yaml: line 1: did not find expected node content",
		},
		"missing file": {
			args: []string{"convert", "-f", "testdata/convert/nope.yaml"}, wantErr: "stat testdata/convert/nope.yaml: no such file or directory",
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

// A repository's folder converts as one input, as kubectl reads one: the
// Canary finds its Ingress and its MetricTemplate in other files (and
// other directories, with -R), and --output-dir writes each file's
// conversion under the same name; each Canary is listed with its file.
// Without -R only the folder's own files are read; -k converts what a
// kustomization builds.
func TestConvertDirectory(t *testing.T) {
	const repo = "testdata/convert/repo"
	flags := []string{"--gateway", "gateways/public", "--data-plane", "envoy-gateway"}
	out := t.TempDir()
	run := runCommand(context.Background(), newTestEnvironment(t, newFakeClient()),
		append([]string{"convert", "-f", repo, "-R", "--output-dir", out}, flags...)...)
	if run.err != nil {
		t.Fatalf("convert -f %s -R: %v\n%s", repo, run.err, run.stderr)
	}
	var written []string
	err := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(out, path)
			written = append(written, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"apps/podinfo/canary.yaml", "apps/podinfo/deployment.yaml", "apps/podinfo/ingress.yaml",
		"apps/podinfo/kustomization.yaml", "infrastructure/metrics/error-rate.yaml"}
	if diff := cmp.Diff(want, written); diff != "" {
		t.Errorf("files written (-want +got):\n%s", diff)
	}
	canary, _ := os.ReadFile(filepath.Join(out, "apps/podinfo/canary.yaml"))
	template, _ := os.ReadFile(filepath.Join(out, "infrastructure/metrics/error-rate.yaml"))
	for what, check := range map[string]bool{
		"a serin Canary":                          strings.Contains(string(canary), "apiVersion: serin.dev/v1alpha1\nkind: Canary\n"),
		"the Ingress's host on the HTTPRoute":     strings.Contains(string(canary), "hosts:\n    - podinfo.example.com\n"),
		"the load test's 5m timeout kept":         strings.Contains(string(canary), "timeout: 5m0s\n"),
		"a serin MetricTemplate":                  strings.Contains(string(template), "apiVersion: serin.dev/v1alpha1\nkind: MetricTemplate\n"),
		"the Canary listed with its file":         strings.Contains(run.stderr, "Canary apps/podinfo (apps/podinfo/canary.yaml): nothing lost"),
		"no note of a missing MetricTemplate":     !strings.Contains(run.stderr, "is not in the input"),
		"the summary counts both":                 strings.Contains(run.stderr, "converted 1 Canary and 1 MetricTemplate, passed 3 other objects through"),
		"nothing on stdout with an output folder": run.stdout == "",
	} {
		if !check {
			t.Errorf("%s: no\ncanary:\n%s\nstderr:\n%s", what, canary, run.stderr)
		}
	}

	// To standard output: one stream, a document each, whatever file
	// they came from.
	run = runCommand(context.Background(), newTestEnvironment(t, newFakeClient()), append([]string{"convert", "-f", repo, "-R"}, flags...)...)
	if run.err != nil || strings.Count(run.stdout, "\n---\n") != 4 || len(regexp.MustCompile(`(?m)^apiVersion: `).FindAllString(run.stdout, -1)) != 5 {
		t.Errorf("convert -f %s -R to standard output: %v, want 5 documents:\n%s", repo, run.err, run.stdout)
	}

	// Without -R: the folder's own files only, and it has none.
	run = runCommand(context.Background(), newTestEnvironment(t, newFakeClient()), append([]string{"convert", "-f", repo}, flags...)...)
	if want := repo + " holds no .yaml, .yml or .json file (-R reads its subdirectories)"; errorText(run.err) != want {
		t.Errorf("convert -f %s: %v, want %q", repo, run.err, want)
	}

	// One folder, without the MetricTemplate's: the Canary converts and the
	// missing template is named.
	run = runCommand(context.Background(), newTestEnvironment(t, newFakeClient()), append([]string{"convert", "-f", repo + "/apps/podinfo"}, flags...)...)
	if run.err != nil || !strings.Contains(run.stderr, "the MetricTemplate flagger-system/error-rate is not in the input") {
		t.Errorf("convert -f %s/apps/podinfo: %v\n%s", repo, run.err, run.stderr)
	}

	// -k: what the kustomization builds, its namespace set by kustomize.
	run = runCommand(context.Background(), newTestEnvironment(t, newFakeClient()), append([]string{"convert", "-k", repo + "/apps/podinfo"}, flags...)...)
	if run.err != nil || !strings.Contains(run.stdout, "kind: Canary\nmetadata:\n  name: podinfo\n  namespace: apps\n") ||
		!strings.Contains(run.stdout, "- podinfo.example.com\n") {
		t.Errorf("convert -k: %v\nstdout:\n%s\nstderr:\n%s", run.err, run.stdout, run.stderr)
	}

	run = runCommand(context.Background(), newTestEnvironment(t, newFakeClient()), "convert", "-f", repo, "-k", repo)
	if want := "if any flags in the group [file kustomize] are set none of the others can be; [file kustomize] were all set"; errorText(run.err) != want {
		t.Errorf("-f and -k: %v, want %q", run.err, want)
	}
}
