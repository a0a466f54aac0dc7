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
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/serin-dev/serin/internal/fluxowner"
)

// HelmPromotion is what a stage promotes into the next stage's
// HelmRelease: the chart version and the image values its own HelmRelease
// ran when its Canary promoted.
type HelmPromotion struct {
	// Name is the HelmRelease's, the same in both stages.
	Name string
	// Version is spec.chart.spec.version; "" leaves it.
	Version string
	// Image are the scalars of spec.values.image (tag, repository,
	// digest…), by key.
	Image map[string]string
}

// ErrNoHelmRelease means the next stage's path renders no HelmRelease of
// the promoted one's name.
var ErrNoHelmRelease = errors.New("no HelmRelease of that name in the next stage")

// planHelmPromotion sets, in the next stage's HelmRelease, the promoted
// chart version and image values, each where it stands (the rest of the
// file, its comments included, is left as it is), and verifies by
// rendering the next stage's path that the HelmRelease then differs from
// the head's by those fields only and that no other object changed.
func planHelmPromotion(ctx context.Context, in PromotionInput, head snapshot, before *rendering, dir string) (*Plan, error) {
	hp := in.HelmRelease
	t := Target{Kind: helmReleaseKind, Namespace: in.Target.Namespace, Name: hp.Name}
	key, err := before.find(t)
	if err != nil {
		return nil, fmt.Errorf("%w: %w: %s in %s: %w", ErrUnverifiable, ErrNoHelmRelease, t, displayPath(dir), err)
	}
	want, err := promotedHelmRelease(before.objects[key].data, hp)
	if err != nil {
		return nil, err
	}
	if want == before.objects[key].data {
		return &Plan{UpToDate: true}, nil
	}
	file := before.objects[key].origin
	if file == "" {
		return nil, fmt.Errorf("%w: kustomize does not say which file defines %s", ErrUnverifiable, t)
	}
	content, err := head.file(file)
	if err != nil {
		return nil, err
	}
	edited, set, err := setHelmRelease(content, hp)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	changes := map[string][]byte{file: edited}
	after, err := render(ctx, head.with(changes), dir)
	if err != nil {
		return nil, fmt.Errorf("%w: the next stage does not build with the promoted chart and values: %w", ErrUnverifiable, err)
	}
	afterKey, err := after.find(t)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is no longer rendered: %w", ErrUnverifiable, t, err)
	}
	if got := after.objects[afterKey].data; got != want {
		return nil, fmt.Errorf("%w: with %s set, %s differs from the promoted one at %s",
			ErrUnverifiable, strings.Join(set, ", "), t, strings.Join(jsonDiff(got, want, 3), ", "))
	}
	if others := changedBeside(before, after, afterKey); len(others) > 0 {
		return nil, fmt.Errorf("%w: promoting %s would also change %s", ErrUnverifiable, t, strings.Join(others, ", "))
	}
	notes := []string{fmt.Sprintf("%s: %s %s set.", file, t.Kind+"/"+t.Name, strings.Join(set, ", "))}
	note, err := verifyPromotedChart(ctx, in, t, [2]*rendering{before, after}, [2]objectKey{key, afterKey}, [2]snapshot{head, head.with(changes)})
	if err != nil {
		return nil, err
	}
	notes = append(notes, note)
	return &Plan{Strategy: StrategyEdit, Files: fileChanges(changes), Notes: notes}, nil
}

// promotedHelmRelease is the rendered HelmRelease data with the promoted
// fields set: what the next stage must render after the promotion.
func promotedHelmRelease(data string, hp *HelmPromotion) (string, error) {
	var obj map[string]any
	if err := json.Unmarshal([]byte(data), &obj); err != nil {
		return "", err
	}
	if hp.Version != "" {
		if err := setNested(obj, hp.Version, "spec", "chart", "spec", "version"); err != nil {
			return "", err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(hp.Image)) {
		if err := setNested(obj, hp.Image[k], "spec", "values", "image", k); err != nil {
			return "", err
		}
	}
	b, err := json.Marshal(obj)
	return string(b), err
}

// setNested sets a string at path of obj, creating the maps on the way.
func setNested(obj map[string]any, value string, path ...string) error {
	m := obj
	for _, p := range path[:len(path)-1] {
		next, ok := m[p]
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		if m, ok = next.(map[string]any); !ok {
			return fmt.Errorf("%s is not a map", p)
		}
	}
	m[path[len(path)-1]] = value
	return nil
}

// setHelmRelease sets the promoted fields in the HelmRelease document of a
// file, each value where it stands (its quoting and comments kept), and
// returns the file and the fields it set. A field that is missing is
// added.
func setHelmRelease(content []byte, hp *HelmPromotion) ([]byte, []string, error) {
	docs, err := splitDocuments(content)
	if err != nil {
		return nil, nil, err
	}
	d := findDocument(docs, identity{kind: helmReleaseKind, name: hp.Name}, false)
	if d == nil {
		// The namespace may be set in the document.
		for _, doc := range docs {
			if doc.node != nil {
				if id := identityOf(doc.root()); id.kind == helmReleaseKind && id.name == hp.Name {
					d = doc
				}
			}
		}
	}
	if d == nil {
		return nil, nil, fmt.Errorf("%w: %s", ErrNoHelmRelease, hp.Name)
	}
	var set []string
	setField := func(value string, path ...string) {
		n := d.root()
		for _, p := range path[:len(path)-1] {
			next := mapValue(n, p)
			if next == nil {
				next = &yaml.Node{Kind: yaml.MappingNode}
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: p}, next)
			}
			n = next
		}
		last := path[len(path)-1]
		if v := mapValue(n, last); v != nil {
			if v.Value == value {
				return
			}
			v.Value = value
			if v.Style == 0 && !plainString(value) {
				v.Style = yaml.DoubleQuotedStyle
			}
		} else {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: last},
				&yaml.Node{Kind: yaml.ScalarNode, Value: value, Style: yaml.DoubleQuotedStyle})
		}
		d.modified = true
		set = append(set, strings.Join(path, ".")+" "+value)
	}
	if hp.Version != "" {
		setField(hp.Version, "spec", "chart", "spec", "version")
	}
	for _, k := range slices.Sorted(maps.Keys(hp.Image)) {
		setField(hp.Image[k], "spec", "values", "image", k)
	}
	out, err := joinDocuments(docs)
	return out, set, err
}

// stagingHelmRelease finds the HelmRelease that rendered the Canary's
// target when one did (nil otherwise): the source of a promotion of its
// chart version and values. Only the target's labels are read for a
// target applied otherwise.
func (g *GitPromoter) stagingHelmRelease(ctx context.Context, req PromotionRequest) (*Source, error) {
	ref := req.Canary.Spec.TargetRef
	target := &metav1.PartialObjectMetadata{}
	target.SetGroupVersionKind(schema.FromAPIVersionAndKind(cmp.Or(ref.APIVersion, "apps/v1"), ref.Kind))
	if err := g.client.Get(ctx, types.NamespacedName{Namespace: req.Canary.Namespace, Name: ref.Name}, target); err != nil {
		return nil, fmt.Errorf("failed to get target %s/%s: %w", ref.Kind, ref.Name, err)
	}
	if o, ok := fluxowner.Of(target); !ok || o.Group != fluxowner.HelmGroup {
		return nil, nil
	}
	return DiscoverSource(ctx, g.client, req.Canary, g.crossNamespace)
}

// helmPromotion reads what the stage's HelmRelease ran at the promoted
// commit, from the stage's own path in the clone: its chart version and
// the scalars of its values.image. The promoted commit must be in the
// next stage's repository and branch history.
func (j *promotionJob) helmPromotion(ctx context.Context) (*HelmPromotion, error) {
	if j.staging == nil {
		return nil, nil
	}
	if j.helm != nil {
		return j.helm, nil
	}
	c, err := j.repo.Commit(j.source)
	if err != nil {
		return nil, fmt.Errorf("the promoted commit %s of HelmRelease %s is not in %s (a HelmRelease is promoted within one repository): %w",
			ShortSHA(j.source), j.staging.HelmRelease.Name, j.src.Branch, err)
	}
	files, err := snapshotOf(c, j.maxFile)
	if err != nil {
		return nil, err
	}
	dir, err := cleanPath(j.staging.Path)
	if err != nil {
		return nil, err
	}
	r, err := render(ctx, files, dir)
	if err != nil {
		return nil, fmt.Errorf("at the promoted commit %s: %w", ShortSHA(j.source), err)
	}
	k, err := r.find(*j.staging.HelmRelease)
	if err != nil {
		return nil, fmt.Errorf("%s at the promoted commit %s: %w", *j.staging.HelmRelease, ShortSHA(j.source), err)
	}
	var hr struct {
		Spec struct {
			Chart struct {
				Spec struct {
					Version string `json:"version"`
				} `json:"spec"`
			} `json:"chart"`
			Values struct {
				Image map[string]any `json:"image"`
			} `json:"values"`
		} `json:"spec"`
	}
	if err := json.Unmarshal([]byte(r.objects[k].data), &hr); err != nil {
		return nil, err
	}
	hp := &HelmPromotion{Name: j.staging.HelmRelease.Name, Version: hr.Spec.Chart.Spec.Version, Image: map[string]string{}}
	for key, v := range hr.Spec.Values.Image {
		if s, ok := v.(string); ok {
			hp.Image[key] = s
		}
	}
	if hp.Version == "" && len(hp.Image) == 0 {
		return nil, fmt.Errorf("%w: %s sets neither spec.chart.spec.version nor spec.values.image at the promoted commit %s: nothing to promote",
			ErrUnverifiable, *j.staging.HelmRelease, ShortSHA(j.source))
	}
	j.helm = hp
	return hp, nil
}

// plainString reports whether value, written unquoted, is read back as
// the same string (not a number, a boolean or null: a tag 1.10 is not).
func plainString(value string) bool {
	var v any
	if err := yaml.Unmarshal([]byte(value), &v); err != nil {
		return false
	}
	s, ok := v.(string)
	return ok && s == value
}

// verifyPromotedChart renders the next stage's HelmRelease t before and
// after the promotion (at keys of renderings, with files) and checks
// that its chart renders the same objects (kinds, namespaces and names)
// and that the promoted target runs the images the stage promoted. It
// returns how the promotion was verified: when the chart cannot be
// rendered (ErrNotRendered), by the HelmRelease's fields only, and why.
func verifyPromotedChart(ctx context.Context, in PromotionInput, t Target, renderings [2]*rendering, keys [2]objectKey, files [2]snapshot) (string, error) {
	h := newHelmRenderer(in.Charts, t.Namespace, in.GitRepository)
	var charts [2]*chartRendering
	for i := range charts {
		cr, err := h.render(ctx, renderings[i], keys[i], files[i])
		if errors.Is(err, ErrNotRendered) {
			return fmt.Sprintf("Verified by the fields of %s, not by rendering its chart: %v.", t, err), nil
		}
		if err != nil {
			return "", fmt.Errorf("rendering the chart of %s: %w", t, err)
		}
		charts[i] = cr
	}
	before, after := charts[0], charts[1]
	if added, removed := objectSetDiff(before, after); len(added)+len(removed) > 0 {
		return "", fmt.Errorf("%w: with the promoted chart and values, the chart of %s would render other objects (added: %s; removed: %s)",
			ErrUnverifiable, t, orNone(added), orNone(removed))
	}
	k, ok := after.find(in.Target)
	if !ok {
		return "", fmt.Errorf("%w: chart %s of %s does not render %s", ErrUnverifiable, after.chart, t, in.Target)
	}
	running, err := containerImages(after.objects[k])
	if err != nil {
		return "", err
	}
	if want := slices.Compact(slices.Sorted(slices.Values(in.Images))); len(in.Images) > 0 && !slices.Equal(slices.Compact(slices.Sorted(slices.Values(running))), want) {
		return "", fmt.Errorf("%w: chart %s of %s renders %s with %s, not the promoted %s",
			ErrUnverifiable, after.chart, t, in.Target, strings.Join(running, ", "), strings.Join(want, ", "))
	}
	return fmt.Sprintf("Verified by rendering the chart of %s with Helm: chart %s renders the same objects as chart %s did, and %s runs %s.",
		t, after.chart, before.chart, in.Target, strings.Join(running, ", ")), nil
}

// objectSetDiff lists the keys only after has and only before has.
func objectSetDiff(before, after *chartRendering) (added, removed []string) {
	for k := range after.objects {
		if _, ok := before.objects[k]; !ok {
			added = append(added, k.String())
		}
	}
	for k := range before.objects {
		if _, ok := after.objects[k]; !ok {
			removed = append(removed, k.String())
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	return added, removed
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
