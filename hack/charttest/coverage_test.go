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
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// freeForm values are Kubernetes fields passed through whole, and maps of
// named rules users add to: one value each, not one per key of their
// defaults.
var freeForm = map[string]bool{
	"resources": true, "podSecurityContext": true, "securityContext": true,
	"networkPolicy.egress": true, "networkPolicy.ingress": true,
}

// valueKeys lists the values of a values document: the dotted path of
// every scalar, list, empty map and free-form map.
func valueKeys(values map[string]any, prefix string) []string {
	var keys []string
	for k, v := range values {
		path := prefix + k
		if m, ok := v.(map[string]any); ok && len(m) > 0 && !freeForm[path] {
			keys = append(keys, valueKeys(m, path+".")...)
			continue
		}
		keys = append(keys, path)
	}
	sort.Strings(keys)
	return keys
}

// documentedValues are the values of the table in docs/install.md.
func documentedValues(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n### Values\n")
	if !ok {
		t.Fatal("docs/install.md has no ### Values section")
	}
	section, _, _ = strings.Cut(section, "\n#")
	var keys []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([A-Za-z.]+)` \\|").FindAllStringSubmatch(section, -1) {
		keys = append(keys, m[1])
	}
	sort.Strings(keys)
	return keys
}

// sets tells whether values holds the dotted path.
func sets(values map[string]any, path string) bool {
	head, rest, nested := strings.Cut(path, ".")
	v, ok := values[head]
	if !ok || !nested {
		return ok
	}
	m, isMap := v.(map[string]any)
	return isMap && sets(m, rest)
}

// Every value of values.yaml is documented in docs/install.md, nothing else
// is, and a case of TestValues sets each of them and checks what it does.
func TestEveryValueIsDocumentedAndRendered(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	keys := valueKeys(parseValues(t, string(b)), "")
	if d := cmp.Diff(keys, documentedValues(t)); d != "" {
		t.Errorf("docs/install.md's values table differs from values.yaml (-values.yaml +docs):\n%s", d)
	}
	for _, key := range keys {
		var by []string
		for name, tc := range valueCases {
			if tc.want != nil && sets(parseValues(t, tc.values), key) {
				by = append(by, name)
			}
		}
		if len(by) == 0 {
			t.Errorf("no case of TestValues renders %s: add one that sets it and checks its effect", key)
		}
	}
}
