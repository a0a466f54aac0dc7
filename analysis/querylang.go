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

package analysis

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// A query variable ({{ variables.NAME }}, {{ name }}, {{ namespace }},
// {{ target }}, {{ service }}) is a tenant's value in a query that runs
// with the platform's template credentials: it must never change the
// query's shape. Where the template places it decides how: inside a
// string literal of the provider's query language it is escaped for that
// literal; anywhere else it is the query language itself, and only a
// plain token is accepted (rawToken), else the check fails saying which
// variable to quote. RenderQuery finds each place by rendering the
// template with a marker per variable and reading the result with the
// language's string rules (queryLanguage).

// queryLanguage is what RenderQuery needs of a provider's query language:
// which characters open a string literal, and how a value is written
// inside one.
type queryLanguage struct {
	// quotes open (and close) a string literal.
	quotes string
	// backslash is true when a backslash escapes the next character in a
	// literal opened by q (false for PromQL's raw backtick strings).
	backslash func(q rune) bool
	// escape writes v for the inside of a literal opened by q, or says
	// why it cannot.
	escape func(v string, q rune) (string, error)
}

// rawToken is what a variable placed outside a string literal may hold:
// a name, a number, a duration, a path or a glob of them. Nothing that
// opens a literal, a selector, a call or a new clause.
var rawToken = regexp.MustCompile(`^[A-Za-z0-9_.:/*-]*$`)

// languages are the query languages of the providers, by provider type.
var languages = map[v1alpha1.MetricProviderType]queryLanguage{
	v1alpha1.PrometheusProvider:  promQL,
	v1alpha1.StackdriverProvider: promQL,
	// InfluxDB's Flux: double-quoted strings with backslash escapes and
	// ${…} interpolation.
	v1alpha1.InfluxDBProvider: {quotes: `"`, backslash: always, escape: backslashEscape(`"`, map[string]string{"${": `\${`})},
	// New Relic's NRQL: single-quoted strings; backticks quote names.
	v1alpha1.NewRelicProvider: {quotes: "'`", backslash: func(q rune) bool { return q == '\'' }, escape: func(v string, q rune) (string, error) {
		if q == '`' {
			return tokenOnly(v, "a backtick-quoted NRQL name")
		}
		return backslashEscape(`'`, nil)(v, q)
	}},
	// Graphite's render targets: function arguments in either quote.
	v1alpha1.GraphiteProvider: {quotes: `"'`, backslash: always, escape: backslashEscape(`"'`, nil)},
	// Splunk's SignalFlow: Python-like strings.
	v1alpha1.SplunkProvider: {quotes: `"'`, backslash: always, escape: backslashEscape(`"'`, nil)},
	// Dynatrace's metric selectors: double-quoted strings whose escape
	// character is the tilde.
	v1alpha1.DynatraceProvider: {quotes: `"`, backslash: func(rune) bool { return false }, escape: tildeEscape},
	// CloudWatch's query is JSON: a value goes in a JSON string.
	v1alpha1.CloudWatchProvider: {quotes: `"`, backslash: always, escape: jsonEscape},
	// Datadog's metric queries and the external metrics API's label
	// selectors have no string literals: every value is a token.
	v1alpha1.DatadogProvider:         {},
	v1alpha1.ExternalMetricsProvider: {},
}

// promQL: double- and single-quoted strings with escapes, raw backtick
// strings without (EscapePromQL's \xNN then stays literal text).
var promQL = queryLanguage{
	quotes:    "\"'`",
	backslash: func(q rune) bool { return q != '`' },
	escape:    func(v string, _ rune) (string, error) { return EscapePromQL(v), nil },
}

func always(rune) bool { return true }

// languageOf is the query language of a provider type; PromQL for an
// unknown one (the built-in checks).
func languageOf(t v1alpha1.MetricProviderType) queryLanguage {
	if l, ok := languages[t]; ok {
		return l
	}
	return promQL
}

// backslashEscape escapes, with a backslash, the backslash and the
// characters of special, and writes each key of extra as its value;
// control characters are refused (no literal of these languages is sure
// to read them back).
func backslashEscape(special string, extra map[string]string) func(string, rune) (string, error) {
	return func(v string, _ rune) (string, error) {
		if strings.ContainsFunc(v, isControl) {
			return "", fmt.Errorf("it holds a control character")
		}
		var b strings.Builder
		for i := 0; i < len(v); {
			if k, with, ok := prefixOf(v[i:], extra); ok {
				b.WriteString(with)
				i += len(k)
				continue
			}
			r, size := utf8.DecodeRuneInString(v[i:])
			if r == '\\' || strings.ContainsRune(special, r) {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
			i += size
		}
		return b.String(), nil
	}
}

// prefixOf returns the key of extra that s starts with, and its value.
func prefixOf(s string, extra map[string]string) (string, string, bool) {
	for k, with := range extra {
		if strings.HasPrefix(s, k) {
			return k, with, true
		}
	}
	return "", "", false
}

// tildeEscape writes v for a Dynatrace string: ~ escapes " and ~.
func tildeEscape(v string, _ rune) (string, error) {
	if strings.ContainsFunc(v, isControl) {
		return "", fmt.Errorf("it holds a control character")
	}
	return strings.NewReplacer(`~`, `~~`, `"`, `~"`).Replace(v), nil
}

// jsonEscape writes v for the inside of a JSON string.
func jsonEscape(v string, _ rune) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b[1 : len(b)-1]), nil
}

// tokenOnly accepts v where only a plain token may go.
func tokenOnly(v, where string) (string, error) {
	if !rawToken.MatchString(v) {
		return "", fmt.Errorf("it is placed in %s, where only letters, digits and _ . : / * - may go", where)
	}
	return v, nil
}

func isControl(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}

// placement is where a marker stands in a rendered query: inside a
// literal opened by quote, or outside any (quote 0).
type placement struct {
	marker string
	start  int
	quote  rune
}

// placements finds the markers in query, read with the language's string
// rules.
func (l queryLanguage) placements(query string, markers []string) []placement {
	var out []placement
	var quote rune
	escaped := false
	for i, r := range query {
		for _, m := range markers {
			if strings.HasPrefix(query[i:], m) {
				out = append(out, placement{marker: m, start: i, quote: quote})
			}
		}
		switch {
		case escaped:
			escaped = false
		case quote != 0 && r == '\\' && l.backslash(quote):
			escaped = true
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && l.quotes != "" && strings.ContainsRune(l.quotes, r):
			quote = r
		}
	}
	return out
}
