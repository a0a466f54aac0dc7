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

// shortSHA is the first 8 characters of a hash, as serin prints revisions.
func shortSHA(hash string) string {
	if len(hash) > 8 {
		return hash[:8]
	}
	return hash
}
