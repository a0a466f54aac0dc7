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

package version

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFromBuildInfo(t *testing.T) {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{
			{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified},
		}
	}
	platform := runtime.GOOS + "/" + runtime.GOARCH
	tests := map[string]struct {
		version, commit string
		bi              *debug.BuildInfo
		want            Info
	}{
		"make release: ldflags win over the build information": {
			version: "v0.3.0", commit: rev,
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.3.1-0.20261122-abcdef+dirty"}, Settings: vcs("false")},
			want: Info{Version: "v0.3.0", GitCommit: rev, GitTreeState: "clean", GoVersion: "go1.26.8", Platform: platform},
		},
		"ldflags version, commit from VCS": {
			version: "v0.3.0-rc.1",
			bi:      &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs("true")},
			want:    Info{Version: "v0.3.0-rc.1", GitCommit: rev, GitTreeState: "dirty", GoVersion: "go1.26.8", Platform: platform},
		},
		"ldflags commit other than the VCS revision: tree state unknown": {
			version: "v0.3.0", commit: "fedcba",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Settings: vcs("true")},
			want: Info{Version: "v0.3.0", GitCommit: "fedcba", GoVersion: "go1.26.8", Platform: platform},
		},
		"go install …@v0.3.0: the module version, no VCS": {
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/serin-dev/serin", Version: "v0.3.0"}},
			want: Info{Version: "v0.3.0", GoVersion: "go1.26.8", Platform: platform},
		},
		"go build in a dirty clone without tags": {
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs("true")},
			want: Info{Version: "0123456789ab-dirty", GitCommit: rev, GitTreeState: "dirty", GoVersion: "go1.26.8", Platform: platform},
		},
		"go build in a clean clone, no module version": {
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Settings: vcs("false")},
			want: Info{Version: "0123456789ab", GitCommit: rev, GitTreeState: "clean", GoVersion: "go1.26.8", Platform: platform},
		},
		"go build -buildvcs=false": {
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			want: Info{Version: "dev", GoVersion: "go1.26.8", Platform: platform},
		},
		"no build information": {
			want: Info{Version: "dev", GoVersion: runtime.Version(), Platform: platform},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, fromBuildInfo(tc.version, tc.commit, tc.bi)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The test binary itself has build information: Get reports its Go
// version and never an empty version.
func TestGet(t *testing.T) {
	info := Get()
	if info.Version == "" || info.GoVersion != runtime.Version() {
		t.Errorf("Get() = %+v, want a version and GoVersion %s", info, runtime.Version())
	}
}
