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
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/resource"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// Build annotations serin asks kustomize for, and removes again before
// comparing renderings.
const (
	originAnnotation          = "config.kubernetes.io/origin"
	transformationsAnnotation = "alpha.config.kubernetes.io/transformations"
)

// kustomizationFileNames are the names kustomize looks for, in its order.
var kustomizationFileNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// objectKey identifies a rendered object.
type objectKey struct {
	APIVersion, Kind, Namespace, Name string
}

func (k objectKey) String() string {
	if k.Namespace == "" {
		return k.Kind + "/" + k.Name
	}
	return k.Kind + "/" + k.Namespace + "/" + k.Name
}

// renderedObject is one object of a rendering.
type renderedObject struct {
	// data is the object as canonical JSON, without build annotations.
	data string
	// origin is the repository path of the file that defines the object,
	// "" when kustomize did not say (generated objects, remote bases).
	origin string
}

// rendering is the output of `kustomize build` of a Kustomization's path.
type rendering struct {
	objects map[objectKey]renderedObject
}

// cleanPath turns a Kustomization spec.path into a repository path: ""
// for the root.
func cleanPath(p string) (string, error) {
	c := strings.TrimPrefix(path.Clean(strings.TrimSpace(p)), "/")
	switch {
	case c == "." || c == "":
		return "", nil
	case c == ".." || strings.HasPrefix(c, "../"):
		return "", fmt.Errorf("path %q leaves the repository", p)
	}
	return c, nil
}

// render builds the Kustomization path of a snapshot with kustomize, as
// kustomize-controller does (generating a kustomization.yaml when the path
// has none), with origin annotations to tell which file defines each object.
// kustomize sees an in-memory filesystem into which the directories of
// the snapshot it looks at are read (snapshotFS), and nothing else; remote
// bases are refused before it runs (refuseRemoteBases), so a render reads
// only the clone, and no network. It is not interruptible: ctx is checked
// before it starts.
func render(ctx context.Context, files snapshot, dir string) (*rendering, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fs := newSnapshotFS(files)
	m, err := build(fs, dir)
	if fs.err != nil { // what kustomize saw was incomplete
		return nil, fmt.Errorf("kustomize build %s: %w", displayPath(dir), fs.err)
	}
	if err != nil {
		return nil, err
	}
	out := &rendering{objects: map[objectKey]renderedObject{}}
	for _, res := range m.Resources() {
		key := objectKey{APIVersion: res.GetApiVersion(), Kind: res.GetKind(), Namespace: res.GetNamespace(), Name: res.GetName()}
		obj, err := canonical(res, dir)
		if err != nil {
			return nil, fmt.Errorf("rendering %s: %w", key, err)
		}
		out.objects[key] = obj
	}
	return out, nil
}

// build runs kustomize on the directory dir of fs.
func build(fs filesys.FileSystem, dir string) (resmap.ResMap, error) {
	root := path.Join("/", dir)
	if !fs.IsDir(root) {
		return nil, fmt.Errorf("path %q not found in the repository", dir)
	}
	if err := prepareKustomization(fs, root); err != nil {
		return nil, err
	}
	if err := refuseRemoteBases(fs, root); err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", displayPath(dir), err)
	}
	opts := krusty.MakeDefaultOptions()
	// As kustomize-controller: a path may use files outside its directory
	// (../base); the filesystem holds the repository only.
	opts.LoadRestrictions = kustypes.LoadRestrictionsNone
	opts.PluginConfig = kustypes.DisabledPluginConfig()
	m, err := krusty.MakeKustomizer(opts).Run(fs, root)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", displayPath(dir), err)
	}
	return m, nil
}

// canonical strips the build annotations of a rendered resource and
// returns it as canonical JSON with its origin.
func canonical(res *resource.Resource, dir string) (renderedObject, error) {
	var obj renderedObject
	ann := res.GetAnnotations()
	if o := ann[originAnnotation]; o != "" {
		var origin struct {
			Path string `json:"path"`
			Repo string `json:"repo"`
		}
		if err := sigsyaml.Unmarshal([]byte(o), &origin); err == nil && origin.Repo == "" && origin.Path != "" {
			obj.origin = strings.TrimPrefix(path.Join("/", dir, origin.Path), "/")
		}
	}
	delete(ann, originAnnotation)
	delete(ann, transformationsAnnotation)
	if err := res.SetAnnotations(ann); err != nil {
		return obj, err
	}
	m, err := res.Map()
	if err != nil {
		return obj, err
	}
	b, err := json.Marshal(m) // sorts keys: a canonical form
	if err != nil {
		return obj, err
	}
	obj.data = string(b)
	return obj, nil
}

// prepareKustomization makes sure the root has a kustomization file (as
// kustomize-controller generates one listing the manifests when there is
// none) and asks for origin annotations in it.
func prepareKustomization(fs filesys.FileSystem, root string) error {
	file := kustomizationFile(fs, root)
	var node *yaml.RNode
	if file == "" {
		file = path.Join(root, kustomizationFileNames[0])
		var err error
		if node, err = generatedKustomization(fs, root); err != nil {
			return err
		}
	} else {
		b, err := fs.ReadFile(file)
		if err != nil {
			return err
		}
		if node, err = yaml.Parse(string(b)); err != nil {
			return fmt.Errorf("invalid %s: %w", strings.TrimPrefix(file, "/"), err)
		}
	}
	meta, err := node.Pipe(yaml.LookupCreate(yaml.SequenceNode, "buildMetadata"))
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, v := range meta.YNode().Content {
		have[v.Value] = true
	}
	if !have[kustypes.OriginAnnotations] {
		if err := meta.PipeE(yaml.Append(yaml.NewScalarRNode(kustypes.OriginAnnotations).YNode())); err != nil {
			return err
		}
	}
	s, err := node.String()
	if err != nil {
		return err
	}
	return fs.WriteFile(file, []byte(s))
}

// kustomizationFile returns the kustomization file of a directory, or "".
func kustomizationFile(fs filesys.FileSystem, dir string) string {
	for _, n := range kustomizationFileNames {
		if p := path.Join(dir, n); fs.Exists(p) && !fs.IsDir(p) {
			return p
		}
	}
	return ""
}

// generatedKustomization lists what kustomize-controller's generator lists:
// the Kubernetes manifests under dir, and the subdirectories that have a
// kustomization file of their own as a whole.
func generatedKustomization(fs filesys.FileSystem, root string) (*yaml.RNode, error) {
	var resources []string
	var walk func(dir string) error
	walk = func(dir string) error {
		entries, err := fs.ReadDir(dir)
		if err != nil {
			return err
		}
		sort.Strings(entries)
		for _, e := range entries {
			p := path.Join(dir, e)
			rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
			switch {
			case fs.IsDir(p) && kustomizationFile(fs, p) != "":
				resources = append(resources, rel)
			case fs.IsDir(p):
				if err := walk(p); err != nil {
					return err
				}
			case strings.HasSuffix(e, ".yaml") || strings.HasSuffix(e, ".yml"):
				if isKubernetesManifest(fs, p) {
					resources = append(resources, rel)
				}
			}
		}
		return nil
	}
	if err := walk(root); err != nil {
		return nil, err
	}
	node := yaml.NewMapRNode(&map[string]string{"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization"})
	if len(resources) > 0 {
		if err := node.PipeE(yaml.SetField("resources", yaml.NewListRNode(resources...))); err != nil {
			return nil, err
		}
	}
	return node, nil
}

// isKubernetesManifest reports whether every document of a YAML file has
// an apiVersion and a kind.
func isKubernetesManifest(fs filesys.FileSystem, p string) bool {
	b, err := fs.ReadFile(p)
	if err != nil {
		return false
	}
	nodes, err := kio.FromBytes(b)
	if err != nil || len(nodes) == 0 {
		return false
	}
	for _, n := range nodes {
		if n.GetApiVersion() == "" || n.GetKind() == "" {
			return false
		}
	}
	return true
}

// Target names the object a revert restores.
type Target struct {
	Kind, Namespace, Name string
}

func (t Target) String() string { return t.Kind + "/" + t.Namespace + "/" + t.Name }

// errTargetNotRendered is returned when a rendering lacks the target.
var errTargetNotRendered = errors.New("target not rendered")

// find returns the key of the target in a rendering: the object of its kind
// and name in its namespace, or without a namespace (set at apply time by
// the Kustomization's targetNamespace or the default namespace).
func (r *rendering) find(t Target) (objectKey, error) {
	var exact, unset []objectKey
	for k := range r.objects {
		if k.Kind != t.Kind || k.Name != t.Name {
			continue
		}
		switch k.Namespace {
		case t.Namespace:
			exact = append(exact, k)
		case "":
			unset = append(unset, k)
		}
	}
	switch {
	case len(exact) == 1:
		return exact[0], nil
	case len(exact) == 0 && len(unset) == 1:
		return unset[0], nil
	case len(exact)+len(unset) == 0:
		return objectKey{}, errTargetNotRendered
	}
	return objectKey{}, fmt.Errorf("%s %s is rendered more than once", t.Kind, t.Name)
}

func displayPath(dir string) string {
	if dir == "" {
		return "./"
	}
	return "./" + dir
}
