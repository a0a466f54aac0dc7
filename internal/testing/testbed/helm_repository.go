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

package testbed

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/yaml"
)

// chartFiles is the testbed's app as a Helm chart, without its Chart.yaml
// (PodinfoChart writes it with the version asked for).
//
//go:embed charts/podinfo
var chartFiles embed.FS

// Chart is a Helm chart's files, by path from the chart's directory
// (Chart.yaml, values.yaml, templates/...).
type Chart struct {
	Name    string
	Version string
	Files   map[string]string
}

// PodinfoChart is the testbed's app as a Helm chart at version: a
// Deployment named after the release, with the values replicaCount and
// image.tag (its pods answer the tag as their version), annotations (on the
// Deployment only), and a Service unless canary is true (a serin Canary
// generates the Services).
func PodinfoChart(version string) Chart {
	c := Chart{Name: "podinfo", Version: version, Files: map[string]string{
		"Chart.yaml": fmt.Sprintf("apiVersion: v2\nname: podinfo\ndescription: The testbed's app\ntype: application\nversion: %s\n", version),
	}}
	root := "charts/podinfo"
	err := fs.WalkDir(chartFiles, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := chartFiles.ReadFile(p)
		c.Files[strings.TrimPrefix(p, root+"/")] = string(b)
		return err
	})
	if err != nil {
		panic(err) // embedded files
	}
	return c
}

// Package is the chart as `helm package` writes it: a gzipped tar whose
// entries are under the chart's name.
func (c Chart) Package() ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	names := make([]string, 0, len(c.Files))
	for p := range c.Files {
		names = append(names, p)
	}
	slices.Sort(names)
	for _, p := range names {
		body := []byte(c.Files[p])
		hdr := &tar.Header{Name: path.Join(c.Name, p), Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// HelmRepository is an HTTP Helm repository on loopback, as a
// source-controller HelmRepository (spec.url) reads one: an index.yaml and
// the packaged charts it lists.
type HelmRepository struct {
	// URL is the repository's address, for HelmRepository.spec.url.
	URL string

	mu        sync.Mutex
	entries   map[string][]indexEntry
	packages  map[string][]byte
	downloads map[string]int
	server    *http.Server
}

// indexEntry is a chart version in index.yaml.
type indexEntry struct {
	APIVersion string    `json:"apiVersion"`
	Name       string    `json:"name"`
	Version    string    `json:"version"`
	Created    time.Time `json:"created"`
	Digest     string    `json:"digest"`
	URLs       []string  `json:"urls"`
}

// StartHelmRepository serves charts as a Helm repository on loopback.
// Close stops it.
func StartHelmRepository(charts ...Chart) (*HelmRepository, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &HelmRepository{URL: "http://" + l.Addr().String(), entries: map[string][]indexEntry{},
		packages: map[string][]byte{}, downloads: map[string]int{}}
	for _, c := range charts {
		if err := r.Publish(c); err != nil {
			l.Close()
			return nil, err
		}
	}
	r.server = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.server.Serve(l) }()
	return r, nil
}

// Publish packages a chart and lists it in the index, as a chart release
// does.
func (r *HelmRepository) Publish(c Chart) error {
	tgz, err := c.Package()
	if err != nil {
		return err
	}
	sum := sha256.Sum256(tgz)
	file := fmt.Sprintf("%s-%s.tgz", c.Name, c.Version)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.packages[file] = tgz
	r.entries[c.Name] = append(r.entries[c.Name], indexEntry{APIVersion: "v2", Name: c.Name, Version: c.Version,
		Created: time.Now().UTC(), Digest: hex.EncodeToString(sum[:]), URLs: []string{r.URL + "/" + file}})
	return nil
}

// Downloads returns how many times the package of a chart version was
// downloaded.
func (r *HelmRepository) Downloads(name, version string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.downloads[fmt.Sprintf("%s-%s.tgz", name, version)]
}

func (r *HelmRepository) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	file := strings.TrimPrefix(req.URL.Path, "/")
	if file == "index.yaml" {
		index, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "entries": r.entries, "generated": time.Now().UTC()})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/x-yaml")
		_, _ = w.Write(index)
		return
	}
	tgz, ok := r.packages[file]
	if !ok {
		http.NotFound(w, req)
		return
	}
	r.downloads[file]++
	w.Header().Set("Content-Type", "application/gzip")
	_, _ = w.Write(tgz)
}

// Close stops the repository's server.
func (r *HelmRepository) Close() { _ = r.server.Close() }
