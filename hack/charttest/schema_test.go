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
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// schemaNode is the part of a JSON Schema the test walks.
type schemaNode struct {
	Schema               string                 `json:"$schema"`
	Type                 any                    `json:"type"`
	Description          string                 `json:"description"`
	Properties           map[string]*schemaNode `json:"properties"`
	AdditionalProperties any                    `json:"additionalProperties"`
}

// values.schema.json (JSON Schema draft-07, which Helm checks the values
// against before rendering) describes every value of values.yaml, and
// refuses values it does not describe: a typo is an error, not a value
// silently ignored. The cases of TestValues with wantErr show the messages.
func TestSchemaDescribesEveryValue(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(chartDir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	root := &schemaNode{}
	if err := json.Unmarshal(b, root); err != nil {
		t.Fatalf("values.schema.json: %v", err)
	}
	if root.Schema != "http://json-schema.org/draft-07/schema#" {
		t.Errorf("$schema is %q, want draft-07", root.Schema)
	}
	values, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range valueKeys(parseValues(t, string(values)), "") {
		node, path := root, ""
		for _, part := range strings.Split(key, ".") {
			if node.AdditionalProperties != false {
				t.Errorf("the schema of %q takes any property: give it additionalProperties: false", path)
			}
			path = strings.TrimPrefix(path+"."+part, ".")
			if node = node.Properties[part]; node == nil {
				t.Errorf("values.schema.json does not describe %s", path)
				break
			}
		}
		if node != nil && (node.Type == nil || node.Description == "") {
			t.Errorf("values.schema.json gives %s no type or no description", key)
		}
	}
}
