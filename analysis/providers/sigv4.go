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
	"crypto/sha256"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/smithy-go/aws-http-auth/credentials"
	"github.com/aws/smithy-go/aws-http-auth/sigv4"
	v4 "github.com/aws/smithy-go/aws-http-auth/v4"
)

// awsCredentials are an AWS access key, with the session token of
// temporary credentials (STS) when there is one.
type awsCredentials = credentials.Credentials

// sigV4Signer is AWS's Signature Version 4 signer, signing every header
// of a request (AWS's default signs only Host and X-Amz-*: CloudWatch's
// Content-Type would go unsigned).
var sigV4Signer = sigv4.New(func(o *v4.SignerOptions) { o.HeaderRules = signEveryHeader{} })

type signEveryHeader struct{}

func (signEveryHeader) IsSigned(string) bool { return true }

// signSigV4 signs a request with AWS Signature Version 4 in its
// Authorization header, for service in region at time at
// (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html).
// It sets X-Amz-Date, and X-Amz-Security-Token with a session token, in
// header, and signs every header of header with the host of u, the
// method, u's path and query, and the SHA-256 of body. Header values
// are sent as AWS signs them: trimmed, runs of spaces made one (AWS's
// signer only trims, and AWS's test suite, get-header-value-trim, wants
// both).
func signSigV4(method string, u *url.URL, header http.Header, body []byte, creds awsCredentials, region, service string, at time.Time) error {
	for _, values := range header {
		for i, v := range values {
			values[i] = strings.Join(strings.Fields(v), " ")
		}
	}
	payloadHash := sha256.Sum256(body)
	req := &http.Request{Method: method, URL: u, Header: header}
	err := sigV4Signer.SignRequest(&sigv4.SignRequestInput{
		Request: req, PayloadHash: payloadHash[:], Credentials: creds, Service: service, Region: region, Time: at,
	})
	// The signer sets Host, which the request sends from its URL.
	header.Del("Host")
	return err
}
