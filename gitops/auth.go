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
	"fmt"

	"github.com/fluxcd/pkg/git"
	"github.com/fluxcd/pkg/ssh/knownhosts"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/plumbing/transport/ssh"
	gossh "golang.org/x/crypto/ssh"
)

// transportOptions are the go-git settings for one remote.
type transportOptions struct {
	auth       transport.AuthMethod
	caBundle   []byte
	clientCert []byte
	clientKey  []byte
}

// transportFor turns Flux's auth options into go-git's, as
// source-controller does: basic auth, a bearer token, or an SSH key checked
// against the secret's known_hosts (never the machine's).
func transportFor(opts *git.AuthOptions) (transportOptions, error) {
	var out transportOptions
	if opts == nil {
		return out, nil
	}
	out.caBundle, out.clientCert, out.clientKey = opts.CAFile, opts.ClientCert, opts.ClientKey
	switch opts.Transport {
	case git.HTTP, git.HTTPS:
		switch {
		case opts.Username != "" || opts.Password != "":
			out.auth = &http.BasicAuth{Username: opts.Username, Password: opts.Password}
		case opts.BearerToken != "":
			out.auth = &http.TokenAuth{Token: opts.BearerToken}
		}
	case git.SSH:
		pk, err := ssh.NewPublicKeys(opts.Username, opts.Identity, opts.Password)
		if err != nil {
			return out, fmt.Errorf("invalid SSH identity: %w", err)
		}
		callback, algos, err := knownhosts.New(opts.KnownHosts)
		if err != nil {
			return out, fmt.Errorf("invalid known_hosts: %w", err)
		}
		// Set before go-git builds its client config, which would otherwise
		// read the machine's known_hosts.
		pk.HostKeyCallback = callback
		out.auth = &knownHostsKeys{pk: pk, callback: callback, algos: algos}
	default:
		return out, fmt.Errorf("unsupported transport %q", opts.Transport)
	}
	return out, nil
}

// knownHostsKeys authenticates with an SSH key and accepts only the host
// keys of known_hosts, advertising their algorithms.
type knownHostsKeys struct {
	pk       *ssh.PublicKeys
	callback gossh.HostKeyCallback
	algos    []string
}

func (k *knownHostsKeys) Name() string   { return k.pk.Name() }
func (k *knownHostsKeys) String() string { return k.pk.String() }

// ClientConfig implements go-git's ssh.AuthMethod.
func (k *knownHostsKeys) ClientConfig() (*gossh.ClientConfig, error) {
	cfg, err := k.pk.ClientConfig()
	if err != nil {
		return nil, err
	}
	cfg.HostKeyCallback = k.callback
	if len(k.algos) > 0 {
		cfg.HostKeyAlgorithms = k.algos
	}
	return cfg, nil
}
