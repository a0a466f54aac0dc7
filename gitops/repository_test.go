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

	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/git"
	"golang.org/x/crypto/ssh"
)

// Clone and push over SSH with a Flux identity/known_hosts secret; a host
// key that known_hosts does not list is refused.
func TestRepository_SSH(t *testing.T) {
	f := newGitFixture(t)
	keyDir := t.TempDir()
	f.server.KeyDir(keyDir)
	if err := f.server.ListenSSH(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = f.server.StartSSH() }()
	t.Cleanup(func() { _ = f.server.StopSSH() })

	_, private, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(private, "")
	if err != nil {
		t.Fatal(err)
	}
	identity := pem.EncodeToMemory(block)
	u, err := url.Parse(f.server.SSHAddress() + "/" + repoPath)
	if err != nil {
		t.Fatal(err)
	}
	var hostKey []byte
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && len(hostKey) == 0; time.Sleep(50 * time.Millisecond) {
		hostKey, _ = os.ReadFile(filepath.Join(keyDir, "gitkit.rsa.pub"))
	}
	knownHosts := "[" + u.Hostname() + "]:" + u.Port() + " " + string(hostKey)

	open := func(knownHosts string) *Repository {
		t.Helper()
		auth, err := git.NewAuthOptions(*u, map[string][]byte{"identity": identity, "known_hosts": []byte(knownHosts)})
		if err != nil {
			t.Fatal(err)
		}
		r, err := OpenRepository(u.String(), "main", WithAuth(auth))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ctx := context.Background()
	r := open(knownHosts)
	if err := r.Clone(ctx); err != nil {
		t.Fatal(err)
	}
	head, err := r.Head("main")
	if err != nil || head.Hash != f.bad.Hash {
		t.Fatalf("head over SSH = %v, %v; want %s", head, err, f.bad.Hash)
	}
	c, err := r.CommitFiles(head, []FileChange{{Path: "NOTES.md", Content: []byte("over ssh\n")}}, Signature{Name: "serin", Email: "serin@example.com"}, testEpoch, "Notes")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Push(ctx, c.Hash, "ssh-branch"); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.file("ssh-branch", "NOTES.md"); got != "over ssh\n" {
		t.Errorf("NOTES.md on ssh-branch = %q", got)
	}

	_, other, _ := ed25519.GenerateKey(rand.Reader)
	otherPub, _ := ssh.NewPublicKey(other.Public())
	wrong := "[" + u.Hostname() + "]:" + u.Port() + " " + string(ssh.MarshalAuthorizedKey(otherPub))
	if err := open(wrong).Clone(ctx); err == nil || !strings.Contains(err.Error(), "key") {
		t.Errorf("clone with a wrong known_hosts: err = %v, want a host key error", err)
	}
}

// A push that is not a fast-forward is refused with ErrNonFastForward.
func TestRepository_PushNeverForces(t *testing.T) {
	f := newGitFixture(t)
	u, _ := url.Parse(f.url)
	auth, _ := git.NewAuthOptions(*u, map[string][]byte{"username": []byte(gitUser), "password": []byte(gitPassword)})
	r, err := OpenRepository(f.url, "main", WithAuth(auth))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := r.Clone(ctx); err != nil {
		t.Fatal(err)
	}
	head, _ := r.Head("main")
	c, err := r.CommitFiles(head, []FileChange{{Path: "a.txt", Content: []byte("a\n")}}, Signature{Name: "serin", Email: "serin@example.com"}, testEpoch, "A")
	if err != nil {
		t.Fatal(err)
	}
	f.pushToMain("b.txt", "b\n", "B")
	if err := r.Push(ctx, c.Hash, "main"); err == nil || !strings.Contains(err.Error(), ErrNonFastForward.Error()) {
		t.Fatalf("push over a moved branch: err = %v", err)
	}
	if _, tip := f.file("main", "b.txt"); tip.Message != "B" {
		t.Errorf("main moved to %q", tip.Message)
	}
}

// With a signing key, revert commits carry an OpenPGP signature that
// verifies against the key's public half, and the signature survives the
// push (Flux's GitRepository spec.verify and branch protections read it).
func TestRepository_SignedCommit(t *testing.T) {
	key, err := openpgp.NewEntity("serin", "", "serin@example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	var pub bytes.Buffer
	w, _ := armor.Encode(&pub, openpgp.PublicKeyType, nil)
	if err := key.Serialize(w); err != nil {
		t.Fatal(err)
	}
	w.Close()

	f := newGitFixture(t)
	u, _ := url.Parse(f.url)
	auth, _ := git.NewAuthOptions(*u, map[string][]byte{"username": []byte(gitUser), "password": []byte(gitPassword)})
	r, err := OpenRepository(f.url, "main", WithAuth(auth))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := r.Clone(ctx); err != nil {
		t.Fatal(err)
	}
	head, _ := r.Head("main")
	c, err := r.CommitFiles(head, []FileChange{{Path: "a.txt", Content: []byte("a\n")}},
		Signature{Name: "serin", Email: "serin@example.com", SignKey: key}, testEpoch, "Signed")
	if err != nil {
		t.Fatal(err)
	}
	if c.PGPSignature == "" {
		t.Fatal("the commit is not signed")
	}
	if err := r.Push(ctx, c.Hash, "main"); err != nil {
		t.Fatal(err)
	}
	_, tip := f.file("main", "a.txt")
	signer, err := tip.Verify(pub.String())
	if err != nil {
		t.Fatalf("the pushed commit's signature does not verify: %v", err)
	}
	if _, ok := signer.Identities["serin <serin@example.com>"]; !ok {
		t.Errorf("signed by %v", signer.Identities)
	}
}
