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
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
)

// Push makes branch of the remote point at commit, a commit of
// CommitFiles on top of a commit of the remote: it creates the branch, or
// fast-forwards it. It never forces; ErrNonFastForward says the branch
// moved (or exists already, for a branch to create).
//
// It sends the commit and the trees and files it adds to its parent, and
// nothing else: go-git's push would first walk every object of the clone
// reachable from the remote's branches to find what the remote lacks,
// which on a large repository takes longer than the rest of the push. The
// server checks that what it receives is complete (its parent is there),
// and moves the branch only if it still points where it was seen.
func (r *Repository) Push(ctx context.Context, commit plumbing.Hash, branch string) error {
	c, objects, err := r.commitObjects(commit)
	if err != nil {
		return err
	}
	sess, adv, err := r.openPush(ctx, branch)
	if err != nil {
		return err
	}
	defer sess.Close()
	name := plumbing.NewBranchReferenceName(branch)
	refs, err := adv.AllReferences()
	if err != nil {
		return err
	}
	var old plumbing.Hash
	if ref, err := refs.Reference(name); err == nil {
		old = ref.Hash()
	}
	switch {
	case old == commit:
		return nil
	case !old.IsZero():
		if ok, err := r.fastForward(ctx, old, c); err != nil || !ok {
			return errors.Join(fmt.Errorf("%w: %s of %s", ErrNonFastForward, branch, r.url), err)
		}
	}
	return r.sendUpdate(ctx, sess, adv, name, old, commit, objects)
}

// Replace makes branch of the remote point at commit in place of old, a
// tip serin proved its own (its seal): the server moves the branch only
// while it still points at old, so a change pushed meanwhile is never
// overwritten (ErrNonFastForward says it moved).
func (r *Repository) Replace(ctx context.Context, commit plumbing.Hash, branch string, old plumbing.Hash) error {
	_, objects, err := r.commitObjects(commit)
	if err != nil {
		return err
	}
	sess, adv, err := r.openPush(ctx, branch)
	if err != nil {
		return err
	}
	defer sess.Close()
	return r.sendUpdate(ctx, sess, adv, plumbing.NewBranchReferenceName(branch), old, commit, objects)
}

// commitObjects reads commit and lists what a push of it sends.
func (r *Repository) commitObjects(commit plumbing.Hash) (*object.Commit, []plumbing.Hash, error) {
	c, err := object.GetCommit(r.storage, commit)
	if err != nil {
		return nil, nil, err
	}
	objects, err := addedObjects(r.storage, c)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to list the objects of %s: %w", ShortSHA(commit.String()), err)
	}
	return c, objects, nil
}

// DeleteBranch deletes branch of the remote while it still points at old
// (a tip serin proved its own); a branch already gone is no error.
func (r *Repository) DeleteBranch(ctx context.Context, branch string, old plumbing.Hash) error {
	sess, adv, err := r.openPush(ctx, branch)
	if err != nil {
		return err
	}
	defer sess.Close()
	name := plumbing.NewBranchReferenceName(branch)
	refs, err := adv.AllReferences()
	if err != nil {
		return err
	}
	if _, err := refs.Reference(name); err != nil {
		return nil
	}
	return r.sendUpdate(ctx, sess, adv, name, old, plumbing.ZeroHash, nil)
}

// openPush opens a push session and reads the remote's references.
func (r *Repository) openPush(ctx context.Context, branch string) (transport.ReceivePackSession, *packp.AdvRefs, error) {
	sess, err := r.receivePackSession()
	if err != nil {
		return nil, nil, fmt.Errorf("failed to push %s to %s: %w", branch, r.url, err)
	}
	adv, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		_ = sess.Close()
		return nil, nil, fmt.Errorf("failed to push %s to %s: %w", branch, r.url, err)
	}
	return sess, adv, nil
}

// sendUpdate asks the remote to move name from old to updated (the zero
// hash deletes it), sending objects; the server refuses when name no
// longer points at old.
func (r *Repository) sendUpdate(ctx context.Context, sess transport.ReceivePackSession, adv *packp.AdvRefs,
	name plumbing.ReferenceName, old, updated plumbing.Hash, objects []plumbing.Hash) error {
	branch := name.Short()
	req := packp.NewReferenceUpdateRequestFromCapabilities(adv.Capabilities)
	req.Commands = []*packp.Command{{Name: name, Old: old, New: updated}}
	var report *packp.ReportStatus
	var err error
	if updated.IsZero() {
		report, err = sess.ReceivePack(ctx, req)
	} else {
		report, err = r.sendPack(ctx, sess, req, objects, !adv.Capabilities.Supports(capability.OFSDelta))
	}
	if err == nil && report != nil {
		err = report.Error()
	}
	switch {
	case err == nil:
		return nil
	case movedMeanwhile(err):
		return fmt.Errorf("%w: %s of %s: %w", ErrNonFastForward, branch, r.url, err)
	}
	return fmt.Errorf("failed to push %s to %s: %w", branch, r.url, err)
}

// movedMeanwhile tells a refusal of the server because the branch moved
// (or was created) after it was seen, from other failures.
func movedMeanwhile(err error) bool {
	msg := err.Error()
	for _, s := range []string{"non-fast-forward", "failed to lock", "stale info", "already exists", "fetch first",
		"failed to update ref", "incorrect old value"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// receivePackSession opens a push session to the remote.
func (r *Repository) receivePackSession() (transport.ReceivePackSession, error) {
	ep, err := transport.NewEndpoint(r.url)
	if err != nil {
		return nil, err
	}
	ep.CaBundle, ep.ClientCert, ep.ClientKey = r.transport.caBundle, r.transport.clientCert, r.transport.clientKey
	c, err := client.NewClient(ep)
	if err != nil {
		return nil, err
	}
	return c.NewReceivePackSession(ep, r.transport.auth)
}

// fastForward reports whether moving a branch from old to c is a fast
// forward: old is c's parent or one of its ancestors in the clone. A tip
// the clone does not hold, or beyond its history, moved: not one.
func (r *Repository) fastForward(ctx context.Context, old plumbing.Hash, c *object.Commit) (bool, error) {
	tip, err := object.GetCommit(r.storage, old)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ok, err := isAncestor(ctx, tip, c)
	if errors.Is(err, ErrShallowHistory) {
		return false, nil
	}
	return ok, err
}

// sendPack sends the update request with a pack of the objects.
func (r *Repository) sendPack(ctx context.Context, sess transport.ReceivePackSession, req *packp.ReferenceUpdateRequest,
	objects []plumbing.Hash, refDeltas bool) (*packp.ReportStatus, error) {
	rd, wr := io.Pipe()
	req.Packfile = rd
	encoded := make(chan error, 1)
	go func() {
		_, err := packfile.NewEncoder(wr, r.storage, refDeltas).Encode(objects, 10)
		_ = wr.CloseWithError(err) // the reader sees err, or io.EOF
		encoded <- err
	}()
	report, err := sess.ReceivePack(ctx, req)
	if err != nil {
		_ = rd.Close() // the encoder stops writing
		return nil, errors.Join(err, ignoreClosedPipe(<-encoded))
	}
	return report, <-encoded
}

// ignoreClosedPipe drops the error of an encoder whose reader went away.
func ignoreClosedPipe(err error) error {
	if errors.Is(err, io.ErrClosedPipe) {
		return nil
	}
	return err
}

// addedObjects lists a commit and the trees and files of its tree that its
// first parent's tree does not have at the same path.
func addedObjects(s storer.EncodedObjectStorer, c *object.Commit) ([]plumbing.Hash, error) {
	tree, err := c.Tree()
	if err != nil {
		return nil, err
	}
	var base *object.Tree
	if c.NumParents() > 0 {
		parent, err := c.Parent(0)
		if err != nil {
			return nil, err
		}
		if base, err = parent.Tree(); err != nil {
			return nil, err
		}
	}
	out := []plumbing.Hash{c.Hash}
	return addedTreeObjects(s, tree, base, out)
}

// addedTreeObjects adds tree and, recursively, its entries that differ
// from base's entries of the same name (base nil: all of them).
func addedTreeObjects(s storer.EncodedObjectStorer, tree, base *object.Tree, out []plumbing.Hash) ([]plumbing.Hash, error) {
	if base != nil && base.Hash == tree.Hash {
		return out, nil
	}
	out = append(out, tree.Hash)
	before := map[string]object.TreeEntry{}
	if base != nil {
		for _, e := range base.Entries {
			before[e.Name] = e
		}
	}
	for _, e := range tree.Entries {
		old, had := before[e.Name]
		if had && old.Hash == e.Hash {
			continue
		}
		switch e.Mode {
		case filemode.Dir:
			sub, err := object.GetTree(s, e.Hash)
			if err != nil {
				return nil, err
			}
			var subBase *object.Tree
			if had && old.Mode == filemode.Dir {
				if subBase, err = object.GetTree(s, old.Hash); err != nil {
					return nil, err
				}
			}
			if out, err = addedTreeObjects(s, sub, subBase, out); err != nil {
				return nil, err
			}
		case filemode.Submodule:
			// a commit of another repository: not sent
		default:
			out = append(out, e.Hash)
		}
	}
	return out, nil
}
