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
	"slices"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// ErrShallowHistory means a walk of the history reached the boundary of a
// shallow clone: what it needs is older than the clone. A revert or a
// promotion deepens the clone and plans again (gitJob.withHistory).
var ErrShallowHistory = errors.New("the history needed is older than the clone")

// maxHistory bounds the commits walked.
const maxHistory = 100000

// errStopWalk ends a walk early, without an error.
var errStopWalk = errors.New("stop walking")

// ancestors returns c and the commits reachable from it that the clone
// holds: in a shallow clone, down to its boundary. Used as the set a walk
// stops at, a partial set only makes the walk go further.
func ancestors(ctx context.Context, c *object.Commit) (map[plumbing.Hash]bool, error) {
	seen := map[plumbing.Hash]bool{}
	err := walk(ctx, c, seen, true, func(*object.Commit) error { return nil })
	return seen, err
}

// commitsSince returns the commits reachable from c and not in stop,
// newest first (breadth first), keyed for lookup. It fails with
// ErrShallowHistory when they reach beyond the clone.
func commitsSince(ctx context.Context, c *object.Commit, stop map[plumbing.Hash]bool) (orderedCommits, error) {
	out := orderedCommits{}
	err := walk(ctx, c, copySet(stop), false, func(c *object.Commit) error {
		out = append(out, c)
		return nil
	})
	return out, err
}

// isAncestor reports whether a is b or one of its ancestors. It walks
// from b down to the ancestors of a only, and fails with ErrShallowHistory
// when that reaches beyond the clone.
func isAncestor(ctx context.Context, a, b *object.Commit) (bool, error) {
	if a.Hash == b.Hash {
		return true, nil
	}
	stop, err := ancestors(ctx, a)
	if err != nil {
		return false, err
	}
	found := false
	err = walk(ctx, b, stop, false, func(c *object.Commit) error {
		if slices.Contains(c.ParentHashes, a.Hash) {
			found = true
			return errStopWalk
		}
		return nil
	})
	return found, err
}

// firstParent returns the first parent of a commit; ErrShallowHistory
// when the clone does not hold it.
func firstParent(c *object.Commit) (*object.Commit, error) {
	parent, err := c.Parent(0)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, fmt.Errorf("%w: the parent of %s is not in it", ErrShallowHistory, ShortSHA(c.Hash.String()))
	}
	return parent, err
}

type orderedCommits []*object.Commit

func (o orderedCommits) has(h plumbing.Hash) bool {
	for _, c := range o {
		if c.Hash == h {
			return true
		}
	}
	return false
}

// haveParent reports whether one of the commits has h as a parent.
func (o orderedCommits) haveParent(h plumbing.Hash) bool {
	return slices.ContainsFunc(o, func(c *object.Commit) bool { return slices.Contains(c.ParentHashes, h) })
}

func copySet(s map[plumbing.Hash]bool) map[plumbing.Hash]bool {
	out := make(map[plumbing.Hash]bool, len(s))
	for h := range s {
		out[h] = true
	}
	return out
}

// walk visits the commits reachable from c that are not in seen, breadth
// first, adding them to seen, until visit returns errStopWalk. A commit
// whose parents the clone does not have (the boundary of a shallow clone)
// ends the walk with ErrShallowHistory, unless partial is set: then the
// walk goes on without them, and stops quietly after maxHistory commits.
// It stops with ctx's error when ctx is done.
func walk(ctx context.Context, c *object.Commit, seen map[plumbing.Hash]bool, partial bool, visit func(*object.Commit) error) error {
	if seen[c.Hash] {
		return nil
	}
	queue := []*object.Commit{c}
	seen[c.Hash] = true
	for n := 1; len(queue) > 0; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if n > maxHistory {
			if partial {
				return nil
			}
			return fmt.Errorf("history longer than %d commits", maxHistory)
		}
		cur := queue[0]
		queue = queue[1:]
		if err := visit(cur); errors.Is(err, errStopWalk) {
			return nil
		} else if err != nil {
			return err
		}
		err := cur.Parents().ForEach(func(parent *object.Commit) error {
			if !seen[parent.Hash] {
				seen[parent.Hash] = true
				queue = append(queue, parent)
			}
			return nil
		})
		switch {
		case errors.Is(err, plumbing.ErrObjectNotFound) && partial:
		case errors.Is(err, plumbing.ErrObjectNotFound):
			return fmt.Errorf("%w: the parents of %s are not in it", ErrShallowHistory, ShortSHA(cur.Hash.String()))
		case err != nil:
			return fmt.Errorf("failed to read the parents of %s: %w", ShortSHA(cur.Hash.String()), err)
		}
	}
	return nil
}

// changedPaths lists the files that differ between two commits.
func changedPaths(from, to *object.Commit) ([]string, error) {
	a, err := from.Tree()
	if err != nil {
		return nil, err
	}
	b, err := to.Tree()
	if err != nil {
		return nil, err
	}
	return treePaths(a, b)
}

// commitPaths lists the files a commit changed against its first parent.
func commitPaths(c *object.Commit) ([]string, error) {
	parentTree, tree, err := commitTrees(c)
	if err != nil {
		return nil, err
	}
	return treePaths(parentTree, tree)
}

// commitTrees returns the trees of a commit's first parent (nil for a root
// commit) and of the commit.
func commitTrees(c *object.Commit) (parentTree, tree *object.Tree, err error) {
	if tree, err = c.Tree(); err != nil {
		return nil, nil, err
	}
	if c.NumParents() == 0 {
		return nil, tree, nil
	}
	parent, err := firstParent(c)
	if err != nil {
		return nil, nil, err
	}
	if parentTree, err = parent.Tree(); err != nil {
		return nil, nil, err
	}
	return parentTree, tree, nil
}

// changesAny reports whether a commit changed one of the files against
// its first parent (added, removed, another content or mode).
func changesAny(c *object.Commit, files []string) (bool, error) {
	parentTree, tree, err := commitTrees(c)
	if err != nil {
		return false, err
	}
	for _, f := range files {
		before, err := treeEntry(parentTree, f)
		if err != nil {
			return false, err
		}
		after, err := treeEntry(tree, f)
		if err != nil {
			return false, err
		}
		if before != after {
			return true, nil
		}
	}
	return false, nil
}

// treeEntry returns the entry of a file in a tree, the zero entry when
// there is none.
func treeEntry(t *object.Tree, p string) (object.TreeEntry, error) {
	if t == nil {
		return object.TreeEntry{}, nil
	}
	e, err := t.FindEntry(p)
	switch {
	case errors.Is(err, object.ErrEntryNotFound), errors.Is(err, object.ErrDirectoryNotFound),
		errors.Is(err, plumbing.ErrObjectNotFound): // a file where the path has a directory
		return object.TreeEntry{}, nil
	case err != nil:
		return object.TreeEntry{}, fmt.Errorf("failed to look %s up in %s: %w", p, t.Hash, err)
	}
	return object.TreeEntry{Mode: e.Mode, Hash: e.Hash}, nil
}

func treePaths(a, b *object.Tree) ([]string, error) {
	changes, err := object.DiffTree(a, b)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, ch := range changes {
		for _, name := range []string{ch.From.Name, ch.To.Name} {
			if name != "" && !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}
