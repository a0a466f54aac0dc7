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
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// testVersion is stamped into the binaries the tests build, as `make
// release` stamps VERSION.
const testVersion = "v9.8.7-test.1"

var (
	buildOnce sync.Once
	builtCLI  string
	buildErr  error
)

// buildCLI builds this command once per test run, with the version
// ldflags of the Makefile, and links it into dir as name.
func buildCLI(t *testing.T, dir, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the serin binary (skipped in -short mode)")
	}
	buildOnce.Do(func() {
		var tmp string
		if tmp, buildErr = os.MkdirTemp("", "serin-cli-"); buildErr != nil {
			return
		}
		builtCLI = filepath.Join(tmp, "serin")
		build := exec.Command("go", "build", "-o", builtCLI,
			"-ldflags", "-X github.com/serin-dev/serin/internal/version.Version="+testVersion, ".")
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	bin := filepath.Join(dir, name)
	if err := os.Link(builtCLI, bin); err != nil {
		// Another file system: a copy.
		b, err := os.ReadFile(builtCLI)
		if err == nil {
			err = os.WriteFile(bin, b, 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtCLI != "" {
		os.RemoveAll(filepath.Dir(builtCLI))
	}
	os.Exit(code)
}

// The same binary says serin, or kubectl serin when it runs as the
// kubectl-serin executable, and prints the version it was built with.
func TestBinaryName(t *testing.T) {
	dir := t.TempDir()
	serin := buildCLI(t, dir, "serin")
	plugin := buildCLI(t, dir, "kubectl-serin")
	tests := map[string]struct {
		bin  string
		args []string
		want string
	}{
		"serin help":         {bin: serin, args: []string{"--help"}, want: "\n  serin [command]\n"},
		"kubectl-serin help": {bin: plugin, args: []string{"--help"}, want: "\n  kubectl serin [command]\n"},
		"kubectl-serin subcommand usage": {
			bin: plugin, args: []string{"get", "canaries", "--help"}, want: "\n  kubectl serin get canaries [NAME] [flags]\n",
		},
		"version": {bin: plugin, args: []string{"version", "--client"}, want: "serin: " + testVersion + " ("},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, err := exec.Command(tc.bin, tc.args...).CombinedOutput()
			if err != nil {
				t.Fatalf("%s %v: %v\n%s", tc.bin, tc.args, err, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("%s %v printed no %q:\n%s", filepath.Base(tc.bin), tc.args, tc.want, out)
			}
		})
	}
}

// kubectl finds the plugin on the PATH: `kubectl serin version` runs it,
// and `kubectl serin --help` speaks of kubectl serin.
func TestKubectlPlugin(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on the PATH: the plugin cannot be run through it")
	}
	dir := t.TempDir()
	buildCLI(t, dir, "kubectl-serin")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(kubectl, args...)
		cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	var report struct {
		Client struct{ Version, GoVersion, Platform string } `json:"client"`
	}
	out := run("serin", "version", "--client", "-o", "json")
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("kubectl serin version -o json: %v\n%s", err, out)
	}
	if report.Client.Version != testVersion || report.Client.GoVersion != runtime.Version() ||
		report.Client.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("kubectl serin version reported %+v, want %s built with %s", report.Client, testVersion, runtime.Version())
	}
	if help := run("serin", "--help"); !strings.Contains(help, `Use "kubectl serin [command] --help"`) {
		t.Errorf("kubectl serin --help does not speak of kubectl serin:\n%s", help)
	}
}
