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

// Package release builds what `make release` publishes: the agent and the
// CLI for each platform as archives, the install.yaml bundle rendered from
// config/default, the Helm chart with the release's version, and their
// checksums.
package release

import (
	"fmt"
	"regexp"
	"strings"
)

// Version is the version a release is built as.
type Version struct {
	// Tag is VERSION as given: v0.3.0, or a dev build's `git describe`.
	Tag string
	// Dev is true for a build that is not a release: no release tag on
	// the commit, or a dirty tree.
	Dev bool
	// Chart is the Helm chart's version (SemVer 2, no v): 0.3.0, or
	// 0.0.0-dev+<describe> for a dev build.
	Chart string
}

var (
	// semver is vMAJOR.MINOR.PATCH[-PRERELEASE] as SemVer 2 defines them
	// (no build metadata: image tags cannot hold a +).
	semver = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
		`(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?$`)
	// describeSuffix is what `git describe --tags --always --dirty` adds
	// after a tag: commits since it and the commit, and -dirty.
	describeSuffix = regexp.MustCompile(`(?:-\d+-g[0-9a-f]{7,40})?(?:-dirty)?$`)
	// untagged is `git describe --always --dirty` in a repository
	// without a release tag: an abbreviated commit.
	untagged = regexp.MustCompile(`^[0-9a-f]{7,40}(?:-dirty)?$`)
	// buildMetadata is what SemVer allows in build metadata.
	buildMetadata = regexp.MustCompile(`[^0-9A-Za-z.-]+`)
)

// ParseVersion reads VERSION: a release's semantic version
// (vMAJOR.MINOR.PATCH[-PRERELEASE]), or a dev build: "dev", an abbreviated
// commit, or a version that `git describe` followed with commits since the
// tag or -dirty. Anything else is an error.
func ParseVersion(tag string) (Version, error) {
	if tag == "dev" || untagged.MatchString(tag) {
		return devVersion(tag), nil
	}
	if suffix := describeSuffix.FindString(tag); suffix != "" && semver.MatchString(strings.TrimSuffix(tag, suffix)) {
		return devVersion(tag), nil
	}
	if !semver.MatchString(tag) {
		return Version{}, fmt.Errorf("VERSION %q is not a semantic version vMAJOR.MINOR.PATCH[-PRERELEASE] (e.g. v0.3.0, v0.3.0-rc.1), "+
			"nor a dev build's `git describe --tags --match 'v*' --always --dirty`", tag)
	}
	return Version{Tag: tag, Chart: strings.TrimPrefix(tag, "v")}, nil
}

func devVersion(tag string) Version {
	build := strings.Trim(buildMetadata.ReplaceAllString(tag, "-"), ".-")
	return Version{Tag: tag, Dev: true, Chart: "0.0.0-dev+" + build}
}
