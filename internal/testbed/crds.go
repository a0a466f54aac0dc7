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
