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
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/serin-dev/serin/internal/outbound"
)

// The OAuth 2.0 flow of a Google service account key
// (https://developers.google.com/identity/protocols/oauth2/service-account):
// a JWT signed with the key's private key (RS256) is exchanged at the
// key's token_uri for an access token (RFC 7523's JWT bearer grant).
const (
	googleJWTBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	// googleDefaultTokenURI is the token endpoint of a key that names
	// none, as Google's client libraries take it.
	googleDefaultTokenURI = "https://oauth2.googleapis.com/token"
	// googleAssertionLifetime is the JWT's lifetime: Google's maximum.
	googleAssertionLifetime = time.Hour
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
	clientEmail  string
	privateKeyID string
	key          *rsa.PrivateKey
	// tokenURI is the key's token_uri, where its assertions go.
	tokenURI string
	// cacheKey identifies the key's access tokens in googleTokens: the
	// SHA-256 of the key's JSON and the scope.
	cacheKey [sha256.Size]byte
}

// googleServiceAccountKey is the part of a service account's JSON key
// serin reads.
type googleServiceAccountKey struct {
	Type         string `json:"type"`
	ClientEmail  string `json:"client_email"`
	PrivateKeyID string `json:"private_key_id"`
	PrivateKey   string `json:"private_key"`
	TokenURI     string `json:"token_uri"`
}

// parseGoogleServiceAccount reads a service account's JSON key for
// scope. Its errors say what is wrong without quoting the key.
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
	key, err := parseGoogleRSAKey(k.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("has a private_key that %w", err)
	}
	account := &googleServiceAccount{clientEmail: k.ClientEmail, privateKeyID: k.PrivateKeyID, key: key, tokenURI: k.TokenURI}
	if account.tokenURI == "" {
		account.tokenURI = googleDefaultTokenURI
	}
	h := sha256.New()
	h.Write(data)
	h.Write([]byte{0})
	h.Write([]byte(scope))
	h.Sum(account.cacheKey[:0])
	return account, nil
}

// parseGoogleRSAKey reads the PEM private key of a service account key:
// PKCS #8, as Google writes it, or PKCS #1.
func parseGoogleRSAKey(text string) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode([]byte(text))
	if block == nil {
		return nil, errors.New("is not PEM")
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		if key, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
			return key, nil
		}
		return nil, fmt.Errorf("is not a PKCS #8 or PKCS #1 private key (PEM %s)", outbound.Excerpt([]byte(block.Type)))
	}
	key, ok := parsed.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("is a %T, not an RSA key", parsed)
	}
	return key, nil
}

// assertion is the JWT a service account sends to its token endpoint for
// scope, issued at now and valid googleAssertionLifetime.
func (a *googleServiceAccount) assertion(scope string, now time.Time) (string, error) {
	header, err := json.Marshal(struct {
		Alg string `json:"alg"`
		Typ string `json:"typ"`
		Kid string `json:"kid,omitempty"`
	}{Alg: "RS256", Typ: "JWT", Kid: a.privateKeyID})
	if err != nil {
		return "", err
	}
	claims, err := json.Marshal(struct {
		Iss   string `json:"iss"`
		Scope string `json:"scope"`
		Aud   string `json:"aud"`
		Exp   int64  `json:"exp"`
		Iat   int64  `json:"iat"`
	}{Iss: a.clientEmail, Scope: scope, Aud: a.tokenURI, Exp: now.Add(googleAssertionLifetime).Unix(), Iat: now.Unix()})
	if err != nil {
		return "", err
	}
	b64 := base64.RawURLEncoding.EncodeToString
	signed := b64(header) + "." + b64(claims)
	digest := sha256.Sum256([]byte(signed))
	signature, err := rsa.SignPKCS1v15(nil, a.key, crypto.SHA256, digest[:])
	if err != nil {
		return "", err
	}
	return signed + "." + b64(signature), nil
}

// googleTokenAnswer is the token endpoint's answer, a token or an OAuth
// 2.0 error.
type googleTokenAnswer struct {
	AccessToken      string `json:"access_token"`
	ExpiresIn        int64  `json:"expires_in"`
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

// accessToken returns an access token of the account for scope: the
// cached one while it has more than googleTokenRefreshMargin left, else
// a new one from the token endpoint, through the provider's call (the
// outbound policy: no redirect, a bounded answer) with a client that
// verifies certificates, whatever provider.insecureSkipVerify says.
func (a *googleServiceAccount) accessToken(ctx context.Context, p *httpProvider, scope string) (string, error) {
	now := p.now()
	if token, ok := googleTokens.get(a.cacheKey, now); ok {
		return token, nil
	}
	assertion, err := a.assertion(scope, now)
	if err != nil {
		return "", a.tokenError(err)
	}
	u, err := outbound.JoinURL(a.tokenURI)
	if err != nil {
		return "", a.tokenError(fmt.Errorf("token_uri: %w", err))
	}
	call := &providerCall{Provider: "token endpoint", Address: a.tokenURI, Method: http.MethodPost, URL: u,
		Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Accept": {"application/json"}},
		Body:   []byte(url.Values{"grant_type": {googleJWTBearerGrant}, "assertion": {assertion}}.Encode())}
	answer, err := call.send(ctx, clientOf(nil, false), p.timeout)
	if err != nil {
		return "", a.tokenError(err)
	}
	var t googleTokenAnswer
	if !answer.OK() {
		_ = json.Unmarshal(answer.Body, &t)
		return "", a.tokenError(call.refused(answer, joinNonEmpty(": ", t.Error, t.ErrorDescription)))
	}
	if err := call.decodeJSON(answer, &t); err != nil {
		return "", a.tokenError(err)
	}
	if t.AccessToken == "" {
		return "", a.tokenError(call.answerError(answer.Status, errors.New("no access_token")))
	}
	googleTokens.put(a.cacheKey, t.AccessToken, now.Add(time.Duration(t.ExpiresIn)*time.Second), now)
	return t.AccessToken, nil
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
