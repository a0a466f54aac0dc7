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

package notifier

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
)

// componentHeader names the controller that sent a generic event.
const componentHeader = "gotk-component"

// genericRequest posts the Flux event itself as JSON, with the Provider's
// headers and the reporting controller in the gotk-component header.
func genericRequest(cfg providerConfig, e eventv1.Event) (request, error) {
	body, err := json.Marshal(e)
	if err != nil {
		return request{}, fmt.Errorf("failed to marshal the event: %w", err)
	}
	header := http.Header{}
	header.Set("Content-Type", "application/json")
	header.Set(componentHeader, e.ReportingController)
	for k, v := range cfg.headers {
		header.Set(k, v)
	}
	return request{url: cfg.address, body: body, header: header}, nil
}

// genericHMACRequest is genericRequest signed with the Provider's token:
// X-Signature: sha256=<hex HMAC-SHA256 of the body>.
func genericHMACRequest(cfg providerConfig, e eventv1.Event) (request, error) {
	if cfg.token == "" {
		return request{}, errors.New("generic-hmac Provider without a token: its Secret needs a 'token' key")
	}
	req, err := genericRequest(cfg, e)
	if err != nil {
		return req, err
	}
	req.header.Set("X-Signature", "sha256="+Sign(req.body, []byte(cfg.token)))
	return req, nil
}

// Sign returns the hex HMAC-SHA256 of payload with key, the signature a
// generic-hmac receiver checks.
func Sign(payload, key []byte) string {
	h := hmac.New(sha256.New, key)
	h.Write(payload)
	return hex.EncodeToString(h.Sum(nil))
}
