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

package outbound

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRedact(t *testing.T) {
	tests := map[string]struct {
		in, want string
	}{
		"plain URL unchanged":          {in: "https://hooks.example.com/flagger/gate", want: "https://hooks.example.com/flagger/gate"},
		"userinfo":                     {in: "https://user:pass@example.com/x", want: "https://redacted@example.com/x"},
		"user without password":        {in: "https://token@example.com/x", want: "https://redacted@example.com/x"},
		"escaped @ in userinfo":        {in: "https://u%40corp:p%40ss@example.com/", want: "https://redacted@example.com/"},
		"@ in the password":            {in: "https://u:p@ss@example.com/x", want: "https://redacted@example.com/x"},
		"@ in the path is no userinfo": {in: "https://example.com/users/@me", want: "https://example.com/users/@me"},
		"%40 in the path kept":         {in: "https://example.com/a%40b", want: "https://example.com/a%40b"},
		"query values":                 {in: "https://example.com/x?token=abc&channel=ops", want: "https://example.com/x?token=redacted&channel=redacted"},
		"query key without value":      {in: "https://example.com/x?debug&sig=s3cr3t", want: "https://example.com/x?debug&sig=redacted"},
		"repeated keys":                {in: "https://example.com/?a=1&a=2", want: "https://example.com/?a=redacted&a=redacted"},
		"empty value":                  {in: "https://example.com/?token=", want: "https://example.com/?token=redacted"},
		"fragment dropped":             {in: "https://example.com/x#access_token=abc", want: "https://example.com/x"},
		"bare ? dropped":               {in: "https://example.com/x?", want: "https://example.com/x"},
		"IPv6 host":                    {in: "http://[::1]:9090/api?token=t", want: "http://[::1]:9090/api?token=redacted"},
		"IPv6 host with userinfo":      {in: "http://a:b@[fe80::1%25eth0]:80/", want: "http://redacted@[fe80::1%25eth0]:80/"},
		"all at once":                  {in: "https://u:p@h:8443/p/a?x=1&y#f", want: "https://redacted@h:8443/p/a?x=redacted&y"},
		"relative reference":           {in: "/hooks?token=abc", want: "/hooks?token=redacted"},
		"empty":                        {in: "", want: ""},
		"opaque user:pass@host":        {in: "user:pass@host/x", want: Unparsable},
		"control character":            {in: "https://u:p@h/\x00?token=abc", want: Unparsable},
		"newline":                      {in: "https://u:p@h/x\n?token=abc", want: Unparsable},
		"invalid escape":               {in: "https://u:p@h/%zz?token=abc", want: Unparsable},
		"space in host":                {in: "https://u:p@ex ample.com/", want: Unparsable},
		"invalid port":                 {in: "https://u:p@h:port/", want: Unparsable},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := Redact(tt.in)
			if got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
			for _, secret := range []string{"pass", "p%40ss", "abc", "s3cr3t", "access_token"} {
				if strings.Contains(tt.in, secret) && strings.Contains(got, secret) {
					t.Errorf("Redact(%q) = %q still holds %q", tt.in, got, secret)
				}
			}
		})
	}
}

func TestRedactText(t *testing.T) {
	tests := map[string]struct {
		in, want string
	}{
		"net/http error": {
			in:   `Post "https://u:p@hooks.example.com/x?token=abc": dial tcp 10.0.0.1:443: connect: connection refused`,
			want: `Post "https://redacted@hooks.example.com/x?token=redacted": dial tcp 10.0.0.1:443: connect: connection refused`,
		},
		"several URLs": {
			in:   "from http://a/?k=1 to https://b/?k=2",
			want: "from http://a/?k=redacted to https://b/?k=redacted",
		},
		"trailing punctuation kept outside": {
			in:   "see https://h/x?token=abc. Or https://h/y?t=1, then",
			want: "see https://h/x?token=redacted. Or https://h/y?t=redacted, then",
		},
		"unparsable URL replaced": {
			in:   "call https://u:p@h/%zz?token=abc failed",
			want: "call " + Unparsable + " failed",
		},
		"no URL":            {in: "connection refused", want: "connection refused"},
		"IPv6":              {in: `Get "http://[::1]:9090/api/v1/query?query=up": EOF`, want: `Get "http://[::1]:9090/api/v1/query?query=redacted": EOF`},
		"angle brackets":    {in: "<https://h/?t=1>", want: "<https://h/?t=redacted>"},
		"other schemes too": {in: "proxy socks5://u:p@proxy:1080 refused", want: "proxy socks5://redacted@proxy:1080 refused"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, RedactText(tt.in)); diff != "" {
				t.Errorf("RedactText(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("abcdefghij", 20)
	tests := map[string]struct {
		in   string
		want string
	}{
		"short text unchanged":         {in: "gate closed", want: "gate closed"},
		"empty":                        {in: "", want: ""},
		"whitespace collapsed":         {in: "  not\n\n ready\t yet \r\n", want: "not ready yet"},
		"control characters dropped":   {in: "a\x00b\x07c\x7fd", want: "abcd"},
		"ANSI colours dropped":         {in: "\x1b[31mERROR\x1b[0m: denied", want: "ERROR: denied"},
		"OSC hyperlink dropped":        {in: "\x1b]8;;https://evil/\x07click\x1b]8;;\x07", want: "click"},
		"invalid UTF-8 dropped":        {in: "ok\xff\xfe done", want: "ok done"},
		"bidi override dropped":        {in: "safe\u202etxt.exe", want: "safetxt.exe"},
		"unicode kept":                 {in: "déploiement refusé ✗", want: "déploiement refusé ✗"},
		"URL redacted":                 {in: `{"error":"see https://u:p@h/x?token=abc"}`, want: `{"error":"see https://redacted@h/x?token=redacted"}`},
		"long text cut":                {in: long, want: long[:MaxExcerptRunes-1] + "…"},
		"exactly the limit is not cut": {in: long[:MaxExcerptRunes], want: long[:MaxExcerptRunes]},
		"cut counts runes":             {in: strings.Repeat("é", 100), want: strings.Repeat("é", MaxExcerptRunes-1) + "…"},
		"HTML error page":              {in: "<html>\n<head><title>502 Bad Gateway</title></head>\n<body>\n<center><h1>502 Bad Gateway</h1></center>\n</body></html>", want: "<html> <head><title>502 Bad Gateway</title></head> <body> <cent…"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := Excerpt([]byte(tt.in))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Excerpt(%q) (-want +got):\n%s", tt.in, diff)
			}
			if n := len([]rune(got)); n > MaxExcerptRunes {
				t.Errorf("Excerpt is %d runes long, want at most %d", n, MaxExcerptRunes)
			}
		})
	}
}

func TestJoinURL(t *testing.T) {
	tests := map[string]struct {
		base    string
		elem    []string
		want    string
		wantErr string
	}{
		"host only":              {base: "http://prometheus:9090", elem: []string{"api/v1/query"}, want: "http://prometheus:9090/api/v1/query"},
		"trailing slash":         {base: "http://prometheus:9090/", elem: []string{"api/v1/query"}, want: "http://prometheus:9090/api/v1/query"},
		"path prefix":            {base: "http://thanos/prom", elem: []string{"api/v1/query"}, want: "http://thanos/prom/api/v1/query"},
		"path prefix with slash": {base: "https://thanos/prom/", elem: []string{"api", "v1", "query"}, want: "https://thanos/prom/api/v1/query"},
		"base query kept":        {base: "https://h/prom?tenant=a", elem: []string{"api/v1/query"}, want: "https://h/prom/api/v1/query?tenant=a"},
		"fragment dropped":       {base: "https://h/prom#x", elem: []string{"api/v1/query"}, want: "https://h/prom/api/v1/query"},
		"no climbing above root": {base: "https://h/prom", elem: []string{"../../etc"}, want: "https://h/etc"},
		"IPv6":                   {base: "http://[::1]:9090", elem: []string{"api/v1/query"}, want: "http://[::1]:9090/api/v1/query"},
		"no scheme":              {base: "prometheus:9090", wantErr: "invalid address " + Unparsable + ": the scheme must be http or https"},
		"other scheme":           {base: "file:///etc/passwd", wantErr: "invalid address file:///etc/passwd: the scheme must be http or https"},
		"no host":                {base: "http:///x", wantErr: "invalid address http:///x: no host"},
		"unparsable, redacted":   {base: "http://u:secret@h/%zz", wantErr: `invalid address ` + Unparsable + `: invalid URL escape "%zz"`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			u, err := JoinURL(tt.base, tt.elem...)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("JoinURL(%q) error = %v, want %q", tt.base, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("JoinURL(%q): %v", tt.base, err)
			}
			if got := u.String(); got != tt.want {
				t.Errorf("JoinURL(%q, %q) = %q, want %q", tt.base, tt.elem, got, tt.want)
			}
		})
	}
}

func TestOrigin(t *testing.T) {
	tests := map[string]struct{ in, want string }{
		"webhook path dropped": {in: "https://hooks.slack.com/services/T000/B000/XXXX", want: "https://hooks.slack.com"},
		"userinfo and query":   {in: "http://u:p@h:8080/x?token=abc#f", want: "http://h:8080"},
		"IPv6":                 {in: "http://[::1]:9090/x", want: "http://[::1]:9090"},
		"unparsable":           {in: "https://u:p@h/%zz", want: Unparsable},
		"opaque":               {in: "user:pass@host", want: Unparsable},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Origin(tt.in); got != tt.want {
				t.Errorf("Origin(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// The errors of a call: redacted messages that still wrap their cause.
func TestRequestError(t *testing.T) {
	redirect := &url.Error{Op: "Post", URL: "https://target/x?k=v", Err: &RedirectError{Location: "https://target/x?k=redacted"}}
	refused := &url.Error{Op: "Post", URL: "https://u:p@h/x?token=abc", Err: errors.New("dial tcp: connection refused")}
	tests := map[string]struct {
		err        error
		want       string
		isRedirect bool
	}{
		"redirect names the URL called": {err: redirect, isRedirect: true,
			want: "https://redacted@h/x?token=redacted: the server answered with a redirect to https://target/x?k=redacted, and serin follows none"},
		"other errors redacted": {err: refused,
			want: `Post "https://redacted@h/x?token=redacted": dial tcp: connection refused`},
		"without the URL": {err: WithoutURL(refused), want: "dial tcp: connection refused"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			err := RequestError("https://u:p@h/x?token=abc", tt.err)
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("RequestError (-want +got):\n%s", diff)
			}
			if IsRedirect(err) != tt.isRedirect || !errors.Is(err, WithoutURL(tt.err)) {
				t.Errorf("RequestError does not wrap the cause of %v", tt.err)
			}
		})
	}
	if RedactError(nil) != nil {
		t.Error("RedactError(nil) is not nil")
	}
}
