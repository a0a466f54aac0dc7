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
	"path"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// serin vouches only for commits it wrote. Its branch names are known as
// soon as the commit they carry exists, so anyone who may push to the
// repository can create one first, with other content. Before a branch
// is pushed again, its pull request opened or adopted, or a commit in the
// tracked branch counted as the change already made, serin checks that
// the commit is its own: one parent, in the tracked branch's history,
// authored by serin's author, and whose tree is exactly the one serin
// plans on that parent. A branch that fails is left alone and the change
// is written under the next name (branchCandidates); when every name is
// taken, the job fails and names them.
//
// A push never overwrites what a person changed (ErrChangedMeanwhile): a
// Push-mode promotion is refused when a commit that is not serin's
// changed the stage's path since the wave started, and a Push-mode
// revert when one changed a file the revert edits after the bad
// revision.

// ErrForeignBranch means every branch name of a change holds a commit
// serin did not write.
var ErrForeignBranch = errors.New("the change's branches hold commits serin did not write")

// ErrChangedMeanwhile means a Push-mode change was refused: someone else
// changed what it would write over.
var ErrChangedMeanwhile = errors.New("changed by someone else since")

// branchAttempts is how many names a change's branch may take: its own,
// then -2, -3 when a name holds a commit serin did not write.
const branchAttempts = 3

// branchCandidates are the names a change's branch may take, in order.
func branchCandidates(branch string) []string {
	out := []string{branch}
	for i := 2; i <= branchAttempts; i++ {
		out = append(out, fmt.Sprintf("%s-%d", branch, i))
	}
	return out
}

// ownCommit reports whether commit is one serin wrote for c: one parent,
// in the history of head (the tracked branch), authored by serin's
// author, with the tree c plans on that parent; msg is the message c
// plans there (a pull request opened again carries it). why says what
// differs.
func (j *gitJob) ownCommit(ctx context.Context, c change, commit, head *object.Commit) (own bool, msg, why string, err error) {
	if commit.NumParents() != 1 {
		return false, "", fmt.Sprintf("commit %s has %d parents", ShortSHA(commit.Hash.String()), commit.NumParents()), nil
	}
	if commit.Author.Email != j.author.Email || commit.Author.Name != j.author.Name {
		return false, "", fmt.Sprintf("commit %s is by %s <%s>, not serin's author", ShortSHA(commit.Hash.String()), commit.Author.Name, commit.Author.Email), nil
	}
	parent, err := firstParent(commit)
	if err != nil {
		return false, "", "", err
	}
	inBranch, err := isAncestor(ctx, parent, head)
	if err != nil {
		return false, "", "", err
	}
	if !inBranch {
		return false, "", fmt.Sprintf("commit %s is not based on %s", ShortSHA(commit.Hash.String()), j.src.Branch), nil
	}
	plan, msg, err := c.plan(parent)
	if err != nil {
		return false, "", "", err
	}
	if plan.UpToDate {
		return false, "", fmt.Sprintf("commit %s changes what serin would not change", ShortSHA(commit.Hash.String())), nil
	}
	tree, err := j.repo.PlannedTree(parent, plan.Files)
	if err != nil {
		return false, "", "", err
	}
	if tree != commit.TreeHash {
		return false, "", fmt.Sprintf("commit %s is not the change serin plans on %s", ShortSHA(commit.Hash.String()), ShortSHA(parent.Hash.String())), nil
	}
	return true, msg, "", nil
}

// changedSince finds the newest commit of head's first-parent history,
// down to (not including) the first one for which stop is true, that
// changed a file touches selects and is not one of serin's own reverts
// or promotions (ownMarked): a change a person or another tool made. nil
// when there is none.
func (j *gitJob) changedSince(ctx context.Context, head *object.Commit, stop func(*object.Commit) bool,
	touches func(file string) bool) (*object.Commit, error) {
	for c := head; c != nil && !stop(c); {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if c.NumParents() == 0 {
			return nil, nil
		}
		if !j.ownMarked(c) {
			files, err := commitPaths(c)
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				if touches(f) {
					return c, nil
				}
			}
		}
		parent, err := firstParent(c)
		if err != nil {
			return nil, err
		}
		c = parent
	}
	return nil, nil
}

// ownMarked reports whether a commit is one of serin's reverts or
// promotions: by its author, with its trailers.
func (j *gitJob) ownMarked(c *object.Commit) bool {
	return c.Author.Email == j.author.Email && c.Author.Name == j.author.Name &&
		(strings.Contains(c.Message, "\nSerin-Reverts: ") || strings.Contains(c.Message, "\nSerin-Promotes: "))
}

// underPath returns whether a repository file is under dir.
func underPath(dir string) func(string) bool {
	dir = strings.Trim(path.Clean("/"+dir), "/")
	return func(f string) bool {
		return dir == "" || f == dir || strings.HasPrefix(f, dir+"/")
	}
}

// changedMeanwhile is the error of a Push-mode change refused because of
// commit, a change someone else made to what it writes.
func changedMeanwhile(kind, what string, since string, commit *object.Commit) error {
	title, _ := splitMessage(commit.Message)
	return fmt.Errorf("%w %s: commit %s, made %s by %s <%s> (%q), changed %s; serin does not write over it: review it, then write the %s by hand",
		ErrChangedMeanwhile, since, ShortSHA(commit.Hash.String()), commit.Committer.When.UTC().Format(time.RFC3339),
		commit.Author.Name, commit.Author.Email, title, what, kind)
}
