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

package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errors []string
	fatal  bool
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = true
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatal(args ...any) {
	r.fatal = true
	r.errors = append(r.errors, fmt.Sprint(args...))
}

func TestGolden(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "out.golden")

	t.Setenv(UpdateGoldenEnv, "")
	r := &recorder{TB: t}
	Golden(r, path, "a\n")
	if !r.fatal || !strings.Contains(r.errors[0], "run the test with") {
		t.Errorf("a missing golden file: %v, want a failure that says how to create it", r.errors)
	}

	t.Setenv(UpdateGoldenEnv, "true")
	r = &recorder{TB: t}
	Golden(r, path, "a\n")
	if len(r.errors) != 0 {
		t.Errorf("update: %v", r.errors)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "a\n" {
		t.Errorf("written %q, %v", b, err)
	}

	t.Setenv(UpdateGoldenEnv, "")
	r = &recorder{TB: t}
	Golden(r, path, "a\n")
	if len(r.errors) != 0 {
		t.Errorf("same text: %v", r.errors)
	}
	Golden(r, path, "b\n")
	if len(r.errors) != 1 || r.fatal || !strings.Contains(r.errors[0], "differs") {
		t.Errorf("other text: %v, want one non-fatal difference", r.errors)
	}
}
