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

package testbed

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// moduleDir returns the directory of module in the module cache, as the Go
// module in dir requires it, downloading it when the cache lacks it. Unlike
// `go list -m -f {{.Dir}}`, which prints nothing for a module that is in the
// build list but not yet extracted (a fresh machine), `go mod download -json`
// always yields the directory.
func moduleDir(ctx context.Context, dir, module string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", module)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	var mod struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &mod); jerr == nil && mod.Error != "" {
		return "", fmt.Errorf("failed to download %s: %s", module, mod.Error)
	}
	if err != nil {
		return "", fmt.Errorf("failed to download %s (go mod download in %s): %w", module, dir, err)
	}
	if mod.Dir == "" {
		return "", fmt.Errorf("failed to locate %s: go mod download said %s", module, out)
	}
	return mod.Dir, nil
}

// Version returns a version pinned in hack/testbed/versions.env (KEY=VALUE
// lines) of the serin module in root, e.g. Version(root, "FLAGGER_VERSION").
func Version(root, key string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, "hack", "testbed", "versions.env"))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && k == key {
			return v, nil
		}
	}
	return "", fmt.Errorf("%s is not set in hack/testbed/versions.env", key)
}

// ModuleSource returns the directory of a module's source at a version
// (module@version), downloaded from the module proxy into the module cache
// when missing, outside any module so that no go.mod changes.
func ModuleSource(ctx context.Context, moduleAtVersion string) (string, error) {
	return moduleDir(ctx, os.TempDir(), moduleAtVersion)
}
