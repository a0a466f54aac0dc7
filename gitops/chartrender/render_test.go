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
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"github.com/serin-dev/serin/internal/testing/testutil"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMain makes the test binary the chart renderer when the tests start
// it as their child, as the agent's main does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == ChildArg {
		os.Exit(Main())
	}
	os.Exit(m.Run())
}

// chartFiles is a chart directory of the given templates.
func chartFiles(templates map[string]string) []File {
	files := map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: demo\nversion: 0.1.0\n",
		"values.yaml": "greeting: hi\n",
	}
	for name, t := range templates {
		files["templates/"+name] = t
	}
	var out []File
	for name, content := range files {
		out = append(out, File{Name: name, Size: int64(len(content)), Read: func() ([]byte, error) { return []byte(content), nil }})
	}
	return out
}

// peakRSS is the test process's peak resident memory (VmHWM), in bytes.
func peakRSS(t *testing.T) int64 {
	t.Helper()
	rss, err := testutil.PeakRSS(os.Getpid())
	if err != nil {
		t.Skip("no peak RSS to read:", err)
	}
	return rss
}

// A chart renders in the child: its objects, keyed, as canonical JSON.
func TestRender_Renders(t *testing.T) {
	r := New(Limits{})
	got, err := r.Render(t.Context(), Request{
		Files: chartFiles(map[string]string{
			"cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  greeting: {{ .Values.greeting }}\n",
			"NOTES.txt": "hello",
		}),
		Values: map[string]any{"greeting": "hello"}, ReleaseName: "web", Namespace: "apps",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Chart != "demo 0.1.0" || len(got.Objects) != 1 {
		t.Fatalf("rendered %+v", got)
	}
	o := got.Objects[0]
	want := `{"apiVersion":"v1","data":{"greeting":"hello"},"kind":"ConfigMap","metadata":{"name":"web"}}`
	if o.String() != "ConfigMap/apps/web" || string(o.JSON) != want {
		t.Errorf("object %s %s, want ConfigMap/apps/web %s", o, o.JSON, want)
	}
}

// A template that allocates 1.5 GB fails the child on its memory bound,
// and the agent (this process) does not grow.
func TestRender_MemoryBound(t *testing.T) {
	before := peakRSS(t)
	_, err := New(Limits{}).Render(t.Context(), Request{
		Files: chartFiles(map[string]string{"big.yaml": `{{ $_ := repeat 1500000000 "x" }}`}),
	})
	after := peakRSS(t)
	t.Logf("parent_peak_rss_before=%d parent_peak_rss_after=%d", before, after)
	want := "the chart's rendering went past its memory bound of 512 MiB (--chart-render-max-memory)"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
	if grown := after - before; grown > 200<<20 {
		t.Errorf("the parent's peak RSS grew by %d bytes", grown)
	}
}

// Files whose sizes pass the byte bound are refused before one is read.
func TestRender_ChartBytesCountedBeforeRead(t *testing.T) {
	var files []File
	for i := range 100 {
		files = append(files, File{Name: fmt.Sprintf("templates/f%d.yaml", i), Size: 15 << 20, Read: func() ([]byte, error) {
			t.Error("a file was read")
			return nil, errors.New("read")
		}})
	}
	_, err := New(Limits{}).Render(t.Context(), Request{Files: files})
	want := "the chart's rendering went past its size bound of 64 MiB (--chart-render-max-chart-size)"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

// tgz packages files as a gzipped tar.
func tgz(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, b := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A subchart archive that unpacks past the byte bound is refused, nested
// or not, in a directory or in a packaged chart, before Helm's loader
// reads it.
func TestRender_SubchartArchiveBomb(t *testing.T) {
	bomb := tgz(t, map[string][]byte{
		"sub/Chart.yaml":         []byte("apiVersion: v2\nname: sub\nversion: 0.1.0\n"),
		"sub/templates/big.yaml": make([]byte, 80<<20),
	})
	nested := tgz(t, map[string][]byte{
		"mid/Chart.yaml":        []byte("apiVersion: v2\nname: mid\nversion: 0.1.0\n"),
		"mid/charts/sub-1.tgz":  bomb,
		"mid/templates/cm.yaml": []byte(""),
	})
	packaged := tgz(t, map[string][]byte{
		"demo/Chart.yaml":        []byte("apiVersion: v2\nname: demo\nversion: 0.1.0\n"),
		"demo/charts/mid-1.tgz":  nested,
		"demo/templates/cm.yaml": []byte(""),
	})
	t.Logf("bomb=%d bytes nested=%d bytes packaged=%d bytes", len(bomb), len(nested), len(packaged))
	withArchive := func(name string, b []byte) []File {
		return append(chartFiles(nil), File{Name: name, Size: int64(len(b)), Read: func() ([]byte, error) { return b, nil }})
	}
	tests := map[string]Request{
		"a subchart archive":             {Files: withArchive("charts/sub-0.1.0.tgz", bomb)},
		"a subchart archive in another":  {Files: withArchive("charts/mid-0.1.0.tgz", nested)},
		"a packaged chart's subcharts":   {Archive: packaged},
		"a subchart's subchart archives": {Files: withArchive("charts/mid/charts/sub-0.1.0.tgz", bomb)},
	}
	for name, req := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := New(Limits{}).Render(t.Context(), req)
			want := "the chart's rendering went past its size bound of 64 MiB (--chart-render-max-chart-size)"
			if err == nil || err.Error() != want {
				t.Fatalf("err = %v, want %q", err, want)
			}
		})
	}
}

// A template that loops for ever is killed at the wall-clock bound, or at
// the CPU bound, whichever comes first: the render returns within it.
func TestRender_LoopKilled(t *testing.T) {
	loop := map[string]string{"loop.yaml": `{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}`}
	tests := map[string]struct {
		limits Limits
		want   string
	}{
		"wall clock": {limits: Limits{Timeout: 2 * time.Second, MaxCPU: time.Minute},
			want: "the chart's rendering went past its wall-clock bound of 2s (--chart-render-timeout)"},
		"CPU time": {limits: Limits{Timeout: time.Minute, MaxCPU: time.Second},
			want: "the chart's rendering went past its CPU time bound of 1s (--chart-render-max-cpu-time)"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := New(tt.limits).Render(t.Context(), Request{Files: chartFiles(loop)})
			t.Logf("child_killed_after=%s", time.Since(start).Round(time.Millisecond))
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// Rendered manifests past the output bound are refused.
func TestRender_OutputBound(t *testing.T) {
	_, err := New(Limits{MaxOutputBytes: 1 << 20}).Render(t.Context(), Request{
		Files: chartFiles(map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  x: {{ repeat 2000000 \"x\" }}\n"}),
	})
	want := "the chart's rendering went past its output bound of 1 MiB (--chart-render-max-output)"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

// A template's failure is a *ChartError naming the chart.
func TestRender_ChartError(t *testing.T) {
	_, err := New(Limits{}).Render(t.Context(), Request{Files: chartFiles(map[string]string{"f.yaml": `{{ fail "no way" }}`})})
	var ce *ChartError
	if !errors.As(err, &ce) || ce.Stage != StageRender || ce.Chart != "demo 0.1.0" || !strings.Contains(ce.Message, "no way") {
		t.Fatalf("err = %#v", err)
	}
}

// Renders wait for one of MaxConcurrent children; a context that ends
// meanwhile ends the wait.
func TestRender_WaitsForASlot(t *testing.T) {
	r := New(Limits{MaxConcurrent: 1})
	r.slots <- struct{}{}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := r.Render(ctx, Request{Files: chartFiles(nil)})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "--chart-render-max-concurrent 1") {
		t.Fatalf("err = %v", err)
	}
}

// An index is read in the child: the entry of a version, or none.
func TestReadIndex(t *testing.T) {
	index := "apiVersion: v1\nentries:\n  podinfo:\n  - {version: 0.1.0, digest: abc, urls: [podinfo-0.1.0.tgz]}\n"
	r := New(Limits{})
	got, found, err := r.ReadIndex(t.Context(), strings.NewReader(index), 1<<20, "podinfo", "v0.1.0")
	if err != nil || !found || got != (IndexEntry{URL: "podinfo-0.1.0.tgz", Digest: "abc"}) {
		t.Fatalf("ReadIndex = %+v, %v, %v", got, found, err)
	}
	if _, found, err := r.ReadIndex(t.Context(), strings.NewReader(index), 1<<20, "podinfo", "0.2.0"); err != nil || found {
		t.Fatalf("0.2.0: found %v, %v", found, err)
	}
	_, _, err = r.ReadIndex(t.Context(), strings.NewReader(index), 10, "podinfo", "0.1.0")
	if err == nil || !strings.Contains(err.Error(), "the index is larger than the limit") {
		t.Fatalf("err = %v", err)
	}
}

// A render leaves its job the time to fall back: its wall-clock bound is
// the flag's, or what the job has left less a reserve.
func TestTimeoutWithin(t *testing.T) {
	r := New(Limits{Timeout: 30 * time.Second})
	for name, tc := range map[string]struct {
		left time.Duration // 0: no deadline
		want time.Duration
	}{
		"no job deadline":          {want: 30 * time.Second},
		"a job with time to spare": {left: 2 * time.Minute, want: 30 * time.Second},
		"a job ending sooner":      {left: 35 * time.Second, want: 20 * time.Second},
		"a job almost at its end":  {left: 10 * time.Second, want: time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			if tc.left > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.left)
				defer cancel()
			}
			if got := r.timeoutWithin(ctx); got > tc.want || got < tc.want-time.Second {
				t.Errorf("timeoutWithin = %s, want %s", got, tc.want)
			}
		})
	}
}
