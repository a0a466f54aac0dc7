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

package gitops

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const testDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: podinfo
spec:
  template:
    spec:
      containers:
        - name: podinfo
          image: ghcr.io/stefanprodan/podinfo:6.7.0
`

// A kustomization that names a remote base, remote file or remote
// component, directly or in a local base, is refused before kustomize
// runs: no git clone, no HTTP request (the test leaves kustomize no git
// binary and no HTTP transport, and counts the requests).
func TestRender_RefusesRemoteBases(t *testing.T) {
	var requests atomic.Int32
	transport := http.DefaultTransport
	http.DefaultTransport = roundTripFunc(func(*http.Request) (*http.Response, error) {
		requests.Add(1)
		return nil, errors.New("no network in this test")
	})
	t.Cleanup(func() { http.DefaultTransport = transport })
	t.Setenv("PATH", t.TempDir()) // no git to clone with

	kustomization := func(body string) string {
		return "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n" + body
	}
	// only is a repository holding only the Kustomization of apps/podinfo.
	only := func(body string) map[string][]byte {
		return map[string][]byte{"apps/podinfo/kustomization.yaml": []byte(kustomization(body))}
	}
	tests := map[string]struct {
		files    map[string][]byte
		wantBase string
		wantFile string // apps/podinfo/kustomization.yaml when empty
	}{
		"https base with a ref": {
			files: only("resources:\n  - https://github.com/acme/fleet//base?ref=v1\n"), wantBase: "https://github.com/acme/fleet//base?ref=v1",
		},
		"scp-like git base": {
			files: only("resources:\n  - git@github.com:acme/fleet.git//base?ref=v1\n"), wantBase: "git@github.com:acme/fleet.git//base?ref=v1",
		},
		"github shorthand": {
			files: only("bases:\n  - github.com/acme/fleet/base?ref=v1\n"), wantBase: "github.com/acme/fleet/base?ref=v1",
		},
		"manifest over https": {
			files: only("resources:\n  - https://raw.githubusercontent.com/acme/fleet/v1/deployment.yaml\n"), wantBase: "https://raw.githubusercontent.com/acme/fleet/v1/deployment.yaml",
		},
		"remote component": {
			files: map[string][]byte{
				"apps/podinfo/kustomization.yaml": []byte(kustomization("resources:\n  - deployment.yaml\ncomponents:\n  - ssh://git@git.example.com/acme/components.git//monitoring\n")),
				"apps/podinfo/deployment.yaml":    []byte(testDeployment),
			},
			wantBase: "ssh://git@git.example.com/acme/components.git//monitoring",
		},
		"patch over https": {
			files: map[string][]byte{
				"apps/podinfo/kustomization.yaml": []byte(kustomization("resources:\n  - deployment.yaml\npatches:\n  - path: https://example.com/patch.yaml\n")),
				"apps/podinfo/deployment.yaml":    []byte(testDeployment),
			},
			wantBase: "https://example.com/patch.yaml",
		},
		"remote base of a local base": {
			files: map[string][]byte{
				"apps/podinfo/kustomization.yaml": []byte(kustomization("resources:\n  - ../base\n")),
				"apps/base/kustomization.yaml":    []byte(kustomization("resources:\n  - git::https://git.example.com/acme/base.git?ref=v2\n")),
			},
			wantBase: "git::https://git.example.com/acme/base.git?ref=v2", wantFile: "apps/base/kustomization.yaml",
		},
		"local bases only": {
			files: map[string][]byte{
				"apps/podinfo/kustomization.yaml": []byte(kustomization("resources:\n  - ../base\nnamespace: apps\n")),
				"apps/base/kustomization.yaml":    []byte(kustomization("resources:\n  - deployment.yaml\n  - ../shared\n")),
				"apps/base/deployment.yaml":       []byte(testDeployment),
				"apps/shared/kustomization.yaml":  []byte(kustomization("configMapGenerator:\n  - name: settings\n    files:\n      - app.properties=settings.properties\n")),
				"apps/shared/settings.properties": []byte("color=blue\n"),
			},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r, err := render(t.Context(), snapshot{changes: tt.files}, "apps/podinfo")
			if tt.wantBase == "" {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := r.find(Target{Kind: "Deployment", Namespace: "apps", Name: "podinfo"}); err != nil {
					t.Error(err)
				}
				return
			}
			if tt.wantFile == "" {
				tt.wantFile = "apps/podinfo/kustomization.yaml"
			}
			var remote *RemoteBaseError
			if !errors.As(err, &remote) {
				t.Fatalf("render error = %v, want a RemoteBaseError", err)
			}
			if diff := cmp.Diff(RemoteBaseError{Base: tt.wantBase, File: tt.wantFile}, *remote); diff != "" {
				t.Errorf("refused (-want +got):\n%s", diff)
			}
			want := "kustomize build ./apps/podinfo: remote base " + tt.wantBase + " is not supported: vendor it into the repository (named in " + tt.wantFile + ")"
			if err.Error() != want {
				t.Errorf("error = %q, want %q", err, want)
			}
		})
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d HTTP requests, want none", n)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestIsRemoteReference(t *testing.T) {
	tests := map[string]bool{
		"https://github.com/acme/fleet//base?ref=v1": true,
		"HTTP://example.com/deploy.yaml":             true,
		"git@github.com:acme/fleet.git":              true,
		"ssh://git@example.com/acme/fleet.git":       true,
		"file:///srv/git/fleet.git":                  true,
		"git::https://example.com/fleet.git":         true,
		"github.com/acme/fleet/base":                 true,
		"GitHub.com:acme/fleet":                      true,
		"../base":                                    false,
		"deployment.yaml":                            false,
		"base/github.com/vendored":                   false,
		"overlays/prod":                              false,
		"app=config/app.properties":                  false,
	}
	for ref, want := range tests {
		if got := isRemoteReference(ref); got != want {
			t.Errorf("isRemoteReference(%q) = %v, want %v", ref, got, want)
		}
	}
}

// A cancelled context stops a plan: the error is the context's, not a
// finding about the repository.
func TestPlanRevert_StopsWhenCancelled(t *testing.T) {
	dir := filepath.Join("testdata", "image-bump-kustomization")
	repo := newTestRepo(t)
	good := repo.commitDir(filepath.Join(dir, "good"), "Promote podinfo")
	bad := repo.commitDir(filepath.Join(dir, "original"), "Bump podinfo")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	target := Target{Kind: "Deployment", Namespace: "apps", Name: "podinfo"}
	_, err := PlanRevert(ctx, PlanInput{Path: "./apps/podinfo", Target: target, Good: good, Bad: bad, Head: bad})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnverifiable) {
		t.Errorf("PlanRevert with a cancelled context: %v, want context.Canceled", err)
	}
	if _, err := PreviousDefinition(ctx, bad, "./apps/podinfo", target, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("PreviousDefinition with a cancelled context: %v, want context.Canceled", err)
	}
	if _, err := ancestors(ctx, bad); !errors.Is(err, context.Canceled) {
		t.Errorf("walking the history with a cancelled context: %v, want context.Canceled", err)
	}
}
