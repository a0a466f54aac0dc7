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

package chartrender

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	v2util "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Main is the child: the agent's main calls it, before anything else,
// when os.Args[1] is ChildArg, and exits with what it returns. Its
// arguments are its memory bound in bytes and its CPU bound in seconds;
// it bounds itself with them first, then reads one request on stdin and
// writes its answer on stdout.
func Main() int {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: "+ChildArg+" MEMORY-BYTES CPU-SECONDS")
		return 2
	}
	memory, err1 := strconv.ParseInt(os.Args[2], 10, 64)
	cpu, err2 := strconv.ParseUint(os.Args[3], 10, 64)
	if err := errors.Join(err1, err2); err != nil || memory <= 0 || cpu == 0 {
		fmt.Fprintln(os.Stderr, "invalid bounds:", os.Args[2], os.Args[3])
		return 2
	}
	if err := bindSelf(memory, cpu); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ans := serve(bufio.NewReaderSize(os.Stdin, 64<<10))
	if _, err := os.Stdout.Write(mustJSON(ans)); err != nil {
		return 1
	}
	return 0
}

// serve reads a request and answers it.
func serve(in io.Reader) *answer {
	name, size, err := readFrameHead(in)
	if err != nil || name != headerName || size > maxHeaderBytes {
		return failed(StageRequest, "no request header")
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(in, b); err != nil {
		return failed(StageRequest, "reading the request header: "+err.Error())
	}
	var h header
	if err := json.Unmarshal(b, &h); err != nil {
		return failed(StageRequest, "reading the request header: "+err.Error())
	}
	switch h.Op {
	case opRender:
		return renderRequest(in, &h)
	case opIndex:
		return readIndex(in, &h)
	}
	return failed(StageRequest, "unknown operation "+h.Op)
}

func failed(stage, message string) *answer {
	return &answer{Failure: &failure{Stage: stage, Message: message}}
}

func pastBound(bound string) *answer {
	return &answer{Failure: &failure{Bound: bound, Stage: StageRequest}}
}

// errBudget is content past the chart's byte bound.
var errBudget = errors.New("past the chart's byte bound")

// renderRequest reads a chart within the byte bound, loads it and
// renders it.
func renderRequest(in io.Reader, h *header) *answer {
	files, tgz, err := readChart(in, h.MaxChartBytes)
	if errors.Is(err, errBudget) {
		return pastBound(boundChartBytes)
	}
	if err != nil {
		return failed(StageRequest, err.Error())
	}
	// Helm's own bounds, for what it unpacks: every archive was counted
	// within the budget above, none can be larger than it.
	archive.MaxDecompressedChartSize = h.MaxChartBytes
	archive.MaxDecompressedFileSize = min(archive.MaxDecompressedFileSize, h.MaxChartBytes)
	var ch *chart.Chart
	switch {
	case tgz != nil:
		ch, err = loader.LoadArchive(bytes.NewReader(tgz))
	case len(files) == 0:
		err = errors.New("no files")
	default:
		ch, err = loader.LoadFiles(files)
	}
	if err != nil {
		return failed(StageLoad, err.Error())
	}
	ans := &answer{Chart: ch.Name() + " " + ch.Metadata.Version}
	if err := vendoredDependencies(ch); err != nil {
		ans.Failure = &failure{Stage: StageLoad, Message: err.Error()}
		return ans
	}
	values := map[string]any{}
	if len(h.Values) > 0 && string(h.Values) != "null" {
		if err := json.Unmarshal(h.Values, &values); err != nil {
			return failed(StageRequest, "reading the values: "+err.Error())
		}
	}
	objects, err := renderChart(ch, values, h.ReleaseName, h.Namespace, h.MaxOutputBytes)
	if errors.Is(err, errOutput) {
		return pastBound(boundOutput)
	}
	if err != nil {
		ans.Failure = &failure{Stage: StageRender, Message: err.Error()}
		return ans
	}
	ans.Objects = objects
	return ans
}

// readChart reads a request's files, or its packaged chart, counting their
// bytes and those of every subchart archive unpacked against budget
// before any is kept whole.
func readChart(in io.Reader, budget int64) ([]*archive.BufferedFile, []byte, error) {
	var files []*archive.BufferedFile
	var tgz []byte
	for {
		name, size, err := readFrameHead(in)
		if errors.Is(err, errEndOfRequest) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("reading the chart: %w", err)
		}
		if size > uint64(budget) {
			return nil, nil, errBudget
		}
		budget -= int64(size)
		b := make([]byte, size)
		if _, err := io.ReadFull(in, b); err != nil {
			return nil, nil, fmt.Errorf("reading the chart: %w", err)
		}
		if name == archiveName {
			tgz = b
			continue
		}
		files = append(files, &archive.BufferedFile{Name: name, Data: b})
	}
	if tgz != nil {
		n, err := unpackedSize(bytes.NewReader(tgz), budget, 0)
		if err != nil {
			return nil, nil, err
		}
		budget -= n
	}
	for _, f := range files {
		if !isSubchartArchive(f.Name) {
			continue
		}
		n, err := unpackedSize(bytes.NewReader(f.Data), budget, 0)
		if err != nil {
			return nil, nil, err
		}
		budget -= n
	}
	return files, tgz, nil
}

// isSubchartArchive reports whether a chart's file is a packaged subchart,
// which Helm's loader unpacks: charts/*.tgz, at any depth.
func isSubchartArchive(name string) bool {
	dir, file := path.Split(name)
	return (dir == "charts/" || strings.HasSuffix(dir, "/charts/")) && (strings.HasSuffix(file, ".tgz") || strings.HasSuffix(file, ".tar.gz"))
}

// maxArchiveDepth bounds subcharts packaged in subcharts.
const maxArchiveDepth = 8

// unpackedSize streams a gzipped tar and counts the bytes of its files,
// and of the archives of subcharts in it, unpacked in turn, up to budget
// (errBudget past it): nothing is kept. A stream that is not a gzipped tar
// counts nothing: Helm's loader will say what is wrong with it.
func unpackedSize(r io.Reader, budget int64, depth int) (int64, error) {
	if depth > maxArchiveDepth {
		return 0, fmt.Errorf("subchart archives nested more than %d deep", maxArchiveDepth)
	}
	gz, err := gzip.NewReader(r)
	if err != nil {
		return 0, nil
	}
	defer func() { _ = gz.Close() }()
	tr := tar.NewReader(gz)
	var total int64
	for {
		hd, err := tr.Next()
		if err != nil {
			// io.EOF, or a broken archive for the loader to report.
			return total, nil
		}
		if hd.Typeflag != tar.TypeReg {
			continue
		}
		entry := &countingReader{r: io.LimitReader(tr, budget-total+1)}
		if isSubchartArchive(hd.Name) {
			n, err := unpackedSize(entry, budget-total, depth+1)
			if err != nil {
				return 0, err
			}
			total += n
		}
		if _, err := io.Copy(io.Discard, entry); err != nil {
			return total, nil
		}
		total += entry.n
		if total > budget {
			return 0, errBudget
		}
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// vendoredDependencies checks that the dependencies a chart declares are
// in its charts/ directory: serin does not download them.
func vendoredDependencies(ch *chart.Chart) error {
	have := map[string]bool{}
	for _, d := range ch.Dependencies() {
		have[d.Name()] = true
	}
	for _, d := range ch.Metadata.Dependencies {
		if !have[d.Name] {
			return fmt.Errorf("dependency %s of chart %s is not in its charts/ directory", d.Name, ch.Name())
		}
	}
	return nil
}

// errOutput is a rendering past the output bound.
var errOutput = errors.New("past the output bound")

// renderChart renders a chart's templates with Helm's engine, as a client
// without a cluster does (lookup finds nothing; the capabilities are
// Helm's defaults), and parses the manifests, at most maxOutput bytes of
// them: each object as canonical JSON, keyed by kind, namespace (the
// release's where the template sets none) and name. NOTES.txt and CRDs
// (crds/, which Helm never upgrades) are not objects of the rendering.
func renderChart(ch *chart.Chart, values map[string]any, releaseName, namespace string, maxOutput int64) ([]Object, error) {
	if err := v2util.ProcessDependencies(ch, values); err != nil {
		return nil, err
	}
	opts := common.ReleaseOptions{Name: releaseName, Namespace: namespace, Revision: 1, IsInstall: true}
	vals, err := chartutil.ToRenderValues(ch, values, opts, common.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	manifests, err := engine.Render(ch, vals)
	if err != nil {
		return nil, err
	}
	var size int64
	for _, m := range manifests {
		size += int64(len(m))
	}
	if size > maxOutput {
		return nil, errOutput
	}
	seen := map[objectKey]bool{}
	var objects []Object
	for _, name := range slices.Sorted(maps.Keys(manifests)) {
		if strings.HasSuffix(name, "NOTES.txt") {
			continue
		}
		if objects, err = parseManifests(name, manifests[name], namespace, objects, seen); err != nil {
			return nil, err
		}
	}
	return objects, nil
}

// parseManifests appends the objects of a rendered template to objects;
// seen holds the keys already rendered.
func parseManifests(name, manifest, namespace string, objects []Object, seen map[objectKey]bool) ([]Object, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	for {
		var obj map[string]any
		if err := decoder.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return objects, nil
			}
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if len(obj) == 0 {
			continue
		}
		meta, _ := obj["metadata"].(map[string]any)
		k := Object{}
		k.APIVersion, _ = obj["apiVersion"].(string)
		k.Kind, _ = obj["kind"].(string)
		k.Name, _ = meta["name"].(string)
		k.Namespace, _ = meta["namespace"].(string)
		if k.Namespace == "" {
			k.Namespace = namespace
		}
		key := objectKey{k.APIVersion, k.Kind, k.Namespace, k.Name}
		if seen[key] {
			return nil, fmt.Errorf("%s: %s rendered twice", name, k.String())
		}
		seen[key] = true
		b, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		k.JSON = b
		objects = append(objects, k)
	}
}

// objectKey is an Object without its JSON.
type objectKey struct{ apiVersion, kind, namespace, name string }

// String is the object's key as serin prints it: Kind/namespace/name.
func (o Object) String() string {
	if o.Namespace == "" {
		return o.Kind + "/" + o.Name
	}
	return o.Kind + "/" + o.Namespace + "/" + o.Name
}

// indexFile is what serin reads of a repository's index.yaml.
type indexFile struct {
	Entries map[string][]struct {
		Version string   `json:"version"`
		Digest  string   `json:"digest"`
		URLs    []string `json:"urls"`
	} `json:"entries"`
}

// readIndex reads an index from in, at most h.MaxChartBytes of it, and
// answers where it puts h.Chart at h.Version. The index is parsed here, in
// the child, because a YAML parse builds generic trees several times the
// document's size: the agent would pay for them, the child pays within
// its memory bound.
func readIndex(in io.Reader, h *header) *answer {
	b, err := io.ReadAll(io.LimitReader(in, h.MaxChartBytes+1))
	if err != nil {
		return failed(StageIndex, "reading the index: "+err.Error())
	}
	if int64(len(b)) > h.MaxChartBytes {
		return failed(StageIndex, fmt.Sprintf("the index is larger than the limit of %s", humanBytes(h.MaxChartBytes)))
	}
	var index indexFile
	if err := yaml.Unmarshal(b, &index); err != nil {
		return failed(StageIndex, "the index does not parse: "+err.Error())
	}
	for _, e := range index.Entries[h.Chart] {
		if e.Version != h.Version && e.Version != strings.TrimPrefix(h.Version, "v") {
			continue
		}
		if len(e.URLs) == 0 {
			return failed(StageIndex, fmt.Sprintf("chart %s %s has no URL in the index", h.Chart, h.Version))
		}
		return &answer{Entry: &IndexEntry{URL: e.URLs[0], Digest: e.Digest}}
	}
	return &answer{}
}
