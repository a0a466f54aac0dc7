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
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"testing"

	"github.com/fluxcd/go-git-providers/gitprovider"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

// A Git host that failed in a way a retry may fix is transient; what
// needs a person is permanent.
// timeoutErr is a net.Error that timed out.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestIsTransient(t *testing.T) {
	gitStatus := func(code int) error {
		return plumbing.NewUnexpectedError(&githttp.Err{Response: &http.Response{StatusCode: code, Request: &http.Request{}}})
	}
	hostStatus := func(code int) error {
		return &gitprovider.HTTPError{Response: &http.Response{StatusCode: code}, ErrorMessage: http.StatusText(code)}
	}
	tests := map[string]struct {
		err  error
		want bool
	}{
		"connection refused":              {err: fmt.Errorf("failed to clone: %w", syscall.ECONNREFUSED), want: true},
		"a dial error":                    {err: &net.OpError{Op: "dial", Err: errors.New("no route to host")}, want: true},
		"a timeout":                       {err: fmt.Errorf("pushing: %w", context.DeadlineExceeded), want: true},
		"the branch moved under the push": {err: fmt.Errorf("%w: main", ErrNonFastForward), want: true},
		"git over HTTP: 502":              {err: fmt.Errorf("fetch: %w", gitStatus(http.StatusBadGateway)), want: true},
		"git over HTTP: 429":              {err: gitStatus(http.StatusTooManyRequests), want: true},
		"the host API: 503":               {err: fmt.Errorf("opening the pull request: %w", hostStatus(http.StatusServiceUnavailable)), want: true},
		"the host API: rate limited":      {err: &gitprovider.RateLimitError{HTTPError: gitprovider.HTTPError{ErrorMessage: "rate limited"}}, want: true},
		"a stream cut":                    {err: &url.Error{Op: "Post", URL: "http://git.example/x", Err: io.EOF}, want: true},
		"a client timeout":                {err: &url.Error{Op: "Get", URL: "http://git.example/x", Err: timeoutErr{}}, want: true},
		"a name that did not resolve":     {err: &url.Error{Op: "Get", URL: "http://git.example/x", Err: &net.DNSError{Err: "no such host", Name: "git.example"}}, want: true},
		"a certificate refused":           {err: &url.Error{Op: "Get", URL: "https://git.example/x", Err: x509.UnknownAuthorityError{}}},
		"git over HTTP: 401":              {err: fmt.Errorf("%w: bad token", transport.ErrAuthenticationRequired)},
		"git over HTTP: 403":              {err: fmt.Errorf("%w: protected branch", transport.ErrAuthorizationFailed)},
		"the host API: 422":               {err: hostStatus(http.StatusUnprocessableEntity)},
		"cannot be verified":              {err: fmt.Errorf("%w: other objects change", ErrUnverifiable)},
		"a clone too large":               {err: ErrCloneTooLarge},
		"nothing":                         {},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := IsTransient(tt.err); got != tt.want {
				t.Errorf("IsTransient(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
