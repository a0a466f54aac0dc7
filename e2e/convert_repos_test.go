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

package e2e

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestConvert_Repositories converts whole Flux repositories that ran
// Flagger, as a migrating user does (serin convert -f REPO -R
// --output-dir), and applies every converted object to the testbed's API
// server (a server-side dry run: the schema and CEL rules judge it). Our
// own fixtures, in e2e/testdata/flagger-repos: Canaries, Ingresses,
// AlertProviders and MetricTemplates in separate files and folders, with
// kustomizations and a Flux Kustomization. Each repository may lose only
// what has no equivalent, named here; Istio's DestinationRules are not
// applied (the testbed runs no Istio).
func TestConvert_Repositories(t *testing.T) {
	shared(t)
	tests := map[string]struct {
		lost    []string // the warnings expected, each a substring
		summary string
		notes   []string
		// kept are lines of an output file, by path: a document passed
		// through keeps its comments and layout, edits included.
		kept map[string][]string
	}{
		"shop": {
			// {{ ingress }} names the Ingress Flagger generated; the HTTPRoute replaces it.
			lost:    []string{"MetricTemplate shop/error-rate: spec.query: {{ ingress }} is not defined"},
			summary: "converted 1 Canary, 2 MetricTemplates and 1 Provider, passed 4 other objects through, could not map 1 field",
			notes: []string{"Canary shop/storefront (apps/storefront/canary.yaml): nothing lost",
				"spec.ingressRef: the Ingress storefront: its hosts and paths to storefront converted to routing.hosts"},
		},
		"helm": {
			// The flux2-kustomize-helm-example layout: the app is a
			// HelmRelease, its Flagger Canary a file beside it.
			summary: "converted 1 Canary, passed 3 other objects through",
			notes: []string{"Canary podinfo/podinfo (apps/podinfo/canary.yaml): nothing lost",
				"HelmRelease podinfo/podinfo: spec.driftDetection.ignore: added /spec/replicas of Deployment podinfo"},
			kept: map[string][]string{"apps/podinfo/release.yaml": {
				"# Flagger scales the Deployment; helm-controller must not put the",
				"      - paths: [/spec/replicas]\n        # serin scales the Canary's target: its replicas are not drift.\n        target: {kind: Deployment, name: podinfo}",
			}},
		},
		"mesh": {
			summary: "converted 2 Canaries, 1 MetricTemplate, 1 Provider and 2 DestinationRules, passed 2 other objects through",
			notes: []string{"Canary mesh/backend (apps/backend/backend.yaml): nothing lost", "Canary mesh/frontend (apps/frontend/frontend.yaml): nothing lost",
				"written as the Istio DestinationRules frontend-primary and frontend-canary",
				"istio_requests_total, a built-in check's name before Flagger 1.0: converted to the built-in request-success-rate",
				"an inline query: converted to the MetricTemplate mesh/backend-404s"},
		},
	}
	namespaces := map[string]string{}
	for repo := range tests {
		namespaces[repo] = newNamespace(t)
	}
	for repo, tt := range tests {
		t.Run(repo, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			if repo == "helm" {
				needHelmController(t) // the HelmRelease CRD, for the dry run
			}
			out := t.TempDir()
			stdout, stderr, err := runCLI("convert", "-f", filepath.Join("testdata", "flagger-repos", repo), "-R", "--output-dir", out,
				"--allow-lossy", "--gateway", "gateways/public", "--data-plane", "envoy-gateway", "--metrics-server", "http://prometheus.monitoring:9090")
			g.Expect(err).NotTo(HaveOccurred(), stderr)
			g.Expect(stdout).To(BeEmpty())
			var warnings []string
			for line := range strings.SplitSeq(stderr, "\n") {
				if rest, ok := strings.CutPrefix(line, "⚠️ "); ok {
					warnings = append(warnings, rest)
				}
			}
			g.Expect(warnings).To(HaveLen(len(tt.lost)), "warnings:\n%s", stderr)
			for i, want := range tt.lost {
				g.Expect(warnings[i]).To(ContainSubstring(want))
			}
			g.Expect(stderr).To(ContainSubstring(tt.summary))
			for _, note := range tt.notes {
				g.Expect(stderr).To(ContainSubstring(note))
			}
			for path, lines := range tt.kept {
				data, err := os.ReadFile(filepath.Join(out, path))
				g.Expect(err).NotTo(HaveOccurred())
				for _, line := range lines {
					g.Expect(string(data)).To(ContainSubstring(line), "%s", path)
				}
			}

			ns := namespaces[repo]
			applied := map[string]int{}
			var notApplied []string
			g.Expect(filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				data, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				documents, err := splitYAML(data)
				if err != nil {
					return err
				}
				for _, document := range documents {
					u := &unstructured.Unstructured{}
					if err := yaml.Unmarshal(document, &u.Object); err != nil || len(u.Object) == 0 {
						return fmt.Errorf("%s: %v", path, err)
					}
					switch u.GroupVersionKind().Group {
					case "kustomize.config.k8s.io":
						continue // a kustomization file, not an object
					case "networking.istio.io":
						notApplied = append(notApplied, u.GetKind()+" "+u.GetName())
						continue
					}
					if err := dryRunCreate(ctx, u.Object, ns); err != nil {
						return fmt.Errorf("the API server refuses %s %s of %s: %w", u.GetKind(), u.GetName(), path, err)
					}
					applied[u.GetKind()]++
				}
				return nil
			})).To(Succeed())
			kinds := make([]string, 0, len(applied))
			for k, n := range applied {
				kinds = append(kinds, fmt.Sprintf("%s=%d", k, n))
			}
			slices.Sort(kinds)
			t.Logf("applied (dry run) %s; not applied (no Istio on the testbed): %v", strings.Join(kinds, " "), notApplied)
			g.Expect(applied).To(HaveKey("Canary"))
			if repo == "mesh" {
				g.Expect(notApplied).To(ConsistOf("DestinationRule frontend-primary", "DestinationRule frontend-canary"))
			}
		})
	}
}
