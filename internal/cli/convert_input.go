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

package cli

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/serin-dev/serin/internal/cli/flaggerconvert"
)

// convertInput is where serin convert reads its manifests, as kubectl
// apply does: -f FILE, -f DIRECTORY (-R for its subdirectories), -f - or
// -k DIRECTORY.
type convertInput struct {
	file          string
	recursive     bool
	kustomization string
	outputDir     string
}

// inputFile is one file read, its name relative to the input (what
// --output-dir mirrors), and its documents.
type inputFile struct {
	name      string
	documents [][]byte
}

// manifestExtensions are the files of a directory read as manifests.
var manifestExtensions = []string{".yaml", ".yml", ".json"}

// describe names the input in messages.
func (in convertInput) describe() string {
	switch {
	case in.kustomization != "":
		return "the kustomization in " + in.kustomization
	case in.file == "-":
		return "standard input"
	}
	return in.file
}

// read reads the input's files, in the order kubectl reads them (lexical,
// a directory's files before its subdirectories').
func (in convertInput) read(stdin io.Reader) ([]inputFile, error) {
	switch {
	case in.kustomization != "":
		return in.build()
	case in.file == "-":
		data, err := io.ReadAll(stdin)
		if err != nil {
			return nil, err
		}
		return oneFile("stdin.yaml", data)
	}
	info, err := os.Stat(in.file)
	if err != nil {
		return nil, err
	}
	root := in.file
	if info.IsDir() {
		// WalkDir does not follow a symlinked root.
		if root, err = filepath.EvalSymlinks(in.file); err != nil {
			return nil, err
		}
	}
	if !info.IsDir() {
		data, err := os.ReadFile(in.file)
		if err != nil {
			return nil, err
		}
		return oneFile(filepath.Base(in.file), data)
	}
	var files []inputFile
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != root && !in.recursive:
			return filepath.SkipDir
		case d.IsDir() || !slices.Contains(manifestExtensions, strings.ToLower(filepath.Ext(path))):
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		documents, err := flaggerconvert.SplitDocuments(data)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		files = append(files, inputFile{name: rel, documents: documents})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		hint := ""
		if !in.recursive {
			hint = " (-R reads its subdirectories)"
		}
		return nil, fmt.Errorf("%s holds no .yaml, .yml or .json file%s", in.file, hint)
	}
	return files, nil
}

// build runs kustomize on the kustomization, as kubectl -k does.
func (in convertInput) build() ([]inputFile, error) {
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), in.kustomization)
	if err != nil {
		return nil, fmt.Errorf("building the kustomization in %s: %w", in.kustomization, err)
	}
	data, err := resources.AsYaml()
	if err != nil {
		return nil, err
	}
	return oneFile("resources.yaml", data)
}

// oneFile is an input of one file.
func oneFile(name string, data []byte) ([]inputFile, error) {
	documents, err := flaggerconvert.SplitDocuments(data)
	if err != nil {
		return nil, err
	}
	return []inputFile{{name: name, documents: documents}}, nil
}
