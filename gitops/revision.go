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
	"regexp"
	"strings"
)

var sha1Hex = regexp.MustCompile(`^[0-9a-f]{40}$`)

// CommitOf returns the commit hash of a Flux source revision: the current
// "main@sha1:<hex>" and "sha1:<hex>", the legacy "main/<hex>", or a bare
// hash. SHA-256 repositories are not supported.
func CommitOf(revision string) (string, error) {
	rev := revision
	if i := strings.LastIndex(rev, "@"); i >= 0 {
		rev = rev[i+1:]
	}
	if i := strings.LastIndex(rev, "/"); i >= 0 {
		rev = rev[i+1:]
	}
	algo, hash, found := strings.Cut(rev, ":")
	if !found {
		algo, hash = "sha1", rev
	}
	if algo != "sha1" || !sha1Hex.MatchString(hash) {
		return "", fmt.Errorf("revision %q is not a Git SHA-1 revision (want e.g. main@sha1:<40 hex>)", revision)
	}
	return hash, nil
}

// ShortSHA is the first 8 characters of a hash, as serin prints revisions.
func ShortSHA(hash string) string {
	if len(hash) > 8 {
		return hash[:8]
	}
	return hash
}
