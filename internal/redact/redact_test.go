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

package redact

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	tests := map[string]struct {
		in, want string
	}{
		"plain URL unchanged":           {in: "https://git.example/org/repo.git", want: "https://git.example/org/repo.git"},
		"user and password":             {in: "https://user:SECRET@git.example/org/repo.git", want: "https://redacted@git.example/org/repo.git"},
		"a token as the user":           {in: "https://ghp_SECRETSECRETSECRET@github.com/o/r", want: "https://redacted@github.com/o/r"},
		"x-access-token userinfo":       {in: "https://x-access-token:SECRET@github.com/o/r.git", want: "https://redacted@github.com/o/r.git"},
		"query values":                  {in: "https://git.example/org/repo.git?token=SECRET123&ref=main", want: "https://git.example/org/repo.git?token=redacted&ref=redacted"},
		"query key without value":       {in: "https://git.example/r?debug&sig=SECRET", want: "https://git.example/r?debug&sig=redacted"},
		"fragment dropped":              {in: "https://git.example/r#access_token=SECRET", want: "https://git.example/r"},
		"GitHub token in the path":      {in: "https://git.example/ghp_SECRETSECRETSECRET/org/repo.git", want: "https://git.example/redacted/org/repo.git"},
		"fine-grained GitHub token":     {in: "https://git.example/github_pat_11SECRET_SECRET/r", want: "https://git.example/redacted/r"},
		"installation token":            {in: "https://git.example/a/ghs_SECRETSECRET", want: "https://git.example/a/redacted"},
		"GitLab token in the path":      {in: "https://gitlab.example/glpat-SECRETSECRET/group/r.git", want: "https://gitlab.example/redacted/group/r.git"},
		"user:token in the path":        {in: "https://git.example/x-access-token:SECRET/o/r", want: "https://git.example/x-access-token:redacted/o/r"},
		"oauth2:token in the path":      {in: "https://git.example/oauth2:SECRET/o/r", want: "https://git.example/oauth2:redacted/o/r"},
		"the segment after /token/":     {in: "https://git.example/token/SECRET/o/r.git", want: "https://git.example/token/redacted/o/r.git"},
		"the segment after /api-key/":   {in: "https://git.example/API-KEY/SECRET", want: "https://git.example/API-KEY/redacted"},
		"escaped path kept as written":  {in: "https://gitlab.example/api/v4/projects/group%2Frepo/token/SECRET", want: "https://gitlab.example/api/v4/projects/group%2Frepo/token/redacted"},
		"a short word is no token":      {in: "https://git.example/ghp_x/r", want: "https://git.example/ghp_x/r"},
		"a colon of another user kept":  {in: "https://git.example/a:b/r", want: "https://git.example/a:b/r"},
		"ssh user":                      {in: "ssh://git@github.com/o/r.git", want: "ssh://redacted@github.com/o/r.git"},
		"IPv6 host":                     {in: "http://[::1]:9090/api?token=t", want: "http://[::1]:9090/api?token=redacted"},
		"all at once":                   {in: "https://u:p@h:8443/token/s/a?x=1&y#f", want: "https://redacted@h:8443/token/redacted/a?x=redacted&y"},
		"empty":                         {in: "", want: ""},
		"opaque user:pass@host":         {in: "user:pass@host/x", want: Unparsable},
		"invalid escape":                {in: "https://u:p@h/%zz?token=abc", want: Unparsable},
		"control character":             {in: "https://u:p@h/\x00?token=abc", want: Unparsable},
		"bare ? dropped":                {in: "https://git.example/r?", want: "https://git.example/r"},
		"@ in the path is no userinfo":  {in: "https://git.example/users/@me", want: "https://git.example/users/@me"},
		"path secret of no known form":  {in: "https://hooks.slack.com/services/T0/B0/XYZ", want: "https://hooks.slack.com/services/T0/B0/XYZ"},
		"relative reference with query": {in: "/hooks?token=abc", want: "/hooks?token=redacted"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := URL(tt.in); got != tt.want {
				t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestText(t *testing.T) {
	tests := map[string]struct {
		in, want string
	}{
		"net/http error": {
			in:   `Get "https://user:SECRET@git.example/o/r.git/info/refs?service=git-upload-pack&token=SECRET123": dial tcp 10.0.0.1:443: connect: connection refused`,
			want: `Get "https://redacted@git.example/o/r.git/info/refs?service=redacted&token=redacted": dial tcp 10.0.0.1:443: connect: connection refused`,
		},
		"several URLs": {
			in:   "from http://a/?k=SECRET to https://b/token/SECRET",
			want: "from http://a/?k=redacted to https://b/token/redacted",
		},
		"trailing punctuation kept outside": {
			in:   "see https://h/x?token=SECRET. Or https://h/y?t=SECRET, then",
			want: "see https://h/x?token=redacted. Or https://h/y?t=redacted, then",
		},
		"a bare GitHub token":   {in: "authentication failed for ghp_SECRETSECRETSECRET", want: "authentication failed for redacted"},
		"a bare GitLab token":   {in: "token glpat-SECRET_SECRET-1 expired", want: "token redacted expired"},
		"no URL, no token":      {in: "connection refused", want: "connection refused"},
		"unparsable URL":        {in: "call https://u:SECRET@h/%zz failed", want: "call " + Unparsable + " failed"},
		"revisions are no URLs": {in: "revision main@sha1:0123456789abcdef", want: "revision main@sha1:0123456789abcdef"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Text(tt.in); got != tt.want {
				t.Errorf("Text(%q) =\n%q, want\n%q", tt.in, got, tt.want)
			}
		})
	}
}

// A *url.Error names its URL quoted: a URL holding a quote is escaped
// there, which the text search alone would cut at the backslash.
func TestError(t *testing.T) {
	cause := errors.New("connection refused")
	raw := `https://user:SECRET@git.example/o/r.git?token=SEC"RET123`
	wrapped := fmt.Errorf("failed to clone branch main of %s: %w", raw, &url.Error{Op: "Get", URL: raw, Err: cause})
	joined := errors.Join(errors.New("first"), fmt.Errorf("second: %w", &url.Error{Op: "Post", URL: raw, Err: cause}))
	for name, err := range map[string]error{"wrapped": wrapped, "joined": joined} {
		t.Run(name, func(t *testing.T) {
			got := Error(err)
			if msg := got.Error(); strings.Contains(msg, "SECRET") || strings.Contains(msg, "RET123") {
				t.Errorf("Error(err) = %q: a secret is left", msg)
			}
			if !errors.Is(got, cause) {
				t.Error("the redacted error no longer wraps its cause")
			}
			var ue *url.Error
			if !errors.As(got, &ue) {
				t.Error("the redacted error no longer holds its *url.Error")
			}
			if Error(got) != got {
				t.Error("an error redacted twice is wrapped twice")
			}
		})
	}
	if Error(nil) != nil || Message(nil) != "" {
		t.Error("nil is not nil")
	}
}
