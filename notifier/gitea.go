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

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
)

// giteaRequest sets a commit status with Gitea's REST API, which takes
// GitHub's body: POST <scheme>://<host>/api/v1/repos/<owner>/<repo>/statuses/<sha>,
// with "Authorization: token <token>". Events that set no status are
// skipped (commitStatusOf).
func giteaRequest(cfg providerConfig, e eventv1.Event) (request, error) {
	s, repo, err := commitStatusFor(cfg, e)
	if err != nil {
		return request{}, err
	}
	owner, name, err := repo.ownerAndName()
	if err != nil {
		return request{}, fmt.Errorf("invalid gitea Provider address: %w", err)
	}
	header := http.Header{}
	header.Set("Authorization", "token "+cfg.token)
	return jsonRequest(fmt.Sprintf("%s/api/v1/repos/%s/%s/statuses/%s", repo.base(), owner, name, s.sha),
		githubStatus{State: s.state, Description: s.description, Context: s.context}, header)
}
