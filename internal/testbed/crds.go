package testbed

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// GatewayAPICRDs returns the directory of the Gateway API standard-channel
// CRDs in the sigs.k8s.io/gateway-api module serin builds with.
func GatewayAPICRDs() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		return "", fmt.Errorf("failed to locate the sigs.k8s.io/gateway-api module: %w", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard"), nil
}
