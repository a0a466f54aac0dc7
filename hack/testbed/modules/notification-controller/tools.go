//go:build tools

// Package tools pins the notification-controller command this module builds
// and provides its CRDs (config/crd/bases in the module).
package tools

import _ "github.com/fluxcd/notification-controller"
