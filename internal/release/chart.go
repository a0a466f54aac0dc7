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
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

var (
	chartVersionLine    = regexp.MustCompile(`(?m)^version: .*$`)
	chartAppVersionLine = regexp.MustCompile(`(?m)^appVersion: .*$`)
	chartNameLine       = regexp.MustCompile(`(?m)^name: *(\S+)\s*$`)
)

// PackageChart packages the chart in dir as `helm package` does (a
// gzip'ed tar of CHART/…, what .helmignore ignores left out), with
// Chart.yaml's version and appVersion set to the release's: it returns the
// archive and its file name, CHART-VERSION.tgz.
func PackageChart(dir string, v Version, modTime time.Time) ([]byte, string, error) {
	chartYAML, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return nil, "", err
	}
	m := chartNameLine.FindSubmatch(chartYAML)
	if m == nil {
		return nil, "", errors.New("the chart has no name in Chart.yaml")
	}
	name := string(m[1])
	for field, line := range map[string]*regexp.Regexp{"version": chartVersionLine, "appVersion": chartAppVersionLine} {
		if !line.Match(chartYAML) {
			return nil, "", fmt.Errorf("the chart's Chart.yaml has no %s: line to stamp", field)
		}
	}
	chartYAML = chartVersionLine.ReplaceAll(chartYAML, []byte("version: "+v.Chart))
	chartYAML = chartAppVersionLine.ReplaceAll(chartYAML, []byte(fmt.Sprintf("appVersion: %q", v.Tag)))

	ignored, err := readHelmignore(filepath.Join(dir, ".helmignore"))
	if err != nil {
		return nil, "", err
	}
	// Chart.yaml first, as helm package writes it.
	files := []archiveFile{{Name: name + "/Chart.yaml", Data: chartYAML, Mode: 0o644}}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if ignored(rel, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || rel == "Chart.yaml" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files = append(files, archiveFile{Name: name + "/" + rel, Data: b, Mode: 0o644})
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	archive, err := tarGz(files, modTime)
	return archive, name + "-" + v.Chart + ".tgz", err
}

// readHelmignore reads the patterns of a .helmignore: a pattern matches a
// path's base name or the whole relative path (filepath.Match), a pattern
// ending in / only directories. That is the subset of Helm's rules the
// chart uses; hack/charttest checks that Helm loads the package with the
// same files as the chart's directory.
func readHelmignore(path string) (func(rel string, dir bool) bool, error) {
	var patterns []string
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "!") {
			return nil, fmt.Errorf("%s: negated patterns (%s) are not supported", path, line)
		}
		patterns = append(patterns, line)
	}
	return func(rel string, dir bool) bool {
		for _, p := range patterns {
			dirOnly := strings.HasSuffix(p, "/")
			p = strings.TrimSuffix(p, "/")
			if dirOnly && !dir {
				continue
			}
			if ok, _ := filepath.Match(p, filepath.Base(rel)); ok {
				return true
			}
			if ok, _ := filepath.Match(p, rel); ok {
				return true
			}
		}
		return false
	}, sc.Err()
}
