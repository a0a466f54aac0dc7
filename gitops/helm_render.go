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
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	v2util "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// ChartSource loads the chart of a HelmRelease whose sourceRef is a
// HelmRepository: the packaged chart, as a gzipped tar.
type ChartSource interface {
	// HelmRepositoryChart returns the package of chart name at version
	// of the HelmRepository repo, for a HelmRelease of namespace.
	HelmRepositoryChart(ctx context.Context, namespace string, repo types.NamespacedName, name, version string) ([]byte, error)
}

// ErrNotRendered means a HelmRelease's chart cannot be rendered by serin
// (an OCI source, a chart that cannot be fetched, post-renderers…): its
// chart's inputs are compared instead.
var ErrNotRendered = errors.New("the chart is not rendered")

// notRendered is an ErrNotRendered with its reason.
func notRendered(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrNotRendered, fmt.Sprintf(format, args...))
}

// chartRendering is what a HelmRelease's chart renders: each object as
// canonical JSON, by key, and what was rendered.
type chartRendering struct {
	objects map[objectKey]string
	// chart is "name version".
	chart string
}

// helmRenderer renders the charts of the HelmReleases of a Kustomization's
// renderings, each set of inputs once.
type helmRenderer struct {
	charts ChartSource
	// namespace is the HelmRelease's, for a rendering that sets none.
	namespace string
	cache     map[string]*chartRendering
}

func newHelmRenderer(charts ChartSource, namespace string) *helmRenderer {
	return &helmRenderer{charts: charts, namespace: namespace, cache: map[string]*chartRendering{}}
}

// render renders the chart of the HelmRelease at k of r, whose repository
// files are files, as helm-controller would: its values over its
// valuesFrom contents, in order, over the chart's defaults, with its
// release name and namespace. An error wrapping ErrNotRendered says why it
// cannot be.
func (h *helmRenderer) render(ctx context.Context, r *rendering, k objectKey, files snapshot) (*chartRendering, error) {
	in, err := helmReleaseInputs(r, k, files)
	if err != nil {
		return nil, err
	}
	id := k.String() + "\x00" + in.inputs
	if c, ok := h.cache[id]; ok {
		return c, nil
	}
	var hr helmReleaseSpec
	if err := json.Unmarshal([]byte(r.objects[k].data), &hr); err != nil {
		return nil, fmt.Errorf("reading %s: %w", k, err)
	}
	if hr.Metadata.Namespace == "" {
		hr.Metadata.Namespace = h.namespace
	}
	if err := hr.supported(); err != nil {
		return nil, err
	}
	ch, err := h.loadChart(ctx, &hr, files)
	if err != nil {
		return nil, err
	}
	values, err := hr.mergedValues(r)
	if err != nil {
		return nil, err
	}
	objects, err := renderChart(ch, values, hr.releaseName(), hr.releaseNamespace())
	if err != nil {
		return nil, fmt.Errorf("%w: chart %s %s of %s: %w", ErrNotRendered, ch.Name(), ch.Metadata.Version, k, err)
	}
	c := &chartRendering{objects: objects, chart: ch.Name() + " " + ch.Metadata.Version}
	h.cache[id] = c
	return c, nil
}

// helmReleaseSpec is what the rendering reads of a HelmRelease.
type helmReleaseSpec struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		ReleaseName     string `json:"releaseName"`
		TargetNamespace string `json:"targetNamespace"`
		ChartRef        any    `json:"chartRef"`
		Chart           struct {
			Spec struct {
				Chart     string `json:"chart"`
				Version   string `json:"version"`
				SourceRef struct {
					Kind      string `json:"kind"`
					Name      string `json:"name"`
					Namespace string `json:"namespace"`
				} `json:"sourceRef"`
			} `json:"spec"`
		} `json:"chart"`
		Values         map[string]any `json:"values"`
		ValuesFrom     []valuesRef    `json:"valuesFrom"`
		PostRenderers  []any          `json:"postRenderers"`
		CommonMetadata any            `json:"commonMetadata"`
	} `json:"spec"`
}

// valuesRef is a HelmRelease's spec.valuesFrom entry.
type valuesRef struct {
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	ValuesKey  string `json:"valuesKey"`
	TargetPath string `json:"targetPath"`
	Optional   bool   `json:"optional"`
}

// supported says why serin cannot render a HelmRelease's chart as
// helm-controller does, if it cannot.
func (hr *helmReleaseSpec) supported() error {
	switch {
	case hr.Spec.ChartRef != nil:
		return notRendered("spec.chartRef (an OCIRepository or a HelmChart) is not fetched by serin")
	case len(hr.Spec.PostRenderers) > 0:
		return notRendered("spec.postRenderers are not applied by serin's rendering")
	case hr.Spec.CommonMetadata != nil:
		return notRendered("spec.commonMetadata is not applied by serin's rendering")
	}
	return nil
}

// releaseName is helm-controller's (v1.6): spec.releaseName, else
// [targetNamespace-]name, shortened to 53 characters with a hash.
func (hr *helmReleaseSpec) releaseName() string {
	name := hr.Spec.ReleaseName
	if name == "" {
		name = hr.Metadata.Name
		if hr.Spec.TargetNamespace != "" {
			name = hr.Spec.TargetNamespace + "-" + name
		}
	}
	const maxLength, hashLength = 53, 12
	if len(name) <= maxLength {
		return name
	}
	sum := fmt.Sprintf("%x", sha256.Sum256([]byte(name)))
	return name[:maxLength-hashLength-1] + "-" + sum[:hashLength]
}

// releaseNamespace is spec.targetNamespace, else the HelmRelease's.
func (hr *helmReleaseSpec) releaseNamespace() string {
	if hr.Spec.TargetNamespace != "" {
		return hr.Spec.TargetNamespace
	}
	return hr.Metadata.Namespace
}

// loadChart loads the chart a HelmRelease names: the directory of a
// chart kept in the repository, or the package of a HelmRepository.
func (h *helmRenderer) loadChart(ctx context.Context, hr *helmReleaseSpec, files snapshot) (*chart.Chart, error) {
	spec := hr.Spec.Chart.Spec
	var ch *chart.Chart
	switch spec.SourceRef.Kind {
	case "GitRepository":
		dir, err := cleanPath(spec.Chart)
		if err != nil {
			return nil, notRendered("chart %v", err)
		}
		if ch, err = loadChartDir(files, dir); err != nil {
			return nil, notRendered("the chart in %s does not load: %v", displayPath(dir), err)
		}
	case "HelmRepository":
		if h.charts == nil {
			return nil, notRendered("no chart source")
		}
		if _, err := semver.StrictNewVersion(strings.TrimPrefix(spec.Version, "v")); err != nil {
			return nil, notRendered("chart version %q is not an exact version", spec.Version)
		}
		ns := spec.SourceRef.Namespace
		if ns == "" {
			ns = hr.Metadata.Namespace
		}
		tgz, err := h.charts.HelmRepositoryChart(ctx, hr.Metadata.Namespace, types.NamespacedName{Namespace: ns, Name: spec.SourceRef.Name}, spec.Chart, spec.Version)
		if err != nil {
			if errors.Is(err, ErrNotRendered) {
				return nil, err
			}
			return nil, notRendered("chart %s %s of HelmRepository %s/%s: %v", spec.Chart, spec.Version, ns, spec.SourceRef.Name, err)
		}
		if ch, err = loader.LoadArchive(bytes.NewReader(tgz)); err != nil {
			return nil, notRendered("chart %s %s does not load: %v", spec.Chart, spec.Version, err)
		}
	default:
		return nil, notRendered("a chart from a %s is not fetched by serin", spec.SourceRef.Kind)
	}
	if err := vendoredDependencies(ch); err != nil {
		return nil, err
	}
	return ch, nil
}

// loadChartDir loads the chart in dir of a commit's files.
func loadChartDir(files snapshot, dir string) (*chart.Chart, error) {
	digests, err := files.digests(dir)
	if err != nil {
		return nil, err
	}
	var buffered []*archive.BufferedFile
	for _, p := range slices.Sorted(maps.Keys(digests)) {
		b, err := files.file(p)
		if err != nil {
			return nil, err
		}
		name := strings.TrimPrefix(p, dir+"/")
		if dir == "" {
			name = p
		}
		buffered = append(buffered, &archive.BufferedFile{Name: name, Data: b})
	}
	if len(buffered) == 0 {
		return nil, fmt.Errorf("no files")
	}
	return loader.LoadFiles(buffered)
}

// vendoredDependencies checks that the dependencies a chart declares are
// in its charts/ directory: serin does not download them.
func vendoredDependencies(ch *chart.Chart) error {
	have := map[string]bool{}
	for _, d := range ch.Dependencies() {
		have[d.Name()] = true
	}
	for _, d := range ch.Metadata.Dependencies {
		if !have[d.Name] {
			return notRendered("dependency %s of chart %s is not in its charts/ directory", d.Name, ch.Name())
		}
	}
	return nil
}

// mergedValues are the values helm-controller renders the chart with:
// each valuesFrom content in order, then spec.values over them (the
// chart's defaults come under all of them when rendering).
func (hr *helmReleaseSpec) mergedValues(r *rendering) (map[string]any, error) {
	values := map[string]any{}
	for _, ref := range hr.Spec.ValuesFrom {
		if ref.TargetPath != "" {
			return nil, notRendered("valuesFrom %s/%s sets targetPath, which serin does not apply", ref.Kind, ref.Name)
		}
		data, found, err := valuesData(r, hr.Metadata.Namespace, ref)
		if err != nil {
			return nil, err
		}
		if !found {
			if ref.Optional {
				continue
			}
			return nil, notRendered("valuesFrom %s %s is not in the Kustomization's rendering", ref.Kind, ref.Name)
		}
		v, err := common.ReadValues(data)
		if err != nil {
			return nil, notRendered("valuesFrom %s %s: %v", ref.Kind, ref.Name, err)
		}
		values = loader.MergeMaps(values, v)
	}
	return loader.MergeMaps(values, hr.Spec.Values), nil
}

// valuesData reads the values of a valuesFrom reference from the
// rendering: the key of a ConfigMap's data, or of a Secret's data
// (base64) or stringData.
func valuesData(r *rendering, namespace string, ref valuesRef) ([]byte, bool, error) {
	if ref.Kind != "ConfigMap" && ref.Kind != "Secret" {
		return nil, false, notRendered("valuesFrom kind %q", ref.Kind)
	}
	_, content, ok := r.lookup(ref.Kind, namespace, ref.Name)
	if !ok {
		return nil, false, nil
	}
	key := ref.ValuesKey
	if key == "" {
		key = "values.yaml"
	}
	c, _ := content.(map[string]any)
	if m, _ := c["stringData"].(map[string]any); ref.Kind == "Secret" && m[key] != nil {
		s, _ := m[key].(string)
		return []byte(s), true, nil
	}
	m, _ := c["data"].(map[string]any)
	s, ok := m[key].(string)
	if !ok {
		return nil, false, nil
	}
	if ref.Kind == "Secret" {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, false, notRendered("valuesFrom Secret %s: %v", ref.Name, err)
		}
		return b, true, nil
	}
	return []byte(s), true, nil
}

// renderChart renders a chart's templates with Helm's engine, as a client
// without a cluster does (lookup finds nothing; the capabilities are
// Helm's defaults), and parses the manifests: each object as canonical
// JSON, keyed by kind, namespace (the release's where the template sets
// none) and name. NOTES.txt and CRDs (crds/, which Helm never upgrades)
// are not objects of the rendering.
func renderChart(ch *chart.Chart, values map[string]any, releaseName, namespace string) (map[objectKey]string, error) {
	if err := v2util.ProcessDependencies(ch, values); err != nil {
		return nil, err
	}
	opts := common.ReleaseOptions{Name: releaseName, Namespace: namespace, Revision: 1, IsInstall: true}
	vals, err := chartutil.ToRenderValues(ch, values, opts, common.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	manifests, err := engine.Render(ch, vals)
	if err != nil {
		return nil, err
	}
	objects := map[objectKey]string{}
	names := slices.Sorted(maps.Keys(manifests))
	for _, name := range names {
		if strings.HasSuffix(name, "NOTES.txt") {
			continue
		}
		if err := parseManifests(name, manifests[name], namespace, objects); err != nil {
			return nil, err
		}
	}
	return objects, nil
}

// parseManifests adds the objects of a rendered template to objects.
func parseManifests(name, manifest, namespace string, objects map[objectKey]string) error {
	decoder := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	for {
		var obj map[string]any
		if err := decoder.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("%s: %w", name, err)
		}
		if len(obj) == 0 {
			continue
		}
		meta, _ := obj["metadata"].(map[string]any)
		k := objectKey{}
		k.APIVersion, _ = obj["apiVersion"].(string)
		k.Kind, _ = obj["kind"].(string)
		k.Name, _ = meta["name"].(string)
		k.Namespace, _ = meta["namespace"].(string)
		if k.Namespace == "" {
			k.Namespace = namespace
		}
		if _, dup := objects[k]; dup {
			return fmt.Errorf("%s: %s rendered twice", name, k)
		}
		b, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		objects[k] = string(b)
	}
}

// findRendered finds t in a chart's rendering (its namespace, or the
// release's).
func (c *chartRendering) find(t Target) (objectKey, bool) {
	for k := range c.objects {
		if k.Kind == t.Kind && k.Name == t.Name && (t.Namespace == "" || k.Namespace == t.Namespace) {
			return k, true
		}
	}
	return objectKey{}, false
}

// mixedObjects lists the objects of result in a state neither head nor
// good rendered: each object (present, with its data, or absent) must be
// as one of them has it.
func mixedObjects(result, head, good *chartRendering) []string {
	keys := map[objectKey]bool{}
	for _, c := range []*chartRendering{result, head, good} {
		for k := range c.objects {
			keys[k] = true
		}
	}
	state := func(c *chartRendering, k objectKey) string {
		if d, ok := c.objects[k]; ok {
			return "present " + d
		}
		return "absent"
	}
	var out []string
	for k := range keys {
		got := state(result, k)
		if got != state(head, k) && got != state(good, k) {
			out = append(out, k.String())
		}
	}
	sort.Strings(out)
	return out
}
