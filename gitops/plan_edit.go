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
	"path"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// isKustomizationPath reports whether a path names a kustomization file.
func isKustomizationPath(p string) bool {
	base := path.Base(p)
	for _, n := range kustomizationFileNames {
		if base == n {
			return true
		}
	}
	return false
}

// isYAMLPath reports whether a path names a YAML file.
func isYAMLPath(p string) bool {
	return strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") || isKustomizationPath(p)
}

// edit is one undoable part of what the bad commit changed in a file: a
// document of the target, or one field or named entry (an images: or
// replicas: entry) of a kustomization.
type edit struct {
	file string
	// what names the part, for notes: "images[podinfo]", "Deployment/podinfo".
	what string
	// apply undoes the change in the head's documents of the file.
	apply func(head []*document) bool
}

// fileEdits lists the parts of a file that the bad commit changed and that
// can be undone on their own: the target's documents, and each changed
// field or named entry of a kustomization. None when the file was created
// or deleted, or is not YAML.
func fileEdits(name string, good, bad []byte, t Target) []edit {
	if good == nil || bad == nil || !isYAMLPath(name) {
		return nil
	}
	docsG, errG := splitDocuments(good)
	docsB, errB := splitDocuments(bad)
	if errG != nil || errB != nil {
		return nil
	}
	if isKustomizationPath(name) {
		dg, db := findDocument(docsG, identity{}, true), findDocument(docsB, identity{}, true)
		if dg == nil || db == nil {
			return nil
		}
		return kustomizationEdits(name, dg.root(), db.root())
	}
	var edits []edit
	for _, db := range docsB {
		if db.node == nil {
			continue
		}
		id := identityOf(db.root())
		if id.kind != t.Kind || id.name != t.Name {
			continue
		}
		dg := findDocument(docsG, id, false)
		if dg == nil || nodesEqual(dg.root(), db.root()) {
			continue
		}
		g, b := dg.root(), db.root()
		if t.Kind == helmReleaseKind {
			edits = append(edits, helmReleaseEdits(name, id, g, b)...)
			continue
		}
		edits = append(edits, edit{file: name, what: id.kind + "/" + id.name, apply: func(head []*document) bool {
			dh := findDocument(head, id, false)
			if dh == nil || !revertNode(dh.root(), g, b) {
				return false
			}
			dh.modified = true
			return true
		}})
	}
	return edits
}

// kustomizationEdits lists the changed fields of a kustomization, and for
// lists of named entries (images, replicas, generators) each changed entry.
func kustomizationEdits(file string, good, bad *yaml.Node) []edit {
	var edits []edit
	onKustomization := func(f func(root *yaml.Node) bool) func([]*document) bool {
		return func(head []*document) bool {
			dh := findDocument(head, identity{}, true)
			if dh == nil || !f(dh.root()) {
				return false
			}
			dh.modified = true
			return true
		}
	}
	for _, key := range unionKeys(bad, good) {
		gv, bv := mapValue(good, key), mapValue(bad, key)
		if nodesEqual(gv, bv) {
			continue
		}
		if gv == nil || bv == nil || !namedList(gv) || !namedList(bv) {
			edits = append(edits, edit{file: file, what: key, apply: onKustomization(func(root *yaml.Node) bool {
				return revertKey(root, good, bad, key)
			})})
			continue
		}
		for _, name := range unionNames(bv, gv) {
			gi, bi := namedItem(gv, name), namedItem(bv, name)
			if nodesEqual(gi, bi) {
				continue
			}
			edits = append(edits, edit{file: file, what: key + "[" + name + "]", apply: onKustomization(func(root *yaml.Node) bool {
				return revertItem(root, key, name, gi, bi)
			})})
		}
	}
	return edits
}

// applyEdits applies edits to the head's version of a file.
func applyEdits(head []byte, edits []edit) ([]byte, bool, error) {
	docs, err := splitDocuments(head)
	if err != nil {
		return nil, false, err
	}
	changed := false
	for _, e := range edits {
		if e.apply(docs) {
			changed = true
		}
	}
	if !changed {
		return nil, false, nil
	}
	out, err := joinDocuments(docs)
	return out, err == nil, err
}

// revertNode changes head so that what bad changed relative to good is
// undone, field by field: maps by key, lists of named items (containers,
// env, ports, images) by name, anything else as a whole. Head's comments on
// the fields it keeps survive. It reports whether head changed.
func revertNode(head, good, bad *yaml.Node) bool {
	if nodesEqual(good, bad) {
		return false
	}
	switch {
	case head.Kind == yaml.MappingNode && good.Kind == yaml.MappingNode && bad.Kind == yaml.MappingNode:
		return revertMap(head, good, bad)
	case namedList(head) && namedList(good) && namedList(bad):
		return revertNamedList(head, good, bad)
	}
	if nodesEqual(head, good) {
		return false
	}
	replaceNode(head, good, bad)
	return true
}

func revertMap(head, good, bad *yaml.Node) bool {
	changed := false
	for _, key := range unionKeys(bad, good) {
		if revertKey(head, good, bad, key) {
			changed = true
		}
	}
	return changed
}

// revertKey undoes the change of one key of a map.
func revertKey(head, good, bad *yaml.Node, key string) bool {
	gv, bv, hv := mapValue(good, key), mapValue(bad, key), mapValue(head, key)
	switch {
	case nodesEqual(gv, bv):
		return false
	case gv == nil:
		if hv == nil {
			return false
		}
		removeKey(head, key)
	case hv == nil:
		head.Content = append(head.Content, cloneNode(mapKey(good, key)), cloneNode(gv))
	case bv == nil:
		if nodesEqual(hv, gv) {
			return false
		}
		replaceNode(hv, gv, nil)
	default:
		return revertNode(hv, gv, bv)
	}
	return true
}

// revertItem undoes the change of the entry called name of the named list
// at key.
func revertItem(root *yaml.Node, key, name string, good, bad *yaml.Node) bool {
	list := mapValue(root, key)
	if list == nil {
		if good == nil {
			return false
		}
		root.Content = append(root.Content, yaml.NewStringRNode(key).YNode(), &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{cloneNode(good)}})
		return true
	}
	if list.Kind != yaml.SequenceNode {
		return false
	}
	hi := namedItem(list, name)
	switch {
	case good == nil:
		for j, item := range list.Content {
			if item == hi {
				list.Content = append(list.Content[:j], list.Content[j+1:]...)
				return true
			}
		}
		return false
	case hi == nil:
		list.Content = append(list.Content, cloneNode(good))
		return true
	case bad == nil:
		if nodesEqual(hi, good) {
			return false
		}
		replaceNode(hi, good, nil)
		return true
	}
	return revertNode(hi, good, bad)
}

func revertNamedList(head, good, bad *yaml.Node) bool {
	changed := false
	for i, gi := range good.Content {
		name := itemName(gi)
		bi, hi := namedItem(bad, name), namedItem(head, name)
		switch {
		case hi == nil:
			at := min(i, len(head.Content))
			head.Content = append(head.Content[:at], append([]*yaml.Node{cloneNode(gi)}, head.Content[at:]...)...)
			changed = true
		case bi == nil:
			if !nodesEqual(hi, gi) {
				replaceNode(hi, gi, nil)
				changed = true
			}
		default:
			if revertNode(hi, gi, bi) {
				changed = true
			}
		}
	}
	for _, bi := range bad.Content {
		name := itemName(bi)
		if namedItem(good, name) != nil {
			continue
		}
		for j, hi := range head.Content {
			if itemName(hi) == name {
				head.Content = append(head.Content[:j], head.Content[j+1:]...)
				changed = true
				break
			}
		}
	}
	return changed
}
