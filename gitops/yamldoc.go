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
	"reflect"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// YAML files edited in place: documents split and joined back byte for byte
// where untouched, and yaml.Node helpers that keep comments.

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
