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
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// helmInputFields are the fields of a HelmRelease's spec its chart is
// rendered with (helm-controller's chart and values, the names and
// namespace of the release, its post-renderers). The rest (intervals,
// install, upgrade and drift-detection settings, metadata) does not change
// what the chart renders.
var helmInputFields = []string{"chart", "chartRef", "values", "valuesFrom", "releaseName", "targetNamespace", "postRenderers", "commonMetadata"}

// helmInputs is what a HelmRelease of a rendering renders its chart with.
type helmInputs struct {
	// inputs is canonical JSON of helmInputFields, the content of each
	// valuesFrom ConfigMap or Secret of the rendering, and the digests of
	// the files of a chart kept in the repository (sourceRef
	// GitRepository): equal inputs render equal manifests.
	inputs string
	// rest is the HelmRelease without helmInputFields.
	rest string
	// refs are the valuesFrom objects found in the rendering.
	refs []objectKey
}

// helmReleaseInputs reads the inputs of the HelmRelease at k of r, whose
// repository files are files.
func helmReleaseInputs(r *rendering, k objectKey, files snapshot) (helmInputs, error) {
	var obj map[string]any
	if err := json.Unmarshal([]byte(r.objects[k].data), &obj); err != nil {
		return helmInputs{}, fmt.Errorf("reading %s: %w", k, err)
	}
	spec, _ := obj["spec"].(map[string]any)
	in := map[string]any{}
	for _, f := range helmInputFields {
		if v, ok := spec[f]; ok {
			in[f] = v
			delete(spec, f)
		}
	}
	var out helmInputs
	var valuesFrom []any
	for _, v := range asSlice(in["valuesFrom"]) {
		ref, _ := v.(map[string]any)
		kind, _ := ref["kind"].(string)
		name, _ := ref["name"].(string)
		key, content, ok := r.lookup(kind, k.Namespace, name)
		if ok {
			out.refs = append(out.refs, key)
		}
		valuesFrom = append(valuesFrom, map[string]any{"ref": ref, "content": content})
	}
	if len(valuesFrom) > 0 {
		in["valuesFrom"] = valuesFrom
	}
	chart, _ := in["chart"].(map[string]any)
	chartSpec, _ := chart["spec"].(map[string]any)
	if src, _ := chartSpec["sourceRef"].(map[string]any); src["kind"] == "GitRepository" {
		p, _ := chartSpec["chart"].(string)
		dir, err := cleanPath(p)
		if err != nil {
			return helmInputs{}, fmt.Errorf("%s: chart %w", k, err)
		}
		digests, err := files.digests(dir)
		if err != nil {
			return helmInputs{}, err
		}
		in["chartFiles"] = digests
	}
	b, err := json.Marshal(in)
	if err != nil {
		return helmInputs{}, err
	}
	rest, err := json.Marshal(obj)
	if err != nil {
		return helmInputs{}, err
	}
	out.inputs, out.rest = string(b), string(rest)
	return out, nil
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// lookup finds the ConfigMap or Secret called name of a rendering, in
// namespace or without one, and its content.
func (r *rendering) lookup(kind, namespace, name string) (objectKey, any, bool) {
	for _, ns := range []string{namespace, ""} {
		for k, o := range r.objects {
			if k.Kind != kind || k.Name != name || k.Namespace != ns {
				continue
			}
			var obj map[string]any
			if err := json.Unmarshal([]byte(o.data), &obj); err != nil {
				return objectKey{}, nil, false
			}
			return k, map[string]any{"data": obj["data"], "stringData": obj["stringData"], "binaryData": obj["binaryData"]}, true
		}
	}
	return objectKey{}, nil, false
}

// digests returns the Git blob hash of each file under dir (a repository
// path; "" is the root), by path.
func (s snapshot) digests(dir string) (map[string]string, error) {
	out := map[string]string{}
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
				out[joinPath(dir, f.Name)] = f.Hash.String()
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("failed to list %s: %w", dir, err)
			}
		}
	}
	for _, p := range slices.Sorted(maps.Keys(s.changes)) {
		if dir != "" && !strings.HasPrefix(p, dir+"/") {
			continue
		}
		if b := s.changes[p]; b != nil {
			out[p] = plumbing.ComputeHash(plumbing.BlobObject, b).String()
		} else {
			delete(out, p)
		}
	}
	return out, nil
}

func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// targetData is what a plan compares of the target at k of r: the
// rendered object, or for a HelmRelease the inputs its chart renders
// with, so that an edit that changes no input (its interval, its
// upgrade settings) is not the target's and stays.
func targetData(t Target, r *rendering, k objectKey, files snapshot) (string, error) {
	if t.Kind != helmReleaseKind {
		return r.objects[k].data, nil
	}
	in, err := helmReleaseInputs(r, k, files)
	return in.inputs, err
}

// helmReleaseEdits lists each changed field of a HelmRelease's document
// (maps by key, anything else as a whole) as an edit of its own: the
// plan keeps only those that change its chart's inputs.
func helmReleaseEdits(file string, id identity, good, bad *yaml.Node) []edit {
	var edits []edit
	var walk func(path []string, g, b *yaml.Node)
	walk = func(path []string, g, b *yaml.Node) {
		for _, key := range unionKeys(b, g) {
			gv, bv := mapValue(g, key), mapValue(b, key)
			if nodesEqual(gv, bv) {
				continue
			}
			at := append(slices.Clone(path), key)
			if gv != nil && bv != nil && gv.Kind == yaml.MappingNode && bv.Kind == yaml.MappingNode {
				walk(at, gv, bv)
				continue
			}
			parentG, parentB := g, b
			edits = append(edits, edit{file: file, what: id.kind + "/" + id.name + " " + strings.Join(at, "."), apply: func(head []*document) bool {
				dh := findDocument(head, id, false)
				if dh == nil {
					return false
				}
				parent := dh.root()
				for _, p := range path {
					if parent = mapValue(parent, p); parent == nil || parent.Kind != yaml.MappingNode {
						return false
					}
				}
				if !revertKey(parent, parentG, parentB, key) {
					return false
				}
				dh.modified = true
				return true
			}})
		}
	}
	walk(nil, good, bad)
	return edits
}

// verifyHelmRelease checks, for a HelmRelease target, that the result r
// leaves what is not its chart's inputs as the head has it, and returns
// its valuesFrom objects at the head and in the result: they are inputs,
// checked with the HelmRelease, not other objects.
func (p *planner) verifyHelmRelease(r *rendering, k objectKey, files snapshot) (map[objectKey]bool, error) {
	if p.in.Target.Kind != helmReleaseKind {
		return nil, nil
	}
	got, err := helmReleaseInputs(r, k, files)
	if err != nil {
		return nil, err
	}
	head, err := helmReleaseInputs(p.hdR, p.headKey, p.head)
	if err != nil {
		return nil, err
	}
	if got.rest != head.rest {
		return nil, fmt.Errorf("undoing the change of %s would also change its fields that are not its chart's or values (at %s)",
			p.in.Target, strings.Join(jsonDiff(got.rest, head.rest, 3), ", "))
	}
	inputs := map[objectKey]bool{}
	for _, key := range append(got.refs, head.refs...) {
		inputs[key] = true
	}
	return inputs, nil
}

// loadCharts renders, for a HelmRelease target with a rendered object to
// compare (PlanInput.Rendered), its chart at the good and bad commits and
// at the head. When one cannot be rendered (ErrNotRendered), the plan
// compares the chart's inputs instead and its notes say why.
func (p *planner) loadCharts(ctx context.Context, goodKey, badKey objectKey) error {
	if p.in.Target.Kind != helmReleaseKind || p.in.Rendered == nil {
		return nil
	}
	h := newHelmRenderer(p.in.Charts, p.in.Target.Namespace, p.in.GitRepository)
	var charts [3]*chartRendering
	for i, c := range []struct {
		r     *rendering
		k     objectKey
		files snapshot
		at    *object.Commit
	}{{p.goodR, goodKey, p.good, p.in.Good}, {p.badR, badKey, p.bad, p.in.Bad}, {p.hdR, p.headKey, p.head, p.in.Head}} {
		cr, err := h.render(ctx, c.r, c.k, c.files)
		if err == nil {
			if _, ok := cr.find(*p.in.Rendered); !ok {
				err = notRendered("chart %s does not render %s", cr.chart, *p.in.Rendered)
			}
		}
		if errors.Is(err, ErrNotRendered) {
			p.renderNote = fmt.Sprintf("Verified by the chart's inputs, not by rendering it: at %s, %v.", ShortSHA(c.at.Hash.String()), err)
			return nil
		}
		if err != nil {
			return fmt.Errorf("rendering the chart of %s at commit %s: %w", p.in.Target, ShortSHA(c.at.Hash.String()), err)
		}
		charts[i] = cr
	}
	p.helm, p.goodChart, p.headChart = h, charts[0], charts[2]
	p.renderNote = fmt.Sprintf("Verified by rendering the chart of %s with Helm: %s renders as at %s (chart %s), and every other object of the chart as at %s or at the head.",
		p.in.Target, *p.in.Rendered, ShortSHA(p.in.Good.Hash.String()), charts[0].chart, ShortSHA(p.in.Good.Hash.String()))
	return nil
}

// targetData is what the plan compares of its target at k of r: the
// object its chart renders (PlanInput.Rendered) when the plan renders
// the chart, else targetData.
func (p *planner) targetData(ctx context.Context, r *rendering, k objectKey, files snapshot) (string, error) {
	if p.helm == nil {
		return targetData(p.in.Target, r, k, files)
	}
	cr, err := p.helm.render(ctx, r, k, files)
	if err != nil {
		return "", err
	}
	rk, ok := cr.find(*p.in.Rendered)
	if !ok {
		return "", fmt.Errorf("chart %s does not render %s", cr.chart, *p.in.Rendered)
	}
	return cr.objects[rk], nil
}

// verifyChart checks, when the plan renders the chart, that every object
// the chart renders in the result is as the head or the good commit
// renders it (present with the same content, or absent): no object is
// left in a state no commit described.
func (p *planner) verifyChart(ctx context.Context, r *rendering, k objectKey, files snapshot) error {
	if p.helm == nil {
		return nil
	}
	cr, err := p.helm.render(ctx, r, k, files)
	if err != nil {
		return err
	}
	if mixed := mixedObjects(cr, p.headChart, p.goodChart); len(mixed) > 0 {
		return fmt.Errorf("undoing the change of %s would leave %s, rendered by its chart, as neither the head nor the good commit %s renders it",
			p.in.Target, strings.Join(mixed, ", "), ShortSHA(p.in.Good.Hash.String()))
	}
	return nil
}
