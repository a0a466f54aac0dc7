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
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	release "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

const (
	// repoRoot is serin's repository, seen from this module.
	repoRoot = "../.."
	// testRelease and testNamespace are where the tests install the
	// chart, as the docs do.
	testRelease   = "serin"
	testNamespace = "serin-system"
)

// chartDir is the chart under test.
var chartDir = filepath.Join(repoRoot, "charts", "serin")

// testKubeVersion is the cluster the rendering tests pretend to talk to
// (Helm's client-only default, v1.20, is older than the chart allows).
var testKubeVersion = &common.KubeVersion{Version: "v1.36.0", Major: "1", Minor: "36"}

// loadChart loads charts/serin as Helm does (.helmignore applied).
func loadChart(t testing.TB) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("loading %s: %v", chartDir, err)
	}
	return ch
}

// parseValues reads a YAML document of values.
func parseValues(t testing.TB, doc string) map[string]any {
	t.Helper()
	values := map[string]any{}
	if err := yaml.Unmarshal([]byte(doc), &values); err != nil {
		t.Fatalf("values %q: %v", doc, err)
	}
	return values
}

// rendered are the objects of a release, keyed "Kind namespace/name".
type rendered struct {
	objects map[string]*unstructured.Unstructured
	notes   string
}

// render renders the chart with values as `helm install --dry-run=client`
// does (action.Install, client only), for a cluster of kubeVersion.
func render(ctx context.Context, ch *chart.Chart, values map[string]any, kubeVersion *common.KubeVersion) (*rendered, error) {
	install := action.NewInstall(action.NewConfiguration(action.ConfigurationSetLogger(slog.NewTextHandler(io.Discard, nil))))
	install.DryRunStrategy = action.DryRunClient
	install.ReleaseName = testRelease
	install.Namespace = testNamespace
	install.KubeVersion = kubeVersion
	releaser, err := install.RunWithContext(ctx, ch, values)
	if err != nil {
		return nil, err
	}
	rel, ok := releaser.(*release.Release)
	if !ok {
		return nil, fmt.Errorf("helm returned a %T, not a chart v2 release", releaser)
	}
	objects, err := parseManifest(rel.Manifest)
	if err != nil {
		return nil, err
	}
	return &rendered{objects: objects, notes: rel.Info.Notes}, nil
}

// parseManifest splits a multi-document manifest into objects.
func parseManifest(manifest string) (map[string]*unstructured.Unstructured, error) {
	objects := map[string]*unstructured.Unstructured{}
	decoder := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); err != nil {
			if err == io.EOF {
				return objects, nil
			}
			return nil, err
		}
		if len(obj.Object) == 0 {
			continue
		}
		key := objectKey(obj.GetKind(), obj.GetNamespace(), obj.GetName())
		if _, dup := objects[key]; dup {
			return nil, fmt.Errorf("%s rendered twice", key)
		}
		objects[key] = obj
	}
}

func objectKey(kind, namespace, name string) string {
	return kind + " " + namespace + "/" + name
}

// keys lists the rendered objects, sorted.
func (r *rendered) keys() []string {
	keys := make([]string, 0, len(r.objects))
	for k := range r.objects {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// get converts the object kind namespace/name into into, failing the test
// when it was not rendered.
func (r *rendered) get(t testing.TB, kind, namespace, name string, into any) {
	t.Helper()
	obj, ok := r.objects[objectKey(kind, namespace, name)]
	if !ok {
		t.Fatalf("no %s rendered; got %v", objectKey(kind, namespace, name), r.keys())
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, into); err != nil {
		t.Fatalf("%s: %v", objectKey(kind, namespace, name), err)
	}
}
