// Package features lists serin's feature gates, read once in main.go
// through github.com/fluxcd/pkg/runtime/features (--feature-gates).
package features

// features maps each gate to its default.
var features = map[string]bool{}

// FeatureGates returns the supported feature gates with their defaults.
func FeatureGates() map[string]bool {
	return features
}
