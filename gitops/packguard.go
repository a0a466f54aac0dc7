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

package gitops

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// packTrailerSize is the size of a pack's trailer: the checksum of all
// that comes before it.
const packTrailerSize = 20

// boundedStorage is the object store of a clone. go-git indexes a pack
// as it arrives, and once the pack is whole it inflates every object of
// it in memory to index it: a Git object of 3 GiB costs 3 GiB of memory
// before serin can look at a tree. boundedStorage reads the size of each
// object (and the size a delta makes) from its header as the pack
// arrives, and refuses the pack, before the indexer inflates anything,
// when one is larger than maxObject.
type boundedStorage struct {
	*filesystem.Storage
	// maxObject bounds an object of a fetched pack; 0 for no bound.
	maxObject int64

	mu      sync.Mutex
	refused error
}

// PackfileWriter implements storer.PackfileWriter.
func (s *boundedStorage) PackfileWriter() (io.WriteCloser, error) {
	w, err := s.Storage.PackfileWriter()
	if err != nil || s.maxObject <= 0 {
		return w, err
	}
	return newGuardedPackWriter(w, s.maxObject, s.refuse), nil
}

// refuse records why a pack was refused.
func (s *boundedStorage) refuse(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refused == nil {
		s.refused = err
	}
}

// refusal is why a pack was refused, if one was: go-git wraps what a pack
// writer returns in errors that do not unwrap.
func (s *boundedStorage) refusal() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// errObjectTooLarge is the refusal of a pack holding an object over the
// bound; it is an ErrFileTooLarge.
type errObjectTooLarge struct {
	// kind says what the object is: a blob, a tree, a delta.
	kind      string
	size, max int64
}

func (e errObjectTooLarge) Error() string {
	return fmt.Sprintf("%s: the repository holds a Git %s of %s, more than --gitops-max-file-size (%s); serin refuses it before it is read, since it would be inflated whole in memory: remove it from the branch's recent history (Git LFS keeps large files out of it), or raise the bound",
		ErrFileTooLarge, e.kind, humanBytes(e.size), humanBytes(e.max))
}

func (e errObjectTooLarge) Unwrap() error { return ErrFileTooLarge }

// guardedPackWriter passes a pack to go-git's pack writer while a checker
// reads the header of each object of it. It holds back the pack's
// trailer until the checker has seen the whole pack: go-git's indexer
// inflates objects only once it has read the trailer, so a refused pack
// is never inflated. A refused pack gets a damaged trailer instead, which
// makes the indexer stop.
type guardedPackWriter struct {
	next    io.WriteCloser
	pipe    *io.PipeWriter
	checked chan error
	refuse  func(error)
	// held is the end of what was written, not passed on yet.
	held    []byte
	written int64

	closeOnce sync.Once
	closeErr  error
}

func newGuardedPackWriter(next io.WriteCloser, maxObject int64, refuse func(error)) *guardedPackWriter {
	r, w := io.Pipe()
	g := &guardedPackWriter{next: next, pipe: w, checked: make(chan error, 1), refuse: refuse}
	go func() {
		err := checkPackObjects(r, maxObject)
		if err != nil {
			// Writes fail from now on, which stops the fetch.
			_ = r.CloseWithError(err)
		} else {
			// The trailer, and anything after it, pass.
			_, _ = io.Copy(io.Discard, r)
		}
		g.checked <- err
	}()
	return g
}

// Write implements io.Writer.
func (g *guardedPackWriter) Write(p []byte) (int, error) {
	if _, err := g.pipe.Write(p); err != nil {
		return 0, err
	}
	g.written += int64(len(p))
	g.held = append(g.held, p...)
	if n := len(g.held) - packTrailerSize; n > 0 {
		if _, err := g.next.Write(g.held[:n]); err != nil {
			return 0, err
		}
		g.held = append(g.held[:0], g.held[n:]...)
	}
	return len(p), nil
}

// Close implements io.Closer: it passes the trailer on once the checker
// accepted the pack. Otherwise the indexer gets a damaged trailer, so that
// it inflates nothing the checker did not see through, and Close returns
// the refusal of an object over the bound, or else what go-git's own
// indexer said of the pack (a stream cut short: a transient error, as
// without the guard). A second Close returns the first's error.
func (g *guardedPackWriter) Close() error {
	g.closeOnce.Do(func() { g.closeErr = g.close() })
	return g.closeErr
}

func (g *guardedPackWriter) close() error {
	_ = g.pipe.Close()
	err := <-g.checked
	if g.written == 0 {
		// An empty pack: go-git's writer removes it.
		return g.next.Close()
	}
	if err != nil {
		for i := range g.held {
			g.held[i] ^= 0xff
		}
		_, _ = g.next.Write(append(g.held, 0))
		indexErr := g.next.Close()
		var tooLarge errObjectTooLarge
		if errors.As(err, &tooLarge) {
			g.refuse(err)
			return err
		}
		if indexErr != nil {
			return indexErr
		}
		return err
	}
	if _, err := g.next.Write(g.held); err != nil {
		_ = g.next.Close()
		return err
	}
	return g.next.Close()
}

// checkPackObjects reads a pack's object headers and fails when one
// object, or the object a delta makes, is larger than maxObject. Objects
// are inflated only to read a delta's header, a few bytes, and stream
// through otherwise.
func checkPackObjects(r io.Reader, maxObject int64) error {
	s := packfile.NewScanner(r)
	_, count, err := s.Header()
	if err != nil {
		return fmt.Errorf("failed to read the pack's header: %w", err)
	}
	for i := uint32(0); i < count; i++ {
		h, err := s.NextObjectHeader()
		if err != nil {
			return fmt.Errorf("failed to read object %d of the pack: %w", i, err)
		}
		kind, size := h.Type.String(), h.Length
		if h.Type.IsDelta() {
			kind = "object stored as a delta"
		}
		if size <= maxObject && h.Type.IsDelta() {
			var d deltaSizes
			if _, _, err := s.NextObject(&d); err != nil {
				return fmt.Errorf("failed to read object %d of the pack: %w", i, err)
			}
			target, err := d.target()
			if err != nil {
				return fmt.Errorf("object %d of the pack: %w", i, err)
			}
			size = max(size, target)
		}
		if size > maxObject {
			return errObjectTooLarge{kind: kind, size: size, max: maxObject}
		}
	}
	return nil
}

// deltaSizes keeps the start of a delta's data, where the sizes of its
// base and of the object it makes are written, and drops the rest.
type deltaSizes struct {
	head []byte
}

// maxDeltaHeader is the most bytes two sizes of a delta's header take.
const maxDeltaHeader = 20

// Write implements io.Writer.
func (d *deltaSizes) Write(p []byte) (int, error) {
	if n := maxDeltaHeader - len(d.head); n > 0 {
		d.head = append(d.head, p[:min(n, len(p))]...)
	}
	return len(p), nil
}

// target is the size of the object the delta makes: the second of two
// little-endian base-128 numbers at its start.
func (d *deltaSizes) target() (int64, error) {
	rest := d.head
	var size int64
	for range 2 {
		size = 0
		shift := uint(0)
		for {
			if len(rest) == 0 || shift > 56 {
				return 0, errors.New("a delta with a damaged header")
			}
			b := rest[0]
			rest = rest[1:]
			size |= int64(b&0x7f) << shift
			shift += 7
			if b&0x80 == 0 {
				break
			}
		}
	}
	return size, nil
}
