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
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// productionHelmRelease is production's HelmRelease file, with comments,
// at a chart version and image tag; extra goes under values.
func productionHelmRelease(version, tag, extra string) string {
	return `# production's podinfo: promoted from staging by serin
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: podinfo
spec:
  interval: 10m
  chart:
    spec:
      chart: podinfo
      version: "` + version + `" # promoted by serin
      sourceRef:
        kind: HelmRepository
        name: charts
  values:
    replicaCount: 4 # production's own
` + tag + extra
}

// A stage promotes its HelmRelease's chart version and image values into
// the next stage's HelmRelease, in place: comments, quoting and the next
// stage's own values stay.
func TestPlanPromotion_HelmRelease(t *testing.T) {
	kustomization := `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: production
resources:
  - helmrelease.yaml
`
	image := "    image:\n      tag: v1 # the app's version\n"
	promotion := &HelmPromotion{Name: "podinfo", Version: "0.2.0", Image: map[string]string{"tag": "v2"}}
	tests := map[string]struct {
		files     map[string]string
		promotion *HelmPromotion
		want      string
		upToDate  bool
		wantErr   error
	}{
		"chart version and image tag set where they stand": {
			files: map[string]string{"production/helmrelease.yaml": productionHelmRelease("0.1.0", image, "")},
			want:  productionHelmRelease("0.2.0", "    image:\n      tag: v2 # the app's version\n", ""),
		},
		"an image tag the next stage does not set is added": {
			files: map[string]string{"production/helmrelease.yaml": productionHelmRelease("0.1.0", "", "")},
			want:  productionHelmRelease("0.2.0", "    image:\n      tag: \"v2\"\n", ""),
		},
		"a tag that reads as a number is quoted": {
			files:     map[string]string{"production/helmrelease.yaml": productionHelmRelease("0.1.0", image, "")},
			promotion: &HelmPromotion{Name: "podinfo", Image: map[string]string{"tag": "1.10"}},
			want:      productionHelmRelease("0.1.0", "    image:\n      tag: \"1.10\" # the app's version\n", ""),
		},
		"already there": {
			files:    map[string]string{"production/helmrelease.yaml": productionHelmRelease("0.2.0", "    image:\n      tag: v2\n", "")},
			upToDate: true,
		},
		"no HelmRelease of the name": {
			files:     map[string]string{"production/helmrelease.yaml": productionHelmRelease("0.1.0", image, "")},
			promotion: &HelmPromotion{Name: "frontend", Version: "0.2.0"},
			wantErr:   ErrNoHelmRelease,
		},
		"a patch of the next stage sets the tag: not verified": {
			files: map[string]string{
				"production/helmrelease.yaml": productionHelmRelease("0.1.0", image, ""),
				"production/kustomization.yaml": kustomization + `patches:
  - target:
      kind: HelmRelease
    patch: |
      - op: replace
        path: /spec/values/image/tag
        value: v1
`,
			},
			wantErr: ErrUnverifiable,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{"production/kustomization.yaml": kustomization}
			for p, c := range tt.files {
				files[p] = c
			}
			repo := newTestRepo(t)
			head := repo.commitFiles(files, "production")
			hp := tt.promotion
			if hp == nil {
				hp = promotion
			}
			plan, err := PlanPromotion(t.Context(), PromotionInput{
				Head: head, Path: "./production", Target: Target{Kind: "Deployment", Namespace: "production", Name: "podinfo"},
				Images: []string{"podinfo:v2"}, HelmRelease: hp,
			})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if plan.UpToDate != tt.upToDate {
				t.Fatalf("up to date: %v, want %v", plan.UpToDate, tt.upToDate)
			}
			if tt.upToDate {
				return
			}
			if len(plan.Files) != 1 || plan.Files[0].Path != "production/helmrelease.yaml" {
				t.Fatalf("files %v", plan.Paths())
			}
			if diff := cmp.Diff(tt.want, string(plan.Files[0].Content)); diff != "" {
				t.Errorf("production/helmrelease.yaml (-want +got):\n%s", diff)
			}
		})
	}
}
