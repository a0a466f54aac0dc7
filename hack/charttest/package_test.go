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

package charttest

import (
	"bytes"
	"context"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"github.com/serin-dev/serin/internal/release"
)

// The chart make release packages is the chart of the tree, as Helm loads
// it (the same templates, values, CRDs and files), with the release's
// version and appVersion, so that its agent runs the release's image.
func TestReleasedChart(t *testing.T) {
	tests := map[string]struct {
		version                 string
		wantName, wantChart     string
		wantAppVersion, wantImg string
	}{
		"release": {
			version: "v0.3.0", wantName: "serin-0.3.0.tgz", wantChart: "0.3.0",
			wantAppVersion: "v0.3.0", wantImg: "ghcr.io/serin-dev/serin:v0.3.0",
		},
		"dev build": {
			version: "v0.3.0-4-gb917abf-dirty", wantName: "serin-0.0.0-dev+v0.3.0-4-gb917abf-dirty.tgz",
			wantChart: "0.0.0-dev+v0.3.0-4-gb917abf-dirty", wantAppVersion: "v0.3.0-4-gb917abf-dirty",
			wantImg: "ghcr.io/serin-dev/serin:v0.3.0-4-gb917abf-dirty",
		},
	}
	tree := loadChart(t)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			v, err := release.ParseVersion(tc.version)
			if err != nil {
				t.Fatal(err)
			}
			archive, fileName, err := release.PackageChart(chartDir, v, time.Unix(0, 0))
			if err != nil {
				t.Fatal(err)
			}
			diff(t, "file name", tc.wantName, fileName)
			packaged, err := loader.LoadArchive(bytes.NewReader(archive))
			if err != nil {
				t.Fatalf("Helm cannot load the packaged chart: %v", err)
			}
			diff(t, "version", tc.wantChart, packaged.Metadata.Version)
			diff(t, "appVersion", tc.wantAppVersion, packaged.Metadata.AppVersion)
			diff(t, "templates", fileNames(tree.Templates), fileNames(packaged.Templates))
			diff(t, "other files (CRDs, .helmignore)", fileNames(tree.Files), fileNames(packaged.Files))
			if d := cmp.Diff(tree.Values, packaged.Values); d != "" {
				t.Errorf("values differ (-tree +packaged):\n%s", d)
			}
			treeFiles := map[string][]byte{}
			for _, f := range append(tree.Templates, tree.Files...) {
				treeFiles[f.Name] = f.Data
			}
			for _, f := range append(packaged.Templates, packaged.Files...) {
				if !bytes.Equal(f.Data, treeFiles[f.Name]) {
					t.Errorf("%s differs from the tree's", f.Name)
				}
			}
			// The rest of Chart.yaml is the tree's.
			want := *tree.Metadata
			want.Version, want.AppVersion = tc.wantChart, tc.wantAppVersion
			if d := cmp.Diff(&want, packaged.Metadata); d != "" {
				t.Errorf("Chart.yaml (-want +packaged):\n%s", d)
			}

			r, err := render(context.Background(), packaged, nil, testKubeVersion)
			if err != nil {
				t.Fatal(err)
			}
			_, c := agent(t, r, "serin-agent")
			diff(t, "image", tc.wantImg, c.Image)
		})
	}
}

func fileNames(files []*common.File) []string {
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
	}
	sort.Strings(names)
	return names
}
