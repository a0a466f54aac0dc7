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
	"fmt"
	"net/http"
	"strings"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
)

// githubAPI is the REST API of github.com; GitHub Enterprise serves it
// under /api/v3 of its own host.
const githubAPI = "https://api.github.com"

// githubStatus is the body of GitHub's and Gitea's "create a commit
// status".
type githubStatus struct {
	State       string `json:"state"`
	TargetURL   string `json:"target_url,omitempty"`
	Description string `json:"description"`
	Context     string `json:"context"`
}

// githubRequest sets a commit status with GitHub's REST API: POST
// <api>/repos/<owner>/<repo>/statuses/<sha>, with the Provider's token as
// bearer token. The API is https://api.github.com for github.com and
// <scheme>://<host>/api/v3 for any other host (GitHub Enterprise). Events
// that set no status are skipped (commitStatusOf).
func githubRequest(cfg providerConfig, e eventv1.Event) (request, error) {
	s, repo, err := commitStatusFor(cfg, e)
	if err != nil {
		return request{}, err
	}
	owner, name, err := repo.ownerAndName()
	if err != nil {
		return request{}, fmt.Errorf("invalid github Provider address: %w", err)
	}
	api := githubAPI
	if !strings.EqualFold(repo.host, "github.com") {
		api = repo.base() + "/api/v3"
	}
	header := http.Header{}
	header.Set("Authorization", "Bearer "+cfg.token)
	header.Set("Accept", "application/vnd.github+json")
	return jsonRequest(fmt.Sprintf("%s/repos/%s/%s/statuses/%s", api, owner, name, s.sha),
		githubStatus{State: s.state, Description: s.description, Context: s.context}, header)
}
