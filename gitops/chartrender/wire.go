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
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The wire format. The parent writes, on the child's stdin, frames of a
// name and a content, each preceded by its length: the header (a JSON
// header), then for a render each chart file (its path in the chart, or
// archiveName for a packaged chart), then an empty frame that ends the
// request; for an index read, the index itself follows the header, to the
// end of stdin. The child writes one JSON answer on its stdout.
//
// A frame: uint16 length of the name, the name, uint64 length of the
// content, the content (big endian).

const (
	// headerName is the name of the request's first frame.
	headerName = "\x00header"
	// archiveName is the name of the frame of a packaged chart.
	archiveName = "\x00chart.tgz"
	// maxNameLength bounds a frame's name.
	maxNameLength = 4096
	// maxHeaderBytes bounds the header (the values are in it).
	maxHeaderBytes = 64 << 20
)

// Operations a request asks of the child.
const (
	opRender = "render"
	opIndex  = "index"
)

// header is the first frame of a request.
type header struct {
	Op string `json:"op"`
	// MaxChartBytes bounds the files and the unpacked subchart archives
	// together; MaxOutputBytes the rendered manifests, and the answer.
	MaxChartBytes  int64 `json:"maxChartBytes"`
	MaxOutputBytes int64 `json:"maxOutputBytes"`
	// For a render.
	ReleaseName string          `json:"releaseName,omitempty"`
	Namespace   string          `json:"namespace,omitempty"`
	Values      json.RawMessage `json:"values,omitempty"`
	// For an index read: the chart and version looked for.
	Chart   string `json:"chart,omitempty"`
	Version string `json:"version,omitempty"`
}

// answer is what the child writes on its stdout.
type answer struct {
	// Chart is the rendered chart's "name version".
	Chart   string   `json:"chart,omitempty"`
	Objects []Object `json:"objects,omitempty"`
	// Entry is what an index says of the chart version looked for.
	Entry *IndexEntry `json:"entry,omitempty"`
	// Failure says why the child did not render.
	Failure *failure `json:"failure,omitempty"`
}

// failure is a render that did not happen, as the child tells it.
type failure struct {
	// Bound is the name of the bound passed (boundChartBytes,
	// boundOutput), if one was.
	Bound   string `json:"bound,omitempty"`
	Stage   string `json:"stage"`
	Message string `json:"message"`
}

// Stages a failure happens at.
const (
	StageRequest = "request"
	StageLoad    = "load"
	StageRender  = "render"
	StageIndex   = "index"
)

// writeFrame writes one frame.
func writeFrame(w io.Writer, name string, content []byte) error {
	if len(name) > maxNameLength {
		return fmt.Errorf("a file name of %d bytes", len(name))
	}
	var b [10]byte
	binary.BigEndian.PutUint16(b[:2], uint16(len(name)))
	binary.BigEndian.PutUint64(b[2:], uint64(len(content)))
	if _, err := w.Write(b[:2]); err != nil {
		return err
	}
	if _, err := io.WriteString(w, name); err != nil {
		return err
	}
	if _, err := w.Write(b[2:]); err != nil {
		return err
	}
	_, err := w.Write(content)
	return err
}

// errEndOfRequest is the empty frame that ends a request.
var errEndOfRequest = errors.New("end of request")

// readFrameHead reads a frame's name and content length, and leaves its
// content to be read; errEndOfRequest for the last, empty frame.
func readFrameHead(r io.Reader) (string, uint64, error) {
	var n [2]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return "", 0, err
	}
	name := make([]byte, binary.BigEndian.Uint16(n[:]))
	if len(name) > maxNameLength {
		return "", 0, fmt.Errorf("a file name of %d bytes", len(name))
	}
	if _, err := io.ReadFull(r, name); err != nil {
		return "", 0, err
	}
	var size [8]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return "", 0, err
	}
	s := binary.BigEndian.Uint64(size[:])
	if len(name) == 0 && s == 0 {
		return "", 0, errEndOfRequest
	}
	return string(name), s, nil
}
