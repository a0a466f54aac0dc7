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
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Unparsable stands for a URL that cannot be parsed: never the input,
// which may hold a credential.
const Unparsable = "<unparsable URL>"

// Redacted replaces each secret.
const Redacted = "redacted"

// minTokenTail is the fewest characters after a prefix that make a token
// (real ones have 20 and more): "ghp_x" is a word.
const minTokenTail = 8

// tokenPrefixes start the tokens of known forms, wherever they appear.
var tokenPrefixes = []string{
	"ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_", // GitHub
	"glpat-", "gldt-", "glptt-", "glrt-", "gloas-", // GitLab
}

// tokenUsers are the user names of a user:token pair that Git hosts
// read as a token (x-access-token:TOKEN).
var tokenUsers = []string{"x-access-token", "x-token-auth", "oauth2", "gitlab-ci-token", "private-token", "token"}

// credentialNames name a path segment whose next segment is a credential
// (/token/SECRET/).
var credentialNames = []string{
	"token", "tokens", "access-token", "access_token", "private-token", "private_token",
	"api-key", "api_key", "apikey", "secret", "password", "passwd",
}

// URL returns rawURL fit to print: its userinfo replaced by "redacted"
// (https://redacted@host/), every query value by "redacted" (the keys
// kept), the fragment dropped, and the path segments of a token's form
// (see the package doc) replaced by "redacted". Input it cannot parse as
// a URL, or an opaque one ("user:pass@host" parses as the scheme
// "user"), gives Unparsable.
func URL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Opaque != "" {
		return Unparsable
	}
	if u.User != nil {
		u.User = url.User(Redacted)
	}
	u.Fragment, u.RawFragment = "", ""
	u.ForceQuery = false
	u.RawQuery = redactQuery(u.RawQuery)
	if p, changed := redactPath(u.EscapedPath()); changed {
		if u.Path, err = url.PathUnescape(p); err != nil {
			return Unparsable
		}
		u.RawPath = p
	}
	return u.String()
}

// redactQuery keeps the keys of a raw query and replaces its values.
func redactQuery(raw string) string {
	if raw == "" {
		return ""
	}
	pairs := strings.Split(raw, "&")
	for i, pair := range pairs {
		if key, _, ok := strings.Cut(pair, "="); ok {
			pairs[i] = key + "=" + Redacted
		}
	}
	return strings.Join(pairs, "&")
}

// redactPath replaces the segments of an escaped path that have a
// token's form, and says whether it did.
func redactPath(escaped string) (string, bool) {
	segments := strings.Split(escaped, "/")
	changed := false
	for i, seg := range segments {
		plain, err := url.PathUnescape(seg)
		if err != nil {
			plain = seg
		}
		switch {
		case i > 0 && slicesContainFold(credentialNames, segmentOf(segments[i-1])) && seg != "":
			segments[i] = Redacted
		case hasTokenPrefix(plain):
			segments[i] = Redacted
		default:
			user, _, ok := strings.Cut(plain, ":")
			if !ok || !slicesContainFold(tokenUsers, user) {
				continue
			}
			segments[i] = url.PathEscape(user) + ":" + Redacted
		}
		changed = true
	}
	return strings.Join(segments, "/"), changed
}

// segmentOf is an escaped segment unescaped (as it is when it does not
// unescape).
func segmentOf(seg string) string {
	if plain, err := url.PathUnescape(seg); err == nil {
		return plain
	}
	return seg
}

// hasTokenPrefix reports whether s starts with a known token prefix, the
// case ignored.
func hasTokenPrefix(s string) bool {
	for _, p := range tokenPrefixes {
		if len(s) >= len(p)+minTokenTail && strings.EqualFold(s[:len(p)], p) {
			return true
		}
	}
	return false
}

func slicesContainFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// urlInText finds URLs in free text: a scheme, ://, then everything up to
// a space, a quote, a backslash or an angle bracket. Go's errors quote the
// URL they name (Post "https://…": …).
var urlInText = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>\\` + "`" + `]+`)

// bareToken finds a token of a known prefix outside a URL: the prefix,
// then the characters tokens are made of.
var bareToken = regexp.MustCompile(`(?i)\b(` + strings.Join(quoteAll(tokenPrefixes), "|") + `)[A-Za-z0-9_-]{` + strconv.Itoa(minTokenTail) + `,}`)

func quoteAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = regexp.QuoteMeta(s)
	}
	return out
}

// Text returns s with every URL in it redacted (see URL) and every bare
// token of a known prefix replaced: error messages of net/http and go-git
// name the URL they called.
func Text(s string) string {
	s = urlInText.ReplaceAllStringFunc(s, func(match string) string {
		trimmed := strings.TrimRight(match, ".,:;")
		return URL(trimmed) + match[len(trimmed):]
	})
	return bareToken.ReplaceAllString(s, Redacted)
}

// Error returns err with its message redacted: the URL of each *url.Error
// in its chain replaced whole (quoted or not) by its redacted form, then
// the rest as Text does. It still wraps err for errors.Is and errors.As.
// nil stays nil.
func Error(err error) error {
	if err == nil {
		return nil
	}
	if _, done := err.(*redactedError); done {
		return err
	}
	return &redactedError{msg: Message(err), err: err}
}

// Message is the redacted message of err (see Error); "" for nil.
func Message(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	for _, raw := range chainURLs(err) {
		safe := URL(raw)
		if quoted := strconv.Quote(raw); quoted[1:len(quoted)-1] != raw {
			msg = strings.ReplaceAll(msg, quoted[1:len(quoted)-1], safe)
		}
		msg = strings.ReplaceAll(msg, raw, safe)
	}
	return Text(msg)
}

// chainURLs are the URLs the *url.Errors of err's chain name, the
// longest first (so that no URL is replaced inside a longer one).
func chainURLs(err error) []string {
	var out []string
	var walk func(error)
	walk = func(e error) {
		for e != nil {
			if ue, ok := e.(*url.Error); ok && ue.URL != "" {
				out = append(out, ue.URL)
			}
			if joined, ok := e.(interface{ Unwrap() []error }); ok {
				for _, inner := range joined.Unwrap() {
					walk(inner)
				}
				return
			}
			e = errors.Unwrap(e)
		}
	}
	walk(err)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && len(out[j]) > len(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// redactedError is an error whose message is redacted.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
