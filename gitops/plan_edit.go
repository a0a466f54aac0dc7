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
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"sort"
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

// document is one YAML document of a file, with the text around it so that
// untouched documents are written back byte for byte.
type document struct {
	// separator is the "---" line before the document ("" for the first).
	separator string
	text      string
	// node is the parsed document; nil for a document without content.
	node     *yaml.Node
	modified bool
}

func (d *document) root() *yaml.Node { return d.node.Content[0] }

// splitDocuments splits a YAML file at its "---" lines and parses each
// document, keeping comments.
func splitDocuments(b []byte) ([]*document, error) {
	var docs []*document
	cur := &document{}
	for _, line := range strings.SplitAfter(string(b), "\n") {
		trimmed := strings.TrimRight(line, "\r\n")
		if trimmed == "---" || strings.HasPrefix(trimmed, "--- ") || strings.HasPrefix(trimmed, "---\t") {
			docs = append(docs, cur)
			cur = &document{separator: line}
			continue
		}
		cur.text += line
	}
	docs = append(docs, cur)
	for _, d := range docs {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(d.text), &n); err != nil {
			return nil, err
		}
		if n.Kind == yaml.DocumentNode && len(n.Content) == 1 && n.Content[0].Kind == yaml.MappingNode {
			d.node = &n
		}
	}
	return docs, nil
}

// joinDocuments writes the documents back, re-encoding only the modified
// ones (with the sequence indentation their text used).
func joinDocuments(docs []*document) ([]byte, error) {
	var sb strings.Builder
	for _, d := range docs {
		sb.WriteString(d.separator)
		if !d.modified {
			sb.WriteString(d.text)
			continue
		}
		out, err := yaml.MarshalWithOptions(d.node, &yaml.EncoderOptions{SeqIndent: yaml.SequenceIndentStyle(yaml.DeriveSeqIndentStyle(d.text))})
		if err != nil {
			return nil, err
		}
		sb.Write(out)
	}
	return []byte(sb.String()), nil
}

// identity names a manifest document.
type identity struct{ kind, namespace, name string }

func identityOf(n *yaml.Node) identity {
	var id identity
	if v := mapValue(n, "kind"); v != nil {
		id.kind = v.Value
	}
	if md := mapValue(n, "metadata"); md != nil {
		if v := mapValue(md, "name"); v != nil {
			id.name = v.Value
		}
		if v := mapValue(md, "namespace"); v != nil {
			id.namespace = v.Value
		}
	}
	return id
}

// findDocument returns the document with the identity, or for a
// kustomization file its first document.
func findDocument(docs []*document, id identity, first bool) *document {
	for _, d := range docs {
		if d.node == nil {
			continue
		}
		if first || identityOf(d.root()) == id {
			return d
		}
	}
	return nil
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

// unionNames returns the item names of a then those only in b.
func unionNames(a, b *yaml.Node) []string {
	var names []string
	seen := map[string]bool{}
	for _, n := range []*yaml.Node{a, b} {
		for _, item := range n.Content {
			if name := itemName(item); !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	return names
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

// namedList reports whether n is a sequence of maps that all have a
// scalar name.
func namedList(n *yaml.Node) bool {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return false
	}
	for _, item := range n.Content {
		if item.Kind != yaml.MappingNode || itemName(item) == "" {
			return false
		}
	}
	return true
}

func itemName(n *yaml.Node) string {
	if v := mapValue(n, "name"); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

func namedItem(list *yaml.Node, name string) *yaml.Node {
	for _, item := range list.Content {
		if itemName(item) == name {
			return item
		}
	}
	return nil
}

// mapKey and mapValue look a key up in a mapping node.
func mapKey(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i]
		}
	}
	return nil
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func removeKey(n *yaml.Node, key string) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			n.Content = append(n.Content[:i], n.Content[i+2:]...)
			return
		}
	}
}

// unionKeys returns the keys of a then those only in b.
func unionKeys(a, b *yaml.Node) []string {
	var keys []string
	seen := map[string]bool{}
	for _, n := range []*yaml.Node{a, b} {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i].Value; !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// replaceNode gives dst the value of good. Of the comments, dst keeps its
// own unless they are the ones bad introduced, which good's replace.
func replaceNode(dst, good, bad *yaml.Node) {
	head, line, foot := dst.HeadComment, dst.LineComment, dst.FootComment
	*dst = *cloneNode(good)
	pick := func(h, g string, b func(*yaml.Node) string) string {
		if bad != nil && h == b(bad) {
			return g
		}
		if h == "" {
			return g
		}
		return h
	}
	dst.HeadComment = pick(head, good.HeadComment, func(n *yaml.Node) string { return n.HeadComment })
	dst.LineComment = pick(line, good.LineComment, func(n *yaml.Node) string { return n.LineComment })
	dst.FootComment = pick(foot, good.FootComment, func(n *yaml.Node) string { return n.FootComment })
}

func cloneNode(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, child := range n.Content {
		c.Content[i] = cloneNode(child)
	}
	return &c
}

// nodesEqual compares the values of two nodes, ignoring style and comments.
func nodesEqual(a, b *yaml.Node) bool {
	if a == nil || b == nil {
		return a == b
	}
	var va, vb any
	if a.Decode(&va) != nil || b.Decode(&vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// jsonDiff lists up to max paths where two JSON documents differ.
func jsonDiff(a, b string, max int) []string {
	var va, vb any
	_ = json.Unmarshal([]byte(a), &va)
	_ = json.Unmarshal([]byte(b), &vb)
	var out []string
	var diff func(p string, x, y any)
	diff = func(p string, x, y any) {
		if len(out) >= max || reflect.DeepEqual(x, y) {
			return
		}
		switch xv := x.(type) {
		case map[string]any:
			if yv, ok := y.(map[string]any); ok {
				keys := map[string]bool{}
				for k := range xv {
					keys[k] = true
				}
				for k := range yv {
					keys[k] = true
				}
				sorted := make([]string, 0, len(keys))
				for k := range keys {
					sorted = append(sorted, k)
				}
				sort.Strings(sorted)
				for _, k := range sorted {
					diff(strings.TrimPrefix(p+"."+k, "."), xv[k], yv[k])
				}
				return
			}
		case []any:
			if yv, ok := y.([]any); ok && len(xv) == len(yv) {
				for i := range xv {
					diff(fmt.Sprintf("%s[%d]", p, i), xv[i], yv[i])
				}
				return
			}
		}
		out = append(out, p)
	}
	diff("", va, vb)
	return out
}
