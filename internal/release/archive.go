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
	"fmt"
	"io/fs"
	"time"
)

// archiveFile is a file of an archive.
type archiveFile struct {
	// Name is its path in the archive.
	Name string
	// Data is its content; LinkTo, when set, makes it a hard link to the
	// file of that name instead (kubectl-serin to serin).
	Data   []byte
	LinkTo string
	// Mode is its permission bits.
	Mode int64
}

// tarGz writes files, in their order, into a gzip'ed tar whose bytes depend
// only on them and modTime: owner root, no user or host names, no gzip
// time stamp. Running a release twice yields the same checksums.
func tarGz(files []archiveFile, modTime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	for _, f := range files {
		hdr := &tar.Header{
			Name:    f.Name,
			Mode:    f.Mode,
			ModTime: modTime.UTC().Truncate(time.Second),
			Format:  tar.FormatPAX,
		}
		if f.LinkTo != "" {
			hdr.Typeflag, hdr.Linkname = tar.TypeLink, f.LinkTo
		} else {
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(f.Data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		if f.LinkTo == "" {
			if _, err := tw.Write(f.Data); err != nil {
				return nil, fmt.Errorf("%s: %w", f.Name, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// zipArchive writes files, in their order, into a zip whose bytes depend
// only on them and modTime, as tarGz does. A zip has no hard links: a link
// is a copy of the file it names (kubectl-serin.exe of serin.exe).
func zipArchive(files []archiveFile, modTime time.Time) ([]byte, error) {
	data := map[string][]byte{}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		content := f.Data
		if f.LinkTo != "" {
			content = data[f.LinkTo]
		}
		data[f.Name] = content
		hdr := &zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: modTime.UTC().Truncate(time.Second)}
		hdr.SetMode(fs.FileMode(f.Mode))
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		if _, err := w.Write(content); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
