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
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serin-dev/serin/gitops/chartrender"
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

// defaultChartRenderer renders for a plan given no ChartSource that says
// how (RenderingChartSource): the default bounds.
var defaultChartRenderer = chartrender.New(chartrender.Limits{})

// RenderingChartSource is a ChartSource that also says how charts are
// rendered: in child processes of its Renderer, within its bounds.
type RenderingChartSource interface {
	ChartSource
	// Renderer renders the charts, bounded.
	Renderer() *chartrender.Renderer
}

// helmRenderer renders the charts of the HelmReleases of a Kustomization's
// renderings, each set of inputs once.
type helmRenderer struct {
	charts   ChartSource
	renderer *chartrender.Renderer
	// namespace is the HelmRelease's, for a rendering that sets none.
	namespace string
	// source is the Kustomization's GitRepository, the only one whose
	// charts serin reads (from the Kustomization's clone).
	source types.NamespacedName
	cache  map[string]*chartRendering
	// failed keeps why a set of inputs was not rendered (ErrNotRendered).
	failed map[string]error
}

func newHelmRenderer(charts ChartSource, namespace string, source types.NamespacedName) *helmRenderer {
	renderer := defaultChartRenderer
	if rc, ok := charts.(RenderingChartSource); ok && rc.Renderer() != nil {
		renderer = rc.Renderer()
	}
	return &helmRenderer{charts: charts, renderer: renderer, namespace: namespace, source: source,
		cache: map[string]*chartRendering{}, failed: map[string]error{}}
}

// render renders the chart of the HelmRelease at k of r, whose repository
// files are files, as helm-controller would: its values over its
// valuesFrom contents, in order, over the chart's defaults, with its
// release name and namespace. The chart is loaded and rendered in a child
// process (chartrender), within its bounds. An error wrapping
// ErrNotRendered says why it cannot be: a bound passed names the bound
// and its flag.
func (h *helmRenderer) render(ctx context.Context, r *rendering, k objectKey, files snapshot) (*chartRendering, error) {
	in, err := helmReleaseInputs(r, k, files)
	if err != nil {
		return nil, err
	}
	id := k.String() + "\x00" + in.inputs
	if c, ok := h.cache[id]; ok {
		return c, nil
	}
	if err, ok := h.failed[id]; ok {
		// The same inputs fail the same way: a chart past a bound is
		// not rendered again at the next commit of the plan.
		return nil, err
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
	req, what, err := h.chartRequest(ctx, &hr, files)
	if err != nil {
		return nil, err
	}
	if req.Values, err = hr.mergedValues(r); err != nil {
		return nil, err
	}
	req.ReleaseName, req.Namespace = hr.releaseName(), hr.releaseNamespace()
	res, err := h.renderer.Render(ctx, req)
	if err != nil {
		err = renderError(ctx, err, what, k)
		if errors.Is(err, ErrNotRendered) {
			h.failed[id] = err
		}
		return nil, err
	}
	objects := make(map[objectKey]string, len(res.Objects))
	for _, o := range res.Objects {
		objects[objectKey{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}] = string(o.JSON)
	}
	c := &chartRendering{objects: objects, chart: res.Chart}
	h.cache[id] = c
	return c, nil
}

// renderError is the error of a render that failed: ErrNotRendered with
// what the renderer said (the bound passed, Helm's error), unless the
// job's own context ended.
func renderError(ctx context.Context, err error, what string, k objectKey) error {
	if ctx.Err() != nil {
		return err
	}
	var chartErr *chartrender.ChartError
	if errors.As(err, &chartErr) {
		switch {
		case chartErr.Stage == chartrender.StageRender:
			return notRendered("chart %s of %s: %s", chartErr.Chart, k, chartErr.Message)
		case chartErr.Chart != "":
			return notRendered("%s", chartErr.Message)
		}
		return notRendered("%s does not load: %s", what, chartErr.Message)
	}
	return notRendered("%s of %s: %v", what, k, err)
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

// chartRequest is the chart a HelmRelease names, to send to the renderer,
// and what to call it in messages: the directory of a chart kept in the
// Kustomization's repository (only when the HelmRelease's sourceRef is
// that GitRepository), or the package of a HelmRepository.
func (h *helmRenderer) chartRequest(ctx context.Context, hr *helmReleaseSpec, files snapshot) (chartrender.Request, string, error) {
	spec := hr.Spec.Chart.Spec
	ns := spec.SourceRef.Namespace
	if ns == "" {
		ns = hr.Metadata.Namespace
	}
	ref := types.NamespacedName{Namespace: ns, Name: spec.SourceRef.Name}
	switch spec.SourceRef.Kind {
	case "GitRepository":
		if ref != h.source {
			return chartrender.Request{}, "", notRendered("the chart is in GitRepository %s, not in the Kustomization's repository %s; serin compared the inputs", ref, sourceName(h.source))
		}
		dir, err := cleanPath(spec.Chart)
		if err != nil {
			return chartrender.Request{}, "", notRendered("chart %v", err)
		}
		chartFiles, err := chartDirFiles(files, dir)
		if err != nil {
			return chartrender.Request{}, "", notRendered("the chart in %s does not load: %v", displayPath(dir), err)
		}
		return chartrender.Request{Files: chartFiles}, "the chart in " + displayPath(dir), nil
	case "HelmRepository":
		if h.charts == nil {
			return chartrender.Request{}, "", notRendered("no chart source")
		}
		if _, err := semver.StrictNewVersion(strings.TrimPrefix(spec.Version, "v")); err != nil {
			return chartrender.Request{}, "", notRendered("chart version %q is not an exact version", spec.Version)
		}
		tgz, err := h.charts.HelmRepositoryChart(ctx, hr.Metadata.Namespace, ref, spec.Chart, spec.Version)
		if err != nil {
			if errors.Is(err, ErrNotRendered) {
				return chartrender.Request{}, "", err
			}
			return chartrender.Request{}, "", notRendered("chart %s %s of HelmRepository %s: %v", spec.Chart, spec.Version, ref, err)
		}
		return chartrender.Request{Archive: tgz}, fmt.Sprintf("chart %s %s", spec.Chart, spec.Version), nil
	}
	return chartrender.Request{}, "", notRendered("a chart from a %s is not fetched by serin", spec.SourceRef.Kind)
}

// sourceName names the Kustomization's GitRepository, or says it is not
// known.
func sourceName(s types.NamespacedName) string {
	if s.Name == "" {
		return "(unknown)"
	}
	return s.String()
}

// chartDirFiles lists the files of the chart in dir of a commit's files,
// with their sizes, read from the tree (the blobs' headers) without
// reading a file: each is read when it is sent to the renderer, one at a
// time, and the renderer refuses a chart whose sizes together pass its
// byte bound before it reads one.
func chartDirFiles(files snapshot, dir string) ([]chartrender.File, error) {
	sizes, err := files.sizes(dir)
	if err != nil {
		return nil, err
	}
	if len(sizes) == 0 {
		return nil, fmt.Errorf("no files")
	}
	out := make([]chartrender.File, 0, len(sizes))
	for _, p := range slices.Sorted(maps.Keys(sizes)) {
		name := strings.TrimPrefix(p, dir+"/")
		if dir == "" {
			name = p
		}
		out = append(out, chartrender.File{Name: name, Size: sizes[p], Read: func() ([]byte, error) { return files.file(p) }})
	}
	return out, nil
}

// sizes are the sizes of the regular files under dir ("" for all), by
// path, known from the tree and the blobs' headers: no file is read. A
// file over the snapshot's file bound is refused (ErrFileTooLarge).
func (s snapshot) sizes(dir string) (map[string]int64, error) {
	out := map[string]int64{}
	if s.tree != nil {
		tree := s.tree
		if dir != "" {
			var err error
			tree, err = s.tree.Tree(dir)
			if errors.Is(err, object.ErrDirectoryNotFound) {
				tree = nil
			} else if err != nil {
				return nil, fmt.Errorf("failed to read directory %s: %w", dir, err)
			}
		}
		if tree != nil {
			err := tree.Files().ForEach(func(f *object.File) error {
				if f.Mode != filemode.Regular && f.Mode != filemode.Executable {
					return nil
				}
				p := joinPath(dir, f.Name)
				if f.Size > s.fileBound() {
					return s.tooLarge(p, f.Size)
				}
				out[p] = f.Size
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("failed to list %s: %w", dir, err)
			}
		}
	}
	for p, b := range s.changes {
		if dir != "" && !strings.HasPrefix(p, dir+"/") {
			continue
		}
		if b != nil {
			out[p] = int64(len(b))
		} else {
			delete(out, p)
		}
	}
	return out, nil
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
