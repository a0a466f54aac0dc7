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
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// `serin dashboard` serves the Canaries of the kubeconfig's namespace, or
// of all with -A, on a loopback port, prints where, and opens the browser
// with --open.
func TestDashboardCommand(t *testing.T) {
	tests := map[string]struct {
		args      []string
		wantNames []string
	}{
		"the context's namespace": {args: []string{"dashboard", "--port", "0", "--open"}, wantNames: []string{"podinfo"}},
		"all namespaces":          {args: []string{"dashboard", "--port", "0", "-A", "--open"}, wantNames: []string{"podinfo", "backend"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			kube := newFakeClient(
				makeCanary("apps", "podinfo").phase(v1alpha1.PhaseProgressing, 20).obj(),
				makeCanary("shop", "backend").obj(),
			)
			env := newTestEnvironment(t, kube)
			opened := make(chan string, 1)
			defer func(open func(string) error) { openBrowser = open }(openBrowser)
			openBrowser = func(url string) error { opened <- url; return nil }

			ctx, stop := context.WithCancel(context.Background())
			var stdout, stderr syncBuffer
			done := make(chan commandRun, 1)
			go func() { done <- runCommandInto(ctx, env, &stdout, &stderr, tc.args...) }()

			var url string
			select {
			case url = <-opened:
			case <-time.After(10 * time.Second):
				t.Fatalf("no browser opened; stdout %q, stderr %q", stdout.String(), stderr.String())
			}
			if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+/$`).MatchString(url) {
				t.Errorf("opened %q, want a loopback URL", url)
			}
			if want := "serin dashboard at " + url + " (Ctrl-C to stop)\n"; stdout.String() != want {
				t.Errorf("stdout %q, want %q", stdout.String(), want)
			}
			resp, err := http.Get(url + "api/canaries")
			if err != nil {
				t.Fatal(err)
			}
			var got struct{ Canaries []struct{ Name string } }
			err = json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range got.Canaries {
				names = append(names, c.Name)
			}
			if strings.Join(names, ",") != strings.Join(tc.wantNames, ",") {
				t.Errorf("the dashboard shows %v, want %v", names, tc.wantNames)
			}

			stop()
			select {
			case run := <-done:
				if run.err != nil {
					t.Errorf("the dashboard ended with %v", run.err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the dashboard did not stop with its context")
			}
		})
	}
}

func TestDashboardCommandWarnsOffLoopback(t *testing.T) {
	env := newTestEnvironment(t, newFakeClient())
	run := runCommand(context.Background(), env, "dashboard", "--address", "0.0.0.0", "--port", "0", "--timeout", "300ms")
	if run.err != nil {
		t.Fatal(run.err)
	}
	if !strings.Contains(run.stderr, "⚠️ the dashboard listens on [::]:") && !strings.Contains(run.stderr, "⚠️ the dashboard listens on 0.0.0.0:") {
		t.Errorf("stderr %q, want a warning", run.stderr)
	}
	if !strings.Contains(run.stderr, "whoever has the URL below reads and acts on the Canaries with your permissions") {
		t.Errorf("stderr %q, want a warning that tells who can act", run.stderr)
	}
	if !regexp.MustCompile(`^serin dashboard at http://127\.0\.0\.1:\d+/\?access_token=[A-Za-z0-9_-]{43} `).MatchString(run.stdout) {
		t.Errorf("stdout %q, want the loopback URL with the access token", run.stdout)
	}
}
