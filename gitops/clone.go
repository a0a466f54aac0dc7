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
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// DefaultMaxCloneSize bounds the disk a clone takes unless
// WithMaxCloneSize says otherwise.
const DefaultMaxCloneSize int64 = 512 << 20

// DefaultCloneDiskBudget bounds the disk all clones take together unless
// WithCloneDiskBudget says otherwise: the chart's /tmp emptyDir (1 GiB)
// less an eighth of headroom, so that no tenant's repository gets the
// agent evicted.
const DefaultCloneDiskBudget int64 = 896 << 20

// ErrCloneTooLarge means a clone would grow beyond its bound on disk,
// its own or the budget of all clones. It is permanent: the same
// repository is as large at the next attempt.
var ErrCloneTooLarge = errors.New("the clone is too large")

// ErrCloneDiskBusy means a clone would take more disk than the clones
// running beside it leave of their budget: a transient error, retried
// once they ended.
var ErrCloneDiskBusy = errors.New("the disk of the clones is in use")

// defaultCloneDepths are the depths a clone is made with: the last 64
// commits of the branch first, enough when the bad and the last promoted
// revisions are recent; then deeper, each time a plan needs older history
// (each deepening fetches only the commits older than the clone's); at
// last the whole branch (0). Eight times deeper each time: on a branch of
// 10,000 commits whose promoted revision is 3,000 commits back, three
// fetches of 64, 448 and 3,584 commits rather than the whole branch.
var defaultCloneDepths = []int{64, 512, 4096, 0}

const (
	// objectCacheSize bounds the objects of a clone kept decoded in memory.
	objectCacheSize = 16 * cache.MiByte
)

// cloneOptions say where clones live and how large they may grow.
type cloneOptions struct {
	// parent is the directory clones are made in; "" is os.TempDir().
	parent string
	// maxSize bounds a clone on disk, in bytes; 0 for no bound.
	maxSize int64
	// disk is the budget all clones share; nil for no bound.
	disk *diskBudget
	// connectTimeout bounds how long the host may take to answer each
	// request of a fetch (answering); 0 for no bound.
	connectTimeout time.Duration
	// maxObject bounds one object of the clone, in bytes; 0 for no
	// bound. A fetch holding a larger one fails before it is inflated.
	maxObject int64
	// depthSteps replace defaultCloneDepths (tests).
	depthSteps []int
}

func (o cloneOptions) depths() []int {
	if len(o.depthSteps) > 0 {
		return o.depthSteps
	}
	return defaultCloneDepths
}

// withClone sets where the clone lives and its bounds.
func withClone(o cloneOptions) RepositoryOption {
	return func(r *Repository) error {
		r.clone = o
		return nil
	}
}

// makeDir makes the directory and object store of a new clone, whose
// writes are counted against its bounds (cloneMeter).
func (r *Repository) makeDir() error {
	parent := r.clone.parent
	if parent == "" {
		parent = os.TempDir()
	}
	dir, err := os.MkdirTemp(parent, "serin-clone-")
	if err != nil {
		return fmt.Errorf("cannot make a directory for the clone of %s (the agent needs a writable %s: an emptyDir volume, or --gitops-clone-dir): %w", r.url, parent, err)
	}
	r.dir = dir
	r.meter = &cloneMeter{url: r.url, branch: r.branch, max: r.clone.maxSize, disk: r.clone.disk}
	r.storage = newCloneStorage(meteredFS{Filesystem: osfs.New(dir), meter: r.meter}, r.clone.maxObject)
	return nil
}

// newCloneStorage is the object store of a clone on fs, which refuses a
// fetched object over maxObject bytes. It is the only writer of the
// clone (ExclusiveAccess: pack and object lists are cached).
func newCloneStorage(fs billy.Filesystem, maxObject int64) *boundedStorage {
	return &boundedStorage{maxObject: maxObject, Storage: filesystem.NewStorageWithOptions(fs,
		cache.NewObjectLRU(objectCacheSize), filesystem.Options{ExclusiveAccess: true, KeepDescriptors: true})}
}

// openStorage opens the clone's object store and repository again.
func (r *Repository) openStorage() error {
	if err := r.storage.Close(); err != nil {
		return fmt.Errorf("failed to close the clone of %s: %w", r.url, err)
	}
	r.storage = newCloneStorage(meteredFS{Filesystem: osfs.New(r.dir), meter: r.meter}, r.clone.maxObject)
	repo, err := gogit.Open(r.storage, nil)
	if err != nil {
		return fmt.Errorf("failed to open the clone of %s again: %w", r.url, err)
	}
	r.repo = repo
	return nil
}

// Close removes the clone from the disk; the Repository can be cloned
// again.
func (r *Repository) Close() error {
	if r.dir == "" {
		return nil
	}
	var closeErr error
	if r.storage != nil {
		closeErr = r.storage.Close()
	}
	err := os.RemoveAll(r.dir)
	if err == nil {
		r.meter.giveBack()
	}
	r.dir, r.storage, r.repo, r.depth, r.meter = "", nil, nil, 0, nil
	if err != nil {
		return fmt.Errorf("failed to remove the clone of %s: %w", r.url, err)
	}
	return closeErr
}

// withinSize runs fetch, which writes into the clone, under the bounds
// of the clone: each write is counted against the clone's bound and the
// budget of all clones before it reaches the disk (cloneMeter), and the
// host has connectTimeout to answer each request (answering). A write
// that would pass a bound fails, and so does the fetch, with
// ErrCloneTooLarge or ErrCloneDiskBusy.
func (r *Repository) withinSize(ctx context.Context, fetch func(context.Context) error) error {
	ctx, answered := answering(ctx, r.clone.connectTimeout, r.url)
	return r.refusedOr(answered(fetch(ctx)))
}

// refusedOr is the refusal of a write over the clone's bounds, or of a
// fetched pack, when the clone refused one, or err: go-git wraps the
// refusal in errors that do not unwrap, or hides it behind the error of
// the closed stream.
func (r *Repository) refusedOr(err error) error {
	if err == nil {
		return nil
	}
	if refused := r.meter.refusal(); refused != nil {
		return refused
	}
	if refused := r.storage.refusal(); refused != nil {
		return refused
	}
	return err
}

// diskBudget is the disk all the clones of an agent may take together
// (--gitops-clone-disk-budget), reverts, promotions and verdict reads
// alike.
type diskBudget struct {
	total int64

	mu   sync.Mutex
	used int64
}

func newDiskBudget(total int64) *diskBudget {
	if total <= 0 {
		return nil
	}
	return &diskBudget{total: total}
}

// take reserves n bytes; false when fewer are left.
func (b *diskBudget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.total {
		return false
	}
	b.used += n
	return true
}

// give returns n bytes reserved.
func (b *diskBudget) give(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
}

// inUse is the bytes reserved.
func (b *diskBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// cloneMeter counts the bytes written into one clone, and reserves each
// write, before it reaches the disk, within the clone's bound and the
// budget of all clones. The count is of bytes written, a file written
// again counted again: at or above the clone's size on disk. Once a
// write is refused, every later one is.
type cloneMeter struct {
	url, branch string
	// max bounds the clone, 0 for no bound; disk is the budget of all
	// clones, nil for none.
	max  int64
	disk *diskBudget

	mu      sync.Mutex
	written int64
	refused error
}

// reserve counts n bytes about to be written, or refuses them.
func (m *cloneMeter) reserve(n int) error {
	if m == nil || n == 0 {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.refused != nil {
		return m.refused
	}
	size := m.written + int64(n)
	switch {
	case m.max > 0 && size > m.max && (m.disk == nil || m.max <= m.disk.total):
		m.refused = fmt.Errorf("%w: branch %s of %s needs more than --gitops-max-clone-size (%s) on disk; serin stops the clone before it writes more: keep large files out of the repository (Git LFS), or raise the bound",
			ErrCloneTooLarge, m.branch, m.url, formatBytes(m.max))
	case m.disk != nil && size > m.disk.total:
		m.refused = fmt.Errorf("%w: branch %s of %s needs more than --gitops-clone-disk-budget (%s), the disk all clones may take; serin stops the clone before it writes more: keep large files out of the repository (Git LFS), or raise the budget",
			ErrCloneTooLarge, m.branch, m.url, formatBytes(m.disk.total))
	case m.disk != nil && !m.disk.take(int64(n)):
		m.refused = fmt.Errorf("%w: branch %s of %s needs more than the clones running beside it leave of --gitops-clone-disk-budget (%s); tried again once they ended",
			ErrCloneDiskBusy, m.branch, m.url, formatBytes(m.disk.total))
	default:
		m.written = size
		return nil
	}
	return m.refused
}

// refusal is why a write was refused, if one was.
func (m *cloneMeter) refusal() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.refused
}

// giveBack returns the clone's bytes to the budget, once it is removed.
func (m *cloneMeter) giveBack() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.disk != nil {
		m.disk.give(m.written)
	}
	m.written = 0
}

// meteredFS is the file system of a clone: the files it creates or
// opens count their writes in meter.
type meteredFS struct {
	billy.Filesystem
	meter *cloneMeter
}

// Create implements billy.Filesystem.
func (fs meteredFS) Create(name string) (billy.File, error) {
	return fs.metered(fs.Filesystem.Create(name))
}

// OpenFile implements billy.Filesystem.
func (fs meteredFS) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	return fs.metered(fs.Filesystem.OpenFile(name, flag, perm))
}

// TempFile implements billy.Filesystem.
func (fs meteredFS) TempFile(dir, prefix string) (billy.File, error) {
	return fs.metered(fs.Filesystem.TempFile(dir, prefix))
}

// Chroot implements billy.Filesystem.
func (fs meteredFS) Chroot(path string) (billy.Filesystem, error) {
	sub, err := fs.Filesystem.Chroot(path)
	if err != nil {
		return nil, err
	}
	return meteredFS{Filesystem: sub, meter: fs.meter}, nil
}

func (fs meteredFS) metered(f billy.File, err error) (billy.File, error) {
	if err != nil {
		return nil, err
	}
	return meteredFile{File: f, meter: fs.meter}, nil
}

// meteredFile reserves its writes in meter before making them.
type meteredFile struct {
	billy.File
	meter *cloneMeter
}

// Write implements io.Writer.
func (f meteredFile) Write(p []byte) (int, error) {
	if err := f.meter.reserve(len(p)); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}

// formatBytes prints a size in KiB, MiB or GiB.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
}
