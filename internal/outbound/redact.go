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
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/serin-dev/serin/internal/redact"
)

// Unparsable stands for a URL Redact cannot parse: never the input, which
// may hold a credential.
const Unparsable = redact.Unparsable

// Redact returns rawURL fit to print (redact.URL): its userinfo replaced
// by "redacted" (https://redacted@host/), every query value by
// "redacted" (the keys kept), the fragment dropped, path segments of a
// token's form replaced. Input it cannot parse as a URL, or an opaque
// one ("user:pass@host" parses as the scheme "user"), gives Unparsable.
func Redact(rawURL string) string { return redact.URL(rawURL) }

// Origin returns the scheme and host of rawURL, for the addresses whose
// path is itself a credential (a Slack, Teams or Discord webhook's):
// https://hooks.slack.com. Input Redact cannot parse gives Unparsable.
func Origin(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Opaque != "" {
		return Unparsable
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
}

// RedactText returns s with every URL in it redacted (redact.Text): error
// messages of net/http name the URL they called.
func RedactText(s string) string { return redact.Text(s) }

// MaxExcerptRunes is the length of an Excerpt, "…" included.
const MaxExcerptRunes = 64

// ansiEscape matches the terminal escape sequences a body may carry: CSI
// sequences (colours, cursor moves), OSC sequences (titles, hyperlinks)
// and two-character escapes.
var ansiEscape = regexp.MustCompile(`\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-_])`)

// Excerpt returns at most MaxExcerptRunes of a remote answer, fit for a
// condition, an event or a log: escape sequences, control and format
// characters and invalid UTF-8 removed, whitespace collapsed to single
// spaces, URLs redacted, and "…" at the end when it was cut.
func Excerpt(body []byte) string {
	text := RedactText(printable(ansiEscape.ReplaceAll(body, nil)))
	if utf8.RuneCountInString(text) <= MaxExcerptRunes {
		return text
	}
	runes := []rune(text)[:MaxExcerptRunes-1]
	return strings.TrimRight(string(runes), " ") + "…"
}

// printable keeps the printable characters of b, each run of whitespace
// (and of characters dropped between them) as one space, trimmed.
func printable(b []byte) string {
	var out strings.Builder
	space := false
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		switch {
		case r == utf8.RuneError && size <= 1:
			continue
		case unicode.IsSpace(r):
			space = true
			continue
		case !unicode.IsPrint(r):
			continue
		}
		if space && out.Len() > 0 {
			out.WriteByte(' ')
		}
		space = false
		out.WriteRune(r)
	}
	return out.String()
}

// RedactError returns err with its message redacted (redact.Error); it
// still wraps err for errors.Is and errors.As. nil stays nil.
func RedactError(err error) error { return redact.Error(err) }

// WithoutURL returns the cause of a *url.Error (net/http's "Post "URL":
// cause"), for a caller that names the URL its own way; other errors are
// returned as they are.
func WithoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
