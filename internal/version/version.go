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

// Package version tells which serin a binary is. `make build` and `make
// release` set the version and commit with
//
//	-ldflags "-X github.com/serin-dev/serin/internal/version.Version=v0.3.0 -X github.com/serin-dev/serin/internal/version.Commit=<sha>"
//
// (VERSION is `git describe --tags --match 'v*'`); a binary built without
// them reports what the Go toolchain recorded in it instead: the main
// module's version (since Go 1.24 a `go build` in a clone records the tag
// of a clean tagged commit, or a pseudo-version), else the Git revision
// when Go recorded one but no version, else "dev" (go build -buildvcs=false).
package version

import (
	"runtime"
	"runtime/debug"
)

// Version and Commit are set at build time with -ldflags -X; empty, Get
// reads the binary's build information.
var (
	Version = ""
	Commit  = ""
)

// unknownVersion is the version of a binary that carries neither ldflags
// nor a module version nor a Git revision (go build -buildvcs=false).
const unknownVersion = "dev"

// Info describes a serin binary.
type Info struct {
	// Version is a semantic version (v0.3.0) for releases, `git describe`
	// output or a Go pseudo-version for other builds, "dev" when unknown.
	Version string `json:"version"`
	// GitCommit is the full commit the binary was built from, when known.
	GitCommit string `json:"gitCommit,omitempty"`
	// GitTreeState is "dirty" when the clone had uncommitted changes,
	// "clean" when it had none, empty when unknown.
	GitTreeState string `json:"gitTreeState,omitempty"`
	// GoVersion is the Go toolchain that built the binary.
	GoVersion string `json:"goVersion"`
	// Platform is GOOS/GOARCH.
	Platform string `json:"platform"`
}

// Get returns the version of the running binary.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuildInfo(Version, Commit, bi)
}

// fromBuildInfo combines the ldflags values with the build information bi
// (nil when the binary has none): ldflags win, then the module version,
// then the VCS revision.
func fromBuildInfo(version, commit string, bi *debug.BuildInfo) Info {
	info := Info{
		Version:   version,
		GitCommit: commit,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
	var revision string
	var modified *bool
	if bi != nil {
		info.GoVersion = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				m := s.Value == "true"
				modified = &m
			}
		}
	}
	if info.GitCommit == "" {
		info.GitCommit = revision
	}
	if modified != nil && info.GitCommit == revision {
		info.GitTreeState = "clean"
		if *modified {
			info.GitTreeState = "dirty"
		}
	}
	if info.Version != "" {
		return info
	}
	switch {
	case bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)":
		// go build in a clone (Go records a version from the VCS tags
		// since 1.24), or a build of the module at a version.
		info.Version = bi.Main.Version
	case revision != "":
		// As `git describe --always --dirty` prints it without a tag.
		info.Version = revision[:min(len(revision), 12)]
		if modified != nil && *modified {
			info.Version += "-dirty"
		}
	default:
		info.Version = unknownVersion
	}
	return info
}
