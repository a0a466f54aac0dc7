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
	"reflect"
	"sort"
	"strings"
)

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
