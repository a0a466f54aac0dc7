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
	"github.com/ProtonMail/go-crypto/openpgp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fluxcd/pkg/git"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"
)

// ErrNonFastForward means the remote branch moved since it was fetched.
var ErrNonFastForward = errors.New("the remote branch moved (non-fast-forward)")

const remoteName = "origin"

// Repository is one branch of a remote Git repository, cloned into a
// temporary directory (see clone.go for the bounds), with what serin does
// to it: read history, commit file changes, push without ever forcing. It
// hides go-git from the rest of the package. Close removes the clone.
type Repository struct {
	url       string
	branch    string
	transport transportOptions
	clone     cloneOptions
	// depth is the depth of the clone, 0 for the whole branch; dir is
	// where it lives, storage its object store.
	depth   int
	dir     string
	storage *boundedStorage
	repo    *gogit.Repository
	// meter counts what the clone writes against its bounds.
	meter *cloneMeter
}

// RepositoryOption configures a Repository.
type RepositoryOption func(*Repository) error

// WithAuth authenticates with Flux's auth options (a GitRepository secret).
func WithAuth(opts *git.AuthOptions) RepositoryOption {
	return func(r *Repository) error {
		t, err := transportFor(opts)
		if err != nil {
			return err
		}
		r.transport = t
		return nil
	}
}

// OpenRepository prepares access to branch of the repository at url;
// nothing is fetched yet.
func OpenRepository(url, branch string, opts ...RepositoryOption) (*Repository, error) {
	r := &Repository{url: url, branch: branch}
	for _, o := range opts {
		if err := o(r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// RemoteBranch returns the commit a branch of the remote points at, or
// the zero hash when there is no such branch. It fetches nothing.
func (r *Repository) RemoteBranch(ctx context.Context, branch string) (plumbing.Hash, error) {
	tips, err := r.RemoteBranches(ctx, branch)
	return tips[branch], err
}

// RemoteBranches returns the commit each of branches points at on the
// remote, with one listing of its references; a branch the remote does
// not have is absent. It fetches nothing.
func (r *Repository) RemoteBranches(ctx context.Context, branches ...string) (map[string]plumbing.Hash, error) {
	remote := gogit.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: remoteName, URLs: []string{r.url}})
	ctx, answered := answering(ctx, r.clone.connectTimeout, r.url)
	refs, err := remote.ListContext(ctx, &gogit.ListOptions{
		Auth: r.transport.auth, CABundle: r.transport.caBundle, ClientCert: r.transport.clientCert, ClientKey: r.transport.clientKey,
	})
	err = answered(err)
	tips := map[string]plumbing.Hash{}
	if err != nil {
		if errors.Is(err, transport.ErrEmptyRemoteRepository) {
			return tips, nil
		}
		return tips, fmt.Errorf("failed to list the branches of %s: %w", r.url, err)
	}
	want := map[plumbing.ReferenceName]string{}
	for _, b := range branches {
		want[plumbing.NewBranchReferenceName(b)] = b
	}
	for _, ref := range refs {
		if b, ok := want[ref.Name()]; ok {
			tips[b] = ref.Hash()
		}
	}
	return tips, nil
}

// Clone fetches the tracked branch (single branch, no tags, no working
// tree: the planner reads trees from the object store) into a new
// temporary directory, shallow: its last commits only. Deepen fetches more
// when a plan needs older ones.
func (r *Repository) Clone(ctx context.Context) error {
	if err := r.Close(); err != nil {
		return err
	}
	if err := r.makeDir(); err != nil {
		return err
	}
	depth := r.clone.depths()[0]
	err := r.withinSize(ctx, func(ctx context.Context) error {
		repo, err := gogit.CloneContext(ctx, r.storage, nil, &gogit.CloneOptions{
			URL:           r.url,
			RemoteName:    remoteName,
			ReferenceName: plumbing.NewBranchReferenceName(r.branch),
			SingleBranch:  true,
			NoCheckout:    true,
			Depth:         depth,
			Tags:          gogit.NoTags,
			Auth:          r.transport.auth,
			CABundle:      r.transport.caBundle,
			ClientCert:    r.transport.clientCert,
			ClientKey:     r.transport.clientKey,
		})
		r.repo = repo
		return err
	})
	if err == nil {
		err = r.settleShallow(depth)
	}
	if err != nil {
		_ = r.Close()
		return fmt.Errorf("failed to clone branch %s of %s: %w", r.branch, r.url, err)
	}
	return nil
}

// wholeHistory is the depth that asks a Git server for the whole history
// of a shallow clone: git's infinite depth.
const wholeHistory = 1<<31 - 1

// Deepen fetches older commits of the tracked branch into the clone, as
// deep as the next of the clone depths (the last being the whole branch).
// Only what the clone lacks is fetched: the commits it holds stay. It
// returns false when the clone already holds the whole branch.
func (r *Repository) Deepen(ctx context.Context) (bool, error) {
	depths := r.clone.depths()
	i := slices.Index(depths, r.depth)
	if r.depth == 0 || i < 0 || i == len(depths)-1 {
		return false, nil
	}
	depth := depths[i+1]
	asked := depth
	if asked == 0 {
		asked = wholeHistory
	}
	spec := config.RefSpec(fmt.Sprintf("+%s:%s", plumbing.NewBranchReferenceName(r.branch), plumbing.NewRemoteReferenceName(remoteName, r.branch)))
	err := r.withinSize(ctx, func(ctx context.Context) error {
		return r.repo.FetchContext(ctx, &gogit.FetchOptions{
			RemoteName: remoteName,
			RefSpecs:   []config.RefSpec{spec},
			Depth:      asked,
			Tags:       gogit.NoTags,
			Auth:       r.transport.auth,
			CABundle:   r.transport.caBundle,
			ClientCert: r.transport.clientCert,
			ClientKey:  r.transport.clientKey,
		})
	})
	if err != nil && !errors.Is(err, gogit.NoErrAlreadyUpToDate) {
		return true, fmt.Errorf("failed to deepen the clone of branch %s of %s: %w", r.branch, r.url, err)
	}
	// The object store caches the list of its packs (ExclusiveAccess),
	// and may have listed them while the new one was written: open it
	// again to see the new pack.
	if err := r.openStorage(); err != nil {
		return true, err
	}
	return true, r.settleShallow(depth)
}

// settleShallow records the depth of the clone after a clone or a deepen,
// 0 once no commit is shallow: the branch is shorter than the depth, or
// all of it is here. go-git adds the new boundary of a deepened clone to
// its shallow commits but keeps the old one; a commit whose parents the
// clone now holds is dropped from them, so that the next fetch does not
// tell the server it lacks them.
func (r *Repository) settleShallow(depth int) error {
	shallow, err := r.storage.Shallow()
	if err != nil {
		return err
	}
	still := shallow[:0:0]
	for _, h := range shallow {
		c, err := object.GetCommit(r.storage, h)
		if err != nil || !r.hasAll(c.ParentHashes) {
			still = append(still, h)
		}
	}
	if len(still) != len(shallow) {
		if err := r.storage.SetShallow(still); err != nil {
			return err
		}
	}
	r.depth = depth
	if len(still) == 0 {
		r.depth = 0
	}
	return nil
}

// hasAll reports whether the clone holds every one of the objects.
// (HasEncodedObject does not look into packs under ExclusiveAccess.)
func (r *Repository) hasAll(hashes []plumbing.Hash) bool {
	for _, h := range hashes {
		if _, err := r.storage.EncodedObject(plumbing.AnyObject, h); err != nil {
			return false
		}
	}
	return true
}

// Fetch updates the remote-tracking ref of branch (the tracked branch, or
// another one such as an existing revert branch).
func (r *Repository) Fetch(ctx context.Context, branch string) error {
	spec := config.RefSpec(fmt.Sprintf("+%s:%s", plumbing.NewBranchReferenceName(branch), plumbing.NewRemoteReferenceName(remoteName, branch)))
	err := r.withinSize(ctx, func(ctx context.Context) error {
		return r.repo.FetchContext(ctx, &gogit.FetchOptions{
			RemoteName: remoteName,
			RefSpecs:   []config.RefSpec{spec},
			Tags:       gogit.NoTags,
			Auth:       r.transport.auth,
			CABundle:   r.transport.caBundle,
			ClientCert: r.transport.clientCert,
			ClientKey:  r.transport.clientKey,
		})
	})
	if err != nil && !errors.Is(err, gogit.NoErrAlreadyUpToDate) {
		return fmt.Errorf("failed to fetch branch %s of %s: %w", branch, r.url, err)
	}
	return nil
}

// Head returns the last fetched commit of a branch.
func (r *Repository) Head(branch string) (*object.Commit, error) {
	for _, name := range []plumbing.ReferenceName{plumbing.NewRemoteReferenceName(remoteName, branch), plumbing.NewBranchReferenceName(branch)} {
		ref, err := r.repo.Reference(name, true)
		if err == nil {
			return r.repo.CommitObject(ref.Hash())
		}
	}
	return nil, fmt.Errorf("branch %s not fetched from %s", branch, r.url)
}

// Commit returns a commit of the fetched history.
func (r *Repository) Commit(hash string) (*object.Commit, error) {
	c, err := r.repo.CommitObject(plumbing.NewHash(hash))
	if errors.Is(err, plumbing.ErrObjectNotFound) && r.depth > 0 {
		return nil, fmt.Errorf("%w: commit %s is not in the last %d commits of branch %s of %s", ErrShallowHistory, ShortSHA(hash), r.depth, r.branch, r.url)
	}
	if err != nil {
		return nil, fmt.Errorf("commit %s not found in branch %s of %s: %w", ShortSHA(hash), r.branch, r.url, err)
	}
	return c, nil
}

// Signature is a commit author.
type Signature struct {
	Name, Email string
	// SignKey, when set, signs the commit (OpenPGP).
	SignKey *openpgp.Entity
}

// CommitFiles writes a commit on top of parent with the files changed
// (nil content deletes) and returns it.
func (r *Repository) CommitFiles(parent *object.Commit, files []FileChange, author Signature, when time.Time, message string) (*object.Commit, error) {
	tree, err := parent.Tree()
	if err != nil {
		return nil, err
	}
	changes := map[string][]byte{}
	for _, f := range files {
		changes[f.Path] = f.Content
	}
	treeHash, err := r.writeTree(tree, changes)
	if err != nil {
		return nil, fmt.Errorf("failed to write the tree: %w", err)
	}
	sig := object.Signature{Name: author.Name, Email: author.Email, When: when}
	c := &object.Commit{Author: sig, Committer: sig, Message: message, TreeHash: treeHash, ParentHashes: []plumbing.Hash{parent.Hash}}
	if author.SignKey != nil {
		if err := sign(c, author.SignKey); err != nil {
			return nil, err
		}
	}
	obj := r.repo.Storer.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return nil, err
	}
	h, err := r.repo.Storer.SetEncodedObject(obj)
	if err != nil {
		return nil, err
	}
	return r.repo.CommitObject(h)
}

// writeTree stores base with changes applied (paths relative to base) and
// returns its hash; an empty result is the zero hash.
func (r *Repository) writeTree(base *object.Tree, changes map[string][]byte) (plumbing.Hash, error) {
	entries := map[string]object.TreeEntry{}
	if base != nil {
		for _, e := range base.Entries {
			entries[e.Name] = e
		}
	}
	sub := map[string]map[string][]byte{}
	for p, content := range changes {
		dir, rest, nested := strings.Cut(p, "/")
		if nested {
			if sub[dir] == nil {
				sub[dir] = map[string][]byte{}
			}
			sub[dir][rest] = content
			continue
		}
		if content == nil {
			delete(entries, p)
			continue
		}
		mode := filemode.Regular
		if e, ok := entries[p]; ok && e.Mode == filemode.Executable {
			mode = filemode.Executable
		}
		h, err := r.writeBlob(content)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries[p] = object.TreeEntry{Name: p, Mode: mode, Hash: h}
	}
	for dir, c := range sub {
		var subtree *object.Tree
		if e, ok := entries[dir]; ok && e.Mode == filemode.Dir {
			t, err := object.GetTree(r.repo.Storer, e.Hash)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			subtree = t
		}
		h, err := r.writeTree(subtree, c)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if h.IsZero() {
			delete(entries, dir)
		} else {
			entries[dir] = object.TreeEntry{Name: dir, Mode: filemode.Dir, Hash: h}
		}
	}
	if len(entries) == 0 && base != nil {
		return plumbing.ZeroHash, nil
	}
	tree := &object.Tree{}
	for _, e := range entries {
		tree.Entries = append(tree.Entries, e)
	}
	// Git orders entries by name, directories as if they ended with "/".
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(tree.Entries, func(i, j int) bool { return key(tree.Entries[i]) < key(tree.Entries[j]) })
	obj := r.repo.Storer.NewEncodedObject()
	if err := tree.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return r.repo.Storer.SetEncodedObject(obj)
}

func (r *Repository) writeBlob(content []byte) (plumbing.Hash, error) {
	obj := r.repo.Storer.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(content); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return r.repo.Storer.SetEncodedObject(obj)
}

// FindCommit returns the first commit from head back to stop (neither
// stop nor its ancestors) whose message contains text, or nil.
func (r *Repository) FindCommit(ctx context.Context, head, stop *object.Commit, text string) (*object.Commit, error) {
	seen := map[plumbing.Hash]bool{}
	if stop != nil {
		var err error
		if seen, err = ancestors(ctx, stop); err != nil {
			return nil, err
		}
	}
	var found *object.Commit
	err := walk(ctx, head, seen, false, func(c *object.Commit) error {
		if strings.Contains(c.Message, text) {
			found = c
			return errStopWalk
		}
		return nil
	})
	return found, err
}

// PlannedTree is the tree parent would have with the files changed (nil
// content deletes), as CommitFiles writes it.
func (r *Repository) PlannedTree(parent *object.Commit, files []FileChange) (plumbing.Hash, error) {
	tree, err := parent.Tree()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	changes := map[string][]byte{}
	for _, f := range files {
		changes[f.Path] = f.Content
	}
	return r.writeTree(tree, changes)
}
