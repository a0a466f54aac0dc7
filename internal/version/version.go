// Package version holds serin's version, set at build time with
// -ldflags "-X github.com/serin-dev/serin/internal/version.Version=…".
package version

// Version of the serin build.
var Version = "dev"
