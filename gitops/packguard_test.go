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
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// A repository holding a file over --gitops-max-file-size anywhere in the
// fetched history is refused while the pack arrives, before go-git's
// indexer inflates the file whole, with a message saying what to do; the
// same repository under a bound above the file is reverted.
func TestGitReverter_RefusesAnObjectOverTheBoundBeforeItIsInflated(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs the git CLI (git fast-import) to make the repository")
	}
	f := newLargeFileFixture(t, 3)
	dir := t.TempDir()
	_, err := f.reverter(WithCloneDir(dir), WithMaxFileSize(1<<20)).Revert(t.Context(), f.request(v1alpha1.PullRequestRevert))
	if !errors.Is(err, ErrFileTooLarge) {
		t.Fatalf("revert with a 1 MiB bound of a repository holding a 3 MiB file: %v, want ErrFileTooLarge", err)
	}
	if want := "holds a Git blob of 3.0 MiB, more than --gitops-max-file-size (1.0 MiB)"; !strings.Contains(err.Error(), want) {
		t.Errorf("refusal: %q, want it to say %q", err, want)
	}
	if IsTransient(err) {
		t.Errorf("refusal %q is transient: it would be retried forever", err)
	}
	if after, _ := os.ReadDir(dir); len(after) != 0 {
		t.Errorf("clone directory after the refusal: %v, want it empty", after)
	}
	if len(f.host.prs) != 0 {
		t.Errorf("%d pull requests opened", len(f.host.prs))
	}

	res, err := f.reverter(WithMaxFileSize(4<<20)).Revert(t.Context(), f.request(v1alpha1.PullRequestRevert))
	if err != nil || res.State != StateOpened {
		t.Errorf("revert with a 4 MiB bound: %v, %+v; want it opened", err, res)
	}
}

// packEntry writes one object of a version 2 pack: its type and size,
// the distance to its base for an offset delta, then its zlib data.
func packEntry(t *testing.T, typ byte, data []byte, baseDistance int) []byte {
	t.Helper()
	var out []byte
	size := len(data)
	b := typ<<4 | byte(size&0x0f)
	size >>= 4
	for size > 0 {
		out = append(out, b|0x80)
		b = byte(size & 0x7f)
		size >>= 7
	}
	out = append(out, b)
	if baseDistance > 0 {
		// git's offset encoding: base-128, most significant first, each
		// continued byte meaning one more.
		n := baseDistance
		enc := []byte{byte(n & 0x7f)}
		for n >>= 7; n > 0; n >>= 7 {
			n--
			enc = append([]byte{byte(0x80 | n&0x7f)}, enc...)
		}
		out = append(out, enc...)
	}
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return append(out, z.Bytes()...)
}

// pack writes a version 2 pack of entries, with a trailer of zeros (the
// checker does not read it).
func pack(entries ...[]byte) []byte {
	out := []byte("PACK")
	out = binary.BigEndian.AppendUint32(out, 2)
	out = binary.BigEndian.AppendUint32(out, uint32(len(entries)))
	for _, e := range entries {
		out = append(out, e...)
	}
	return append(out, make([]byte, packTrailerSize)...)
}

// uvarint writes n as a delta header does.
func uvarint(n uint64) []byte {
	return binary.AppendUvarint(nil, n)
}

// A delta of a few bytes can make an object of any size: the checker reads
// the size of what it makes from its header, and refuses it as it would
// the object itself.
func TestCheckPackObjects(t *testing.T) {
	const (
		blob     = 3
		ofsDelta = 6
	)
	base := packEntry(t, blob, []byte("hello"), 0)
	deltaOf := func(target uint64) []byte {
		// Source size 5, target size, one copy of the base's 5 bytes.
		data := append(append(uvarint(5), uvarint(target)...), 0x90, 5)
		return packEntry(t, ofsDelta, data, len(base))
	}
	for _, tc := range []struct {
		name string
		pack []byte
		want string // "" when accepted
	}{
		{name: "small objects", pack: pack(base, deltaOf(5))},
		{name: "an object over the bound", pack: pack(packEntry(t, blob, make([]byte, 2048), 0)), want: "Git blob of 2 KiB, more than --gitops-max-file-size (1 KiB)"},
		{name: "a delta that makes an object over the bound", pack: pack(base, deltaOf(1<<30)), want: "Git object stored as a delta of 1.0 GiB"},
		{name: "a delta with a damaged header", pack: pack(base, packEntry(t, ofsDelta, []byte{0x85}, len(base))), want: "a delta with a damaged header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkPackObjects(bytes.NewReader(tc.pack), 1024)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("checkPackObjects: %v, want the pack accepted", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("checkPackObjects: %v, want %q", err, tc.want)
			}
		})
	}
}

// cutReader gives the first n bytes of data, then err: a connection cut
// in the middle of a pack.
type cutReader struct {
	data []byte
	err  error
}

func (r *cutReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// A pack cut short by the network is no refusal: the fetch fails with the
// network's error, transient, and the revert is retried, as without the
// guard; the guard's own verdict stays for objects over the bound.
func TestGuardedPackWriter_CutPackIsNoRefusal(t *testing.T) {
	const blob = 3
	whole := pack(packEntry(t, blob, bytes.Repeat([]byte("serin "), 4096), 0), packEntry(t, blob, []byte("hello"), 0))
	sum := sha1.Sum(whole[:len(whole)-packTrailerSize])
	copy(whole[len(whole)-packTrailerSize:], sum[:])
	for _, cut := range []error{syscall.ECONNRESET, io.ErrUnexpectedEOF} {
		s := newCloneStorage(osfs.New(t.TempDir()), 1<<20)
		err := packfile.WritePackfileToObjectStorage(s, &cutReader{data: whole[:len(whole)/2], err: cut})
		if !errors.Is(err, cut) || !IsTransient(err) {
			t.Errorf("a pack cut by %v: %v, want that error, transient", cut, err)
		}
		if refused := s.refusal(); refused != nil {
			t.Errorf("a pack cut by %v was refused: %v", cut, refused)
		}
	}
	w, err := newCloneStorage(osfs.New(t.TempDir()), 1<<20).PackfileWriter()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(whole); err != nil {
		t.Fatal(err)
	}
	first, second := w.Close(), w.Close()
	if first != nil || second != nil {
		t.Errorf("closing a whole pack twice: %v, %v", first, second)
	}
}
