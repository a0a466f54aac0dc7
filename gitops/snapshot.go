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
	"maps"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// maxTreeBytes bounds the repository content loaded to render one commit.
const maxTreeBytes = 128 << 20

// DefaultMaxFileSize bounds the size of one file a revert reads unless
// WithMaxFileSize says otherwise: a file's size is known from its blob
// header before a byte of it is inflated, and a larger one is never read.
const DefaultMaxFileSize int64 = 16 << 20

// ErrFileTooLarge means a revert needs a file larger than the bound on the
// files it reads (--gitops-max-file-size); the file is never read.
var ErrFileTooLarge = errors.New("a file is larger than the revert reads")

// snapshot is the content of a repository at one commit: the commit's tree
// in the clone, read as it is needed, and changes on top of it
// (slash-separated paths relative to the root; nil content deletes).
// Symlinks and submodules are left out.
type snapshot struct {
	tree    *object.Tree // nil: the changes are all there is
	changes map[string][]byte
	// maxFile bounds the size of one file read from the tree; 0 is
	// DefaultMaxFileSize.
	maxFile int64
}

// snapshotOf returns the snapshot of a commit, whose files over maxFile
// bytes (0: DefaultMaxFileSize) are never read; it reads no file yet.
func snapshotOf(c *object.Commit, maxFile int64) (snapshot, error) {
	tree, err := c.Tree()
	if err != nil {
		return snapshot{}, fmt.Errorf("failed to read the tree of %s: %w", c.Hash, err)
	}
	return snapshot{tree: tree, maxFile: maxFile}, nil
}

// humanBytes writes a size as a person reads it: 3.0 GiB, 16.0 MiB, 64 KiB.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", (n+1023)>>10)
}

// fileBound is the largest file the snapshot reads.
func (s snapshot) fileBound() int64 {
	if s.maxFile > 0 {
		return s.maxFile
	}
	return DefaultMaxFileSize
}

// tooLarge is the error of a file over the bound, which is not read.
func (s snapshot) tooLarge(p string, size int64) error {
	return fmt.Errorf("%w: %s takes %s, more than --gitops-max-file-size (%s); a revert never reads it: move it out of the directories the Kustomization renders, or raise the bound",
		ErrFileTooLarge, p, humanBytes(size), humanBytes(s.fileBound()))
}

// with returns s with changes applied on top of its own.
func (s snapshot) with(changes map[string][]byte) snapshot {
	out := snapshot{tree: s.tree, changes: maps.Clone(s.changes), maxFile: s.maxFile}
	if out.changes == nil {
		out.changes = map[string][]byte{}
	}
	maps.Copy(out.changes, changes)
	return out
}

// file returns the content of a file, nil when there is none.
func (s snapshot) file(p string) ([]byte, error) {
	b, e, changed := s.lookup(p)
	if changed || e == nil {
		return b, nil
	}
	return s.readEntry(s.tree, p, e)
}

// lookup finds p: its content among the changes (changed), else its
// regular file's entry in the tree (nil when there is none).
func (s snapshot) lookup(p string) (b []byte, e *object.TreeEntry, changed bool) {
	if b, ok := s.changes[p]; ok {
		return b, nil, true
	}
	if s.tree == nil {
		return nil, nil, false
	}
	e, err := s.tree.FindEntry(p)
	if err != nil || (e.Mode != filemode.Regular && e.Mode != filemode.Executable) {
		return nil, nil, false
	}
	return nil, e, false
}

func (s snapshot) readEntry(tree *object.Tree, p string, e *object.TreeEntry) ([]byte, error) {
	f, err := tree.TreeEntryFile(e)
	if err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", p, err)
	}
	if f.Size > s.fileBound() {
		return nil, s.tooLarge(p, f.Size)
	}
	r, err := f.Reader()
	if err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", p, err)
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, s.fileBound()+1))
	if err == nil && int64(len(b)) > s.fileBound() {
		err = s.tooLarge(p, int64(len(b)))
	}
	if err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", p, err)
	}
	return b, nil
}

// snapshotFS is the filesystem kustomize renders a snapshot from: kyaml's
// in-memory filesystem, into which a directory of the snapshot is read the
// first time anything in or under it is looked at. A render reads the
// directories it uses (its path, its bases), not the whole repository, and
// nothing outside the snapshot: there is no disk behind it.
type snapshotFS struct {
	filesys.FileSystem
	snap   snapshot
	loaded map[string]bool
	bytes  int64
	// oversized are the files of the loaded directories over the
	// snapshot's bound, by path: listed, never read; reading one fails.
	oversized map[string]int64
	// err is the first failure to read the snapshot; the methods that
	// return no error (Exists, IsDir) leave it here for render.
	err error
}

func newSnapshotFS(s snapshot) *snapshotFS {
	return &snapshotFS{FileSystem: filesys.MakeFsInMemory(), snap: s, loaded: map[string]bool{}, oversized: map[string]int64{}}
}

// loadParents reads the directories from the root down to the one that
// holds p.
func (fs *snapshotFS) loadParents(p string) {
	p = path.Clean("/" + filepath.ToSlash(p))
	var dirs []string
	for d := path.Dir(p); ; d = path.Dir(d) {
		dirs = append(dirs, d)
		if d == "/" {
			break
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		fs.loadDir(dirs[i])
	}
}

// loadWith reads the directories down to p, and p itself.
func (fs *snapshotFS) loadWith(p string) {
	fs.loadParents(p)
	fs.loadDir(path.Clean("/" + filepath.ToSlash(p)))
}

// loadTree reads p and every directory under it.
func (fs *snapshotFS) loadTree(p string) {
	fs.loadWith(p)
	entries, err := fs.FileSystem.ReadDir(p)
	if err != nil {
		return
	}
	for _, e := range entries {
		if sub := path.Join(p, e); fs.FileSystem.IsDir(sub) {
			fs.loadTree(sub)
		}
	}
}

// loadDir reads the files of one directory (absolute, cleaned) of the
// snapshot, and makes its subdirectories, once.
func (fs *snapshotFS) loadDir(dir string) {
	if fs.loaded[dir] || fs.err != nil {
		return
	}
	fs.loaded[dir] = true
	rel := strings.TrimPrefix(dir, "/")
	if err := fs.loadTreeDir(rel); err != nil {
		fs.err = err
		return
	}
	prefix := rel + "/"
	if rel == "" {
		prefix = ""
	}
	for p, b := range fs.snap.changes {
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		if sub, _, nested := strings.Cut(rest, "/"); nested {
			if b != nil {
				fs.setErr(fs.FileSystem.MkdirAll(path.Join(dir, sub)))
			}
		} else if b == nil {
			_ = fs.FileSystem.RemoveAll(path.Join(dir, rest))
		} else {
			fs.write(path.Join(dir, rest), b)
		}
	}
}

// loadTreeDir reads the directory rel of the snapshot's tree.
func (fs *snapshotFS) loadTreeDir(rel string) error {
	tree := fs.snap.tree
	if tree == nil {
		return nil
	}
	if rel != "" {
		var err error
		if tree, err = tree.Tree(rel); errors.Is(err, object.ErrDirectoryNotFound) {
			return nil
		} else if err != nil {
			return fmt.Errorf("failed to read directory %s: %w", rel, err)
		}
	}
	for i := range tree.Entries {
		e := &tree.Entries[i]
		p := path.Join("/", rel, e.Name)
		switch e.Mode {
		case filemode.Dir:
			if err := fs.FileSystem.MkdirAll(p); err != nil {
				return err
			}
		case filemode.Regular, filemode.Executable:
			// The size is the blob header's: nothing is inflated to
			// learn it. A file over the bound is only listed, and the
			// tree's budget is checked before a byte is read.
			size, err := tree.Size(e.Name)
			if err != nil {
				return fmt.Errorf("failed to read %s: %w", p[1:], err)
			}
			if size > fs.snap.fileBound() {
				fs.oversized[p] = size
				continue
			}
			if fs.bytes+size > maxTreeBytes {
				return fmt.Errorf("the files read to render take more than %d MiB", maxTreeBytes>>20)
			}
			b, err := fs.snap.readEntry(tree, p[1:], e)
			if err != nil {
				return err
			}
			fs.write(p, b)
		}
	}
	return fs.err
}

func (fs *snapshotFS) write(p string, b []byte) {
	if fs.bytes += int64(len(b)); fs.bytes > maxTreeBytes {
		fs.setErr(fmt.Errorf("the files read to render take more than %d MiB", maxTreeBytes>>20))
		return
	}
	fs.setErr(fs.FileSystem.WriteFile(p, b))
}

func (fs *snapshotFS) setErr(err error) {
	if fs.err == nil {
		fs.err = err
	}
}

// The filesystem's methods read what they look at first.

func (fs *snapshotFS) Create(p string) (filesys.File, error) {
	fs.loadParents(p)
	return fs.FileSystem.Create(p)
}

func (fs *snapshotFS) Mkdir(p string) error {
	fs.loadParents(p)
	return fs.FileSystem.Mkdir(p)
}

func (fs *snapshotFS) MkdirAll(p string) error {
	fs.loadWith(p)
	return fs.FileSystem.MkdirAll(p)
}

func (fs *snapshotFS) RemoveAll(p string) error {
	fs.loadTree(p)
	return fs.FileSystem.RemoveAll(p)
}

func (fs *snapshotFS) Open(p string) (filesys.File, error) {
	fs.loadParents(p)
	if err := fs.refuseOversized(p); err != nil {
		return nil, err
	}
	return fs.FileSystem.Open(p)
}

// refuseOversized is the error of reading a file over the bound.
func (fs *snapshotFS) refuseOversized(p string) error {
	p = path.Clean("/" + filepath.ToSlash(p))
	if size, ok := fs.oversized[p]; ok {
		err := fs.snap.tooLarge(p[1:], size)
		fs.setErr(err)
		return err
	}
	return nil
}

func (fs *snapshotFS) IsDir(p string) bool {
	fs.loadParents(p)
	return fs.FileSystem.IsDir(p)
}

func (fs *snapshotFS) ReadDir(p string) ([]string, error) {
	fs.loadWith(p)
	return fs.FileSystem.ReadDir(p)
}

func (fs *snapshotFS) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	fs.loadParents(p)
	return fs.FileSystem.CleanedAbs(p)
}

func (fs *snapshotFS) Exists(p string) bool {
	fs.loadParents(p)
	_, oversized := fs.oversized[path.Clean("/"+filepath.ToSlash(p))]
	return oversized || fs.FileSystem.Exists(p)
}

func (fs *snapshotFS) Glob(pattern string) ([]string, error) {
	fs.loadTree("/") // a pattern may match anywhere
	return fs.FileSystem.Glob(pattern)
}

func (fs *snapshotFS) ReadFile(p string) ([]byte, error) {
	fs.loadParents(p)
	if err := fs.refuseOversized(p); err != nil {
		return nil, err
	}
	return fs.FileSystem.ReadFile(p)
}

func (fs *snapshotFS) WriteFile(p string, data []byte) error {
	fs.loadParents(p)
	return fs.FileSystem.WriteFile(p, data)
}

func (fs *snapshotFS) Walk(p string, walkFn filepath.WalkFunc) error {
	fs.loadTree(p)
	return fs.FileSystem.Walk(p, walkFn)
}
