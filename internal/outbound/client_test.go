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
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestNewClientRefusesRedirects: a POST is never replayed elsewhere, and
// the error names the target redacted.
func TestNewClientRefusesRedirects(t *testing.T) {
	var followed atomic.Bool
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { followed.Store(true) }))
	defer target.Close()
	tests := map[string]int{
		"302 Found":              http.StatusFound,
		"307 Temporary Redirect": http.StatusTemporaryRedirect,
		"308 Permanent Redirect": http.StatusPermanentRedirect,
	}
	for name, code := range tests {
		t.Run(name, func(t *testing.T) {
			redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target.URL+"/steal?token=abc", code)
			}))
			defer redirector.Close()

			resp, err := NewClient(Options{Timeout: 5 * time.Second}).Post(redirector.URL+"/hook?sig=s3cr3t", "application/json", strings.NewReader("{}"))
			if err == nil {
				resp.Body.Close()
				t.Fatal("a redirect was followed")
			}
			if followed.Load() {
				t.Fatal("the redirect target was called")
			}
			if !IsRedirect(err) {
				t.Errorf("error is not a *RedirectError: %v", err)
			}
			want := "the server answered with a redirect to " + target.URL + "/steal?token=redacted, and serin follows none"
			if msg := RedactText(err.Error()); !strings.Contains(msg, want) || strings.Contains(msg, "abc") || strings.Contains(msg, "s3cr3t") {
				t.Errorf("error = %q, want it to contain %q and no secret", msg, want)
			}
		})
	}
}

func TestNewClientOptions(t *testing.T) {
	tests := map[string]struct {
		opts     Options
		insecure bool
		timeout  time.Duration
	}{
		"zero":     {},
		"timeout":  {opts: Options{Timeout: 3 * time.Second}, timeout: 3 * time.Second},
		"insecure": {opts: Options{InsecureSkipVerify: true}, insecure: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := NewClient(tt.opts)
			tr := c.Transport.(*http.Transport)
			if got := tr.TLSClientConfig != nil && tr.TLSClientConfig.InsecureSkipVerify; got != tt.insecure {
				t.Errorf("InsecureSkipVerify = %v, want %v", got, tt.insecure)
			}
			if c.Timeout != tt.timeout || tr.ResponseHeaderTimeout != tt.timeout {
				t.Errorf("timeouts = %v, %v; want %v", c.Timeout, tr.ResponseHeaderTimeout, tt.timeout)
			}
			if tr.TLSHandshakeTimeout == 0 || tr.MaxResponseHeaderBytes == 0 || c.CheckRedirect == nil {
				t.Error("the transport is not bounded, or redirects are followed")
			}
		})
	}
}

func TestReadAtMost(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    string
		tooLong bool
	}{
		"shorter":     {in: "abc", want: "abc"},
		"exactly":     {in: "abcd", want: "abcd"},
		"longer":      {in: "abcdef", want: "abcd", tooLong: true},
		"empty input": {in: "", want: ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ReadAtMost(strings.NewReader(tt.in), 4)
			var tooLarge *TooLargeError
			if string(got) != tt.want || errors.As(err, &tooLarge) != tt.tooLong {
				t.Errorf("ReadAtMost(%q, 4) = %q, %v", tt.in, got, err)
			}
		})
	}
}
