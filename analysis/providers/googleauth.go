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

package providers

import (
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"golang.org/x/oauth2/jwt"

	"github.com/serin-dev/serin/internal/outbound"
)

// The OAuth 2.0 flow of a Google service account key
// (https://developers.google.com/identity/protocols/oauth2/service-account):
// a JWT signed with the key's private key (RS256) is exchanged at the
// key's token_uri for an access token (RFC 7523's JWT bearer grant).
// golang.org/x/oauth2/google reads the key, signs the assertion and reads
// the answer; serin checks the key first (to say what is wrong with it),
// sends the exchange through the provider's outbound policy and caches
// the tokens.
const (
	// googleTokenRefreshMargin: a cached token with less than this left
	// is renewed, so that it outlives the query it is sent with (a
	// provider.timeout is at most 30s).
	googleTokenRefreshMargin = time.Minute
	// maxGoogleTokens bounds the cache of access tokens: one per
	// service account key in use.
	maxGoogleTokens = 64
)

// googleServiceAccount is a service account's JSON key, as the Google
// Cloud console downloads it, read and checked.
type googleServiceAccount struct {
	clientEmail string
	// config makes and exchanges the key's assertions.
	config *jwt.Config
	// cacheKey identifies the key's access tokens in googleTokens: the
	// SHA-256 of the key's JSON and the scope.
	cacheKey [sha256.Size]byte
}

// googleServiceAccountKey is the part of a service account's JSON key
// serin checks before x/oauth2 reads it.
type googleServiceAccountKey struct {
	Type        string `json:"type"`
	ClientEmail string `json:"client_email"`
	PrivateKey  string `json:"private_key"`
}

// parseGoogleServiceAccount reads a service account's JSON key for
// scope. Its errors say what is wrong without quoting the key. Keys of
// any other type (a user's, an external account's, an impersonation
// chain) are refused: serin exchanges service account keys only.
func parseGoogleServiceAccount(data []byte, scope string) (*googleServiceAccount, error) {
	var k googleServiceAccountKey
	if err := json.Unmarshal(data, &k); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return nil, fmt.Errorf("is not JSON (at byte %d): it must be a service account's JSON key", syntax.Offset)
		}
		return nil, errors.New("is not a service account's JSON key: a field has the wrong type")
	}
	switch {
	case k.Type != "service_account":
		return nil, fmt.Errorf("is a key of type %q, not a service account's JSON key (type service_account): "+
			"serin exchanges no other credentials", outbound.Excerpt([]byte(k.Type)))
	case k.ClientEmail == "":
		return nil, errors.New("has no client_email")
	case k.PrivateKey == "":
		return nil, errors.New("has no private_key")
	}
	if err := checkGoogleRSAKey(k.PrivateKey); err != nil {
		return nil, fmt.Errorf("has a private_key that %w", err)
	}
	config, err := google.JWTConfigFromJSON(data, scope)
	if err != nil {
		return nil, errors.New("is not a service account's JSON key: a field has the wrong type")
	}
	account := &googleServiceAccount{clientEmail: k.ClientEmail, config: config}
	h := sha256.New()
	h.Write(data)
	h.Write([]byte{0})
	h.Write([]byte(scope))
	h.Sum(account.cacheKey[:0])
	return account, nil
}

// checkGoogleRSAKey checks the PEM private key of a service account key:
// PKCS #8, as Google writes it, or PKCS #1, and RSA.
func checkGoogleRSAKey(text string) error {
	block, _ := pem.Decode([]byte(text))
	if block == nil {
		return errors.New("is not PEM")
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
			return nil
		}
		return fmt.Errorf("is not a PKCS #8 or PKCS #1 private key (PEM %s)", outbound.Excerpt([]byte(block.Type)))
	}
	if _, ok := parsed.(*rsa.PrivateKey); !ok {
		return fmt.Errorf("is a %T, not an RSA key", parsed)
	}
	return nil
}

// accessToken returns an access token of the account for scope: the
// cached one while it has more than googleTokenRefreshMargin left, else
// a new one from the token endpoint, through the provider's call (the
// outbound policy: no redirect, a bounded answer, the provider's
// timeout) with a client that verifies certificates, whatever
// provider.insecureSkipVerify says.
func (a *googleServiceAccount) accessToken(ctx context.Context, p *httpProvider, scope string) (string, error) {
	now := p.now()
	if token, ok := googleTokens.get(a.cacheKey, now); ok {
		return token, nil
	}
	u, err := outbound.JoinURL(a.config.TokenURL)
	if err != nil {
		return "", a.tokenError(fmt.Errorf("token_uri: %w", err))
	}
	exchange := &googleExchange{call: providerCall{Provider: "token endpoint", Address: a.config.TokenURL, URL: u}, timeout: p.timeout}
	ctx = context.WithValue(ctx, oauth2.HTTPClient, &http.Client{Transport: exchange})
	token, err := a.config.TokenSource(ctx).Token()
	switch {
	case exchange.err != nil:
		// The call failed: the policy's or the network's words.
		return "", a.tokenError(exchange.err)
	case exchange.answer == nil:
		// The assertion could not be made: nothing was sent.
		return "", a.tokenError(err)
	case !exchange.answer.OK():
		var t googleTokenError
		_ = json.Unmarshal(exchange.answer.Body, &t)
		return "", a.tokenError(exchange.call.refused(exchange.answer, joinNonEmpty(": ", t.Error, t.ErrorDescription)))
	case err != nil:
		return "", a.tokenError(exchange.call.answerError(exchange.answer.Status, fmt.Errorf("no JSON: %q", outbound.Excerpt(exchange.answer.Body))))
	case token.AccessToken == "":
		return "", a.tokenError(exchange.call.answerError(exchange.answer.Status, errors.New("no access_token")))
	}
	// The expiry on serin's clock: x/oauth2 reckons on the wall clock.
	var expiresIn time.Duration
	if secs, ok := token.Extra("expires_in").(float64); ok {
		expiresIn = time.Duration(secs) * time.Second
	}
	googleTokens.put(a.cacheKey, token.AccessToken, now.Add(expiresIn), now)
	return token.AccessToken, nil
}

// googleTokenError is the token endpoint's OAuth 2.0 error.
type googleTokenError struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

// googleExchange is the transport x/oauth2 posts a service account's
// assertion with: the provider's call to the key's token_uri, so that the
// outbound policy holds (no redirect, no answer over maxProviderAnswer,
// the provider's timeout), keeping its answer or error for the message.
type googleExchange struct {
	call    providerCall
	timeout time.Duration
	answer  *providerAnswer
	err     error
}

// RoundTrip sends req's form to the token endpoint; it sends nothing to
// another URL.
func (e *googleExchange) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	if req.URL.String() != e.call.URL.String() {
		e.err = fmt.Errorf("x/oauth2 asked for %s, not the key's token_uri", outbound.Redact(req.URL.String()))
		return nil, e.err
	}
	e.call.Method, e.call.Body = req.Method, body
	e.call.Header = http.Header{"Content-Type": req.Header.Values("Content-Type"), "Accept": {"application/json"}}
	e.answer, e.err = e.call.send(req.Context(), clientOf(nil, false), e.timeout)
	if e.err != nil {
		return nil, e.err
	}
	return &http.Response{StatusCode: e.answer.Status, Status: http.StatusText(e.answer.Status), Request: req,
		Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(e.answer.Body)), ContentLength: int64(len(e.answer.Body))}, nil
}

// tokenError is an error getting the account's access token.
func (a *googleServiceAccount) tokenError(err error) error {
	return fmt.Errorf("stackdriver: no access token for %s: %w", a.clientEmail, err)
}

// joinNonEmpty joins the parts that are not empty with sep.
func joinNonEmpty(sep string, parts ...string) string {
	s := ""
	for _, part := range parts {
		switch {
		case part == "":
		case s == "":
			s = part
		default:
			s += sep + part
		}
	}
	return s
}

// googleTokens caches the access tokens of the service account keys in
// use, by the SHA-256 of the key and its scope: a Canary gets a cached
// token only by presenting the key it was made with, so no token serves
// a namespace that does not hold the key.
var googleTokens = &googleTokenCache{max: maxGoogleTokens}

// googleTokenCache holds at most max access tokens until shortly before
// they expire. Two checks that miss at once both ask for a token; the
// last one is kept.
type googleTokenCache struct {
	mu     sync.Mutex
	max    int
	tokens map[[sha256.Size]byte]googleToken
}

// googleToken is an access token and when it expires.
type googleToken struct {
	value  string
	expiry time.Time
}

// get returns the token of key if it has more than
// googleTokenRefreshMargin left at now.
func (c *googleTokenCache) get(key [sha256.Size]byte, now time.Time) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.tokens[key]
	if !ok || !now.Add(googleTokenRefreshMargin).Before(t.expiry) {
		return "", false
	}
	return t.value, true
}

// put keeps the token of key until expiry, unless it expires within the
// margin; a full cache makes room first (evict).
func (c *googleTokenCache) put(key [sha256.Size]byte, value string, expiry, now time.Time) {
	if !now.Add(googleTokenRefreshMargin).Before(expiry) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tokens == nil {
		c.tokens = map[[sha256.Size]byte]googleToken{}
	}
	if _, ok := c.tokens[key]; !ok && len(c.tokens) >= c.max {
		c.evict(now)
	}
	c.tokens[key] = googleToken{value: value, expiry: expiry}
}

// evict makes room for one token: it drops the tokens past their use at
// now, else the one that expires first.
func (c *googleTokenCache) evict(now time.Time) {
	var first [sha256.Size]byte
	var firstExpiry time.Time
	for k, t := range c.tokens {
		switch {
		case !now.Add(googleTokenRefreshMargin).Before(t.expiry):
			delete(c.tokens, k)
		case firstExpiry.IsZero() || t.expiry.Before(firstExpiry):
			first, firstExpiry = k, t.expiry
		}
	}
	if len(c.tokens) >= c.max {
		delete(c.tokens, first)
	}
}

// forget drops the token of key if it is value: one the API refused.
func (c *googleTokenCache) forget(key [sha256.Size]byte, value string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.tokens[key]; ok && t.value == value {
		delete(c.tokens, key)
	}
}
