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
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

func TestKubernetesVersionSupported(t *testing.T) {
	for gitVersion, want := range map[string]bool{
		"v1.30.0": true, "v1.31.2": true, "v1.30.4-eks-a737599": true, "v1.32.0+k3s1": true, "v2.0.0": true,
		"v1.29.9": false, "v1.29.15-gke.100": false,
	} {
		if got, err := kubernetesVersionSupported(gitVersion); err != nil || got != want {
			t.Errorf("%s: got %v, %v; want %v", gitVersion, got, err, want)
		}
	}
	if _, err := kubernetesVersionSupported("unknown"); err == nil {
		t.Error("unknown: want an error")
	}
}

// The chart's kubeVersion and serin check's minimum are one version: a
// cluster the chart installs on passes the check, and the other way round.
func TestChartKubeVersionIsTheCheckedMinimum(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "charts", "serin", "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^kubeVersion: ">=([0-9.]+)-0"$`).FindSubmatch(data)
	if m == nil {
		t.Fatal(`charts/serin/Chart.yaml has no kubeVersion: ">=X.Y.Z-0"`)
	}
	if string(m[1]) != minKubernetesVersion {
		t.Errorf("the chart's kubeVersion is >=%s, serin check's minimum %s: make them one", m[1], minKubernetesVersion)
	}
}
