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

package release

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// Platform is a GOOS/GOARCH pair.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// Platforms are those a release builds for.
var Platforms = []Platform{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// exe is the name of an executable on p: NAME.exe on windows.
func (p Platform) exe(name string) string {
	if p.OS == "windows" {
		return name + ".exe"
	}
	return name
}

// archiveExt is the extension of p's archives: .zip on windows, where it
// is what people open, .tar.gz elsewhere.
func (p Platform) archiveExt() string {
	if p.OS == "windows" {
		return ".zip"
	}
	return ".tar.gz"
}

// binary is a command a release ships.
type binary struct {
	// Pkg is its package, relative to the repository.
	Pkg string
	// Name is the executable's name.
	Name string
	// Archive is the archive's name prefix: ARCHIVE_VERSION_OS_ARCH.tar.gz
	// (.zip on windows).
	Archive string
	// Links are more names of the executable in the archive.
	Links []string
	// Scripts are shell scripts shipped next to it, by name (unix
	// archives).
	Scripts map[string][]byte
}

// kubectlComplete is kubectl's plugin completion for `kubectl serin`
// (kubectl_complete-serin, which runs `serin __complete`).
//
//go:embed kubectl_complete-serin
var kubectlComplete []byte

// binaries are the agent and the CLI, which is kubectl's plugin as
// kubectl-serin, with the plugin's completion.
var binaries = []binary{
	{Pkg: ".", Name: "serin-agent", Archive: "serin-agent"},
	{Pkg: "./cmd/serin", Name: "serin", Archive: "serin", Links: []string{"kubectl-serin"},
		Scripts: map[string][]byte{"kubectl_complete-serin": kubectlComplete}},
}

// Options describe a release.
type Options struct {
	// Root is the repository.
	Root string
	// Dist receives the artefacts; what it held before is removed.
	Dist string
	// Version is the release's version.
	Version Version
	// LDFlags are the Makefile's -X flags (version and commit); the
	// binaries are stripped too (-s -w), as the image's are.
	LDFlags string
	// Image is the agent's image repository (ghcr.io/serin-dev/serin):
	// install.yaml and the chart use IMAGE:VERSION.
	Image string
	// Platforms to build for; Platforms when empty.
	Platforms []Platform
	// ModTime is the time stamp of every archived file
	// (SOURCE_DATE_EPOCH, the commit's time).
	ModTime time.Time
	// Log receives progress lines.
	Log io.Writer
}

// Artefact is a file a release wrote.
type Artefact struct {
	Name string
	Size int64
}

// Run builds the release into opts.Dist: an archive per binary and
// platform, install.yaml, the chart, and checksums.txt (sha256, as
// sha256sum prints them) of all of them, which it lists.
func Run(ctx context.Context, opts Options) ([]Artefact, error) {
	if len(opts.Platforms) == 0 {
		opts.Platforms = Platforms
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if err := os.RemoveAll(opts.Dist); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Dist, 0o755); err != nil {
		return nil, err
	}
	build, err := os.MkdirTemp("", "serin-release-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(build)

	var written []string
	write := func(name string, b []byte) error {
		written = append(written, name)
		return os.WriteFile(filepath.Join(opts.Dist, name), b, 0o644)
	}
	license, err := os.ReadFile(filepath.Join(opts.Root, "LICENSE"))
	if err != nil {
		return nil, err
	}
	for _, p := range opts.Platforms {
		for _, bin := range binaries {
			fmt.Fprintf(opts.Log, "  build    %s %s\n", bin.Name, p)
			exe, err := goBuild(ctx, opts, build, bin, p)
			if err != nil {
				return nil, err
			}
			files := binaryArchive(bin, p, exe, license)
			archive, err := tarGz(files, opts.ModTime)
			if p.archiveExt() == ".zip" {
				archive, err = zipArchive(files, opts.ModTime)
			}
			if err != nil {
				return nil, err
			}
			if err := write(fmt.Sprintf("%s_%s_%s_%s%s", bin.Archive, opts.Version.Tag, p.OS, p.Arch, p.archiveExt()), archive); err != nil {
				return nil, err
			}
		}
	}

	fmt.Fprintf(opts.Log, "  render   install.yaml from config/default, image %s:%s\n", opts.Image, opts.Version.Tag)
	install, err := InstallYAML(opts.Root, opts.Image, opts.Version.Tag)
	if err != nil {
		return nil, err
	}
	if err := write("install.yaml", install); err != nil {
		return nil, err
	}

	chart, chartName, err := PackageChart(filepath.Join(opts.Root, "charts", "serin"), opts.Version, opts.ModTime)
	if err != nil {
		return nil, fmt.Errorf("packaging the chart: %w", err)
	}
	fmt.Fprintf(opts.Log, "  package  %s (version %s, appVersion %s)\n", chartName, opts.Version.Chart, opts.Version.Tag)
	if err := write(chartName, chart); err != nil {
		return nil, err
	}

	sums, err := checksums(opts.Dist, written)
	if err != nil {
		return nil, err
	}
	if err := write("checksums.txt", sums); err != nil {
		return nil, err
	}
	return list(opts.Dist, written)
}

// goBuild cross-compiles bin for p and returns the executable.
func goBuild(ctx context.Context, opts Options, dir string, bin binary, p Platform) ([]byte, error) {
	out := filepath.Join(dir, p.OS+"_"+p.Arch, p.exe(bin.Name))
	if err := crossCompile(ctx, opts.Root, opts.LDFlags, bin, p, out); err != nil {
		return nil, err
	}
	return os.ReadFile(out)
}

// crossCompile builds bin for p into out, statically (CGO_ENABLED=0), with
// -trimpath, stripped, and ldflags (the version's -X flags).
func crossCompile(ctx context.Context, root, ldflags string, bin binary, p Platform, out string) error {
	ldflags = strings.TrimSpace(ldflags + " -s -w")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", ldflags, "-o", out, bin.Pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s for %s: %w\n%s", bin.Name, p, err, b)
	}
	return nil
}

// binaryArchive lays out an archive for p: the executable, its links,
// its scripts by name (not on windows), LICENSE.
func binaryArchive(bin binary, p Platform, exe, license []byte) []archiveFile {
	files := []archiveFile{{Name: p.exe(bin.Name), Data: exe, Mode: 0o755}}
	for _, link := range bin.Links {
		files = append(files, archiveFile{Name: p.exe(link), LinkTo: p.exe(bin.Name), Mode: 0o755})
	}
	for _, name := range slices.Sorted(maps.Keys(bin.Scripts)) {
		if p.OS == "windows" {
			break // shell scripts: kubectl's plugin completion is for unix shells
		}
		files = append(files, archiveFile{Name: name, Data: bin.Scripts[name], Mode: 0o755})
	}
	return append(files, archiveFile{Name: "LICENSE", Data: license, Mode: 0o644})
}

// checksums is checksums.txt of the files in dir: "SHA256  NAME" lines,
// which `sha256sum -c checksums.txt` checks.
func checksums(dir string, names []string) ([]byte, error) {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	var b strings.Builder
	for _, name := range sorted {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(h.Sum(nil)), name)
	}
	return []byte(b.String()), nil
}

func list(dir string, names []string) ([]Artefact, error) {
	var artefacts []Artefact
	for _, name := range names {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		artefacts = append(artefacts, Artefact{Name: name, Size: fi.Size()})
	}
	return artefacts, nil
}
