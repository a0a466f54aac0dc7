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
	"io"
	"net"
	"net/http"
	"syscall"

	"github.com/fluxcd/go-git-providers/gitprovider"
	"github.com/go-git/go-git/v5/plumbing"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

// IsTransient reports whether a revert that failed with err may succeed
// when tried again unchanged: the Git host was unreachable or slow (a
// refused or reset connection, a name that did not resolve, a timeout, a
// cut stream), answered 408,
// 429 or a 5xx, refused a call for its rate limit (ErrRateLimited), or
// the branch moved under the push, or the clones running beside it took
// the disk (ErrCloneDiskBusy). Anything else (401,
// 403, 404, a protected branch, a repository that cannot be rendered or
// verified) needs a person: it is permanent.
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	for _, t := range []error{ErrNonFastForward, ErrCloneDiskBusy, ErrRateLimited, context.DeadlineExceeded, io.EOF, io.ErrUnexpectedEOF,
		syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.EPIPE} {
		if errors.Is(err, t) {
			return true
		}
	}
	// A url.Error is anything an HTTP client returns, a bad certificate
	// too: only a timeout, or a failure to reach the host, is transient.
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return true
	}
	var opErr *net.OpError
	var dnsErr *net.DNSError
	if errors.As(err, &opErr) || errors.As(err, &dnsErr) {
		return true
	}
	var hostErr *gitprovider.HTTPError
	if errors.As(err, &hostErr) && hostErr.Response != nil {
		return transientStatus(hostErr.Response.StatusCode)
	}
	var limited *gitprovider.RateLimitError
	if errors.As(err, &limited) {
		return true
	}
	// go-git wraps a Git host's HTTP status in a plumbing.UnexpectedError,
	// which does not unwrap.
	var unexpected *plumbing.UnexpectedError
	if errors.As(err, &unexpected) {
		err = unexpected.Err
	}
	var gitErr *githttp.Err
	if errors.As(err, &gitErr) && gitErr.Response != nil {
		return transientStatus(gitErr.StatusCode())
	}
	return false
}

// transientStatus tells whether an HTTP status may change on a retry.
func transientStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}
