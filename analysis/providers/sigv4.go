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
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// awsCredentials are an AWS access key, with the session token of
// temporary credentials (STS) when there is one.
type awsCredentials struct {
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
}

// The parts of an AWS Signature Version 4.
const (
	sigV4Algorithm  = "AWS4-HMAC-SHA256"
	sigV4DateFormat = "20060102T150405Z"
)

// signSigV4 signs a request with AWS Signature Version 4 in its
// Authorization header, for service in region at time at
// (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html).
// It sets X-Amz-Date, and X-Amz-Security-Token with a session token, in
// header, and signs every header of header with the host of u, the
// method, u's path and query, and the SHA-256 of body.
func signSigV4(method string, u *url.URL, header http.Header, body []byte, creds awsCredentials, region, service string, at time.Time) {
	at = at.UTC()
	header.Set("X-Amz-Date", at.Format(sigV4DateFormat))
	if creds.SessionToken != "" {
		header.Set("X-Amz-Security-Token", creds.SessionToken)
	}
	canonicalHeaders := map[string]string{"host": u.Host}
	for name, values := range header {
		trimmed := make([]string, len(values))
		for i, v := range values {
			trimmed[i] = strings.Join(strings.Fields(v), " ")
		}
		canonicalHeaders[strings.ToLower(name)] = strings.Join(trimmed, ",")
	}
	names := make([]string, 0, len(canonicalHeaders))
	for name := range canonicalHeaders {
		names = append(names, name)
	}
	slices.Sort(names)
	var headerLines strings.Builder
	for _, name := range names {
		headerLines.WriteString(name + ":" + canonicalHeaders[name] + "\n")
	}
	signedHeaders := strings.Join(names, ";")

	payloadHash := sha256.Sum256(body)
	canonicalRequest := strings.Join([]string{
		method,
		sigV4Escape(cmp.Or(u.EscapedPath(), "/"), false),
		sigV4Query(u.Query()),
		headerLines.String(),
		signedHeaders,
		hex.EncodeToString(payloadHash[:]),
	}, "\n")

	day := at.Format("20060102")
	scope := day + "/" + region + "/" + service + "/aws4_request"
	requestHash := sha256.Sum256([]byte(canonicalRequest))
	stringToSign := sigV4Algorithm + "\n" + at.Format(sigV4DateFormat) + "\n" + scope + "\n" + hex.EncodeToString(requestHash[:])

	key := hmacSHA256([]byte("AWS4"+creds.SecretAccessKey), day)
	for _, part := range []string{region, service, "aws4_request"} {
		key = hmacSHA256(key, part)
	}
	signature := hex.EncodeToString(hmacSHA256(key, stringToSign))
	header.Set("Authorization", sigV4Algorithm+" Credential="+creds.AccessKeyID+"/"+scope+
		", SignedHeaders="+signedHeaders+", Signature="+signature)
}

func hmacSHA256(key []byte, data string) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(data))
	return mac.Sum(nil)
}

// sigV4Query is the canonical query string: the parameters sorted by name
// then value, each encoded.
func sigV4Query(query url.Values) string {
	var pairs []string
	for name, values := range query {
		for _, v := range values {
			pairs = append(pairs, sigV4Escape(name, true)+"="+sigV4Escape(v, true))
		}
	}
	slices.Sort(pairs)
	return strings.Join(pairs, "&")
}

// sigV4Escape percent-encodes s as SigV4 does: every byte but the
// unreserved characters (A-Z a-z 0-9 - _ . ~), and "/" unless escapeSlash.
// The path, already escaped once, is escaped again, as AWS expects of
// every service but S3.
func sigV4Escape(s string, escapeSlash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~',
			c == '/' && !escapeSlash:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xF])
		}
	}
	return b.String()
}
