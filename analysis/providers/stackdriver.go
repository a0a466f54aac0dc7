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
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/serin-dev/serin/internal/outbound"
)

// The Secret keys of a stackdriver provider: Flagger's.
const (
	stackdriverProjectSecretKey = "project"
	stackdriverKeySecretKey     = "serviceAccountKey"
)

// stackdriverScope is the OAuth 2.0 scope of serin's access tokens:
// reading Cloud Monitoring, nothing else.
const stackdriverScope = "https://www.googleapis.com/auth/monitoring.read"

// stackdriver queries Google Cloud Monitoring with PromQL, through its
// Prometheus HTTP API
// (https://cloud.google.com/monitoring/api/ref_v3/rest/v1/projects.location.prometheus.api.v1/query).
// Flagger's stackdriver sent MQL to QueryTimeSeries, which Google has
// deprecated for PromQL.
type stackdriver struct {
	httpProvider
	project string
	account *googleServiceAccount
}

func newStackdriverProvider(cfg Config) (Provider, error) {
	keys, err := requireSecretKeys(cfg, stackdriverProjectSecretKey, stackdriverKeySecretKey)
	if err != nil {
		return nil, err
	}
	project := strings.TrimSpace(keys[0])
	if project == "" {
		return nil, fmt.Errorf("secret %s has no %s (the stackdriver provider needs %s and %s)", cfg.SecretName,
			stackdriverProjectSecretKey, stackdriverProjectSecretKey, stackdriverKeySecretKey)
	}
	account, err := parseGoogleServiceAccount([]byte(keys[1]), stackdriverScope)
	if err != nil {
		return nil, fmt.Errorf("secret %s: %s %w", cfg.SecretName, stackdriverKeySecretKey, err)
	}
	return &stackdriver{httpProvider: newHTTPProvider(cfg), project: project, account: account}, nil
}

// googleError is the error of a Google API: {"error": {"code": 403,
// "message": "…", "status": "PERMISSION_DENIED"}}.
type googleError struct {
	Error struct {
		Message string `json:"message"`
		Status  string `json:"status"`
	} `json:"error"`
}

// Query runs query, PromQL, as an instant query of the project's metrics
// scope, with an access token of the service account, and reads the one
// number of its answer as Prometheus's: no sample or NaN is no data,
// several series fail the check. A refused token is forgotten, so that
// the next check asks for a new one.
func (p *stackdriver) Query(ctx context.Context, query string) (float64, error) {
	token, err := p.account.accessToken(ctx, &p.httpProvider, stackdriverScope)
	if err != nil {
		return 0, err
	}
	header := http.Header{"Authorization": {"Bearer " + token}, "Accept": {"application/json"}}
	call, answer, err := p.fetch(ctx, http.MethodGet, url.Values{"query": {query}}, header, nil,
		"v1", "projects", url.PathEscape(p.project), "location", "global", "prometheus", "api", "v1", "query")
	if err != nil {
		return 0, err
	}
	if answer.Status == http.StatusUnauthorized {
		googleTokens.forget(p.account.cacheKey, token)
	}
	var r promResponse
	if !answer.OK() {
		var e googleError
		_ = json.Unmarshal(answer.Body, &e)
		_ = json.Unmarshal(answer.Body, &r)
		return 0, call.refused(answer, joinNonEmpty(": ", e.Error.Status, e.Error.Message, r.ErrorType, r.Error))
	}
	if err := call.decodeJSON(answer, &r); err != nil {
		return 0, err
	}
	if r.Status != "success" {
		return 0, fmt.Errorf("stackdriver query %q failed: %s: %s", query, outbound.Excerpt([]byte(r.ErrorType)), outbound.Excerpt([]byte(r.Error)))
	}
	return singleValue(r, query)
}
