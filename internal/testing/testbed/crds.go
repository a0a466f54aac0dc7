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
	"path/filepath"
)

// GatewayAPICRDs returns the directory of the Gateway API standard-channel
// CRDs in the sigs.k8s.io/gateway-api module serin builds with, downloading
// the module when the cache lacks it. root is the serin module's directory.
func GatewayAPICRDs(ctx context.Context, root string) (string, error) {
	dir, err := moduleDir(ctx, root, "sigs.k8s.io/gateway-api")
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "config", "crd", "standard"), nil
}

// KEDAScaledObjectCRD returns the file of KEDA's ScaledObject CRD at the
// KEDA_VERSION of hack/testbed/versions.env, from its module's source
// (downloaded from the module proxy, not built).
func KEDAScaledObjectCRD(ctx context.Context, root string) (string, error) {
	version, err := Version(root, "KEDA_VERSION")
	if err != nil {
		return "", err
	}
	dir, err := ModuleSource(ctx, "github.com/kedacore/keda/v2@"+version)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "config", "crd", "bases", "keda.sh_scaledobjects.yaml"), nil
}
