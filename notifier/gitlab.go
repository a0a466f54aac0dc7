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
	"net/url"
	"strings"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"

	"github.com/serin-dev/serin/internal/outbound"
)

// gitlabStatus is the body of GitLab's "set the pipeline status of a
// commit".
type gitlabStatus struct {
	State       string `json:"state"`
	Name        string `json:"name"`
	Description string `json:"description"`
	TargetURL   string `json:"target_url,omitempty"`
}

// gitlabRequest sets a commit status with GitLab's REST API: POST
// <scheme>://<host>/api/v4/projects/<escaped owner/repo>/statuses/<sha>,
// the owner a group path possibly, with "PRIVATE-TOKEN: <token>". The
// context is the status's name. Events that set no status are skipped
// (commitStatusOf).
func gitlabRequest(cfg providerConfig, e eventv1.Event) (request, error) {
	s, repo, err := commitStatusFor(cfg, e)
	if err != nil {
		return request{}, err
	}
	header := http.Header{}
	header.Set("PRIVATE-TOKEN", cfg.token)
	project := url.PathEscape(repo.owner + "/" + repo.name)
	req, err := jsonRequest(fmt.Sprintf("%s/api/v4/projects/%s/statuses/%s", repo.base(), project, s.sha),
		gitlabStatus{State: gitlabState(s.state), Name: s.context, Description: s.description}, header)
	req.validate = gitlabAccepted
	return req, err
}

// gitlabAccepted accepts a 2xx, and GitLab's 400 "Cannot transition
// status via :enqueue from :pending" for a state the commit already has
// (serin posts pending at each phase change of a rollout): the commit
// shows what the event says.
func gitlabAccepted(resp *http.Response) error {
	if resp.StatusCode != http.StatusBadRequest {
		return expect2xx(resp)
	}
	b, _ := outbound.ReadAtMost(resp.Body, maxAnswer)
	if strings.Contains(string(b), "Cannot transition status") {
		return nil
	}
	return fmt.Errorf("request failed with status code %d: %q", resp.StatusCode, outbound.Excerpt(b))
}

// gitlabState spells a commit state as GitLab does: failed, not failure.
func gitlabState(state string) string {
	if state == commitFailure {
		return "failed"
	}
	return state
}
