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

// Package testutil holds the helpers tests of several packages share.
package testutil

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// UpdateGoldenEnv is the one switch that rewrites every golden file:
// UPDATE_GOLDEN=true go test ./...
const UpdateGoldenEnv = "UPDATE_GOLDEN"

// UpdateGolden reports whether this run rewrites the golden files.
func UpdateGolden() bool { return os.Getenv(UpdateGoldenEnv) == "true" }

// Golden compares got with the golden file at path and reports the
// difference (-want +got). When UpdateGolden, it writes got to path first,
// creating its directory.
func Golden(t testing.TB, path, got string) {
	t.Helper()
	if UpdateGolden() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file: %v (run the test with %s=true to create it)", err, UpdateGoldenEnv)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}
