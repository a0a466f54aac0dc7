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
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// LoadSigningKey reads an ASCII-armored OpenPGP private key, decrypting it
// with passphrase when it is protected, as Flux's image-automation-controller
// signs its commits.
func LoadSigningKey(keyFile, passphrase string) (*openpgp.Entity, error) {
	data, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("failed to read the signing key: %w", err)
	}
	entities, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("failed to read the signing key %s: %w", keyFile, err)
	}
	if len(entities) == 0 || entities[0].PrivateKey == nil {
		return nil, fmt.Errorf("%s holds no private key", keyFile)
	}
	key := entities[0]
	if key.PrivateKey.Encrypted {
		if passphrase == "" {
			return nil, errors.New("the signing key is encrypted: give its passphrase")
		}
		if err := key.PrivateKey.Decrypt([]byte(strings.TrimSpace(passphrase))); err != nil {
			return nil, fmt.Errorf("failed to decrypt the signing key: %w", err)
		}
	}
	return key, nil
}

// WithSigningKey signs every revert commit with an OpenPGP key, so that
// branch protections requiring signed commits accept serin's reverts.
func WithSigningKey(key *openpgp.Entity) ReverterOption {
	return func(g *GitReverter) error {
		g.author.SignKey = key
		return nil
	}
}

// sign sets the commit's detached, armored OpenPGP signature over its
// encoding without signature, as `git commit -S` does.
func sign(c *object.Commit, key *openpgp.Entity) error {
	unsigned := &plumbing.MemoryObject{}
	if err := c.EncodeWithoutSignature(unsigned); err != nil {
		return err
	}
	r, err := unsigned.Reader()
	if err != nil {
		return err
	}
	var sig bytes.Buffer
	if err := openpgp.ArmoredDetachSign(&sig, key, r, nil); err != nil {
		return fmt.Errorf("failed to sign the commit: %w", err)
	}
	c.PGPSignature = sig.String()
	return nil
}
