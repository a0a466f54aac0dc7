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

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// ErrShallowHistory means a walk of the history reached the boundary of a
// shallow clone: what it needs is older than the clone. The reverter
// deepens the clone and plans again (revertJob.withHistory).
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
		return nil, fmt.Errorf("%w: the parent of %s is not in it", ErrShallowHistory, shortSHA(c.Hash.String()))
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
			return fmt.Errorf("%w: the parents of %s are not in it", ErrShallowHistory, shortSHA(cur.Hash.String()))
		case err != nil:
			return fmt.Errorf("failed to read the parents of %s: %w", shortSHA(cur.Hash.String()), err)
		}
	}
	return nil
}
