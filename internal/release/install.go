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

package release

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// agentImage is the image config/manager names the agent's container
// with (its kustomization's images: entry).
const agentImage = "ghcr.io/serin-dev/serin"

// InstallYAML renders config/default of the repository at root, as
// `kubectl apply -k config/default` would apply it, with the agent's image
// set to image:tag: the CRDs, the namespace, the RBAC and the agent in one
// file.
func InstallYAML(root, image, tag string) ([]byte, error) {
	// config/ in memory, with an overlay that sets the image: the tree is
	// not touched.
	fsys := filesys.MakeFsInMemory()
	config := filepath.Join(root, "config")
	err := filepath.WalkDir(config, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return fsys.WriteFile(filepath.Join("/", rel), b)
	})
	if err != nil {
		return nil, err
	}
	overlay := fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- ../config/default
images:
- name: %s
  newName: %s
  newTag: %s
`, agentImage, image, tag)
	if err := fsys.WriteFile("/release/kustomization.yaml", []byte(overlay)); err != nil {
		return nil, err
	}
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fsys, "/release")
	if err != nil {
		return nil, fmt.Errorf("rendering config/default: %w", err)
	}
	manifest, err := resources.AsYaml()
	if err != nil {
		return nil, err
	}
	header := fmt.Sprintf("# serin %s: the CRDs, the serin-system namespace, the RBAC and the agent.\n"+
		"#   kubectl apply -f install.yaml\n---\n", tag)
	return append([]byte(header), manifest...), nil
}
