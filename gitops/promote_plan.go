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
	"path"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
	"k8s.io/apimachinery/pkg/types"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// This file plans the forward twin of a revert (issue #38, waves): the
// images a stage promoted, written into the next stage's kustomization
// `images:` as Flux's image automation and `kustomize edit set image`
// write them, and verified by rendering the next stage's path. The agent
// does not call it yet: promotion targets on the Canary, the pull request
// and the next stage's verdict coming back through the Git host are what
// #38 still needs.

// PromotionInput is what a promotion is planned on.
type PromotionInput struct {
	// Head is the tip of the next stage's branch.
	Head *object.Commit
	// Path is the next stage's Kustomization spec.path.
	Path string
	// Target is the next stage's object to update.
	Target Target
	// Images are the container images the stage promoted (its primary's),
	// as Kubernetes writes them: name[:tag][@digest].
	Images []string
	// MaxFileSize bounds a file read from a commit (0: DefaultMaxFileSize).
	MaxFileSize int64
	// HelmRelease, when set, is what a stage whose target a HelmRelease
	// rendered promotes: the next stage's HelmRelease of its name gets
	// its chart version and image values (planHelmPromotion).
	HelmRelease *HelmPromotion
	// Charts downloads the charts of HelmRepositories for a HelmRelease
	// promotion verified by rendering (nil: only charts kept in Git are
	// rendered).
	Charts ChartSource
	// GitRepository is the Kustomization's source: a HelmRelease's chart
	// kept in Git is rendered from Head only when its sourceRef names this
	// GitRepository.
	GitRepository types.NamespacedName
}

// ErrNoImageEntry means the next stage's kustomization has no images:
// entry for an image the stage promoted, and adding one would not change
// what the target runs: its manifests name the image differently.
var ErrNoImageEntry = errors.New("no images: entry for the promoted image")

// PlanPromotion sets, in the kustomization of in.Path, the images: entry
// of each promoted image (matched by its name, or by its newName) to the
// promoted tag and digest, adding an entry where there is none, and
// verifies by rendering that the target then runs exactly the promoted
// images and that no other object changed. UpToDate when it already does.
func PlanPromotion(ctx context.Context, in PromotionInput) (*Plan, error) {
	dir, err := cleanPath(in.Path)
	if err != nil {
		return nil, err
	}
	head, err := snapshotOf(in.Head, in.MaxFileSize)
	if err != nil {
		return nil, err
	}
	before, err := render(ctx, head, dir)
	if err != nil {
		return nil, err
	}
	if in.HelmRelease != nil {
		return planHelmPromotion(ctx, in, head, before, dir)
	}
	key, err := before.find(in.Target)
	if err != nil {
		return nil, fmt.Errorf("%s in %s: %w", in.Target, displayPath(dir), err)
	}
	running, err := containerImages(before.objects[key].data)
	if err != nil {
		return nil, err
	}
	// Only the images the stage runs travel: a sidecar one stage has and
	// the other has not is the stage's own.
	kept, skipped := imagesRun(running, in.Images)
	if len(kept) == 0 {
		return nil, fmt.Errorf("%w: %w: %s runs %s, none of the promoted images %s",
			ErrUnverifiable, ErrNoImageEntry, in.Target, strings.Join(running, ", "), strings.Join(in.Images, ", "))
	}
	if runsPromoted(running, running, kept) {
		return &Plan{UpToDate: true}, nil
	}
	want := make([]kustypes.Image, 0, len(kept))
	for _, ref := range kept {
		want = append(want, imageOf(ref))
	}

	file := kustomizationFile(newSnapshotFS(head), path.Join("/", dir))
	if file == "" {
		return nil, fmt.Errorf("%w: %s has no kustomization.yaml to set the images in", ErrUnverifiable, displayPath(dir))
	}
	file = strings.TrimPrefix(file, "/")
	content, err := head.file(file)
	if err != nil {
		return nil, err
	}
	edited, err := setImages(content, want)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	changes := map[string][]byte{file: edited}
	after, err := render(ctx, head.with(changes), dir)
	if err != nil {
		return nil, fmt.Errorf("%w: the next stage does not build with the promoted images: %w", ErrUnverifiable, err)
	}
	afterKey, err := after.find(in.Target)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is no longer rendered: %w", ErrUnverifiable, in.Target, err)
	}
	images, err := containerImages(after.objects[afterKey].data)
	if err != nil {
		return nil, err
	}
	if !runsPromoted(running, images, kept) {
		return nil, fmt.Errorf("%w: %w: with the images: entries set, %s runs %s, not %s: its manifests name the images otherwise",
			ErrUnverifiable, ErrNoImageEntry, in.Target, strings.Join(images, ", "), strings.Join(kept, ", "))
	}
	if others := changedBeside(before, after, afterKey); len(others) > 0 {
		return nil, fmt.Errorf("%w: setting the images of %s would also change %s", ErrUnverifiable, in.Target, strings.Join(others, ", "))
	}
	notes := []string{fmt.Sprintf("%s: images %s set.", file, strings.Join(kept, ", "))}
	if len(skipped) > 0 {
		notes = append(notes, fmt.Sprintf("%s does not run %s: left out.", in.Target, strings.Join(skipped, ", ")))
	}
	return &Plan{Strategy: StrategyEdit, Files: fileChanges(changes), Notes: notes}, nil
}

// changedBeside lists, sorted, the objects of after but the one at key
// that before does not render or renders otherwise.
func changedBeside(before, after *rendering, key objectKey) []string {
	var others []string
	for k, obj := range after.objects {
		if k == key {
			continue
		}
		if b, ok := before.objects[k]; !ok || b.data != obj.data {
			others = append(others, k.String())
		}
	}
	slices.Sort(others)
	return others
}

// imageOf splits an image reference into the images: entry that sets it.
func imageOf(ref string) kustypes.Image {
	img := kustypes.Image{Name: ref}
	if name, digest, ok := strings.Cut(ref, "@"); ok {
		img.Name, img.Digest = name, digest
	}
	// A tag follows the last colon after the last slash (a registry's
	// port is before it).
	if i := strings.LastIndex(img.Name, ":"); i > strings.LastIndex(img.Name, "/") {
		img.Name, img.NewTag = img.Name[:i], img.Name[i+1:]
	}
	return img
}

// setImages sets or adds the images: entries of a kustomization. A value
// that exists is replaced where it stands, so that the rest of the file
// (its comments, its indentation) is left as it is; an entry or field
// that does not is added, and the file is written as kyaml writes it.
func setImages(content []byte, images []kustypes.Image) ([]byte, error) {
	root, err := yaml.Parse(string(content))
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(content), "\n")
	inPlace := true
	list, err := root.Pipe(yaml.LookupCreate(yaml.SequenceNode, "images"))
	if err != nil {
		return nil, err
	}
	for _, img := range images {
		entry, err := imageEntry(list, img.Name)
		if err != nil {
			return nil, err
		}
		if entry == nil {
			inPlace = false
			entry = yaml.NewMapRNode(&map[string]string{"name": img.Name})
			if err := list.PipeE(yaml.Append(entry.YNode())); err != nil {
				return nil, err
			}
		}
		for _, f := range []struct{ field, value string }{{"newTag", img.NewTag}, {"digest", img.Digest}} {
			existing := entry.Field(f.field)
			switch {
			case existing != nil && f.value != "" && inPlace && replaceScalar(lines, existing.Value.YNode(), f.value):
				existing.Value.YNode().Value = f.value
			case existing != nil && f.value == "":
				inPlace = false
				if err := entry.PipeE(yaml.Clear(f.field)); err != nil {
					return nil, err
				}
			case f.value != "":
				inPlace = false
				if err := entry.PipeE(yaml.SetField(f.field, yaml.NewStringRNode(f.value))); err != nil {
					return nil, err
				}
			}
		}
	}
	if inPlace {
		return []byte(strings.Join(lines, "\n")), nil
	}
	out, err := root.String()
	return []byte(out), err
}

// replaceScalar replaces a plain scalar's value on its line, and reports
// whether it could (a quoted or multi-line value it leaves alone).
func replaceScalar(lines []string, node *yaml.Node, value string) bool {
	if node.Style != 0 || node.Line < 1 || node.Line > len(lines) {
		return false
	}
	line, col := lines[node.Line-1], node.Column-1
	if col < 0 || !strings.HasPrefix(line[min(col, len(line)):], node.Value) {
		return false
	}
	lines[node.Line-1] = line[:col] + value + line[col+len(node.Value):]
	return true
}

// imageEntry is the images: entry whose name, or newName, is name.
func imageEntry(list *yaml.RNode, name string) (*yaml.RNode, error) {
	entries, err := list.Elements()
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		for _, field := range []string{"name", "newName"} {
			if v := e.Field(field); v != nil && yaml.GetValue(v.Value) == name {
				return e, nil
			}
		}
	}
	return nil, nil
}

// containerImages lists the images of a rendered workload's containers
// and init containers, in order.
func containerImages(data string) ([]string, error) {
	var obj struct {
		Spec struct {
			Template struct {
				Spec struct {
					InitContainers, Containers []struct {
						Image string `json:"image"`
					}
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal([]byte(data), &obj); err != nil {
		return nil, err
	}
	var out []string
	for _, c := range append(obj.Spec.Template.Spec.InitContainers, obj.Spec.Template.Spec.Containers...) {
		out = append(out, c.Image)
	}
	return out, nil
}

// imagesRun splits the promoted images into those whose name (the
// reference without tag and digest) the stage's workload runs, and the
// others.
func imagesRun(running, promoted []string) (kept, skipped []string) {
	names := map[string]bool{}
	for _, r := range running {
		names[imageOf(r).Name] = true
	}
	for _, p := range promoted {
		if names[imageOf(p).Name] {
			kept = append(kept, p)
		} else {
			skipped = append(skipped, p)
		}
	}
	return kept, skipped
}

// runsPromoted reports whether a workload that ran before runs after:
// the promoted reference for every container whose image has a promoted
// name, and the image it ran before for every other container.
func runsPromoted(before, after, promoted []string) bool {
	if len(before) != len(after) {
		return false
	}
	byName := map[string]string{}
	for _, p := range promoted {
		byName[imageOf(p).Name] = p
	}
	for i, b := range before {
		want := b
		if p, ok := byName[imageOf(b).Name]; ok {
			want = p
		}
		if after[i] != want {
			return false
		}
	}
	return true
}
