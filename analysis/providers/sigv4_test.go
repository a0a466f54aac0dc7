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
	"net/http"
	"net/url"
	"testing"
	"time"
)

// The signer against AWS's published Signature Version 4 test suite
// (aws-sig-v4-test-suite, https://docs.aws.amazon.com/general/latest/gr/signature-v4-test-suite.html):
// its example key, date, region and service, and the Authorization
// headers AWS gives for these requests.
func TestSignSigV4_AWSTestSuite(t *testing.T) {
	creds := awsCredentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"}
	at := time.Date(2015, 8, 30, 12, 36, 0, 0, time.UTC)
	const scope = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
	// The suite's example session token (post-sts-token).
	const token = "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA=="
	tests := map[string]struct {
		method, url  string
		header       http.Header
		body         string
		sessionToken string
		want         string
	}{
		"get-vanilla-query-order-key-case": {
			method: http.MethodGet, url: "https://example.amazonaws.com/?Param2=value2&Param1=value1",
			want: scope + "SignedHeaders=host;x-amz-date, Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
		},
		"get-header-value-trim": {
			method: http.MethodGet, url: "https://example.amazonaws.com/",
			header: http.Header{"My-Header1": {" value1"}, "My-Header2": {`"a   b   c"`}},
			want:   scope + "SignedHeaders=host;my-header1;my-header2;x-amz-date, Signature=acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736",
		},
		"post-x-www-form-urlencoded": {
			method: http.MethodPost, url: "https://example.amazonaws.com/",
			header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, body: "Param1=value1",
			want: scope + "SignedHeaders=content-type;host;x-amz-date, Signature=ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a",
		},
		"post-sts-header-before": {
			method: http.MethodPost, url: "https://example.amazonaws.com/", sessionToken: token,
			want: scope + "SignedHeaders=host;x-amz-date;x-amz-security-token, Signature=85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			u, err := url.Parse(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			header := tt.header.Clone()
			if header == nil {
				header = http.Header{}
			}
			c := creds
			c.SessionToken = tt.sessionToken
			if err := signSigV4(tt.method, u, header, []byte(tt.body), c, "us-east-1", "service", at); err != nil {
				t.Fatal(err)
			}
			if got := header.Get("Authorization"); got != tt.want {
				t.Errorf("Authorization\n got %s\nwant %s", got, tt.want)
			}
			if got := header.Get("X-Amz-Date"); got != "20150830T123600Z" {
				t.Errorf("X-Amz-Date %q, want 20150830T123600Z", got)
			}
			if got := header.Get("X-Amz-Security-Token"); got != tt.sessionToken {
				t.Errorf("X-Amz-Security-Token %q, want %q", got, tt.sessionToken)
			}
		})
	}
}
