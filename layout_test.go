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

package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// layoutPath is a path written in code in the first cell of a layout
// table row.
var layoutPath = regexp.MustCompile("`([^`]+)`")

// layoutTable returns the paths the rows of the table under heading name
// in a Markdown file, in order.
func layoutTable(t *testing.T, file, heading string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("%s has no %q section", file, heading)
	}
	var paths []string
	for line := range strings.SplitSeq(section, "\n") {
		if strings.HasPrefix(line, "#") {
			break
		}
		cells := strings.Split(line, "|")
		if len(cells) < 3 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		for _, m := range layoutPath.FindAllStringSubmatch(cells[1], -1) {
			paths = append(paths, m[1])
		}
	}
	return paths
}

// The README's layout table names only paths that exist, and every
// top-level directory of the repository (but those .gitignore names, which
// builds make) is in it, so that it cannot lag the code.
func TestREADMELayoutTable(t *testing.T) {
	paths := layoutTable(t, "README.md", "## Layout")
	if len(paths) == 0 {
		t.Fatal("the README's layout table names no path")
	}
	for _, p := range paths {
		if _, err := os.Stat(strings.TrimSuffix(p, "/")); err != nil {
			t.Errorf("the README's layout table names %s: %v", p, err)
		}
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	ignored, err := os.ReadFile(".gitignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || strings.HasPrefix(name, ".") || slices.Contains(strings.Fields(string(ignored)), "/"+name+"/") {
			continue
		}
		if !slices.ContainsFunc(paths, func(p string) bool { return strings.HasPrefix(p, name+"/") }) {
			t.Errorf("the directory %s/ is not in the README's layout table", name)
		}
	}
}
