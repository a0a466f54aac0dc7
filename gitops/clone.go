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
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// DefaultMaxCloneSize bounds the disk a clone takes unless
// WithMaxCloneSize says otherwise.
const DefaultMaxCloneSize int64 = 512 << 20

// ErrCloneTooLarge means a clone grew beyond its bound on disk.
var ErrCloneTooLarge = errors.New("the clone is too large")

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
	// sizePollInterval is how often the size of a clone is measured while
	// it is fetched.
	sizePollInterval = 100 * time.Millisecond
)

// cloneOptions say where clones live and how large they may grow.
type cloneOptions struct {
	// parent is the directory clones are made in; "" is os.TempDir().
	parent string
	// maxSize bounds a clone on disk, in bytes; 0 for no bound.
	maxSize int64
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

// makeDir makes the directory and object store of a new clone.
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
	r.storage = newCloneStorage(dir, r.clone.maxObject)
	return nil
}

// newCloneStorage is the object store of the clone at dir, which refuses
// a fetched object over maxObject bytes. It is the only writer of dir
// (ExclusiveAccess: pack and object lists are cached).
func newCloneStorage(dir string, maxObject int64) *boundedStorage {
	return &boundedStorage{maxObject: maxObject, Storage: filesystem.NewStorageWithOptions(osfs.New(dir),
		cache.NewObjectLRU(objectCacheSize), filesystem.Options{ExclusiveAccess: true, KeepDescriptors: true})}
}

// openStorage opens the clone's object store and repository again.
func (r *Repository) openStorage() error {
	if err := r.storage.Close(); err != nil {
		return fmt.Errorf("failed to close the clone of %s: %w", r.url, err)
	}
	r.storage = newCloneStorage(r.dir, r.clone.maxObject)
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
	r.dir, r.storage, r.repo, r.depth = "", nil, nil, 0
	if err != nil {
		return fmt.Errorf("failed to remove the clone of %s: %w", r.url, err)
	}
	return closeErr
}

// withinSize runs fetch, which writes into the clone, and stops it with
// ErrCloneTooLarge when the clone grows beyond its bound: the clone's
// size is measured while fetch runs, and once it returns.
func (r *Repository) withinSize(ctx context.Context, fetch func(context.Context) error) error {
	if r.clone.maxSize <= 0 {
		return r.refusedOr(fetch(ctx))
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		tick := time.NewTicker(sizePollInterval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if err := r.checkSize(); err != nil {
					cancel(err)
					return
				}
			}
		}
	}()
	err := r.refusedOr(fetch(ctx))
	close(done)
	<-watched
	if cause := context.Cause(ctx); errors.Is(cause, ErrCloneTooLarge) {
		return cause
	}
	if err != nil {
		return err
	}
	return r.checkSize()
}

// refusedOr is the refusal of a fetched pack, when the clone's store
// refused one, or err: go-git wraps the refusal in errors that do not
// unwrap, or hides it behind the error of the closed stream.
func (r *Repository) refusedOr(err error) error {
	if err == nil {
		return nil
	}
	if refused := r.storage.refusal(); refused != nil {
		return refused
	}
	return err
}

// checkSize fails with ErrCloneTooLarge when the clone takes more than
// its bound on disk.
func (r *Repository) checkSize() error {
	size, err := dirSize(r.dir)
	if err != nil {
		return fmt.Errorf("failed to measure the clone of %s: %w", r.url, err)
	}
	if size > r.clone.maxSize {
		return fmt.Errorf("%w: branch %s of %s takes %s on disk, more than --gitops-max-clone-size (%s)",
			ErrCloneTooLarge, r.branch, r.url, formatBytes(size), formatBytes(r.clone.maxSize))
	}
	return nil
}

// dirSize is the size of the files under dir; files that vanish while it
// is measured (go-git renames temporary packs) do not count.
func dirSize(dir string) (int64, error) {
	var size int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		size += info.Size()
		return nil
	})
	return size, err
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
