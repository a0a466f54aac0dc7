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
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A seal tells serin's own commits from every other, whatever happened
// between writing one and reading it back. Author, committer and trailers
// can be copied by anyone who may push; re-planning the change and
// comparing trees (ownCommit) holds only while the plan comes out the
// same, which a restart between the push and its pull request, a moved
// base or a changed promoted revision can break. Each commit serin writes
// carries a trailer
//
//	Serin-Seal: v1 <hex HMAC-SHA256(key, branch, parent, tree, message)>
//
// keyed by a secret only the agent reads (a Kubernetes Secret its
// replicas share, --git-commit-seal-secret). A commit whose seal verifies
// for the branch it sits on is serin's, for that branch, on that parent,
// with that tree and that message (every line before the seal's): its
// branch is resumed or rebased, never written beside, and serin's
// duplicates of a change are deleted.

// sealTrailer is the trailer key of a commit's seal.
const sealTrailer = "Serin-Seal: "

// sealVersion is the seal's format, first in its value.
const sealVersion = "v1"

// sealKeySize is the length of a generated key, in bytes.
const sealKeySize = 32

// sealKeyField is the Secret's key that holds the seal key.
const sealKeyField = "key"

// commitSeal computes and verifies seals with one key. A nil commitSeal
// seals nothing and verifies nothing.
type commitSeal struct {
	key []byte
}

// sum is the seal of a commit with tree on parent and message body (the
// message up to its seal), for branch.
func (s *commitSeal) sum(branch string, parent, tree plumbing.Hash, body string) string {
	m := hmac.New(sha256.New, s.key)
	fmt.Fprintf(m, "serin-seal-%s\x00%s\x00%s\x00%s\x00", sealVersion, branch, parent, tree)
	m.Write([]byte(body))
	return hex.EncodeToString(m.Sum(nil))
}

// seal returns msg sealed as the message of a commit with tree on parent
// for branch: its lines, then the seal's (msg as it is without a key).
func (s *commitSeal) seal(msg, branch string, parent, tree plumbing.Hash) string {
	if s == nil || len(s.key) == 0 {
		return msg
	}
	body := strings.TrimRight(msg, "\n") + "\n"
	return body + sealTrailer + sealVersion + " " + s.sum(branch, parent, tree, body) + "\n"
}

// verifies reports whether c carries a seal of its own parent and tree
// for branch: a commit serin wrote for that branch.
func (s *commitSeal) verifies(c *object.Commit, branch string) bool {
	if s == nil || len(s.key) == 0 || c.NumParents() != 1 {
		return false
	}
	body, got, ok := sealOf(c.Message)
	if !ok {
		return false
	}
	want := s.sum(branch, c.ParentHashes[0], c.TreeHash, body)
	return hmac.Equal([]byte(got), []byte(want))
}

// sealOf splits a commit message into what its seal covers (every line
// before it) and the seal's value: its last line, a seal of version v1.
func sealOf(msg string) (body, sum string, ok bool) {
	rest, ok := strings.CutSuffix(msg, "\n")
	if !ok {
		return "", "", false
	}
	i := strings.LastIndex(rest, "\n")
	last := rest[i+1:]
	v, ok := strings.CutPrefix(last, sealTrailer+sealVersion+" ")
	if !ok {
		return "", "", false
	}
	return msg[:i+1], v, true
}

// WithCommitSealKey seals every commit serin writes with key (HMAC-SHA256)
// and takes a branch whose tip carries a valid seal for its name as
// serin's own (see CommitSealKey). An empty key seals nothing: serin then
// knows its branches only by re-planning them.
func WithCommitSealKey(key []byte) ReverterOption {
	return func(g *GitReverter) error {
		if len(key) == 0 {
			g.seal = nil
			return nil
		}
		if len(key) < 16 {
			return fmt.Errorf("the commit seal key has %d bytes, fewer than 16", len(key))
		}
		g.seal = &commitSeal{key: append([]byte(nil), key...)}
		return nil
	}
}

// ErrNoSealKey means the Secret of the commit seal has no usable key.
var ErrNoSealKey = errors.New("the commit seal Secret has no key")

// CommitSealKey reads the key of the Secret ref (data "key", at least 16
// bytes), creating the Secret with a random key when it does not exist,
// so that every replica of the agent, and the agent after a restart,
// seals with the same key. Two replicas creating it at once read the one
// that was created first.
func CommitSealKey(ctx context.Context, c client.Client, ref types.NamespacedName) ([]byte, error) {
	secret := &corev1.Secret{}
	err := c.Get(ctx, ref, secret)
	if apierrors.IsNotFound(err) {
		key := make([]byte, sealKeySize)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		secret = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name,
				Labels: map[string]string{"app.kubernetes.io/managed-by": "serin"}},
			Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{sealKeyField: key},
		}
		err = c.Create(ctx, secret)
		if err == nil {
			return key, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("failed to create the commit seal Secret %s: %w", ref, err)
		}
		err = c.Get(ctx, ref, secret)
	}
	if err != nil {
		return nil, fmt.Errorf("failed to read the commit seal Secret %s: %w", ref, err)
	}
	key := secret.Data[sealKeyField]
	if len(key) < 16 {
		return nil, fmt.Errorf("%w %q of at least 16 bytes: %s", ErrNoSealKey, sealKeyField, ref)
	}
	return key, nil
}
