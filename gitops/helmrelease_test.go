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
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// helmFleet is apps/podinfo of a fleet whose app is a HelmRelease, as a
// Flux user keeps it: the HelmRepository and the HelmRelease in one file
// with comments, and, with valuesFile, a values file that a
// configMapGenerator turns into the ConfigMap of the HelmRelease's
// valuesFrom.
type helmFleet struct {
	version, tag, interval, repoInterval string
	// valuesFile is the generated ConfigMap's values.yaml; "" for none.
	valuesFile string
	// hashed keeps the generated ConfigMap's name suffix, which a
	// kustomizeconfig.yaml writes into valuesFrom; without it the name
	// is the generator's (disableNameSuffixHash).
	hashed bool
	// chartValues is the values.yaml of the chart kept in Git (charts/podinfo);
	// "" for a chart of the HelmRepository.
	chartValues string
}

func goodHelmFleet() helmFleet {
	return helmFleet{version: "0.1.0", tag: "v1", interval: "10m", repoInterval: "10m"}
}

func (f helmFleet) files() map[string]string {
	valuesFrom, generator := "", ""
	if f.valuesFile != "" {
		valuesFrom = `
  valuesFrom:
    - kind: ConfigMap
      name: podinfo-values`
		generator = `
configMapGenerator:
  - name: podinfo-values
    files:
      - values.yaml
    options:
      disableNameSuffixHash: true`
		if f.hashed {
			generator = `
configMapGenerator:
  - name: podinfo-values
    files:
      - values.yaml
configurations:
  - kustomizeconfig.yaml`
		}
	}
	chart := fmt.Sprintf(`      chart: podinfo
      version: %q # the chart's release
      sourceRef:
        kind: HelmRepository
        name: charts`, f.version)
	if f.chartValues != "" {
		chart = `      chart: ./charts/podinfo
      sourceRef:
        kind: GitRepository
        name: fleet`
	}
	files := map[string]string{
		"apps/podinfo/kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: apps
resources:
  - helmrelease.yaml` + generator + "\n",
		"apps/podinfo/helmrelease.yaml": fmt.Sprintf(`apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: charts
spec:
  url: https://charts.example.com
  interval: %s
---
# podinfo, as the team releases it
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: podinfo
spec:
  interval: %s # how often helm-controller looks
  chart:
    spec:
%s%s
  values:
    replicaCount: 2
    image:
      tag: %s # the app's version
`, f.repoInterval, f.interval, chart, valuesFrom, f.tag),
	}
	if f.valuesFile != "" {
		files["apps/podinfo/values.yaml"] = f.valuesFile
	}
	if f.hashed {
		files["apps/podinfo/kustomizeconfig.yaml"] = `nameReference:
  - kind: ConfigMap
    version: v1
    fieldSpecs:
      - path: spec/valuesFrom/name
        kind: HelmRelease
`
	}
	if f.chartValues != "" {
		files["charts/podinfo/Chart.yaml"] = "apiVersion: v2\nname: podinfo\nversion: 0.1.0\n"
		files["charts/podinfo/values.yaml"] = f.chartValues
	}
	return files
}

// The revert of a HelmRelease's bad revision: what the bad commit changed
// in the chart and values it renders with (its chart version, its values,
// the values file of a configMapGenerator it reads with valuesFrom, the
// files of a chart kept in Git) is undone; the rest of the commit stays.
func TestPlanRevert_HelmRelease(t *testing.T) {
	good := goodHelmFleet()
	tests := map[string]struct {
		good, bad helmFleet
		// head, when set, is committed after bad.
		head *helmFleet
		// strategy and want (the planned files, by path) of the plan.
		strategy Strategy
		want     map[string]string
		notes    []string
		wantErr  error
	}{
		"a chart version bump alone is reverted": {
			good: good, bad: with(good, func(f *helmFleet) { f.version = "0.2.0" }),
			strategy: StrategyRevert, want: map[string]string{"apps/podinfo/helmrelease.yaml": good.files()["apps/podinfo/helmrelease.yaml"]},
		},
		"values image.tag is put back, the interval changed with it stays": {
			good: good, bad: with(good, func(f *helmFleet) { f.tag, f.interval, f.repoInterval = "v2", "5m", "1h" }),
			strategy: StrategyEdit,
			want:     map[string]string{"apps/podinfo/helmrelease.yaml": with(good, func(f *helmFleet) { f.interval, f.repoInterval = "5m", "1h" }).files()["apps/podinfo/helmrelease.yaml"]},
			notes: []string{
				"Not a revert: undoing the change of HelmRelease/apps/podinfo would also change its fields that are not its chart's or values (at spec.interval).",
				"apps/podinfo/helmrelease.yaml: HelmRelease/podinfo spec.values.image.tag restored.",
			},
		},
		"a chart version and a tag bumped together, on a head with later work": {
			good: good, bad: with(good, func(f *helmFleet) { f.version, f.tag = "0.2.0", "v2" }),
			head:     ptrTo(with(good, func(f *helmFleet) { f.version, f.tag, f.repoInterval = "0.2.0", "v2", "30m" })),
			strategy: StrategyEdit,
			want:     map[string]string{"apps/podinfo/helmrelease.yaml": with(good, func(f *helmFleet) { f.repoInterval = "30m" }).files()["apps/podinfo/helmrelease.yaml"]},
			notes: []string{
				"Not a revert: commit %HEAD%, after %BAD%, also changed apps/podinfo/helmrelease.yaml.",
				"apps/podinfo/helmrelease.yaml: HelmRelease/podinfo spec.chart.spec.version restored.",
				"apps/podinfo/helmrelease.yaml: HelmRelease/podinfo spec.values.image.tag restored.",
			},
		},
		"the values file of valuesFrom is restored": {
			good:     with(good, func(f *helmFleet) { f.valuesFile = "image:\n  tag: v1\n" }),
			bad:      with(good, func(f *helmFleet) { f.valuesFile = "image:\n  tag: v2\n" }),
			strategy: StrategyRevert, want: map[string]string{"apps/podinfo/values.yaml": "image:\n  tag: v1\n"},
		},
		"the values file of valuesFrom, with the generator's name hash, is restored": {
			good:     with(good, func(f *helmFleet) { f.valuesFile, f.hashed = "image:\n  tag: v1\n", true }),
			bad:      with(good, func(f *helmFleet) { f.valuesFile, f.hashed = "image:\n  tag: v2\n", true }),
			strategy: StrategyRevert, want: map[string]string{"apps/podinfo/values.yaml": "image:\n  tag: v1\n"},
		},
		"the chart kept in Git is restored": {
			good:     with(good, func(f *helmFleet) { f.chartValues = "image:\n  tag: v1\n" }),
			bad:      with(good, func(f *helmFleet) { f.chartValues = "image:\n  tag: v2\n" }),
			strategy: StrategyRevert, want: map[string]string{"charts/podinfo/values.yaml": "image:\n  tag: v1\n"},
		},
		"a commit that changes no input of the chart is not the bad one": {
			good: good, bad: with(good, func(f *helmFleet) { f.interval = "1m" }),
			wantErr: ErrSameRendering,
		},
		"a newer change of the values is not reverted over": {
			good: good, bad: with(good, func(f *helmFleet) { f.tag = "v2" }),
			head:    ptrTo(with(good, func(f *helmFleet) { f.tag = "v3" })),
			wantErr: ErrUnverifiable,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			repo := newTestRepo(t)
			goodC := repo.commitFiles(tt.good.files(), "Promote podinfo")
			removed := map[string]string{}
			for p := range tt.good.files() {
				if _, ok := tt.bad.files()[p]; !ok {
					removed[p] = ""
				}
			}
			badFiles := tt.bad.files()
			for p := range removed {
				badFiles[p] = ""
			}
			badC := repo.commitFiles(badFiles, "Bump podinfo")
			headC := badC
			if tt.head != nil {
				headC = repo.commitFiles(tt.head.files(), "Later work")
			}
			plan, err := PlanRevert(t.Context(), PlanInput{
				Path: "./apps/podinfo", Target: Target{Kind: "HelmRelease", Namespace: "apps", Name: "podinfo"},
				Good: goodC, Bad: badC, Head: headC,
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
			if plan.Strategy != tt.strategy {
				t.Errorf("strategy %s, want %s; notes %q", plan.Strategy, tt.strategy, plan.Notes)
			}
			got := map[string]string{}
			for _, f := range plan.Files {
				got[f.Path] = string(f.Content)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("planned files (-want +got):\n%s", diff)
			}
			r := strings.NewReplacer("%HEAD%", ShortSHA(headC.Hash.String()), "%BAD%", ShortSHA(badC.Hash.String()))
			var notes []string
			for _, n := range tt.notes {
				notes = append(notes, r.Replace(n))
			}
			if diff := cmp.Diff(notes, plan.Notes); tt.notes != nil && diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

func with(f helmFleet, change func(*helmFleet)) helmFleet {
	change(&f)
	return f
}

func ptrTo[T any](v T) *T { return &v }
