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
	"strings"
	"testing"
)

// promotionFleet is a base shared by two stages; production sets api's
// tag (and keeps a comment), staging runs what the canary promoted.
func promotionFleet(productionImages string) map[string]string {
	return map[string]string{
		"base/kustomization.yaml": "resources:\n  - deployment.yaml\n",
		"base/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/api
`,
		"production/kustomization.yaml": "namespace: production\nresources:\n  - ../base\n" + productionImages,
	}
}

func TestPlanPromotion(t *testing.T) {
	target := Target{Kind: "Deployment", Namespace: "production", Name: "api"}
	for _, tc := range []struct {
		name       string
		images     string // production's images: section
		extra      map[string]string
		promoted   []string
		wantFile   []string // lines the new kustomization.yaml has
		wantErr    error
		wantErrMsg string
	}{
		{
			name:     "the entry's tag is set, its comment kept",
			images:   "images:\n  - name: ghcr.io/acme/api\n    newTag: v1 # the released version\n",
			promoted: []string{"ghcr.io/acme/api:v2"},
			wantFile: []string{"newTag: v2 # the released version"},
		},
		{
			name:     "an entry is added where there is none",
			promoted: []string{"ghcr.io/acme/api:v2"},
			wantFile: []string{"images:", "- name: ghcr.io/acme/api", "newTag: v2"},
		},
		{
			name:     "a digest is written, a registry port is no tag",
			images:   "images:\n  - name: registry.local:5000/acme/api\n    newName: registry.local:5000/acme/api\n",
			promoted: []string{"registry.local:5000/acme/api:v2@sha256:0123"},
			wantErr:  ErrNoImageEntry,
		},
		{
			name:     "an entry matched by its newName",
			images:   "images:\n  - name: ghcr.io/acme/api\n    newName: registry.local:5000/acme/api\n    newTag: v1\n",
			promoted: []string{"registry.local:5000/acme/api:v2@sha256:0123"},
			wantFile: []string{"newName: registry.local:5000/acme/api", "newTag: v2", "digest: sha256:0123"},
		},
		{
			name:     "an image the manifests name otherwise",
			promoted: []string{"docker.io/other/api:v2"},
			wantErr:  ErrNoImageEntry,
		},
		{
			name:   "a sidecar only production runs stays, an image only staging runs is left out",
			images: "images:\n  - name: ghcr.io/acme/api\n    newTag: v1\n",
			extra: map[string]string{
				"production/kustomization.yaml": "namespace: production\nresources:\n  - ../base\npatches:\n  - path: shipper.yaml\nimages:\n  - name: ghcr.io/acme/api\n    newTag: v1\n",
				"production/shipper.yaml":       "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  template:\n    spec:\n      containers:\n        - name: shipper\n          image: fluent/fluent-bit:3.1\n",
			},
			promoted: []string{"ghcr.io/acme/api:v2", "ghcr.io/acme/debug:1"},
			wantFile: []string{"newTag: v2"},
		},
		{
			name:   "another object with the same image would change too",
			images: "images:\n  - name: ghcr.io/acme/api\n    newTag: v1\n",
			extra: map[string]string{
				"production/kustomization.yaml": "namespace: production\nresources:\n  - ../base\n  - migrate.yaml\nimages:\n  - name: ghcr.io/acme/api\n    newTag: v1\n",
				"production/migrate.yaml":       "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: migrate\n          image: ghcr.io/acme/api\n",
			},
			promoted:   []string{"ghcr.io/acme/api:v2"},
			wantErr:    ErrUnverifiable,
			wantErrMsg: "would also change Job/production/migrate",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := promotionFleet(tc.images)
			for k, v := range tc.extra {
				files[k] = v
			}
			r := newTestRepo(t)
			head := r.commitFiles(files, "the stages")
			plan, err := PlanPromotion(context.Background(), PromotionInput{Head: head, Path: "./production", Target: target, Images: tc.promoted})
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !strings.Contains(errString(err), tc.wantErrMsg) {
					t.Fatalf("err = %v, want %v (%q)", err, tc.wantErr, tc.wantErrMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if plan.UpToDate || len(plan.Files) != 1 || plan.Files[0].Path != "production/kustomization.yaml" {
				t.Fatalf("plan = %+v", plan)
			}
			got := string(plan.Files[0].Content)
			for _, line := range tc.wantFile {
				if !strings.Contains(got, line) {
					t.Errorf("the kustomization lacks %q:\n%s", line, got)
				}
			}
			// Once committed, the same promotion has nothing left to do.
			next := r.commitFiles(map[string]string{plan.Files[0].Path: got}, "promote")
			again, err := PlanPromotion(context.Background(), PromotionInput{Head: next, Path: "./production", Target: target, Images: tc.promoted})
			if err != nil || !again.UpToDate {
				t.Errorf("promoting again: %+v, %v; want up to date", again, err)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestImageOf(t *testing.T) {
	for ref, want := range map[string]string{
		"api":                          "api||",
		"api:v2":                       "api|v2|",
		"registry.local:5000/acme/api": "registry.local:5000/acme/api||",
		"registry.local:5000/acme/api:v2@sha256:1": "registry.local:5000/acme/api|v2|sha256:1",
		"ghcr.io/acme/api@sha256:1":                "ghcr.io/acme/api||sha256:1",
	} {
		img := imageOf(ref)
		if got := img.Name + "|" + img.NewTag + "|" + img.Digest; got != want {
			t.Errorf("imageOf(%q) = %s, want %s", ref, got, want)
		}
	}
}
