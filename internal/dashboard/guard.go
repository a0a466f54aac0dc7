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

package dashboard

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
)

// TokenHeader carries the page's token on the requests that change
// something.
const TokenHeader = "X-Serin-Token"

// contentSecurityPolicy lets the pages load nothing but the dashboard's own
// files and talk to nothing but the dashboard.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// guard protects the dashboard from the other pages of the user's browser,
// which can all send requests to a server on localhost:
//
//   - every request must name the dashboard by address (an IP address or
//     localhost) in its Host header: a page of another site whose name
//     was made to resolve to 127.0.0.1 (DNS rebinding) is refused, so it
//     can read neither the Canaries nor the page's token;
//   - when the dashboard listens beyond loopback, every request must
//     carry its access token (admitted), or anyone who reaches the port
//     could read the page's token and act;
//   - a request that changes something must come from the dashboard's own
//     origin (Origin and Sec-Fetch-Site, checked by
//     http.CrossOriginProtection) and carry the token that only the
//     dashboard's page holds.
func (s *Server) guard(next http.Handler) http.Handler {
	sameOrigin := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header := w.Header()
		header.Set("Content-Security-Policy", contentSecurityPolicy)
		header.Set("X-Content-Type-Options", "nosniff")
		header.Set("X-Frame-Options", "DENY")
		header.Set("Referrer-Policy", "no-referrer")
		if !addressedByAddress(r.Host) {
			writeProblem(w, problem{Status: http.StatusMisdirectedRequest,
				Message: "the dashboard answers only requests to its address (an IP address or localhost), not to " + r.Host})
			return
		}
		if s.opts.AccessToken != "" && !s.admitted(w, r) {
			return
		}
		if !isSafeMethod(r.Method) {
			if err := sameOrigin.Check(r); err != nil {
				writeProblem(w, problem{Status: http.StatusForbidden, Message: "refused a request from another site: " + err.Error()})
				return
			}
			if !s.validToken(r.Header.Get(TokenHeader)) {
				writeProblem(w, problem{Status: http.StatusForbidden,
					Message: "refused a request without the dashboard's token: reload the page"})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// AccessParameter is the query parameter that brings the access token
// (Options.AccessToken) to a browser; accessCookie keeps it.
const (
	AccessParameter = "access_token"
	accessCookie    = "serin-dashboard-access"
)

// admitted tells whether r carries the access token, in its cookie or as
// the query parameter of the URL the CLI printed; the parameter is
// exchanged for the cookie and a redirect to the same URL without it, so
// that it stays out of the browser's history and the page's links. A
// request without it is answered 401, and admitted returns false.
func (s *Server) admitted(w http.ResponseWriter, r *http.Request) bool {
	if c, err := r.Cookie(accessCookie); err == nil && equalSecret(c.Value, s.opts.AccessToken) {
		return true
	}
	if token := r.URL.Query().Get(AccessParameter); token != "" && equalSecret(token, s.opts.AccessToken) && isSafeMethod(r.Method) {
		http.SetCookie(w, &http.Cookie{Name: accessCookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		u := *r.URL
		q := u.Query()
		q.Del(AccessParameter)
		u.RawQuery = q.Encode()
		http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
		return false
	}
	writeProblem(w, problem{Status: http.StatusUnauthorized,
		Message: "the dashboard listens beyond loopback and asks for its access token: open the URL serin dashboard printed when it started"})
	return false
}

func equalSecret(got, want string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

func isSafeMethod(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}

func (s *Server) validToken(token string) bool {
	return equalSecret(token, s.opts.Token)
}

// addressedByAddress tells whether a Host header names an IP address or
// localhost, which no other site can make its own.
func addressedByAddress(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return net.ParseIP(host) != nil || strings.EqualFold(host, "localhost")
}
