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
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	sigsyaml "sigs.k8s.io/yaml"
)

// RemoteBaseError refuses a kustomization that names something kustomize
// would fetch over the network (a remote base, or a file over HTTP). serin
// renders only what the repository holds: a remote base would make the
// revert depend on another repository, and on the network, without bound.
type RemoteBaseError struct {
	// Base is the entry as the kustomization names it.
	Base string
	// File is the kustomization file, relative to the repository root.
	File string
}

func (e *RemoteBaseError) Error() string {
	return fmt.Sprintf("remote base %s is not supported: vendor it into the repository (named in %s)", e.Base, e.File)
}

// scpUser is the user@ of an scp-like Git address (git@github.com:org/repo).
var scpUser = regexp.MustCompile(`^[a-z][a-z0-9-]*@`)

// isRemoteReference reports whether kustomize would fetch a reference
// rather than read it from the repository. It is kustomize's own rule
// (api/internal/git.NewRepoSpecFromURL and loader.IsRemoteFile), made
// wider: any URL with a scheme (https://, ssh://, file://…), a forced
// git:: reference, an scp-like user@host:path, and the github.com/org/repo
// shorthand.
func isRemoteReference(ref string) bool {
	s := strings.ToLower(strings.TrimSpace(ref))
	return strings.HasPrefix(s, "git::") ||
		strings.Contains(s, "://") ||
		scpUser.MatchString(s) ||
		strings.HasPrefix(s, "github.com/") || strings.HasPrefix(s, "github.com:")
}

// refuseRemoteBases checks the kustomization at root and every local base
// and component it includes, recursively, before kustomize runs: an entry
// that kustomize would clone with git or fetch over HTTP is refused with a
// RemoteBaseError. kustomize offers no loader without network access, so
// this is what keeps a render to the repository's files.
func refuseRemoteBases(fs filesys.FileSystem, root string) error {
	seen := map[string]bool{}
	var check func(dir string) error
	check = func(dir string) error {
		if seen[dir] {
			return nil
		}
		seen[dir] = true
		file := kustomizationFile(fs, dir)
		if file == "" {
			return nil
		}
		b, err := fs.ReadFile(file)
		if err != nil {
			return err
		}
		var k kustypes.Kustomization
		if err := sigsyaml.Unmarshal(b, &k); err != nil {
			return nil // kustomize reports it
		}
		name := strings.TrimPrefix(file, "/")
		bases, files := kustomizationReferences(&k)
		for _, ref := range append(bases, files...) {
			if isRemoteReference(ref) {
				return &RemoteBaseError{Base: ref, File: name}
			}
		}
		for _, ref := range bases {
			if p := path.Join(dir, ref); !path.IsAbs(ref) && fs.IsDir(p) {
				if err := check(p); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return check(root)
}

// kustomizationReferences lists what a kustomization loads: bases (entries
// that may be directories, each a kustomization of its own) and files.
// Inline entries (patches, generators written in place) are left out.
func kustomizationReferences(k *kustypes.Kustomization) (bases, files []string) {
	local := func(refs ...string) []string {
		var out []string
		for _, r := range refs {
			if r != "" && !strings.Contains(r, "\n") {
				out = append(out, r)
			}
		}
		return out
	}
	// The deprecated fields are read on purpose: users' kustomizations
	// still use them, and kustomize still honours them.
	bases = local(slices.Concat(k.Resources, k.Components, k.Bases, k.Generators, k.Transformers, k.Validators)...) //nolint:staticcheck // SA1019: see above
	files = local(slices.Concat(k.Crds, k.Configurations)...)
	for _, p := range k.PatchesStrategicMerge { //nolint:staticcheck // SA1019: see above
		files = append(files, local(string(p))...)
	}
	for _, p := range slices.Concat(k.Patches, k.PatchesJson6902) { //nolint:staticcheck // SA1019: see above
		files = append(files, local(p.Path)...)
	}
	for _, r := range k.Replacements {
		files = append(files, local(r.Path)...)
	}
	files = append(files, local(k.OpenAPI["path"])...)
	sources := make([]kustypes.KvPairSources, 0, len(k.ConfigMapGenerator)+len(k.SecretGenerator))
	for _, g := range k.ConfigMapGenerator {
		sources = append(sources, g.KvPairSources)
	}
	for _, g := range k.SecretGenerator {
		sources = append(sources, g.KvPairSources)
	}
	for _, s := range sources {
		for _, f := range s.FileSources {
			if _, p, ok := strings.Cut(f, "="); ok {
				f = p
			}
			files = append(files, local(f)...)
		}
		files = append(files, local(append(s.EnvSources, s.EnvSource)...)...)
	}
	return bases, files
}
