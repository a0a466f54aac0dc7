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
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

const repoRoot = "../.."

var testTime = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// tarEntry is what a test reads back from an archive.
type tarEntry struct {
	Name, LinkTo string
	Type         byte
	Mode         int64
	ModTime      time.Time
	Data         string
}

func readTarGz(t *testing.T, b []byte) []tarEntry {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var entries []tarEntry
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return entries
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, tarEntry{hdr.Name, hdr.Linkname, hdr.Typeflag, hdr.Mode, hdr.ModTime.UTC(), string(data)})
	}
}

// The CLI's archive holds serin, kubectl-serin as a hard link to it,
// kubectl's plugin completion kubectl_complete-serin, and the licence; the bytes depend only on the files and the time stamp.
func TestBinaryArchive(t *testing.T) {
	files := binaryArchive(binaries[1], Platform{"linux", "amd64"}, []byte("#!serin"), []byte("Apache License"))
	first, err := tarGz(files, testTime)
	if err != nil {
		t.Fatal(err)
	}
	again, err := tarGz(files, testTime)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, again) {
		t.Error("two archives of the same files differ")
	}
	want := []tarEntry{
		{Name: "serin", Type: tar.TypeReg, Mode: 0o755, ModTime: testTime, Data: "#!serin"},
		{Name: "kubectl-serin", LinkTo: "serin", Type: tar.TypeLink, Mode: 0o755, ModTime: testTime},
		{Name: "kubectl_complete-serin", Type: tar.TypeReg, Mode: 0o755, ModTime: testTime, Data: string(kubectlComplete)},
		{Name: "LICENSE", Type: tar.TypeReg, Mode: 0o644, ModTime: testTime, Data: "Apache License"},
	}
	if diff := cmp.Diff(want, readTarGz(t, first)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestChecksums(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"b.tar.gz": "bee", "a.yaml": "ay"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	got, err := checksums(dir, []string{"b.tar.gz", "a.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	want := sum("ay") + "  a.yaml\n" + sum("bee") + "  b.tar.gz\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// install.yaml is config/default with the image of the release: every
// object kubectl apply -k would apply, and nothing of the tree changed.
func TestInstallYAML(t *testing.T) {
	manifest, err := InstallYAML(repoRoot, "registry.example/serin", "v0.3.0")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(manifest), "# serin v0.3.0: ") {
		t.Errorf("install.yaml does not say its version:\n%.200s", manifest)
	}
	kinds := map[string]int{}
	var images []string
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatal(err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		kinds[obj.GetKind()]++
		if obj.GetKind() == "Deployment" {
			containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
			for _, c := range containers {
				images = append(images, c.(map[string]any)["image"].(string))
			}
			if obj.GetNamespace() != "serin-system" {
				t.Errorf("the agent's Deployment is in %q, want serin-system", obj.GetNamespace())
			}
		}
	}
	if diff := cmp.Diff(map[string]int{
		"Namespace": 1, "CustomResourceDefinition": 3, "ServiceAccount": 1, "ClusterRole": 4,
		"ClusterRoleBinding": 1, "Role": 1, "RoleBinding": 1, "Deployment": 1, "Service": 1,
	}, kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"registry.example/serin:v0.3.0"}, images); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
}

// A release for this machine's platform: the archives, install.yaml, the
// chart and checksums.txt, and the CLI from its archive reports the
// release's version, as kubectl-serin too.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agent and the CLI (skipped in -short mode)")
	}
	v, err := ParseVersion("v0.3.0-rc.1")
	if err != nil {
		t.Fatal(err)
	}
	dist := t.TempDir()
	p := Platform{runtime.GOOS, runtime.GOARCH}
	artefacts, err := Run(context.Background(), Options{
		Root: repoRoot, Dist: dist, Version: v, Image: "ghcr.io/serin-dev/serin", Platforms: []Platform{p}, ModTime: testTime,
		LDFlags: "-X github.com/serin-dev/serin/internal/version.Version=v0.3.0-rc.1",
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range artefacts {
		names = append(names, a.Name)
		if a.Size == 0 {
			t.Errorf("%s is empty", a.Name)
		}
	}
	suffix := "_v0.3.0-rc.1_" + p.OS + "_" + p.Arch + ".tar.gz"
	if diff := cmp.Diff([]string{
		"serin-agent" + suffix, "serin" + suffix, "install.yaml", "serin-0.3.0-rc.1.tgz", "checksums.txt",
	}, names); diff != "" {
		t.Errorf("artefacts (-want +got):\n%s", diff)
	}

	// sha256sum -c checksums.txt
	sums, err := os.ReadFile(filepath.Join(dist, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	recomputed, err := checksums(dist, names[:len(names)-1])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(recomputed), string(sums)); diff != "" {
		t.Errorf("checksums.txt (-want +got):\n%s", diff)
	}

	archive, err := os.ReadFile(filepath.Join(dist, "serin"+suffix))
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for _, e := range readTarGz(t, archive) {
		if e.Type == tar.TypeLink {
			if err := os.Link(filepath.Join(bin, e.LinkTo), filepath.Join(bin, e.Name)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(filepath.Join(bin, e.Name), []byte(e.Data), os.FileMode(e.Mode)); err != nil {
			t.Fatal(err)
		}
	}
	for _, exe := range []string{"serin", "kubectl-serin"} {
		out, err := exec.Command(filepath.Join(bin, exe), "version", "--client").CombinedOutput()
		if err != nil {
			t.Fatalf("%s version: %v\n%s", exe, err, out)
		}
		if !strings.HasPrefix(string(out), "serin: v0.3.0-rc.1 (") {
			t.Errorf("%s version --client printed %q, want the release's version", exe, out)
		}
	}
}

// The windows CLI's archive is a zip of serin.exe, kubectl-serin.exe (a
// copy: a zip has no hard links) and the licence; its bytes depend only
// on the files and the time stamp.
func TestZipArchive(t *testing.T) {
	files := binaryArchive(binaries[1], Platform{"windows", "arm64"}, []byte("MZserin"), []byte("Apache License"))
	first, err := zipArchive(files, testTime)
	if err != nil {
		t.Fatal(err)
	}
	again, err := zipArchive(files, testTime)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, again) {
		t.Error("two archives of the same files differ")
	}
	zr, err := zip.NewReader(bytes.NewReader(first), int64(len(first)))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	var names []string
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, f.Name)
		got[f.Name] = string(b)
		if !f.Modified.Equal(testTime) {
			t.Errorf("%s modified %s, want %s", f.Name, f.Modified, testTime)
		}
	}
	if diff := cmp.Diff([]string{"serin.exe", "kubectl-serin.exe", "LICENSE"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if got["kubectl-serin.exe"] != "MZserin" || got["serin.exe"] != "MZserin" {
		t.Errorf("the executables are %q and %q, want the CLI twice", got["serin.exe"], got["kubectl-serin.exe"])
	}
}

// The agent and the CLI build for every platform of a release (linux,
// darwin and windows, amd64 and arm64), as make release builds them: a
// file or a dependency that does not build on one fails here, not at
// release time. Twelve links, one after the other (two cores cannot do
// more at once); the first run after a change of the dependencies takes
// minutes, later ones reuse Go's build cache.
func TestCrossCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles the agent and the CLI for every platform (skipped in -short mode)")
	}
	for _, p := range Platforms {
		for _, bin := range binaries {
			start := time.Now()
			if err := crossCompile(context.Background(), repoRoot, "", bin, p, os.DevNull); err != nil {
				t.Error(err)
				continue
			}
			t.Logf("%-12s %-8s %s", p, bin.Name, time.Since(start).Round(100*time.Millisecond))
		}
	}
}

// kubectl_complete-serin runs `serin __complete` with kubectl's words,
// or kubectl-serin's when only the plugin's name is on PATH (krew).
func TestKubectlComplete(t *testing.T) {
	for _, exe := range []string{"serin", "kubectl-serin"} {
		bin := t.TempDir()
		fake := "#!/bin/sh\necho " + exe + " \"$@\"\n"
		if err := os.WriteFile(filepath.Join(bin, exe), []byte(fake), 0o755); err != nil {
			t.Fatal(err)
		}
		script := filepath.Join(bin, "kubectl_complete-serin")
		if err := os.WriteFile(script, kubectlComplete, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(script, "get", "canary", "")
		cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		if want := exe + " __complete get canary \n"; err != nil || string(out) != want {
			t.Errorf("with %s: got %q, %v; want %q", exe, out, err, want)
		}
	}
}
